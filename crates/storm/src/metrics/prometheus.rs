//! The broker's counters as Prometheus metrics (feature `prometheus`): a
//! prometheus-client [`Collector`] that takes a [`MetricsSnapshot`] at
//! each scrape, so the delivery paths only bump atomics and nothing is
//! registered or unregistered as topics and subscribers come and go.
//!
//! | metric | type | labels | meaning |
//! |---|---|---|---|
//! | `icestorm_topic_published_total` | counter | `topic` | events publishers published |
//! | `icestorm_topic_forwarded_total` | counter | `topic` | events received over links |
//! | `icestorm_topic_subscribers` | gauge | `topic` | subscribers now (links not included) |
//! | `icestorm_topic_links` | gauge | `topic` | links to other topics now |
//! | `icestorm_topic_removed_subscribers_total` | counter | `topic` | subscribers removed after failures |
//! | `icestorm_subscriber_delivered_total` | counter | `topic`, `subscriber` | events delivered |
//! | `icestorm_subscriber_dropped_total` | counter | `topic`, `subscriber` | events dropped (offline, `DropEvents`, removal) |
//! | `icestorm_subscriber_queued` | gauge | `topic`, `subscriber` | events in its queue now |
//! | `icestorm_subscriber_outstanding` | gauge | `topic`, `subscriber` | events being delivered now |
//!
//! `subscriber` is the subscriber's identity in Ice's text form; a link
//! is listed as a subscriber named by the linked topic's identity, as
//! `icestormadmin subscribers` lists it. A subscriber's series end when it
//! is unsubscribed or removed (its counts go with it; the topic's totals
//! stay).

use std::fmt;
use std::sync::{Arc, Weak};

#[cfg(test)]
use floe::runtime::prometheus::encode;
use floe::runtime::prometheus::family;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use super::{MetricsSnapshot, SubscriberSnapshot, TopicSnapshot};
use crate::instance::Instance;

/// Takes the broker's snapshot at each scrape. Holds the broker weakly:
/// an exporter does not keep a broker that shuts down alive.
#[derive(Debug)]
struct BrokerCollector {
    instance: Weak<Instance>,
}

impl Collector for BrokerCollector {
    fn encode(&self, encoder: DescriptorEncoder) -> fmt::Result {
        match self.instance.upgrade() {
            Some(instance) => {
                let snapshot = instance.metrics();
                drop(instance);
                encode_snapshot(&snapshot, encoder)
            }
            None => Ok(()),
        }
    }
}

/// A registry whose only collector reads `instance` at each scrape.
pub fn registry(instance: &Arc<Instance>) -> Registry {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(BrokerCollector {
        instance: Arc::downgrade(instance),
    }));
    registry
}

fn topic_counter<'a>(
    topics: &'a [TopicSnapshot],
    value: impl Fn(&TopicSnapshot) -> u64 + 'a,
) -> impl Iterator<Item = ([(&'static str, &'a str); 1], ConstCounter<u64>)> + 'a {
    topics
        .iter()
        .map(move |t| ([("topic", t.name.as_str())], ConstCounter::new(value(t))))
}

fn topic_gauge<'a>(
    topics: &'a [TopicSnapshot],
    value: impl Fn(&TopicSnapshot) -> u64 + 'a,
) -> impl Iterator<Item = ([(&'static str, &'a str); 1], ConstGauge<u64>)> + 'a {
    topics
        .iter()
        .map(move |t| ([("topic", t.name.as_str())], ConstGauge::new(value(t))))
}

type SubscriberLabels<'a> = [(&'static str, &'a str); 2];

fn subscriber_labels(s: &SubscriberSnapshot) -> SubscriberLabels<'_> {
    [("topic", s.topic.as_str()), ("subscriber", s.id.as_str())]
}

