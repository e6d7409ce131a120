//! Stringified proxies, endpoints and identities (`Communicator::
//! stringToProxy`, `<Adapter>.Endpoints`): hostile text never panics, nor
//! does printing what parsed and parsing that again. Identities print, in
//! every `ToStringMode`, to text that parses back to the same identity.
//! Proxies and endpoints need not: Ice prints hosts and adapter ids with
//! quotes and backslashes as they are, so neither Ice nor floe always reads
//! such a printing back (exact parity with Ice is tested against a live
//! Ice peer in `crates/wire/tests/live_proxy_strings.rs`).

use floe_wire::{
    endpoint_to_string, identity_to_string, parse_adapter_endpoints, parse_endpoint,
    proxy_to_string, string_to_identity, string_to_proxy, EndpointRole, ParseDefaults,
    ToStringMode,
};

const MODES: [ToStringMode; 3] = [
    ToStringMode::Unicode,
    ToStringMode::Ascii,
    ToStringMode::Compat,
];

/// The input, as UTF-8 text, is parsed as a proxy, an endpoint (of a proxy
/// and of an object adapter), a list of adapter endpoints and an identity.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let defaults = ParseDefaults::default();
    if let Ok(Some(proxy)) = string_to_proxy(text, &defaults) {
        for mode in MODES {
            let printed = proxy_to_string(&proxy, mode);
            let _ = string_to_proxy(&printed, &defaults);
        }
    }
    for role in [EndpointRole::Proxy, EndpointRole::ObjectAdapter] {
        if let Ok(Some(ep)) = parse_endpoint(text, &defaults, role) {
            let printed = endpoint_to_string(&ep);
            let _ = parse_endpoint(&printed, &defaults, role);
        }
    }
    let _ = parse_adapter_endpoints(text, &defaults);
    if let Ok(id) = string_to_identity(text) {
        for mode in MODES {
            let printed = identity_to_string(&id, mode);
            match string_to_identity(&printed) {
                Ok(back) => assert_eq!(back, id, "{text:?} printed as {printed:?}"),
                Err(e) => panic!("{text:?} printed as {printed:?}, which fails: {e}"),
            }
        }
    }
}
