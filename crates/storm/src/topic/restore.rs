//! A topic rebuilt from its stored record ([`Topic::restore`]: a broker
//! starting), or made to match a replicated snapshot's
//! ([`Topic::reconcile`]), with its subscriber and link tasks.

use std::sync::Arc;

use super::{Topic, TopicHost};
use crate::qos::Qos;
use crate::store::TopicRecord;

impl Topic {
    /// Rebuilds a topic from the store and starts its subscribers and links.
    pub fn restore<H: TopicHost>(host: &Arc<H>, record: TopicRecord) -> Arc<Topic> {
        let topic = Topic::new(&record.name);
        for s in record.subscribers {
            // Stored QoS was valid when stored; fall back to defaults if the
            // rules changed since.
            let qos = Qos::parse(&s.qos, &s.proxy).unwrap_or_default();
            topic.add_subscriber(host, s.proxy, &qos, s.seq);
        }
        for l in record.links {
            topic.add_link(host, l.name, l.cost, l.topic, &l.link, l.seq);
        }
        topic
    }

    /// Makes the running subscribers and links match `record` (a replica
    /// installing a snapshot): those not in it stop, new ones start, those
    /// that stay (same identity and sequence number) keep delivering.
    pub(crate) fn reconcile<H: TopicHost>(self: &Arc<Topic>, host: &Arc<H>, record: TopicRecord) {
        {
            let mut state = self.write();
            state.subscribers.retain(|s| {
                record
                    .subscribers
                    .iter()
                    .any(|r| r.seq == s.seq && r.proxy.identity == s.proxy.identity)
            });
            state.links.retain(|l| {
                record
                    .links
                    .iter()
                    .any(|r| r.seq == l.seq && r.topic.identity == l.topic.identity)
            });
        }
        for s in record.subscribers {
            let running = self
                .read()
                .subscribers
                .iter()
                .any(|e| e.seq == s.seq && e.proxy.identity == s.proxy.identity);
            if !running {
                let qos = Qos::parse(&s.qos, &s.proxy).unwrap_or_default();
                self.add_subscriber(host, s.proxy, &qos, s.seq);
            }
        }
        for l in record.links {
            let running = self
                .read()
                .links
                .iter()
                .any(|e| e.seq == l.seq && e.topic.identity == l.topic.identity);
            if !running {
                self.add_link(host, l.name, l.cost, l.topic, &l.link, l.seq);
            }
        }
    }
}
