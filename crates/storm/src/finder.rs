//! The `IceStorm::Finder` servant (`IceStorm/Finder`, whatever the instance
//! name): `getTopicManager()` returns the topic manager proxy, so clients
//! such as `icestormadmin` need only the broker's endpoint.

use std::sync::Arc;

use floe::runtime::{Current, DispatchError};
use floe::wire::Identity;

use crate::instance::Instance;
use crate::slice::ice_storm;
use crate::types::ProxyData;

/// The Finder's identity.
pub fn finder_identity() -> Identity {
    Identity::new("Finder", "IceStorm")
}

/// The Finder servant, dispatched by the generated `FinderDispatcher`.
pub struct FinderServant {
    inst: Arc<Instance>,
}

impl FinderServant {
    /// The finder of `inst`.
    pub fn new(inst: Arc<Instance>) -> FinderServant {
        FinderServant { inst }
    }
}

impl ice_storm::Finder for FinderServant {
    async fn get_topic_manager(&self, _: &Current) -> Result<Option<ProxyData>, DispatchError> {
        Ok(Some(self.inst.topic_manager_proxy()))
    }
}
