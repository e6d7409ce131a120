//! Topics and subscribers that are gone, with their last counters, for
//! the IceMX maps' `RetainDetached` (IceStorm's observers keep a
//! destroyed topic's or a removed subscriber's entry until the map drops
//! it): each is recorded when it goes, in the order they went, and the
//! oldest are forgotten past [`KEPT`] of a kind.

use std::collections::VecDeque;
use std::sync::Mutex;

use super::{MetricsSnapshot, SubscriberSnapshot, TopicSnapshot};

/// Detached topics, and detached subscribers, kept at most (a view whose
/// `RetainDetached` is larger shows these).
pub const KEPT: usize = 100;

/// The detached topics and subscribers of a broker, oldest first.
#[derive(Debug, Default)]
pub struct Detached {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// The order the next one gets (larger went later).
    next: u64,
    topics: VecDeque<TopicSnapshot>,
    subscribers: VecDeque<SubscriberSnapshot>,
}

impl Inner {
    fn order(&mut self) -> u64 {
        self.next += 1;
        self.next
    }
}

/// Pushes `item` at the back of `list`, forgetting the oldest past
/// [`KEPT`].
fn keep<T>(list: &mut VecDeque<T>, item: T) {
    if list.len() == KEPT {
        list.pop_front();
    }
    list.push_back(item);
}

impl Detached {
    /// Records removed subscribers (or links), as last read.
    pub fn subscribers(&self, gone: impl IntoIterator<Item = SubscriberSnapshot>) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        for mut s in gone {
            s.detached = Some(inner.order());
            keep(&mut inner.subscribers, s);
        }
    }

    /// Records a destroyed topic and the subscribers it still had, as
    /// last read (`snapshot` is that topic's).
    pub fn topic(&self, snapshot: MetricsSnapshot) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        for mut s in snapshot.subscribers {
            s.detached = Some(inner.order());
            keep(&mut inner.subscribers, s);
        }
        for mut t in snapshot.topics {
            t.detached = Some(inner.order());
            keep(&mut inner.topics, t);
        }
    }

    /// Adds what is recorded to `out`'s detached lists.
    pub fn snapshot_into(&self, out: &mut MetricsSnapshot) {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        out.detached_topics.extend(inner.topics.iter().cloned());
        out.detached_subscribers
            .extend(inner.subscribers.iter().cloned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(id: &str) -> SubscriberSnapshot {
        SubscriberSnapshot {
            topic: "t".into(),
            id: id.into(),
            ..Default::default()
        }
    }

    #[test]
    fn kept_in_the_order_they_went_and_bounded() {
        let d = Detached::default();
        d.subscribers((0..KEPT + 2).map(|i| sub(&i.to_string())));
        d.topic(MetricsSnapshot {
            topics: vec![TopicSnapshot {
                name: "t".into(),
                ..Default::default()
            }],
            subscribers: vec![sub("last")],
            ..Default::default()
        });
        let mut out = MetricsSnapshot::default();
        d.snapshot_into(&mut out);
        assert_eq!(out.detached_subscribers.len(), KEPT);
        assert_eq!(out.detached_subscribers[0].id, "3");
        let last = out.detached_subscribers.last().unwrap();
        assert_eq!(last.id, "last");
        let topic = &out.detached_topics[0];
        assert!(topic.detached > last.detached);
        assert!(out.topics.is_empty() && out.subscribers.is_empty());
    }
}
