//! A topic's counters and its subscribers' read at one moment
//! ([`crate::metrics`]), under the topic's read lock only.

use std::sync::atomic::Ordering;

use super::Topic;
use crate::metrics::{MetricsSnapshot, SubscriberSnapshot, TopicSnapshot};
use crate::subscriber::{identity_to_string, Subscriber};
use crate::types::ProxyData;

pub(super) fn subscriber_snapshot(
    topic: &str,
    proxy: &ProxyData,
    subscriber: &Subscriber,
    link: bool,
) -> SubscriberSnapshot {
    let state = subscriber.state();
    let counters = state.counters();
    SubscriberSnapshot {
        topic: topic.to_owned(),
        id: identity_to_string(state.id()),
        proxy: proxy.to_string(),
        facet: proxy.facet.clone(),
        mode: proxy.mode.name().to_owned(),
        link,
        offline: subscriber.is_offline(),
        queued: state.queue().len(),
        outstanding: counters.outstanding.load(Ordering::Relaxed),
        delivered: counters.delivered.load(Ordering::Relaxed),
        dropped: counters.dropped.load(Ordering::Relaxed),
        detached: None,
    }
}

impl Topic {
    /// Adds this topic's counters, and its subscribers' and links' in
    /// subscription order, to `out`.
    pub fn snapshot_into(&self, out: &mut MetricsSnapshot) {
        let state = self.read();
        let c = &self.counters;
        out.topics.push(TopicSnapshot {
            name: self.name.clone(),
            published: c.published.load(Ordering::Relaxed),
            forwarded: c.forwarded.load(Ordering::Relaxed),
            delivered: c.events_out.load(Ordering::Relaxed),
            dropped: c.dropped.load(Ordering::Relaxed),
            subscribers: state.subscribers.len(),
            links: state.links.len(),
            offline: c.offline.load(Ordering::Relaxed),
            removed: c.removed.load(Ordering::Relaxed),
            detached: None,
        });
        let mut entries: Vec<(u64, SubscriberSnapshot)> = state
            .subscribers
            .iter()
            .map(|s| {
                (
                    s.seq,
                    subscriber_snapshot(&self.name, &s.proxy, &s.subscriber, false),
                )
            })
            .chain(state.links.iter().map(|l| {
                let s = subscriber_snapshot(&self.name, &l.topic, &l.subscriber, true);
                (l.seq, s)
            }))
            .collect();
        entries.sort_by_key(|(seq, _)| *seq);
        out.subscribers.extend(entries.into_iter().map(|(_, s)| s));
    }

    /// This topic's counters and its subscribers' now.
    pub fn snapshot(&self) -> MetricsSnapshot {
        let mut out = MetricsSnapshot::default();
        self.snapshot_into(&mut out);
        out
    }
}
