//! [`Broker`]: a running floe-storm: the store loaded, topics restored with
//! their subscriber and link tasks, and requests routed to servants by
//! identity.
//!
//! The broker serves two object adapters (§8.1), with `I` the instance name:
//!
//! | adapter | identity | servant |
//! |---|---|---|
//! | TopicManager | `I/TopicManager` | [`TopicManagerServant`] (generated `TopicManagerInternalDispatcher`) |
//! | TopicManager | `IceStorm/Finder` | [`FinderServant`] (generated `FinderDispatcher`) |
//! | TopicManager | `I/topic.T` | [`TopicServant`] (generated `TopicInternalDispatcher`) |
//! | Publish | `I/T.publish` | [`crate::publisher::publish`] |
//! | Publish | `I/topic.T.publish.<subscriber>` | [`crate::publisher::publish_to`] |
//! | Publish | `I/T.link` | [`LinkServant`] (generated `TopicLinkDispatcher`) |
//!
//! The dispatch functions take the runtime's [`Current`] and answer what a
//! servant answers, so the server hands requests straight through and
//! tests call them without a network. Built-in operations (`ice_ping`,
//! `ice_isA`, `ice_id`, `ice_ids`) are answered here from the generated
//! dispatcher's type ids, since one default servant serves objects of
//! several types; publishers turn them into events (§8.4).

use std::sync::Arc;

use floe::runtime::{Current, Dispatch, DispatchError, DispatchResult, Servant};
use floe::wire::{Decoder, Encapsulation, Identity};

use crate::config::StormConfig;
use crate::finder::{self, FinderServant};
use crate::instance::{AdapterEndpoints, Instance};
use crate::link::LinkServant;
use crate::metrics::MetricsSnapshot;
use crate::publisher;
use crate::sink::SinkFactory;
use crate::slice::ice_storm::{
    FinderDispatcher, TopicInternalDispatcher, TopicLinkDispatcher, TopicManagerInternalDispatcher,
};
use crate::store::{Store, StoreError};
use crate::topic::{Topic, TopicServant};
use crate::topic_manager::TopicManagerServant;

