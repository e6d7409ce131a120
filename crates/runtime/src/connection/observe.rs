//! How connections, their dispatches and remote invocation attempts are
//! observed by the metrics views (Ice's `Connection` and `Dispatch` maps
//! and the `Remote` sub-map of `Invocation`): the attributes such an
//! object offers to `GroupBy`, `Accept.*` and `Reject.*`, and the calls
//! the connection's code paths make. Each observation is an
//! [`Observer`] (or `None` when no map counts the object) whose drop
//! ends it.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

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

/// A connection (`Connection` map) in one of Ice's connection states
/// (`holding`, `active`, `closing`, `closed`).
pub(crate) struct ConnectionAttrs<'a>(pub(crate) &'a ConnectionInfo, pub(crate) &'static str);

impl Attributes for ConnectionAttrs<'_> {
    fn get(&self, name: &str) -> Option<String> {
        match name {
            "parent" => Some(connection_parent(self.0)),
            "id" => Some(connection_id(self.0)),
            "state" => Some(self.1.to_string()),
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

/// A connection's observation. The maps that do not read its `state`
/// count it from its start to its end. Those that do (a `GroupBy`,
/// `Accept` or `Reject` on `state`) count it in the entry of each state
/// it goes through, as Ice updates a connection's observer at each state
/// change: `holding` and `active` once validated, `closing` when a
/// graceful close starts (ours or the peer's), `closed` at the end. Such
/// maps are rare, so only they take a lock per message.
pub(crate) struct ConnectionObserver {
    whole: Option<Observer>,
    by_state: Option<StateObserver>,
}

/// The observation of a connection by the maps that read its `state`.
struct StateObserver {
    admin: Arc<MetricsAdmin>,
    info: ConnectionInfo,
    /// The state and its observation (`None`: no such map counts it then).
    now: Mutex<(&'static str, Option<Observer>)>,
}

impl StateObserver {
    /// Moves the connection to `state`: its entry there counts it from
    /// now on, the previous state's no longer.
    fn enter(&self, state: &'static str) {
        let mut now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        if now.0 == state {
            return;
        }
        // Ended before the next one starts, as Ice detaches the old
        // observer's entries.
        end(&mut now.1);
        let attrs = ConnectionAttrs(&self.info, state);
        *now = (
            state,
            self.admin
                .observe_where(MapKind::Connection, &attrs, "state", true),
        );
    }

    /// The connection is gone: no entry counts it any longer.
    fn leave(&self) {
        end(&mut self.now.lock().unwrap_or_else(|p| p.into_inner()).1);
    }

    // Out of line: the byte counts of the usual connection (no map reads
    // its state) stay small enough to inline.
    #[cold]
    #[inline(never)]
    fn each(&self, f: impl Fn(&Entry)) {
        let now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(o) = &now.1 {
            o.each(f);
        }
    }
}

/// Ends the observation in `slot`, if any.
fn end(slot: &mut Option<Observer>) {
    if let Some(old) = slot.take() {
        old.end();
    }
}

impl ConnectionObserver {
    /// A connection once validated; `None` when no map counts it.
    pub(crate) fn start(admin: &Arc<MetricsAdmin>, info: &ConnectionInfo) -> Option<Arc<Self>> {
        let whole = admin.observe_where(
            MapKind::Connection,
            &ConnectionAttrs(info, "active"),
            "state",
            false,
        );
        let by_state = admin
            .reads(MapKind::Connection, "state")
            .then(|| StateObserver {
                admin: admin.clone(),
                info: info.clone(),
                now: Mutex::new(("", None)),
            });
        if let Some(s) = &by_state {
            s.enter("holding");
            s.enter("active");
        }
        (whole.is_some() || by_state.is_some())
            .then(|| Arc::new(ConnectionObserver { whole, by_state }))
    }

    /// Applies `f` to every entry counting the connection now.
    fn each(&self, f: impl Fn(&Entry)) {
        if let Some(o) = &self.whole {
            o.each(&f);
        }
        if let Some(s) = &self.by_state {
            s.each(f);
        }
    }

    /// A graceful close started (ours or the peer's).
    pub(crate) fn closing(&self) {
        if let Some(s) = &self.by_state {
            s.enter("closing");
        }
    }

    /// The end of the connection, with the error that ended it: a
    /// graceful end goes through `closing`, any end through `closed`.
    pub(crate) fn ended(&self, end: &Error) {
        let graceful = matches!(
            end,
            Error::CloseConnection | Error::ConnectionManuallyClosed
        );
        if !graceful {
            if let Some(o) = &self.whole {
                o.failed(end.ice_name());
            }
        }
        if let Some(s) = &self.by_state {
            if graceful {
                s.enter("closing");
            } else if let Some(o) = &s.now.lock().unwrap_or_else(|p| p.into_inner()).1 {
                o.failed(end.ice_name());
            }
            s.enter("closed");
            s.leave();
        }
        if let Some(o) = &self.whole {
            o.end();
        }
    }
}

/// Counts `n` bytes received on an observed connection.
pub(crate) fn received(obs: &ConnectionObserver, n: usize) {
    obs.each(|e| Entry::add(&e.received, n));
}

/// Counts `n` bytes sent on an observed connection.
pub(crate) fn sent(obs: &ConnectionObserver, n: usize) {
    obs.each(|e| Entry::add(&e.sent, n));
}

/// Takes back `n` bytes counted by [`sent`] that were not sent after all
/// (a oneway request's header and request id, dropped when it joined a
/// batch).
pub(crate) fn unsent(obs: &ConnectionObserver, n: usize) {
    let n = i64::try_from(n).unwrap_or(i64::MAX);
    obs.each(|e| {
        e.sent.fetch_sub(n, std::sync::atomic::Ordering::Relaxed);
    });
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
/// request of `size` bytes; `with_parent`: it starts as the invocation
/// did (see [`Observer::child`]).
pub(crate) fn remote(
    obs: &Observer,
    info: &ConnectionInfo,
    size: usize,
    with_parent: bool,
) -> Option<Observer> {
    let attrs = RemoteAttrs {
        info,
        request_id: 0,
    };
    let child = obs.child(&attrs, with_parent)?;
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
