//! [`Topic`]: one IceStorm topic (`I/topic.T`): its subscribers and links,
//! and event fan-out with admission ([`crate::admission`]). The generated
//! servant traits are implemented over it by [`TopicServant`]
//! (`topic_servant.rs`), which validates and commits the operations that
//! change durable state; a topic is rebuilt from the store in `restore.rs`.
//!
//! Behaviour checked against IceStorm 3.7.8:
//! - subscribers are keyed by identity alone: the same identity with
//!   another facet or endpoint raises `AlreadySubscribed`;
//! - a null subscriber raises `InvalidSubscriber("subscriber is a null proxy")`
//!   (also from `unsubscribe`, where the client sees `UnknownUserException`);
//!   unsubscribing an unknown subscriber is not an error;
//! - `getSubscribers` lists subscribers in subscription order, links
//!   included (as the linked topic's identity);
//! - a topic may be linked to itself and with a negative cost; linking to a
//!   null proxy fails with status 7 (UnknownException);
//! - `getName` and the other getters are `idempotent`; `getSubscribers`,
//!   `subscribeAndGetPublisher`, `link`, `unlink`, `destroy` are plain.

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLock, Weak};

use floe::wire::Identity;

use crate::admission::{self, Admission};
use crate::event::{crosses, Event};
use crate::metrics::detached::Detached;
use crate::qos::Qos;
use crate::sink::SinkFactory;
use crate::subscriber::{
    identity_to_string, DeliveryConfig, DeliveryStyle, RemovalHook, RemovalReason, Subscriber,
    SubscriberState, TopicCounters,
};
use crate::types::{LinkInfo, ProxyData};

/// A subscriber of this topic.
struct SubscriberEntry {
    proxy: ProxyData,
    seq: u64,
    subscriber: Subscriber,
}

/// A link from this topic to another.
struct LinkEntry {
    name: String,
    cost: i32,
    topic: ProxyData,
    seq: u64,
    subscriber: Subscriber,
}

#[derive(Default)]
struct TopicState {
    subscribers: Vec<SubscriberEntry>,
    links: Vec<LinkEntry>,
}

mod error;
mod restore;
mod snapshot;

pub use crate::topic_servant::TopicServant;
pub use error::TopicError;

/// What a [`Topic`] needs from the broker that runs it: the sinks and
/// settings its subscriber and link tasks start with, and the removal of
/// one whose delivery failed for good, a change of durable state that the
/// broker commits (`state.rs`).
pub trait TopicHost: Send + Sync + 'static {
    /// Makes the subscribers' and links' delivery sinks.
    fn sinks(&self) -> &dyn SinkFactory;

    /// Delivery settings for subscriber and link tasks.
    fn delivery(&self) -> &DeliveryConfig;

    /// Removes `topic`'s subscriber `id` (its link to the topic of
    /// identity `id` when `link`), the one that started at `seq`, whose
    /// delivery failed for `reason`.
    fn remove_failed(
        self: &Arc<Self>,
        topic: &Topic,
        id: &Identity,
        seq: u64,
        link: bool,
        reason: RemovalReason,
    );
}

/// One topic.
pub struct Topic {
    name: String,
    counters: Arc<TopicCounters>,
    state: RwLock<TopicState>,
    admission: Admission,
}

impl std::fmt::Debug for Topic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Topic").field("name", &self.name).finish()
    }
}

impl Topic {
    /// A topic with no subscribers.
    pub fn new(name: &str) -> Arc<Topic> {
        Arc::new(Topic {
            name: name.to_owned(),
            counters: Arc::new(TopicCounters::default()),
            state: RwLock::new(TopicState::default()),
            admission: Admission::default(),
        })
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, TopicState> {
        // Poisoning only follows a panic elsewhere; the state stays usable.
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, TopicState> {
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The topic name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The topic's counters.
    pub fn counters(&self) -> &TopicCounters {
        &self.counters
    }

    /// Publishes `event` to every subscriber, and to every link it may
    /// cross, once none of them is over its byte budget
    /// ([`crate::admission`]). `None` when that was so at once and the event
    /// is offered already; otherwise the future to await, which waits for
    /// room (in arrival order) and then offers it.
    pub fn publish(
        self: &Arc<Self>,
        event: &Arc<Event>,
    ) -> Option<impl Future<Output = ()> + Send + 'static> {
        self.admit(event, None)
    }

    /// Delivers `event` to one subscriber only (the per-subscriber
    /// publisher), after the same admission as [`Topic::publish`] for that
    /// subscriber; `Err(())` if there is no such subscriber.
    #[allow(clippy::result_unit_err)]
    pub fn publish_to(
        self: &Arc<Self>,
        subscriber: &str,
        event: &Arc<Event>,
    ) -> Result<Option<impl Future<Output = ()> + Send + 'static>, ()> {
        if !self.has_subscriber(subscriber) {
            return Err(());
        }
        Ok(self.admit(event, Some(subscriber.to_owned())))
    }

    /// The admission of `event` (see [`crate::admission`]): `None` when it
    /// was offered at once; otherwise the future that waits for room and
    /// then offers it (not boxed: the publisher's dispatch holds it).
    fn admit(
        self: &Arc<Self>,
        event: &Arc<Event>,
        only: Option<String>,
    ) -> Option<impl Future<Output = ()> + Send + 'static> {
        if let Some(_fan_out) = self.admission.try_now() {
            if self.congested(event, only.as_deref()).is_empty() {
                self.fan_out(event, only.as_deref());
                return None;
            }
        }
        let waiting = self.admission.wait();
        let (topic, event) = (self.clone(), event.clone());
        Some(async move {
            let _waiting = waiting;
            let _turn = topic.admission.turn().await;
            loop {
                let congested = topic.congested(&event, only.as_deref());
                if congested.is_empty() {
                    break;
                }
                for s in congested {
                    admission::room_in(&s).await;
                }
            }
            let _fan_out = topic.admission.fan_out();
            topic.fan_out(&event, only.as_deref());
        })
    }

