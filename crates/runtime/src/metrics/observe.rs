//! What the runtime's code paths call to be observed: connections and
//! their bytes, connection establishment, endpoint lookups, dispatches
//! and invocations (with their remote attempts). Each returns an
//! [`Observer`] (or `None` when no map counts the object) whose drop
//! ends the observation.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use floe_wire::protocol::ReplyBody;
use floe_wire::Context;

use super::attributes::{
    ConnectionAttrs, DispatchAttrs, EndpointAttrs, InvocationAttrs, RemoteAttrs,
};
use super::{Entry, MapKind, MetricsAdmin, Observer};
use crate::connection::ConnectionInfo;
use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::outcome::{DispatchError, DispatchResult};
use crate::proxy::Proxy;

/// Bytes of a size prefix (§4.2) for `n`.
fn size_len(n: usize) -> usize {
    if n < 255 {
        1
    } else {
        5
    }
}

/// Bytes of a string on the wire.
fn string_len(s: &str) -> usize {
    size_len(s.len()) + s.len()
}

/// Bytes of a request's body after its request id (identity, facet,
/// operation, mode, context of `context` bytes (see [`context_size`]),
/// parameters): Ice's `size` of a dispatch or remote invocation.
pub(crate) fn request_size(
    identity: &floe_wire::Identity,
    facet: &str,
    operation: &str,
    context: usize,
    params: usize,
) -> usize {
    let facet = if facet.is_empty() {
        1
    } else {
        1 + string_len(facet)
    };
    string_len(&identity.name)
        + string_len(&identity.category)
        + facet
        + string_len(operation)
        + 1
        + context
        + params
}

/// Bytes of a request context on the wire.
pub(crate) fn context_size(context: &Context) -> usize {
    if context.is_empty() {
        return 1;
    }
    size_len(context.len())
        + context
            .iter()
            .map(|(k, v)| string_len(k) + string_len(v))
            .sum::<usize>()
}

/// A connection, from its start to its end; counts its bytes.
pub(crate) fn connection(admin: &MetricsAdmin, info: &ConnectionInfo) -> Option<Arc<Observer>> {
    admin
        .observe(MapKind::Connection, &ConnectionAttrs(info))
        .map(Arc::new)
}

/// Counts `n` bytes received on an observed connection.
pub(crate) fn received(obs: &Observer, n: usize) {
    obs.each(|e| Entry::add(&e.received, n));
}

/// Counts `n` bytes sent on an observed connection.
pub(crate) fn sent(obs: &Observer, n: usize) {
    obs.each(|e| Entry::add(&e.sent, n));
}

/// The end of an observed connection, with the error that ended it.
pub(crate) fn connection_ended(obs: &Observer, end: &Error) {
    if !matches!(
        end,
        Error::CloseConnection | Error::ConnectionManuallyClosed
    ) {
        obs.failed(end.ice_name());
    }
}

/// Establishing a connection to `addr` (`host:port`) through `endpoint`.
pub(crate) fn establishment(
    admin: &MetricsAdmin,
    endpoint: &Endpoint,
    addr: &str,
) -> Option<Observer> {
    let attrs = EndpointAttrs { endpoint, id: addr };
    admin.observe(MapKind::ConnectionEstablishment, &attrs)
}

/// Looking up the addresses of `endpoint`'s host name.
pub(crate) fn endpoint_lookup(admin: &MetricsAdmin, endpoint: &Endpoint) -> Option<Observer> {
    let id = endpoint.to_string();
    let attrs = EndpointAttrs { endpoint, id: &id };
    admin.observe(MapKind::EndpointLookup, &attrs)
}

/// A dispatch of a request of `size` bytes (see [`request_size`]).
pub(crate) fn dispatch(
    admin: &MetricsAdmin,
    attrs: &DispatchAttrs<'_>,
    size: usize,
) -> Option<Observer> {
    let obs = admin.observe(MapKind::Dispatch, attrs)?;
    obs.each(|e| Entry::add(&e.size, size));
    Some(obs)
}

