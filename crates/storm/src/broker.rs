//! [`Broker`]: a running floe-storm: the store loaded, topics restored with
//! their subscriber and link tasks, and requests routed to servants by
//! identity.
//!
//! The broker serves two object adapters (§8.1), with `I` the instance name:
//!
//! | adapter | identity | servant |
//! |---|---|---|
//! | TopicManager | `I/TopicManager` | [`crate::topic_manager`] |
//! | TopicManager | `IceStorm/Finder` | [`crate::finder`] |
//! | TopicManager | `I/topic.T` | [`crate::topic`] |
//! | Publish | `I/T.publish` | [`crate::publisher::publish`] |
//! | Publish | `I/topic.T.publish.<subscriber>` | [`crate::publisher::publish_to`] |
//! | Publish | `I/T.link` | [`crate::publisher::forward`] |

use std::sync::Arc;

use floe::wire::Identity;

use crate::config::StormConfig;
use crate::dispatch::{Reply, Request};
use crate::finder;
use crate::instance::{AdapterEndpoints, Instance};
use crate::publisher;
use crate::sink::SinkFactory;
use crate::store::{Store, StoreError};
use crate::topic::{self, Topic};
use crate::topic_manager;

/// A broker instance.
#[derive(Clone, Debug)]
pub struct Broker {
    inst: Arc<Instance>,
}

impl Broker {
    /// Opens the store in `config.data_dir`, restores every topic and starts
    /// delivery. Must be called within a tokio runtime.
    ///
    /// # Errors
    ///
    /// If the store cannot be opened or read.
    pub fn open(
        config: StormConfig,
        endpoints: AdapterEndpoints,
        sinks: Arc<dyn SinkFactory>,
    ) -> Result<Broker, StoreError> {
        let store = Arc::new(Store::open(&config.data_dir)?);
        let records = store.load()?;
        let inst = Arc::new(Instance {
            delivery: config.delivery(),
            config,
            store,
            sinks,
            endpoints,
            mutation: tokio::sync::Mutex::new(()),
            topics: Default::default(),
        });
        let mut subscribers = 0;
        for rec in records {
            subscribers += rec.subscribers.len();
            let name = rec.name.clone();
            let t = Topic::restore(&inst, rec);
            inst.topics
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .insert(name, t);
        }
        tracing::info!(
            topics = inst.topics.read().unwrap_or_else(|p| p.into_inner()).len(),
            subscribers,
            store = %inst.store.path().display(),
            "floe-storm state loaded"
        );
        Ok(Broker { inst })
    }

    /// The shared state.
    pub fn instance(&self) -> &Arc<Instance> {
        &self.inst
    }

    /// The topic called `name`.
    pub fn topic(&self, name: &str) -> Option<Arc<Topic>> {
        self.inst.topic(name)
    }

    /// Stops every subscriber and link task and forgets the topics (the
    /// store keeps them). Requests dispatched afterwards find no topic.
    pub fn close(&self) {
        let topics =
            std::mem::take(&mut *self.inst.topics.write().unwrap_or_else(|p| p.into_inner()));
        for t in topics.values() {
            t.shut_down();
        }
    }

    /// Logs every topic's counters.
    pub fn report(&self) {
        let topics: Vec<Arc<Topic>> = self
            .inst
            .topics
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        for t in topics {
            t.report();
        }
    }

    /// Dispatches a request that arrived on the TopicManager adapter.
    pub async fn dispatch_topic_manager(
        &self,
        identity: &Identity,
        facet: &str,
        req: &Request,
    ) -> Reply {
        let inst = &self.inst;
        let target = if *identity == finder::finder_identity() {
            Target::Finder
        } else if identity.category != inst.name() {
            Target::None
        } else if identity.name == "TopicManager" {
            Target::Manager
        } else if let Some(t) = identity
            .name
            .strip_prefix("topic.")
            .and_then(|n| inst.topic(n))
        {
            Target::Topic(t)
        } else {
            Target::None
        };
        if !facet.is_empty() && !matches!(target, Target::None) {
            return Reply::FacetNotExist;
        }
        match target {
            Target::Finder => finder::dispatch(inst, req),
            Target::Manager => topic_manager::dispatch(inst, req).await,
            Target::Topic(t) => topic::dispatch(inst, &t, req).await,
            Target::None => Reply::ObjectNotExist,
        }
    }

    /// Dispatches a request that arrived on the Publish adapter.
    pub fn dispatch_publish(&self, identity: &Identity, facet: &str, req: &Request) -> Reply {
        let inst = &self.inst;
        if identity.category != inst.name() {
            return Reply::ObjectNotExist;
        }
        let name = identity.name.as_str();
        let reply = if let Some(t) = name.strip_suffix(".publish").and_then(|n| inst.topic(n)) {
            Some((t, PublishTarget::All))
        } else if let Some(t) = name.strip_suffix(".link").and_then(|n| inst.topic(n)) {
            Some((t, PublishTarget::Link))
        } else {
            self.per_subscriber(name)
        };
        let Some((topic, target)) = reply else {
            return Reply::ObjectNotExist;
        };
        if !facet.is_empty() {
            return Reply::FacetNotExist;
        }
        match target {
            PublishTarget::All => publisher::publish(&topic, req),
            PublishTarget::Link => publisher::forward(&topic, req),
            PublishTarget::One(sub) => publisher::publish_to(&topic, &sub, req),
        }
    }

    /// Resolves `topic.T.publish.<id>`, trying each topic whose name fits
    /// (topic names may themselves contain `.publish.`).
    fn per_subscriber(&self, name: &str) -> Option<(Arc<Topic>, PublishTarget)> {
        let rest = name.strip_prefix("topic.")?;
        let topics = self.inst.topics.read().unwrap_or_else(|p| p.into_inner());
        for (tname, t) in topics.iter() {
            if let Some(sub) = rest
                .strip_prefix(tname.as_str())
                .and_then(|r| r.strip_prefix(".publish."))
            {
                if t.has_subscriber(sub) {
                    return Some((t.clone(), PublishTarget::One(sub.to_owned())));
                }
            }
        }
        None
    }
}

enum Target {
    Finder,
    Manager,
    Topic(Arc<Topic>),
    None,
}

enum PublishTarget {
    All,
    Link,
    One(String),
}
