//! [`Instance`]: what every part of one broker shares: settings, the store,
//! the sink factory, the adapters' published endpoints and the topics.
//!
//! Mutations (create, destroy, subscribe, unsubscribe, link, unlink and
//! failure removals) are [`Command`](crate::command::Command)s committed by
//! [`Instance::commit`] (`state.rs`): serialized by [`Instance::mutation`]
//! on a standalone broker, by the Raft log on a replica. Either way the
//! store holds a change before memory shows it, so a reply never reports
//! something the store does not hold. Publishing takes no lock but a
//! topic's read lock.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, RwLock};

use floe::wire::Identity;

use crate::config::StormConfig;
use crate::metrics::detached::Detached;
use crate::metrics::MetricsSnapshot;
use crate::replica::Replica;
use crate::sink::SinkFactory;
use crate::store::{self, Store, StoreError};
use crate::subscriber::{identity_to_string, DeliveryConfig};
use crate::topic::Topic;
use crate::types::{direct_proxy, EndpointData, ProxyData};

/// The published endpoints of the broker's two object adapters, marshaled,
/// and where the proxies it hands out point.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AdapterEndpoints {
    /// The TopicManager adapter (TopicManager, topics, Finder).
    pub topic_manager: Vec<EndpointData>,
    /// The Publish adapter (publishers, links).
    pub publish: Vec<EndpointData>,
    /// A replicated broker's proxies (every replica); `None`: this
    /// broker's own adapters.
    pub replicated: Option<ReplicatedAddresses>,
}

/// Where a replicated broker's proxies point, so that clients reach any
/// replica: every replica's endpoints
/// (`IceStorm.ReplicatedTopicManagerEndpoints`,
/// `IceStorm.ReplicatedPublishEndpoints`), or an IceGrid replica group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplicatedAddresses {
    /// Topic manager and topic proxies.
    pub topic_manager: ObjectAddress,
    /// Publisher and link proxies.
    pub publish: ObjectAddress,
}

/// The address part of a proxy: endpoints, or an adapter (replica group)
/// id for clients to resolve through their locator.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectAddress {
    /// Endpoints (empty with an adapter id).
    pub endpoints: Vec<EndpointData>,
    /// Adapter or replica group id (empty with endpoints).
    pub adapter_id: String,
}

impl ObjectAddress {
    /// A proxy for `identity` at this address.
    pub fn proxy(&self, identity: Identity) -> ProxyData {
        ProxyData {
            adapter_id: self.adapter_id.clone(),
            ..direct_proxy(identity, self.endpoints.clone())
        }
    }
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
    /// A replicated broker's Raft node, set once it runs.
    pub replica: OnceLock<Arc<Replica>>,
    /// Destroyed topics and removed subscribers, for IceMX's
    /// `RetainDetached`.
    pub detached: Detached,
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

    /// Every topic's and subscriber's counters now ([`crate::metrics`]);
    /// each topic is read under its own lock, the topic map only long
    /// enough to list the topics.
    pub fn metrics(&self) -> MetricsSnapshot {
        let topics: Vec<Arc<Topic>> = self
            .topics
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        let mut out = MetricsSnapshot::default();
        for t in topics {
            t.snapshot_into(&mut out);
        }
        self.detached.snapshot_into(&mut out);
        out
    }

    /// A proxy on the TopicManager adapter: at every replica for a
    /// replicated broker.
    fn manager_object(&self, name: String) -> ProxyData {
        let id = Identity::new(name, self.name());
        match &self.endpoints.replicated {
            Some(r) => r.topic_manager.proxy(id),
            None => direct_proxy(id, self.endpoints.topic_manager.clone()),
        }
    }

    /// A proxy on the Publish adapter: at every replica for a replicated
    /// broker.
    fn publish_object(&self, name: String) -> ProxyData {
        let id = Identity::new(name, self.name());
        match &self.endpoints.replicated {
            Some(r) => r.publish.proxy(id),
            None => direct_proxy(id, self.endpoints.publish.clone()),
        }
    }

    /// `I/TopicManager`.
    pub fn topic_manager_proxy(&self) -> ProxyData {
        self.manager_object("TopicManager".into())
    }

    /// `I/topic.T` on the TopicManager adapter.
    pub fn topic_proxy(&self, topic: &str) -> ProxyData {
        self.manager_object(format!("topic.{topic}"))
    }

    /// `I/T.publish` on the Publish adapter.
    pub fn publisher_proxy(&self, topic: &str) -> ProxyData {
        self.publish_object(format!("{topic}.publish"))
    }

    /// `I/TopicManager` on this broker's own TopicManager adapter, even
    /// when replicated (a replica's own, IceStorm's `QueryInfo::replica`).
    pub fn non_replicated_topic_manager_proxy(&self) -> ProxyData {
        direct_proxy(
            Identity::new("TopicManager", self.name()),
            self.endpoints.topic_manager.clone(),
        )
    }

    /// `I/T.publish` on this broker's own Publish adapter, even when
    /// replicated (`getNonReplicatedPublisher`).
    pub fn non_replicated_publisher_proxy(&self, topic: &str) -> ProxyData {
        direct_proxy(
            Identity::new(format!("{topic}.publish"), self.name()),
            self.endpoints.publish.clone(),
        )
    }

    /// `I/topic.T.publish.<subscriber identity>` on the Publish adapter.
    pub fn subscriber_publisher_proxy(&self, topic: &str, subscriber: &Identity) -> ProxyData {
        self.publish_object(format!(
            "topic.{topic}.publish.{}",
            identity_to_string(subscriber)
        ))
    }

    /// `I/T.link` on the Publish adapter.
    pub fn link_proxy(&self, topic: &str) -> ProxyData {
        self.publish_object(format!("{topic}.link"))
    }

    /// Whether `proxy` designates one of this broker's topics (through its
    /// own or its replicated address); returns its name.
    pub fn local_topic_name(&self, proxy: &ProxyData) -> Option<String> {
        if proxy.identity.category != self.name() {
            return None;
        }
        let own = proxy.adapter_id.is_empty() && proxy.endpoints == self.endpoints.topic_manager;
        let replicated = self.endpoints.replicated.as_ref().is_some_and(|r| {
            proxy.endpoints == r.topic_manager.endpoints
                && proxy.adapter_id == r.topic_manager.adapter_id
        });
        if !own && !replicated {
            return None;
        }
        let name = proxy.identity.name.strip_prefix("topic.")?;
        self.topic(name).map(|t| t.name().to_owned())
    }

    /// Runs a store operation off the async threads.
    ///
    /// # Errors
    ///
    /// The store's error, or a `Corrupt` error if the blocking task died.
    pub async fn with_store<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    {
        store::blocking(&self.store, f).await
    }
}