    /// The subscribers `event` goes to (all, or the one named `only`) that
    /// are over their budget.
    fn congested(&self, event: &Event, only: Option<&str>) -> Vec<Arc<SubscriberState>> {
        let state = self.read();
        let mut out = Vec::new();
        for s in &state.subscribers {
            if only.is_none_or(|id| identity_to_string(&s.proxy.identity) == id)
                && s.subscriber.state().is_congested()
            {
                out.push(s.subscriber.state().clone());
            }
        }
        if only.is_none() {
            for l in &state.links {
                if crosses(l.cost, event) && l.subscriber.state().is_congested() {
                    out.push(l.subscriber.state().clone());
                }
            }
        }
        out
    }

    /// Offers an admitted event (to the subscriber named `only`, or to all
    /// subscribers and the links it may cross).
    fn fan_out(&self, event: &Arc<Event>, only: Option<&str>) {
        self.counters.count_in(event.from_link);
        let state = self.read();
        if let Some(id) = only {
            if let Some(s) = state
                .subscribers
                .iter()
                .find(|s| identity_to_string(&s.proxy.identity) == id)
            {
                s.subscriber.offer(event);
            }
            return;
        }
        for s in &state.subscribers {
            s.subscriber.offer(event);
        }
        for l in &state.links {
            if crosses(l.cost, event) {
                l.subscriber.offer(event);
            }
        }
    }

    /// Subscriber identities in subscription order. Links count as
    /// subscribers, identified by the linked topic's identity, as in
    /// IceStorm (`icestormadmin subscribers` lists them).
    pub fn subscriber_ids(&self) -> Vec<Identity> {
        let state = self.read();
        let mut ids: Vec<(u64, Identity)> = state
            .subscribers
            .iter()
            .map(|s| (s.seq, s.proxy.identity.clone()))
            .chain(
                state
                    .links
                    .iter()
                    .map(|l| (l.seq, l.topic.identity.clone())),
            )
            .collect();
        ids.sort_by_key(|(seq, _)| *seq);
        ids.into_iter().map(|(_, id)| id).collect()
    }

    /// Whether a (non-link) subscriber has this identity text.
    pub fn has_subscriber(&self, identity: &str) -> bool {
        self.read()
            .subscribers
            .iter()
            .any(|s| identity_to_string(&s.proxy.identity) == identity)
    }

    /// Whether a (non-link) subscriber has identity `id`.
    pub fn is_subscribed(&self, id: &Identity) -> bool {
        self.read()
            .subscribers
            .iter()
            .any(|s| &s.proxy.identity == id)
    }

    /// Whether a link goes to the topic of identity `id`.
    pub fn is_linked_to(&self, id: &Identity) -> bool {
        self.read().links.iter().any(|l| &l.topic.identity == id)
    }

    /// Whether a subscriber or a link has identity `id`.
    pub fn is_taken(&self, id: &Identity) -> bool {
        let state = self.read();
        state.subscribers.iter().any(|s| &s.proxy.identity == id)
            || state.links.iter().any(|l| &l.topic.identity == id)
    }

    /// The links, in creation order.
    pub fn link_infos(&self) -> Vec<LinkInfo> {
        self.read()
            .links
            .iter()
            .map(|l| LinkInfo {
                the_topic: Some(l.topic.clone()),
                name: l.name.clone(),
                cost: l.cost,
            })
            .collect()
    }

    /// Number of subscribers currently offline.
    pub fn offline_subscribers(&self) -> usize {
        self.read()
            .subscribers
            .iter()
            .filter(|s| s.subscriber.is_offline())
            .count()
    }

    /// Logs the topic's counters (`tracing` info).
    pub fn report(&self) {
        let (subscribers, links) = {
            let state = self.read();
            (state.subscribers.len(), state.links.len())
        };
        self.log_statistics(subscribers, links);
    }

