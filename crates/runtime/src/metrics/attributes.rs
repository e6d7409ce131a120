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

use std::any::Any;
use std::sync::Weak;

use floe_wire::{Context, Identity, ToStringMode};

use crate::endpoint::{Endpoint, Transport};

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
    /// An invocation: the address of its proxy (immutable; held by a
    /// weak reference so that the address is not reused) and its
    /// operation.
    Invocation {
        _proxy: Weak<dyn Any + Send + Sync>,
        at: usize,
        operation: String,
    },
    /// A dispatch: connection id, adapter, identity, facet, operation,
    /// oneway.
    Dispatch(u64, String, Identity, String, String, bool),
}

/// String equality that compares no bytes of empty strings (a token's
/// facet and category usually are).
#[inline]
pub(crate) fn same(a: &str, b: &str) -> bool {
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

/// `context.<key>` of `ctx`.
pub(crate) fn context_attr(ctx: &Context, name: &str) -> Option<String> {
    let key = name.strip_prefix("context.")?;
    ctx.get(key).cloned()
}

/// The string form of an identity, as Ice prints it.
pub(crate) fn identity_string(id: &Identity) -> String {
    floe_wire::identity_string::identity_to_string(id, ToStringMode::Unicode)
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