/// A broker instance.
#[derive(Clone)]
pub struct Broker {
    inst: Arc<Instance>,
    manager: Arc<TopicManagerInternalDispatcher<TopicManagerServant>>,
    finder: Arc<FinderDispatcher<FinderServant>>,
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Broker").field("inst", &self.inst).finish()
    }
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
            replica: Default::default(),
            detached: Default::default(),
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
        Ok(Broker {
            manager: TopicManagerInternalDispatcher::new(TopicManagerServant::new(inst.clone())),
            finder: FinderDispatcher::new(FinderServant::new(inst.clone())),
            inst,
        })
    }

    /// The shared state.
    pub fn instance(&self) -> &Arc<Instance> {
        &self.inst
    }

    /// The topic called `name`.
    pub fn topic(&self, name: &str) -> Option<Arc<Topic>> {
        self.inst.topic(name)
    }

    /// Stops every subscriber and link task, logs each topic's statistics
    /// and forgets the topics (the store keeps them). Requests dispatched
    /// afterwards find no topic; publishes waiting for room go on without
    /// the stopped subscribers.
    pub fn close(&self) {
        let topics =
            std::mem::take(&mut *self.inst.topics.write().unwrap_or_else(|p| p.into_inner()));
        for t in topics.values() {
            t.shut_down_and_report();
        }
    }

    /// Waits until every topic's subscribers and links have sent what
    /// they were offered (a graceful shutdown's drain; see
    /// [`crate::server::Server::shutdown`]). Checks every few
    /// milliseconds: it runs once, at shutdown.
    pub async fn drained(&self) {
        loop {
            if self.topics().iter().all(|t| t.is_drained()) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    /// Every topic's and subscriber's counters now ([`crate::metrics`]).
    pub fn metrics(&self) -> MetricsSnapshot {
        self.inst.metrics()
    }

    /// Logs every topic's counters.
    pub fn report(&self) {
        for t in self.topics() {
            t.report();
        }
    }

    /// The topics now (a snapshot, so no lock is held while using them).
    fn topics(&self) -> Vec<Arc<Topic>> {
        self.inst
            .topics
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// The servant of `identity` on the TopicManager adapter.
    fn locate(&self, identity: &Identity) -> Option<Arc<dyn Servant>> {
        let inst = &self.inst;
        if *identity == finder::finder_identity() {
            Some(self.finder.clone())
        } else if identity.category != inst.name() {
            None
        } else if identity.name == "TopicManager" {
            Some(self.manager.clone())
        } else {
            let topic = identity
                .name
                .strip_prefix("topic.")
                .and_then(|n| inst.topic(n))?;
            Some(TopicInternalDispatcher::new(TopicServant::new(
                inst.clone(),
                topic,
            )))
        }
    }

    /// Dispatches a request that arrived on the TopicManager adapter
    /// (`current.id` picks the object; built-ins included).
    pub fn dispatch_topic_manager(&self, current: Current, params: Encapsulation) -> Dispatch {
        let Some(servant) = self.locate(&current.id) else {
            return Dispatch::error(DispatchError::object_not_exist());
        };
        if !current.facet.is_empty() {
            return Dispatch::error(DispatchError::facet_not_exist());
        }
        dispatch_to(servant, current, params)
    }

    /// Dispatches a request that arrived on the Publish adapter.
    pub fn dispatch_publish(&self, current: Current, params: Encapsulation) -> Dispatch {
        let inst = &self.inst;
        if current.id.category != inst.name() {
            return Dispatch::error(DispatchError::object_not_exist());
        }
        let name = current.id.name.as_str();
        let target = if let Some(t) = name.strip_suffix(".publish").and_then(|n| inst.topic(n)) {
            Some((t, PublishTarget::All))
        } else if let Some(t) = name.strip_suffix(".link").and_then(|n| inst.topic(n)) {
            Some((t, PublishTarget::Link))
        } else {
            self.per_subscriber(name)
        };
        let Some((topic, target)) = target else {
            return Dispatch::error(DispatchError::object_not_exist());
        };
        if !current.facet.is_empty() {
            return Dispatch::error(DispatchError::facet_not_exist());
        }
        match target {
            PublishTarget::All => publisher::publish(&topic, current, params),
            PublishTarget::One(sub) => publisher::publish_to(&topic, &sub, current, params),
            PublishTarget::Link => dispatch_to(
                TopicLinkDispatcher::new(LinkServant::new(topic)),
                current,
                params,
            ),
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

enum PublishTarget {
    All,
    Link,
    One(String),
}

/// Dispatches to a generated dispatcher, answering the built-ins from its
/// type ids as the runtime does for servants it finds itself.
fn dispatch_to(servant: Arc<dyn Servant>, current: Current, params: Encapsulation) -> Dispatch {
    if current.operation.starts_with("ice_") {
        if let Some(r) = builtin(&*servant, &current, params.clone()) {
            return Dispatch::ready(r);
        }
    }
    servant.dispatch(current, params)
}

/// `ice_ping`, `ice_isA`, `ice_id`, `ice_ids` from the servant's type ids
/// (`None` for another `ice_` operation). Malformed params are status 5.
fn builtin(
    servant: &dyn Servant,
    current: &Current,
    params: Encapsulation,
) -> Option<DispatchResult> {
    let answer = |dec: &mut Decoder| -> floe::wire::Result<bytes::Bytes> {
        Ok(match current.operation.as_str() {
            "ice_isA" => {
                let id = dec.read_string()?;
                dec.finish_encapsulation()?;
                let is_a = servant.ice_ids().contains(&id.as_str());
                current.encode_reply(|enc| enc.write_bool(is_a))
            }
            "ice_ping" => {
                dec.finish_encapsulation()?;
                current.empty_reply()
            }
            "ice_id" => {
                dec.finish_encapsulation()?;
                current.encode_reply(|enc| enc.write_string(servant.ice_id()))
            }
            _ => {
                dec.finish_encapsulation()?;
                current.encode_reply(|enc| {
                    let ids = servant.ice_ids();
                    enc.write_size(ids.len());
                    for id in ids {
                        enc.write_string(id);
                    }
                })
            }
        })
    };
    if !matches!(
        current.operation.as_str(),
        "ice_isA" | "ice_ping" | "ice_id" | "ice_ids"
    ) {
        return None;
    }
    Some(
        Decoder::from_encapsulation(params)
            .and_then(|mut dec| answer(&mut dec))
            .map(Into::into)
            .map_err(DispatchError::from),
    )
}
