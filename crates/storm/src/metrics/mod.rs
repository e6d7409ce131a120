//! The broker's counters, in one place: what a topic and each of its
//! subscribers count while events flow, and [`MetricsSnapshot`], their
//! values read at one moment for whoever reports them (the statistics
//! log, `floe-storm --metrics` for Prometheus, and IceMX's `Topic` and
//! `Subscriber` maps of the admin `Metrics` facet, [`icemx`]).
//!
//! The meanings are IceStorm's (`IceMX::TopicMetrics` and
//! `IceMX::SubscriberMetrics` in `IceStorm/Metrics.ice`):
//!
//! | counter | of | meaning |
//! |---|---|---|
//! | `published` | topic | events publishers published on the topic |
//! | `forwarded` | topic | events that came in over a link from another topic |
//! | `queued` | subscriber | events waiting in its queue now |
//! | `outstanding` | subscriber | events sent and not yet confirmed now (twoway replies, oneway writes, link `forward` calls in flight) |
//! | `delivered` | subscriber | events it was sent successfully |
//!
//! plus the subscribers a topic has now, and floe's own totals (events
//! delivered over all subscribers, dropped, offline, removed).
//!
//! Cost: the hot path only bumps relaxed atomics: one per event on the
//! topic (two with the `events_in` total of the statistics log), one per
//! delivered event (or per delivery of several) per subscriber, and two
//! per delivery taken through a subscriber's task for `outstanding`.
//! `queued` is not counted at all: a snapshot reads the queue's length.
//! [`endpoint`] serves them to Prometheus (`prometheus`, feature
//! `prometheus`).
//! Links are subscribers of their topic (as `getSubscribers` lists them)
//! and are reported with `link: true`.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

pub mod detached;
pub mod endpoint;
pub mod icemx;
#[cfg(feature = "prometheus")]
pub mod prometheus;

pub use endpoint::{MetricsEndpoint, MetricsError};

/// Counters of one topic, shared by its subscriber tasks.
#[derive(Debug, Default)]
pub struct TopicCounters {
    /// Events published on the topic (including those received over links):
    /// `published` + `forwarded`.
    pub events_in: AtomicU64,
    /// Events published by publishers (IceStorm's `TopicMetrics::published`).
    pub published: AtomicU64,
    /// Events that came in over a link (IceStorm's `TopicMetrics::forwarded`).
    pub forwarded: AtomicU64,
    /// Events delivered successfully (per subscriber, so one event to three
    /// subscribers counts three).
    pub events_out: AtomicU64,
    /// Events not delivered to a subscriber: dropped under `DropEvents`,
    /// discarded while it was offline, or queued when it went offline or
    /// was removed.
    pub dropped: AtomicU64,
    /// Subscribers currently offline.
    pub offline: AtomicU64,
    /// Subscribers removed after failures.
    pub removed: AtomicU64,
}

impl TopicCounters {
    /// Counts one event coming into the topic: from a link or from a
    /// publisher.
    pub fn count_in(&self, from_link: bool) {
        self.events_in.fetch_add(1, Ordering::Relaxed);
        if from_link {
            self.forwarded.fetch_add(1, Ordering::Relaxed);
        } else {
            self.published.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Counters of one subscriber (or link), kept in its shared state.
#[derive(Debug, Default)]
pub struct SubscriberCounters {
    /// Events delivered to it (IceStorm's `SubscriberMetrics::delivered`).
    pub delivered: AtomicU64,
    /// Events not delivered to it (see [`TopicCounters::dropped`]).
    pub dropped: AtomicU64,
    /// Events handed to its sink by the delivery task and not yet finished
    /// (IceStorm's `SubscriberMetrics::outstanding`).
    pub outstanding: AtomicUsize,
}

/// One topic's counters at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopicSnapshot {
    /// The topic name.
    pub name: String,
    /// Events published by publishers.
    pub published: u64,
    /// Events that came in over links.
    pub forwarded: u64,
    /// Events delivered, summed over its subscribers and links.
    pub delivered: u64,
    /// Events dropped, summed over its subscribers and links.
    pub dropped: u64,
    /// Subscribers it has now, links not included.
    pub subscribers: usize,
    /// Links to other topics it has now.
    pub links: usize,
    /// Subscribers (and links) offline now.
    pub offline: u64,
    /// Subscribers removed after failures so far.
    pub removed: u64,
    /// For a destroyed topic, the order it went in (see
    /// [`detached`]); `None` while it exists.
    pub detached: Option<u64>,
}

/// One subscriber's (or link's) counters at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubscriberSnapshot {
    /// The topic it subscribes to.
    pub topic: String,
    /// Its identity in Ice's text form (a link: the linked topic's).
    pub id: String,
    /// Its proxy in Ice's text form (a link: the linked topic's).
    pub proxy: String,
    /// Its proxy's facet.
    pub facet: String,
    /// Its proxy's mode: `twoway`, `oneway`, `batch-oneway`, `datagram`
    /// or `batch-datagram`.
    pub mode: String,
    /// Whether it is a link to another topic.
    pub link: bool,
    /// Whether it is offline now (failed, waiting to be retried).
    pub offline: bool,
    /// Events in its queue now.
    pub queued: usize,
    /// Events being delivered now.
    pub outstanding: usize,
    /// Events delivered to it so far.
    pub delivered: u64,
    /// Events dropped for it so far.
    pub dropped: u64,
    /// For a removed subscriber, the order it went in (see
    /// [`detached`]); `None` while it is subscribed.
    pub detached: Option<u64>,
}

/// Every topic's and subscriber's counters at one moment: topics by name,
/// subscribers by topic then subscription order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetricsSnapshot {
    /// The topics.
    pub topics: Vec<TopicSnapshot>,
    /// Their subscribers and links.
    pub subscribers: Vec<SubscriberSnapshot>,
    /// Destroyed topics, oldest first ([`detached`]).
    pub detached_topics: Vec<TopicSnapshot>,
    /// Removed subscribers and links, oldest first ([`detached`]).
    pub detached_subscribers: Vec<SubscriberSnapshot>,
}

impl MetricsSnapshot {
    /// The topic called `name`, if it was there.
    pub fn topic(&self, name: &str) -> Option<&TopicSnapshot> {
        self.topics.iter().find(|t| t.name == name)
    }

    /// The subscribers of topic `name`.
    pub fn subscribers_of<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = &'a SubscriberSnapshot> + 'a {
        self.subscribers.iter().filter(move |s| s.topic == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_in_split_into_published_and_forwarded() {
        let c = TopicCounters::default();
        c.count_in(false);
        c.count_in(false);
        c.count_in(true);
        assert_eq!(c.events_in.load(Ordering::Relaxed), 3);
        assert_eq!(c.published.load(Ordering::Relaxed), 2);
        assert_eq!(c.forwarded.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn snapshot_lookups() {
        let s = MetricsSnapshot {
            topics: vec![TopicSnapshot {
                name: "a".into(),
                published: 1,
                ..Default::default()
            }],
            subscribers: vec![
                SubscriberSnapshot {
                    topic: "a".into(),
                    id: "x".into(),
                    ..Default::default()
                },
                SubscriberSnapshot {
                    topic: "b".into(),
                    id: "y".into(),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        assert_eq!(s.topic("a").map(|t| t.published), Some(1));
        assert!(s.topic("b").is_none());
        let ids: Vec<&str> = s.subscribers_of("a").map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["x"]);
    }
}
