//! From a proxy to a connection: the endpoints of a direct proxy in the
//! order of its [`EndpointSelection`], or those its locator gives for an
//! indirect one, as Ice's `RoutableReference` does.
//!
//! The proxy caches the connection it gets ([`crate::Proxy::ice_get_connection`]),
//! so all this runs once per connection, never per call. When the
//! endpoints of a cached locator answer cannot be reached (the server
//! moved or died), the answer is forgotten and the locator asked again,
//! once.

use floe_wire::ProxyData;

use crate::connection::Connection;
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::object_model::communicator::Communicator;
use crate::object_model::locator::LocatorInfo;
use crate::object_model::proxy::{Proxy, ProxyInner};

/// Whether `p` has no endpoints of any transport (it needs a locator).
pub(crate) fn is_indirect(p: &ProxyInner) -> bool {
    p.endpoints.is_empty() && p.other_endpoints.is_empty()
}

/// The connection for `proxy`: an existing one to any of its endpoints,
/// or a new one (direct proxies), after resolving them through the
/// locator (indirect proxies).
///
/// # Errors
///
/// [`Error::NotRegistered`] when the locator does not know the adapter or
/// object; [`Error::NoEndpoint`] for an indirect proxy without locator;
/// locator and connection failures.
pub(crate) async fn connect(proxy: &Proxy, communicator: &Communicator) -> Result<Connection> {
    let p = &*proxy.inner;
    if let Some(router) = &p.router {
        return router.connection(proxy, communicator).await;
    }
    if !is_indirect(p) {
        if p.endpoints.len() < 2 {
            return communicator
                .connection_for(&p.endpoints, p.secure, &p.connection_id)
                .await;
        }
        let ordered = p.endpoint_selection.order(&p.endpoints);
        return communicator
            .connection_for(&ordered, p.secure, &p.connection_id)
            .await;
    }
    let info = p.locator.as_ref().ok_or_else(|| {
        Error::NoEndpoint(format!(
            "{proxy}: an indirect proxy needs a locator (Ice.Default.Locator or ice_locator)"
        ))
    })?;
    let (eps, cached) = endpoints(info, p).await?;
    let ordered = p.endpoint_selection.order(&eps);
    match communicator
        .connection_for(&ordered, p.secure, &p.connection_id)
        .await
    {
        Ok(c) => Ok(c),
        Err(e @ Error::CommunicatorDestroyed) => Err(e),
        Err(e) => {
            clear(info, p);
            if !cached {
                return Err(e);
            }
            tracing::debug!(%proxy, "cached endpoints unreachable ({e}); asking the locator again");
            let (eps, _) = endpoints(info, p).await?;
            let ordered = p.endpoint_selection.order(&eps);
            communicator
                .connection_for(&ordered, p.secure, &p.connection_id)
                .await
        }
    }
}

/// Whether a request of the indirect proxy `proxy` that failed with
/// ObjectNotExist is retried, as Ice does: the object may have moved, or
/// another replica may have it. For a well-known proxy the locator's answer
/// is forgotten, and the proxy drops its connection so that the retry
/// resolves and connects again.
pub(crate) fn retry_object_not_exist(proxy: &Proxy, err: &Error) -> bool {
    let p = &*proxy.inner;
    if !matches!(err, Error::ObjectNotExist(_)) || !is_indirect(p) || p.router.is_some() {
        return false;
    }
    if let Some(info) = &p.locator {
        if p.adapter_id.is_empty() {
            info.cache.remove_object(&p.identity);
        }
    }
    *p.cached.lock().unwrap_or_else(|e| e.into_inner()) = None;
    true
}

/// The endpoints of the indirect proxy `p`, and whether they came from
/// the cache.
async fn endpoints(info: &LocatorInfo, p: &ProxyInner) -> Result<(Vec<Endpoint>, bool)> {
    let ttl = p.locator_cache_timeout;
    if !p.adapter_id.is_empty() {
        return adapter_endpoints(info, &p.adapter_id, ttl).await;
    }
    let (object, cached) = match info.cache.object(&p.identity, ttl) {
        Some(o) => (o, true),
        None => {
            let o = info
                .find_object_by_id(&p.identity)
                .await?
                .ok_or_else(|| not_registered("object", &p.identity.to_string()))?;
            if !o.is_well_known() {
                info.cache.set_object(&p.identity, o.clone());
            }
            (o, false)
        }
    };
    if !object.adapter_id.is_empty() && object.endpoints.is_empty() {
        let (eps, adapter_cached) = adapter_endpoints(info, &object.adapter_id, ttl).await?;
        return Ok((eps, cached && adapter_cached));
    }
    let eps = tcp_endpoints(&object);
    if eps.is_empty() {
        return Err(not_registered("object", &p.identity.to_string()));
    }
    Ok((eps, cached))
}

/// The endpoints of `adapter_id` (an adapter or a replica group: the
/// locator gives the union of the members' endpoints).
async fn adapter_endpoints(
    info: &LocatorInfo,
    adapter_id: &str,
    ttl: i32,
) -> Result<(Vec<Endpoint>, bool)> {
    if let Some(eps) = info.cache.adapter(adapter_id, ttl) {
        return Ok((eps, true));
    }
    let proxy = info.find_adapter_by_id(adapter_id).await?;
    let eps = proxy.as_ref().map(tcp_endpoints).unwrap_or_default();
    if eps.is_empty() {
        return Err(not_registered("object adapter", adapter_id));
    }
    info.cache.set_adapter(adapter_id, eps.clone());
    Ok((eps, false))
}

/// Forgets what the locator said about `p`.
fn clear(info: &LocatorInfo, p: &ProxyInner) {
    if p.adapter_id.is_empty() {
        info.cache.remove_object(&p.identity);
    } else {
        info.cache.remove_adapter(&p.adapter_id);
    }
}

fn tcp_endpoints(proxy: &ProxyData) -> Vec<Endpoint> {
    proxy
        .endpoints
        .iter()
        .filter_map(Endpoint::from_data)
        .collect()
}

fn not_registered(kind: &str, id: &str) -> Error {
    Error::NotRegistered {
        kind: kind.to_string(),
        id: id.to_string(),
    }
}
