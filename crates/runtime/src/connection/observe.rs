//! How connections, their dispatches and remote invocation attempts are
//! observed by the metrics views (Ice's `Connection` and `Dispatch` maps
//! and the `Remote` sub-map of `Invocation`): the attributes such an
//! object offers to `GroupBy`, `Accept.*` and `Reject.*`, and the calls
//! the connection's code paths make. Each observation is an
//! [`Observer`] (or `None` when no map counts the object) whose drop
//! ends it.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use floe_wire::protocol::ReplyBody;
use floe_wire::{Context, Identity};

use crate::connection_info::ConnectionInfo;
use crate::error::Error;
use crate::metrics::attributes::{
    context_attr, endpoint_attr, identity_string, same, Attributes, Token, COMMUNICATOR,
};
use crate::metrics::observe::string_len;
use crate::metrics::{Entry, MapKind, MetricsAdmin, Observer, Tick};
use crate::outcome::{DispatchError, DispatchResult};

/// Ice's id of a connection: `local -> remote`, then ` [connection id]`.
pub(crate) fn connection_id(info: &ConnectionInfo) -> String {
    let addr = |a: Option<std::net::SocketAddr>| match a {
        Some(a) => format!("{}:{}", a.ip(), a.port()),
        None => ":-1".to_string(),
    };
    let mut id = format!("{} -> {}", addr(info.local), addr(info.remote));
    if !info.connection_id.is_empty() {
        id.push_str(&format!(" [{}]", info.connection_id));
    }
    id
}

/// The parent of a connection: its adapter, or the communicator.
fn connection_parent(info: &ConnectionInfo) -> String {
    if info.adapter_name.is_empty() {
        COMMUNICATOR.to_string()
    } else {
        info.adapter_name.clone()
    }
}

/// The connection attributes of `info` (and its endpoint's).
pub(crate) fn connection_attr(info: &ConnectionInfo, name: &str) -> Option<String> {
    Some(match name {
        "incoming" => info.incoming.to_string(),
        "adapterName" => info.adapter_name.clone(),
        "connectionId" => info.connection_id.clone(),
        "localHost" => info.local?.ip().to_string(),
        "localPort" => info.local?.port().to_string(),
        "remoteHost" => info.remote?.ip().to_string(),
        "remotePort" => info.remote?.port().to_string(),
        _ => return endpoint_attr(info.endpoint.as_ref()?, name),
    })
}

/// A connection (`Connection` map).
pub(crate) struct ConnectionAttrs<'a>(pub(crate) &'a ConnectionInfo);

impl Attributes for ConnectionAttrs<'_> {
    fn get(&self, name: &str) -> Option<String> {
        match name {
            "parent" => Some(connection_parent(self.0)),
            "id" => Some(connection_id(self.0)),
            "state" => Some("active".to_string()),
            _ => connection_attr(self.0, name),
        }
    }
}

/// A request being dispatched (`Dispatch` map).
pub(crate) struct DispatchAttrs<'a> {
    pub(crate) info: &'a ConnectionInfo,
    pub(crate) adapter: &'a str,
    pub(crate) identity: &'a Identity,
    pub(crate) facet: &'a str,
    pub(crate) operation: &'a str,
    pub(crate) request_id: i32,
    pub(crate) context: &'a Context,
}

impl Attributes for DispatchAttrs<'_> {
    fn get(&self, name: &str) -> Option<String> {
        Some(match name {
            "parent" => self.adapter.to_string(),
            "id" => format!("{} [{}]", identity_string(self.identity), self.operation),
            "operation" => self.operation.to_string(),
            "identity" => identity_string(self.identity),
            "facet" => self.facet.to_string(),
            "requestId" => self.request_id.to_string(),
            "mode" => if self.request_id == 0 {
                "oneway"
            } else {
                "twoway"
            }
            .to_string(),
            _ if name.starts_with("context.") => return context_attr(self.context, name),
            _ => return connection_attr(self.info, name),
        })
    }

    fn token(&self) -> Option<Token> {
        Some(Token::Dispatch(
            self.info.id,
            self.adapter.to_string(),
            self.identity.clone(),
            self.facet.to_string(),
            self.operation.to_string(),
            self.request_id == 0,
        ))
    }

    fn is(&self, token: &Token) -> bool {
        matches!(token, Token::Dispatch(c, a, i, f, o, oneway)
            if *c == self.info.id
                && *oneway == (self.request_id == 0)
                && same(o, self.operation)
                && same(&i.name, &self.identity.name)
                && same(&i.category, &self.identity.category)
                && same(f, self.facet)
                && same(a, self.adapter))
    }
}

/// One attempt of an invocation on a connection (`Remote` sub-map).
pub(crate) struct RemoteAttrs<'a> {
    pub(crate) info: &'a ConnectionInfo,
    pub(crate) request_id: i32,
}

impl Attributes for RemoteAttrs<'_> {
    fn get(&self, name: &str) -> Option<String> {
        match name {
            "parent" => Some(connection_parent(self.info)),
            "id" => {
                let mut id = self.info.endpoint.as_ref()?.to_string();
                if !self.info.connection_id.is_empty() {
                    id.push_str(&format!(" [{}]", self.info.connection_id));
                }
                Some(id)
            }
            "requestId" => Some(self.request_id.to_string()),
            _ => connection_attr(self.info, name),
        }
    }

    fn token(&self) -> Option<Token> {
        Some(Token::Connection(self.info.id))
    }

    fn is(&self, token: &Token) -> bool {
        matches!(token, Token::Connection(c) if *c == self.info.id)
    }
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
pub(crate) fn remote_replied(child: &Observer, reply: Option<&ReplyBody>) -> Tick {
    let size = match reply {
        Some(ReplyBody::Ok(e) | ReplyBody::UserException(e)) => 1 + 6 + e.data.len(),
        _ => 0,
    };
    child.each(|e| Entry::add(&e.reply_size, size));
    child.end()
}
