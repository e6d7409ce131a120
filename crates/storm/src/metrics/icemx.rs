//! IceStorm's IceMX maps, `Topic` and `Subscriber`, in the views of the
//! admin `Metrics` facet (`IceMX::MetricsAdmin`): with
//! `IceMX.Metrics.<view>.*` properties and `Ice.Admin.Endpoints`,
//! `getMetricsView` lists them beside the runtime's own maps, as IceStorm
//! 3.7's service does.
//!
//! | map | class | members after `Metrics`' |
//! |---|---|---|
//! | `Topic` | `::IceMX::TopicMetrics` | `published`, `forwarded` (long) |
//! | `Subscriber` | `::IceMX::SubscriberMetrics` | `queued`, `outstanding` (int), `delivered` (long) |
//!
//! The attributes, as IceStorm's observers name them (the map's
//! `GroupBy`, default `id`, `Accept.*` and `Reject.*` work on them):
//!
//! - `Topic`: `parent` and `service` (the IceStorm instance name), `id`
//!   and `topic` (the topic name);
//! - `Subscriber`: `parent` and `topic` (its topic), `service`, `id` and
//!   `proxy` (its proxy string), `identity`, `facet`, `mode`, `link`
//!   (`true` for a link to another topic), `state` (`online`,
//!   `offline`).
//!
//! Each topic and subscriber that exists counts `total` 1 and `current`
//! 1 in its entry. The values are read from [`Instance::metrics`] when
//! a view is read ([`floe::runtime::MetricsProvider`]): nothing is added
//! to the event path. A destroyed topic or a removed subscriber is
//! reported with its last counters and `current` 0
//! ([`super::detached`]), and each map keeps its `RetainDetached`
//! (default 10) detached entries, the last to go, as IceStorm's do.

use std::sync::{Arc, Weak};

use floe::runtime::{Communicator, MetricsField, MetricsObject, MetricsProvider};

use super::MetricsSnapshot;
use crate::instance::Instance;

/// Which of the two maps a provider serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Map {
    Topic,
    Subscriber,
}

/// One of IceStorm's maps over a broker instance (held weakly: the
/// communicator outlives nothing through it).
#[derive(Debug)]
struct StormMap {
    map: Map,
    instance: Weak<Instance>,
}

/// Saturates a count to a Slice `long`.
fn long(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Saturates a count to a Slice `int`.
fn int(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// `current` of an object: 1 while it exists, 0 once detached.
fn current(detached: Option<u64>) -> i32 {
    i32::from(detached.is_none())
}

/// The `Topic` objects of `snapshot` (destroyed ones too), for the
/// IceStorm instance `service`.
fn topics(service: &str, snapshot: &MetricsSnapshot) -> Vec<MetricsObject> {
    snapshot
        .topics
        .iter()
        .chain(&snapshot.detached_topics)
        .map(|t| MetricsObject {
            attributes: vec![
                ("parent", service.to_owned()),
                ("service", service.to_owned()),
                ("id", t.name.clone()),
                ("topic", t.name.clone()),
            ],
            total: 1,
            current: current(t.detached),
            fields: vec![
                MetricsField::Long(long(t.published)),
                MetricsField::Long(long(t.forwarded)),
            ],
            detached: t.detached,
            ..MetricsObject::default()
        })
        .collect()
}

/// The `Subscriber` objects of `snapshot` (removed ones too).
fn subscribers(service: &str, snapshot: &MetricsSnapshot) -> Vec<MetricsObject> {
    snapshot
        .subscribers
        .iter()
        .chain(&snapshot.detached_subscribers)
        .map(|s| MetricsObject {
            attributes: vec![
                ("parent", s.topic.clone()),
                ("topic", s.topic.clone()),
                ("service", service.to_owned()),
                ("id", s.proxy.clone()),
                ("proxy", s.proxy.clone()),
                ("identity", s.id.clone()),
                ("facet", s.facet.clone()),
                ("mode", s.mode.clone()),
                ("link", s.link.to_string()),
                (
                    "state",
                    if s.offline { "offline" } else { "online" }.to_owned(),
                ),
            ],
            total: 1,
            current: current(s.detached),
            fields: vec![
                MetricsField::Int(int(s.queued)),
                MetricsField::Int(int(s.outstanding)),
                MetricsField::Long(long(s.delivered)),
            ],
            detached: s.detached,
            ..MetricsObject::default()
        })
        .collect()
}

impl MetricsProvider for StormMap {
    fn map_name(&self) -> &'static str {
        match self.map {
            Map::Topic => "Topic",
            Map::Subscriber => "Subscriber",
        }
    }

    fn type_ids(&self) -> &'static [&'static str] {
        match self.map {
            Map::Topic => &["::IceMX::TopicMetrics", "::IceMX::Metrics"],
            Map::Subscriber => &["::IceMX::SubscriberMetrics", "::IceMX::Metrics"],
        }
    }

    fn objects(&self) -> Vec<MetricsObject> {
        let Some(instance) = self.instance.upgrade() else {
            return Vec::new();
        };
        let snapshot = instance.metrics();
        match self.map {
            Map::Topic => topics(instance.name(), &snapshot),
            Map::Subscriber => subscribers(instance.name(), &snapshot),
        }
    }
}

/// Adds the `Topic` and `Subscriber` maps of `instance` to
/// `communicator`'s metrics views. Returns `false` when the communicator
/// has no metrics view (no `IceMX.Metrics.*` property).
pub fn register(communicator: &Communicator, instance: &Arc<Instance>) -> bool {
    [Map::Topic, Map::Subscriber].into_iter().all(|map| {
        communicator.add_metrics_provider(Arc::new(StormMap {
            map,
            instance: Arc::downgrade(instance),
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{SubscriberSnapshot, TopicSnapshot};

    #[test]
    fn objects_carry_icestorm_attributes() {
        let snapshot = MetricsSnapshot {
            topics: vec![TopicSnapshot {
                name: "t".into(),
                published: 7,
                forwarded: 2,
                ..TopicSnapshot::default()
            }],
            subscribers: vec![SubscriberSnapshot {
                topic: "t".into(),
                id: "s".into(),
                proxy: "s -o:tcp -h 127.0.0.1 -p 1".into(),
                mode: "oneway".into(),
                delivered: 5,
                queued: 1,
                ..SubscriberSnapshot::default()
            }],
            ..Default::default()
        };
        let t = &topics("IceStorm", &snapshot)[0];
        assert_eq!(t.get_attr("id"), Some("t"));
        assert_eq!(t.get_attr("parent"), Some("IceStorm"));
        assert_eq!(t.fields, [MetricsField::Long(7), MetricsField::Long(2)]);
        let s = &subscribers("IceStorm", &snapshot)[0];
        assert_eq!(s.get_attr("id"), Some("s -o:tcp -h 127.0.0.1 -p 1"));
        assert_eq!(s.get_attr("identity"), Some("s"));
        assert_eq!(s.get_attr("link"), Some("false"));
        assert_eq!(
            s.fields,
            [
                MetricsField::Int(1),
                MetricsField::Int(0),
                MetricsField::Long(5)
            ]
        );
    }

    trait GetAttr {
        fn get_attr(&self, name: &str) -> Option<&str>;
    }

    impl GetAttr for MetricsObject {
        fn get_attr(&self, name: &str) -> Option<&str> {
            self.attributes
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.as_str())
        }
    }
}
