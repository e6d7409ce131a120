//! What every layer's observations share: request and context sizes as
//! Ice counts them, and the communicator's own observations (connection
//! establishment, endpoint lookups). Connections, dispatches and remote
//! attempts are observed by `crate::connection::observe`, invocations by
//! `crate::object_model::proxy::observe`. Each returns an [`Observer`] (or `None` when
//! no map counts the object) whose drop ends the observation.

use floe_wire::Context;

use super::attributes::EndpointAttrs;
use super::{MapKind, MetricsAdmin, Observer};
use crate::endpoint::Endpoint;

/// Bytes of a size prefix (§4.2) for `n`.
fn size_len(n: usize) -> usize {
    if n < 255 {
        1
    } else {
        5
    }
}

/// Bytes of a string on the wire.
pub(crate) fn string_len(s: &str) -> usize {
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
#[inline]
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