/// The end of an observed dispatch (`twoway`: a reply is sent;
/// `failed_reply`: the size of a status 2-4 reply).
pub(crate) fn dispatched(
    obs: &Observer,
    result: &DispatchResult,
    twoway: bool,
    failed_reply: usize,
) {
    // The reply's body: its status byte, then the encapsulation (or the
    // status's fields).
    let reply = match result {
        Ok(data) => 1 + data.len(),
        Err(DispatchError::EncodedUserException(b)) => 1 + b.len(),
        Err(
            DispatchError::ObjectNotExist(_)
            | DispatchError::FacetNotExist(_)
            | DispatchError::OperationNotExist(_),
        ) => failed_reply,
        Err(
            DispatchError::UnknownLocalException(s)
            | DispatchError::UnknownUserException(s)
            | DispatchError::UnknownException(s),
        ) => 1 + string_len(s),
        Err(_) => 0,
    };
    match result {
        Ok(_) => {}
        Err(DispatchError::UserException(_) | DispatchError::EncodedUserException(_)) => {
            obs.each(|e| {
                e.user_exception.fetch_add(1, Ordering::Relaxed);
            });
        }
        Err(e) => obs.failed(dispatch_error_name(e)),
    }
    if twoway {
        obs.each(|e| Entry::add(&e.reply_size, reply));
    }
}

/// The Ice exception a dispatch error stands for.
fn dispatch_error_name(e: &DispatchError) -> &'static str {
    match e {
        DispatchError::ObjectNotExist(_) => "::Ice::ObjectNotExistException",
        DispatchError::FacetNotExist(_) => "::Ice::FacetNotExistException",
        DispatchError::OperationNotExist(_) => "::Ice::OperationNotExistException",
        DispatchError::UnknownLocalException(_) => "::Ice::UnknownLocalException",
        DispatchError::UnknownUserException(_) => "::Ice::UnknownUserException",
        DispatchError::DispatchException { .. } => "::Ice::DispatchException",
        _ => "::Ice::UnknownException",
    }
}

/// An invocation through `proxy`.
pub(crate) fn invocation(
    admin: &MetricsAdmin,
    proxy: &Proxy,
    operation: &str,
    context: &Context,
) -> Option<Observer> {
    let attrs = InvocationAttrs {
        proxy,
        operation,
        context,
    };
    admin.observe(MapKind::Invocation, &attrs)
}

/// One attempt of an observed invocation on `info`'s connection, of a
/// request of `size` bytes.
pub(crate) fn remote(obs: &Observer, info: &ConnectionInfo, size: usize) -> Option<Observer> {
    let child = obs.child(&RemoteAttrs {
        info,
        request_id: 0,
    })?;
    child.each(|e| Entry::add(&e.size, size));
    Some(child)
}

/// The end of a remote attempt, with its reply body (if one came): ends
/// the attempt's observation and returns the clock reading it ended at.
pub(crate) fn remote_replied(child: &Observer, reply: Option<&ReplyBody>) -> super::Tick {
    let size = match reply {
        Some(ReplyBody::Ok(e) | ReplyBody::UserException(e)) => 1 + 6 + e.data.len(),
        _ => 0,
    };
    child.each(|e| Entry::add(&e.reply_size, size));
    child.end()
}

/// The successful end of an observed invocation (a user exception
/// counted as such), as of `now` (the end of its last remote attempt,
/// when there was one).
pub(crate) fn invoked(obs: &Observer, response: &crate::proxy::Response, now: Option<super::Tick>) {
    if let crate::proxy::Response::UserException(_) = response {
        obs.each(|e| {
            e.user_exception.fetch_add(1, Ordering::Relaxed);
        });
    }
    match now {
        Some(now) => obs.end_at(now),
        None => {
            obs.end();
        }
    }
}

/// A retry of an observed invocation.
pub(crate) fn retried(obs: &Observer) {
    obs.each(|e| {
        e.retry.fetch_add(1, Ordering::Relaxed);
    });
}
