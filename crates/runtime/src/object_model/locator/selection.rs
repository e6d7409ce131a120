//! [`EndpointSelection`]: the order in which a proxy tries its endpoints
//! when it needs a new connection (`Ice.Default.EndpointSelection`,
//! [`crate::Proxy::ice_endpoint_selection`]).

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::endpoint::Endpoint;

/// How a proxy with several endpoints (a replica group, a multi-homed
/// server) picks the one it connects to.
///
/// An existing connection to any of the endpoints is always reused first,
/// as Ice does; the order only matters when a new connection is made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EndpointSelection {
    /// A random order for each new connection (Ice's default): the clients
    /// of a replica group spread over its members.
    #[default]
    Random,
    /// The endpoints' own order: the first that accepts wins.
    Ordered,
}

impl EndpointSelection {
    /// Parses the property value (`Random` or `Ordered`, as Ice spells it).
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim() {
            "Random" => Some(EndpointSelection::Random),
            "Ordered" => Some(EndpointSelection::Ordered),
            _ => None,
        }
    }

    /// `endpoints` in the order to try them.
    pub(crate) fn order(self, endpoints: &[Endpoint]) -> Vec<Endpoint> {
        let mut v = endpoints.to_vec();
        if self == EndpointSelection::Random && v.len() > 1 {
            // Fisher–Yates.
            for i in (1..v.len()).rev() {
                let j = (random_u64() % (i as u64 + 1)) as usize;
                v.swap(i, j);
            }
        }
        v
    }
}

/// A random UUID (version 4) as text, e.g. for the category of the admin
/// object.
pub(crate) fn random_uuid() -> String {
    let (a, b) = (random_u64(), random_u64());
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0x0fff,
        0x8000 | (b >> 48) & 0x3fff,
        b & 0xffff_ffff_ffff
    )
}

/// A random number: the standard library's randomly keyed hasher over a
/// counter (no dependency; the quality needed is a fair shuffle).
fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    thread_local! {
        static STATE: std::collections::hash_map::RandomState =
            std::collections::hash_map::RandomState::new();
    }
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    STATE.with(|s| {
        let mut h = s.build_hasher();
        h.write_u64(n);
        h.finish()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_order() {
        assert_eq!(
            EndpointSelection::parse("Ordered"),
            Some(EndpointSelection::Ordered)
        );
        assert_eq!(
            EndpointSelection::parse(" Random"),
            Some(EndpointSelection::Random)
        );
        assert_eq!(EndpointSelection::parse("Adaptive"), None);
        let eps: Vec<Endpoint> = (1..=4).map(|p| Endpoint::tcp("127.0.0.1", p)).collect();
        assert_eq!(EndpointSelection::Ordered.order(&eps), eps);
        let mut firsts = std::collections::HashSet::new();
        for _ in 0..200 {
            let o = EndpointSelection::Random.order(&eps);
            let mut sorted = o.clone();
            sorted.sort();
            assert_eq!(sorted, eps);
            firsts.insert(o[0].port);
        }
        assert_eq!(firsts.len(), 4, "every endpoint comes first sometimes");
    }
}
