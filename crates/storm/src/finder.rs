//! The `IceStorm::Finder` servant (`IceStorm/Finder`, whatever the instance
//! name): `getTopicManager()` returns the topic manager proxy, so clients
//! such as `icestormadmin` need only the broker's endpoint.

use std::sync::Arc;

use floe::wire::Identity;

use crate::dispatch::{builtin, check_mode, no_params, Declared, Reply, Request};
use crate::instance::Instance;
use floe::wire::Encode;

/// Type ids of the finder, sorted.
pub const FINDER_IDS: [&str; 2] = ["::Ice::Object", "::IceStorm::Finder"];

/// The Finder's identity.
pub fn finder_identity() -> Identity {
    Identity::new("Finder", "IceStorm")
}

/// The Finder servant.
pub fn dispatch(inst: &Arc<Instance>, req: &Request) -> Reply {
    if let Some(r) = builtin(req, &FINDER_IDS, "::IceStorm::Finder") {
        return r;
    }
    if req.operation != "getTopicManager" {
        return Reply::OperationNotExist;
    }
    let r = check_mode(req, Declared::Normal).and_then(|()| no_params(req));
    match r {
        Ok(()) => {
            let p = inst.topic_manager_proxy();
            Reply::ok_with(req.encoding(), |e| p.encode(e))
        }
        Err(r) => r,
    }
}
