//! The attributes an observed object offers to `GroupBy`, `Accept.*` and
//! `Reject.*`, by map, with Ice's names and value formats:
//!
//! - every map: `parent`, `id`;
//! - endpoints (`ConnectionEstablishment`, `EndpointLookup`, and the
//!   endpoint of connections, dispatches and remote invocations):
//!   `endpoint`, `endpointType`, `endpointIsDatagram`, `endpointIsSecure`,
//!   `endpointTimeout`, `endpointCompress`, `endpointHost`, `endpointPort`;
//! - connections (`Connection`, and those of `Dispatch` and `Remote`):
//!   `incoming`, `adapterName`, `connectionId`, `localHost`, `localPort`,
//!   `remoteHost`, `remotePort`; `Connection` adds `state`;
//! - `Dispatch`: `operation`, `identity`, `facet`, `requestId`, `mode`
//!   (`twoway`, `oneway`), `context.<key>`;
//! - `Invocation`: `operation`, `identity`, `facet`, `encoding`, `mode`
//!   (`twoway`, `oneway`, `batch-oneway`, `datagram`, `batch-datagram`),
//!   `proxy`, `context.<key>`; `Remote` adds `requestId`.

use std::sync::{Arc, Weak};

use floe_wire::{Context, Identity, ToStringMode};

use crate::connection::ConnectionInfo;
use crate::endpoint::{Endpoint, Transport};
use crate::proxy::{Proxy, ProxyInner};

/// What an observed object answers for an attribute name (`None`: it has
/// no such attribute).
pub(crate) trait Attributes {
    /// The value of attribute `name`.
    fn get(&self, name: &str) -> Option<String>;

    /// What determines every attribute but the [volatile](is_volatile)
    /// ones: objects with equal tokens group alike, so a map remembers
    /// the entry of a token. `None`: not remembered.
    fn token(&self) -> Option<Token> {
        None
    }

    /// Whether this object's token is `token`.
    fn is(&self, _token: &Token) -> bool {
        false
    }
}

/// Attributes that change from one object to the next of the same token
/// (a map using them remembers no entry).
pub(crate) fn is_volatile(name: &str) -> bool {
    name == "requestId" || name.starts_with("context.")
}

/// What an object's non-volatile attributes are computed from.
#[derive(Debug)]
pub(crate) enum Token {
    /// A connection's id (never reused): remote invocations.
    Connection(u64),
    /// An invocation: its proxy (immutable; the weak reference keeps the
    /// address from being reused) and operation.
    Invocation(Weak<ProxyInner>, String),
    /// A dispatch: connection id, adapter, identity, facet, operation,
    /// oneway.
    Dispatch(u64, String, Identity, String, String, bool),
}

/// String equality that compares no bytes of empty strings (a token's
/// facet and category usually are).
#[inline]
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && (a.is_empty() || a == b)
}

/// The parent of what the communicator itself does (Ice's name).
pub(crate) const COMMUNICATOR: &str = "Communicator";

/// Ice's numeric endpoint type.
fn endpoint_type(t: Transport) -> i16 {
    match t {
        Transport::Tcp => 1,
        Transport::Ssl => 2,
        Transport::Udp => 3,
        Transport::Ws => 4,
        Transport::Wss => 5,
    }
}

/// The endpoint attributes of `e`.
pub(crate) fn endpoint_attr(e: &Endpoint, name: &str) -> Option<String> {
    Some(match name {
        "endpoint" => e.to_string(),
        "endpointType" => endpoint_type(e.transport).to_string(),
        "endpointIsDatagram" => (!e.transport.is_stream()).to_string(),
        "endpointIsSecure" => e.transport.is_secure().to_string(),
        "endpointTimeout" => e.timeout.to_string(),
        "endpointCompress" => e.compress.to_string(),
        "endpointHost" => e.host.clone(),
        "endpointPort" => e.port.to_string(),
        _ => return None,
    })
}

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

/// `context.<key>` of `ctx`.
fn context_attr(ctx: &Context, name: &str) -> Option<String> {
    let key = name.strip_prefix("context.")?;
    ctx.get(key).cloned()
}

/// The string form of an identity, as Ice prints it.
pub(crate) fn identity_string(id: &Identity) -> String {
    floe_wire::identity_string::identity_to_string(id, ToStringMode::Unicode)
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

/// An endpoint being connected to or looked up
/// (`ConnectionEstablishment`, `EndpointLookup`), with its id.
pub(crate) struct EndpointAttrs<'a> {
    pub(crate) endpoint: &'a Endpoint,
    pub(crate) id: &'a str,
}

impl Attributes for EndpointAttrs<'_> {
    fn get(&self, name: &str) -> Option<String> {
        match name {
            "parent" => Some(COMMUNICATOR.to_string()),
            "id" => Some(self.id.to_string()),
            _ => endpoint_attr(self.endpoint, name),
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

/// An invocation (`Invocation` map).
pub(crate) struct InvocationAttrs<'a> {
    pub(crate) proxy: &'a Proxy,
    pub(crate) operation: &'a str,
    pub(crate) context: &'a Context,
}

impl InvocationAttrs<'_> {
    /// Ice's name of the proxy's invocation mode.
    fn mode(&self) -> &'static str {
        let m = self.proxy.inner.mode;
        if m.is_datagram() {
            if m.is_batch() {
                "batch-datagram"
            } else {
                "datagram"
            }
        } else if m.is_batch() {
            "batch-oneway"
        } else if m.is_twoway() {
            "twoway"
        } else {
            "oneway"
        }
    }
}

impl Attributes for InvocationAttrs<'_> {
    fn get(&self, name: &str) -> Option<String> {
        let p = &*self.proxy.inner;
        Some(match name {
            "parent" => COMMUNICATOR.to_string(),
            // The proxy's string form without endpoints (Ice's id prefix).
            "id" => format!(
                "{} [{}]",
                self.proxy.ice_endpoints(Vec::new()),
                self.operation
            ),
            "operation" => self.operation.to_string(),
            "identity" => identity_string(&p.identity),
            "facet" => p.facet.clone(),
            "encoding" => format!("{}.{}", p.encoding.major, p.encoding.minor),
            "mode" => self.mode().to_string(),
            "proxy" => self.proxy.to_string(),
            _ => return context_attr(self.context, name),
        })
    }

    fn token(&self) -> Option<Token> {
        let proxy = Arc::downgrade(&self.proxy.inner);
        Some(Token::Invocation(proxy, self.operation.to_string()))
    }

    fn is(&self, token: &Token) -> bool {
        matches!(token, Token::Invocation(p, o)
            if std::ptr::eq(p.as_ptr(), Arc::as_ptr(&self.proxy.inner)) && same(o, self.operation))
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
