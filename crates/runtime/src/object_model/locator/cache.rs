//! [`LocatorCache`]: what a locator answered, by adapter id and by
//! identity, with the time of the answer, so that indirect proxies are
//! resolved once and not on every connection.
//!
//! Entries are used while younger than the proxy's locator cache timeout
//! (`Ice.Default.LocatorCacheTimeout`, `ice_locator_cache_timeout`): a
//! negative timeout keeps them forever, 0 never uses them (the locator is
//! asked every time), N > 0 keeps them N seconds. A connection failure
//! to the endpoints of an entry removes it (see `resolve.rs`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use floe_wire::{Identity, ProxyData};

use crate::endpoint::Endpoint;

/// The locator's answers, shared by every proxy that uses one locator.
#[derive(Default)]
pub(crate) struct LocatorCache {
    /// Adapter id (or replica group id) → its endpoints.
    adapters: Mutex<HashMap<String, (Vec<Endpoint>, Instant)>>,
    /// Well-known identity → the proxy the locator returned for it
    /// (direct, or indirect with an adapter id).
    objects: Mutex<HashMap<Identity, (ProxyData, Instant)>>,
}

/// Whether an entry made at `at` may be used under `ttl` seconds.
fn fresh(at: Instant, ttl: i32) -> bool {
    match ttl {
        t if t < 0 => true,
        0 => false,
        t => at.elapsed() <= Duration::from_secs(t as u64),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl LocatorCache {
    /// The cached endpoints of `adapter_id`, if fresh under `ttl`.
    pub(crate) fn adapter(&self, adapter_id: &str, ttl: i32) -> Option<Vec<Endpoint>> {
        lock(&self.adapters)
            .get(adapter_id)
            .filter(|(_, at)| fresh(*at, ttl))
            .map(|(eps, _)| eps.clone())
    }

    /// Records the endpoints of `adapter_id`.
    pub(crate) fn set_adapter(&self, adapter_id: &str, endpoints: Vec<Endpoint>) {
        lock(&self.adapters).insert(adapter_id.to_string(), (endpoints, Instant::now()));
    }

    /// Forgets `adapter_id`.
    pub(crate) fn remove_adapter(&self, adapter_id: &str) {
        lock(&self.adapters).remove(adapter_id);
    }

    /// The cached proxy of the well-known object `identity`, if fresh.
    pub(crate) fn object(&self, identity: &Identity, ttl: i32) -> Option<ProxyData> {
        lock(&self.objects)
            .get(identity)
            .filter(|(_, at)| fresh(*at, ttl))
            .map(|(p, _)| p.clone())
    }

    /// Records the proxy of the well-known object `identity`.
    pub(crate) fn set_object(&self, identity: &Identity, proxy: ProxyData) {
        lock(&self.objects).insert(identity.clone(), (proxy, Instant::now()));
    }

    /// Forgets `identity`, and the adapter its proxy named, if any.
    pub(crate) fn remove_object(&self, identity: &Identity) {
        let removed = lock(&self.objects).remove(identity);
        if let Some((p, _)) = removed {
            if !p.adapter_id.is_empty() {
                self.remove_adapter(&p.adapter_id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts() {
        let c = LocatorCache::default();
        c.set_adapter("A", vec![Endpoint::tcp("127.0.0.1", 1)]);
        assert!(c.adapter("A", -1).is_some());
        assert!(c.adapter("A", 10).is_some());
        assert!(c.adapter("A", 0).is_none());
        assert!(c.adapter("B", -1).is_none());
        let at = Instant::now() - Duration::from_secs(5);
        assert!(!fresh(at, 2));
        assert!(fresh(at, 10));
        let id = Identity::from_name("a");
        let mut p = ProxyData::new(id.clone());
        p.adapter_id = "A".into();
        c.set_object(&id, p);
        assert!(c.object(&id, -1).is_some());
        c.remove_object(&id);
        assert!(c.object(&id, -1).is_none());
        assert!(
            c.adapter("A", -1).is_none(),
            "the object's adapter goes too"
        );
    }
}
