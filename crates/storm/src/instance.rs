//! [`Instance`]: what every part of one broker shares: settings, the store,
//! the sink factory, the adapters' published endpoints and the topics.
//!
//! Mutations (create, destroy, subscribe, unsubscribe, link, unlink and
//! failure removals) are serialized by [`Instance::mutation`] and write the
//! store before they change memory, so a reply never reports something the
//! store does not hold. Publishing takes no lock but a topic's read lock.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use floe::wire::Identity;

use crate::config::StormConfig;
use crate::sink::SinkFactory;
use crate::store::{Store, StoreError};
use crate::subscriber::{identity_to_string, DeliveryConfig};
use crate::topic::Topic;
use crate::types::{direct_proxy, EndpointData, ProxyData};

/// The published endpoints of the broker's two object adapters, marshaled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AdapterEndpoints {
    /// The TopicManager adapter (TopicManager, topics, Finder).
    pub topic_manager: Vec<EndpointData>,
    /// The Publish adapter (publishers, links).
    pub publish: Vec<EndpointData>,
}

/// Shared broker state.
pub struct Instance {
    /// Settings.
    pub config: StormConfig,
    /// The database.
    pub store: Arc<Store>,
    /// Makes delivery sinks.
    pub sinks: Arc<dyn SinkFactory>,
    /// Published endpoints for the proxies the broker hands out.
    pub endpoints: AdapterEndpoints,
    /// Delivery settings for subscriber tasks.
    pub delivery: DeliveryConfig,
    /// Serializes mutations (see the module doc).
    pub mutation: tokio::sync::Mutex<()>,
    /// Topics by name.
    pub topics: RwLock<BTreeMap<String, Arc<Topic>>>,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("instance_name", &self.config.instance_name)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl Instance {
    /// The instance name (identity category of the broker's objects).
    pub fn name(&self) -> &str {
        &self.config.instance_name
    }

    /// The topic called `name`, if it exists.
    pub fn topic(&self, name: &str) -> Option<Arc<Topic>> {
        // A poisoned lock means a panic while holding it; the map itself is
        // still consistent (inserts/removes are single calls).
        let topics = self.topics.read().unwrap_or_else(|p| p.into_inner());
        topics.get(name).cloned()
    }

    /// `I/TopicManager`.
    pub fn topic_manager_proxy(&self) -> ProxyData {
        direct_proxy(
            Identity::new("TopicManager", self.name()),
            self.endpoints.topic_manager.clone(),
        )
    }

    /// `I/topic.T` on the TopicManager adapter.
    pub fn topic_proxy(&self, topic: &str) -> ProxyData {
        direct_proxy(
            Identity::new(format!("topic.{topic}"), self.name()),
            self.endpoints.topic_manager.clone(),
        )
    }

    /// `I/T.publish` on the Publish adapter.
    pub fn publisher_proxy(&self, topic: &str) -> ProxyData {
        direct_proxy(
            Identity::new(format!("{topic}.publish"), self.name()),
            self.endpoints.publish.clone(),
        )
    }

    /// `I/topic.T.publish.<subscriber identity>` on the Publish adapter.
    pub fn subscriber_publisher_proxy(&self, topic: &str, subscriber: &Identity) -> ProxyData {
        direct_proxy(
            Identity::new(
                format!("topic.{topic}.publish.{}", identity_to_string(subscriber)),
                self.name(),
            ),
            self.endpoints.publish.clone(),
        )
    }

    /// `I/T.link` on the Publish adapter.
    pub fn link_proxy(&self, topic: &str) -> ProxyData {
        direct_proxy(
            Identity::new(format!("{topic}.link"), self.name()),
            self.endpoints.publish.clone(),
        )
    }

    /// Whether `proxy` designates one of this broker's topics; returns its name.
    pub fn local_topic_name(&self, proxy: &ProxyData) -> Option<String> {
        if proxy.identity.category != self.name() || proxy.endpoints != self.endpoints.topic_manager
        {
            return None;
        }
        let name = proxy.identity.name.strip_prefix("topic.")?;
        self.topic(name).map(|t| t.name().to_owned())
    }

    /// Runs a store operation off the async threads.
    ///
    /// # Errors
    ///
    /// The store's error, or a `Database` error if the blocking task died.
    pub async fn with_store<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || f(&store))
            .await
            .unwrap_or_else(|e| {
                Err(StoreError::Corrupt {
                    table: "-",
                    reason: format!("store task failed: {e}"),
                })
            })
    }
}