    fn log_statistics(&self, subscribers: usize, links: usize) {
        let c = &self.counters;
        tracing::info!(
            topic = %self.name,
            subscribers,
            links,
            events_in = c.events_in.load(Ordering::Relaxed),
            events_out = c.events_out.load(Ordering::Relaxed),
            dropped = c.dropped.load(Ordering::Relaxed),
            offline = c.offline.load(Ordering::Relaxed),
            removed = c.removed.load(Ordering::Relaxed),
            "topic statistics"
        );
    }

    /// What a subscriber or link task calls when it gives up: the
    /// broker removes it (see [`TopicHost::remove_failed`]), unless the
    /// broker or this topic is gone.
    fn removal_hook<H: TopicHost>(
        self: &Arc<Topic>,
        host: &Arc<H>,
        seq: u64,
        is_link: bool,
    ) -> RemovalHook {
        let host: Weak<H> = Arc::downgrade(host);
        let topic: Weak<Topic> = Arc::downgrade(self);
        Arc::new(move |id: &Identity, reason: RemovalReason| {
            if let (Some(host), Some(topic)) = (host.upgrade(), topic.upgrade()) {
                host.remove_failed(&topic, id, seq, is_link, reason);
            }
        })
    }

    /// Starts delivery to a subscriber (a committed subscription).
    pub(crate) fn add_subscriber<H: TopicHost>(
        self: &Arc<Topic>,
        host: &Arc<H>,
        proxy: ProxyData,
        qos: &Qos,
        seq: u64,
    ) {
        let style = DeliveryStyle::for_subscriber(&proxy, qos);
        let sink = host.sinks().subscriber_sink(&proxy, qos);
        let subscriber = Subscriber::spawn(
            proxy.identity.clone(),
            style,
            qos.clone(),
            sink,
            host.delivery(),
            self.counters.clone(),
            self.removal_hook(host, seq, false),
        );
        self.write().subscribers.push(SubscriberEntry {
            proxy,
            seq,
            subscriber,
        });
    }

    /// Starts forwarding over a link (a committed link).
    pub(crate) fn add_link<H: TopicHost>(
        self: &Arc<Topic>,
        host: &Arc<H>,
        name: String,
        cost: i32,
        topic: ProxyData,
        link: &ProxyData,
        seq: u64,
    ) {
        let qos = Qos {
            retry_count: -1,
            ..Qos::default()
        };
        let subscriber = Subscriber::spawn(
            topic.identity.clone(),
            DeliveryStyle::Link,
            qos,
            host.sinks().link_sink(link),
            host.delivery(),
            self.counters.clone(),
            self.removal_hook(host, seq, true),
        );
        self.write().links.push(LinkEntry {
            name,
            cost,
            topic,
            seq,
            subscriber,
        });
    }

    /// Removes a subscriber, or a link when `link`, from memory (if `seq`
    /// is given, only that subscription, not a later one with the same
    /// identity), recording its last counters in `detached`. Whether it
    /// was there.
    pub(crate) fn take(
        &self,
        id: &Identity,
        seq: Option<u64>,
        link: bool,
        detached: &Detached,
    ) -> bool {
        let matches = |identity: &Identity, s: u64| identity == id && seq.is_none_or(|q| q == s);
        let last = {
            let mut state = self.write();
            if link {
                let Some(i) = state
                    .links
                    .iter()
                    .position(|l| matches(&l.topic.identity, l.seq))
                else {
                    return false;
                };
                let l = state.links.remove(i);
                snapshot::subscriber_snapshot(&self.name, &l.topic, &l.subscriber, true)
            } else {
                let Some(i) = state
                    .subscribers
                    .iter()
                    .position(|s| matches(&s.proxy.identity, s.seq))
                else {
                    return false;
                };
                let s = state.subscribers.remove(i);
                snapshot::subscriber_snapshot(&self.name, &s.proxy, &s.subscriber, false)
            }
        };
        detached.subscribers([last]);
        true
    }

    /// Stops every subscriber and link task (used by `destroy`).
    pub fn shut_down(&self) {
        let (subscribers, links) = {
            let mut state = self.write();
            (
                std::mem::take(&mut state.subscribers),
                std::mem::take(&mut state.links),
            )
        };
        // Dropped outside the lock: each counts what it still had queued.
        drop((subscribers, links));
    }

    /// Whether every subscriber and link has sent what it was offered
    /// (see [`crate::subscriber::SubscriberState::is_drained`]).
    pub fn is_drained(&self) -> bool {
        let state = self.read();
        state
            .subscribers
            .iter()
            .map(|e| &e.subscriber)
            .chain(state.links.iter().map(|e| &e.subscriber))
            .all(|s| s.state().is_drained())
    }

    /// Stops every subscriber and link task, then logs the statistics
    /// (with the subscribers and links it had, and what they still had
    /// queued counted as dropped).
    pub fn shut_down_and_report(&self) {
        let (subscribers, links) = {
            let state = self.read();
            (state.subscribers.len(), state.links.len())
        };
        self.shut_down();
        self.log_statistics(subscribers, links);
    }
}