fn subscriber_counter<'a>(
    subscribers: &'a [SubscriberSnapshot],
    value: impl Fn(&SubscriberSnapshot) -> u64 + 'a,
) -> impl Iterator<Item = (SubscriberLabels<'a>, ConstCounter<u64>)> + 'a {
    subscribers
        .iter()
        .map(move |s| (subscriber_labels(s), ConstCounter::new(value(s))))
}

fn subscriber_gauge<'a>(
    subscribers: &'a [SubscriberSnapshot],
    value: impl Fn(&SubscriberSnapshot) -> u64 + 'a,
) -> impl Iterator<Item = (SubscriberLabels<'a>, ConstGauge<u64>)> + 'a {
    subscribers
        .iter()
        .map(move |s| (subscriber_labels(s), ConstGauge::new(value(s))))
}

/// Writes every family of the module docs for `snapshot`.
fn encode_snapshot(snapshot: &MetricsSnapshot, mut encoder: DescriptorEncoder) -> fmt::Result {
    use MetricType::{Counter, Gauge};
    let (topics, subscribers) = (&snapshot.topics[..], &snapshot.subscribers[..]);
    let e = &mut encoder;
    family(
        e,
        (
            "icestorm_topic_published",
            "Events published on the topic by publishers.",
            Counter,
        ),
        topic_counter(topics, |t| t.published),
    )?;
    family(
        e,
        (
            "icestorm_topic_forwarded",
            "Events received on the topic over links from other topics.",
            Counter,
        ),
        topic_counter(topics, |t| t.forwarded),
    )?;
    family(
        e,
        (
            "icestorm_topic_subscribers",
            "Subscribers of the topic now (links not included).",
            Gauge,
        ),
        topic_gauge(topics, |t| t.subscribers as u64),
    )?;
    family(
        e,
        (
            "icestorm_topic_links",
            "Links from the topic to other topics now.",
            Gauge,
        ),
        topic_gauge(topics, |t| t.links as u64),
    )?;
    family(
        e,
        (
            "icestorm_topic_removed_subscribers",
            "Subscribers of the topic removed after delivery failures.",
            Counter,
        ),
        topic_counter(topics, |t| t.removed),
    )?;
    family(
        e,
        (
            "icestorm_subscriber_delivered",
            "Events delivered to the subscriber.",
            Counter,
        ),
        subscriber_counter(subscribers, |s| s.delivered),
    )?;
    family(
        e,
        (
            "icestorm_subscriber_dropped",
            "Events not delivered to the subscriber (offline, DropEvents, removal).",
            Counter,
        ),
        subscriber_counter(subscribers, |s| s.dropped),
    )?;
    family(
        e,
        (
            "icestorm_subscriber_queued",
            "Events waiting in the subscriber's queue now.",
            Gauge,
        ),
        subscriber_gauge(subscribers, |s| s.queued as u64),
    )?;
    family(
        e,
        (
            "icestorm_subscriber_outstanding",
            "Events being delivered to the subscriber now.",
            Gauge,
        ),
        subscriber_gauge(subscribers, |s| s.outstanding as u64),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A collector of a fixed snapshot.
    #[derive(Debug)]
    struct Fixed(MetricsSnapshot);

    impl Collector for Fixed {
        fn encode(&self, encoder: DescriptorEncoder) -> fmt::Result {
            encode_snapshot(&self.0, encoder)
        }
    }

    #[test]
    fn snapshot_as_openmetrics_text() {
        let snapshot = MetricsSnapshot {
            topics: vec![TopicSnapshot {
                name: "weather".into(),
                published: 7,
                forwarded: 2,
                subscribers: 1,
                ..Default::default()
            }],
            subscribers: vec![SubscriberSnapshot {
                topic: "weather".into(),
                id: "sub/\"q\"".into(),
                queued: 3,
                outstanding: 1,
                delivered: 5,
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Fixed(snapshot)));
        let text = encode(&registry).unwrap();
        for line in [
            "# TYPE icestorm_topic_published counter",
            "icestorm_topic_published_total{topic=\"weather\"} 7",
            "icestorm_topic_forwarded_total{topic=\"weather\"} 2",
            "# TYPE icestorm_topic_subscribers gauge",
            "icestorm_topic_subscribers{topic=\"weather\"} 1",
            "icestorm_topic_links{topic=\"weather\"} 0",
            "icestorm_subscriber_delivered_total{topic=\"weather\",subscriber=\"sub/\\\"q\\\"\"} 5",
            "icestorm_subscriber_queued{topic=\"weather\",subscriber=\"sub/\\\"q\\\"\"} 3",
            "icestorm_subscriber_outstanding{topic=\"weather\",subscriber=\"sub/\\\"q\\\"\"} 1",
            "# EOF",
        ] {
            assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
        }
    }
}
