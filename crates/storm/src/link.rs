//! Federation (§8.5): a link from topic A to topic B makes A a subscriber of
//! B's `TopicLink` object (`I/B.link` on B's Publish adapter). Events cross
//! a link as one twoway `forward(EventDataSeq)` call carrying, per event,
//! the operation, mode, context and the original params encapsulation
//! inside a `sequence<byte>`.
//!
//! Filtering: an event whose `cost` context entry (default 0) exceeds the
//! link's cost does not cross it; a link of cost 0 forwards everything.
//! Events that arrived over a link never cross another one (one hop).
//!
//! `forward` is encoded and decoded by the code generated from
//! `slice/IceStorm.ice` (`TopicLinkPrx`, `TopicLinkDispatcher`).

use std::sync::Arc;

use floe::runtime::{Current, DispatchError};
use floe::wire::Identity;

use crate::event::Event;
use crate::slice::{ice, ice_storm};
use crate::topic::Topic;
use crate::types::{EventData, OperationMode};

/// The `EventData` that carries `event` over a link: `data` is the params
/// encapsulation in wire form (shared with the other deliveries).
pub fn event_data(event: &Event) -> EventData {
    EventData {
        op: event.operation.clone(),
        mode: match event.mode {
            OperationMode::Normal => ice::OperationMode::Normal,
            OperationMode::Nonmutating => ice::OperationMode::Nonmutating,
            OperationMode::Idempotent => ice::OperationMode::Idempotent,
        },
        data: event.wire_params(),
        context: event.context.clone(),
    }
}

/// The `IceStorm::TopicLink` servant of one topic (`I/T.link`), dispatched
/// by the generated `TopicLinkDispatcher`: events forwarded by a linked
/// topic are published here (and not forwarded over this topic's own
/// links). Payloads stay zero-copy slices of the request.
pub struct LinkServant {
    topic: Arc<Topic>,
}

impl LinkServant {
    /// The link object of `topic`.
    pub fn new(topic: Arc<Topic>) -> LinkServant {
        LinkServant { topic }
    }
}

impl ice_storm::TopicLink for LinkServant {
    /// All events are checked before any is published: a malformed one
    /// fails the whole call with status 5.
    async fn forward(&self, events: Vec<EventData>, _: &Current) -> Result<(), DispatchError> {
        let events = events
            .into_iter()
            .map(Event::from_link)
            .collect::<Result<Vec<_>, _>>()?;
        // Each waits for room like any publish (back-pressure reaches the
        // forwarding broker through this call's reply).
        for ev in &events {
            if let Some(wait) = self.topic.publish(ev) {
                wait.await;
            }
        }
        Ok(())
    }
}

/// The topic name IceStorm reports for a linked topic: its identity name
/// without the `topic.` prefix.
pub fn linked_topic_name(topic: &Identity) -> String {
    topic
        .name
        .strip_prefix("topic.")
        .unwrap_or(&topic.name)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::crosses;
    use bytes::Bytes;
    use floe::wire::{Context, Decoder, Encapsulation, Encoder};

    fn ev(cost: Option<&str>) -> Arc<Event> {
        let mut ctx = Context::new();
        if let Some(c) = cost {
            ctx.insert("cost".into(), c.into());
        }
        Event::new(
            "o",
            OperationMode::Normal,
            ctx,
            Encapsulation::empty(floe::wire::ENCODING_1_1),
        )
    }

    #[test]
    fn forward_params_match_the_capture() {
        // out/icestorm.txt: forward to IceStorm/news2.link, encaps size 25.
        let mut enc = Encoder::new();
        let mark = enc.start_encapsulation(floe::wire::ENCODING_1_1);
        enc.write(&vec![event_data(&ev(Some("3")))]);
        enc.end_encapsulation(mark);
        let got = enc.finish();
        let want: &[u8] = &[
            0x19, 0, 0, 0, 1, 1, 0x01, 0x01, b'o', 0x00, 0x06, 0x06, 0, 0, 0, 1, 1, 0x01, 0x04,
            b'c', b'o', b's', b't', 0x01, b'3',
        ];
        assert_eq!(&got[..], want);
        let mut dec =
            Decoder::from_encapsulation(Decoder::new(got).read_encapsulation().unwrap()).unwrap();
        let back: Vec<EventData> = dec.read().unwrap();
        let back = Event::from_link(back[0].clone()).unwrap();
        assert!(back.from_link);
        assert_eq!(back.cost, 3);
        assert_eq!(back.params, Encapsulation::empty(floe::wire::ENCODING_1_1));
    }

    #[test]
    fn cost_filter_and_one_hop() {
        assert!(crosses(5, &ev(Some("3"))));
        assert!(crosses(5, &ev(Some("5"))));
        assert!(!crosses(5, &ev(Some("9"))));
        assert!(crosses(0, &ev(Some("9"))));
        assert!(crosses(5, &ev(None)));
        let data = EventData {
            op: "o".into(),
            mode: ice::OperationMode::Normal,
            data: Bytes::from_static(&[6, 0, 0, 0, 1, 1]),
            context: Context::new(),
        };
        assert!(!crosses(0, &Event::from_link(data).unwrap()));
        // A payload that is not one encapsulation is refused.
        let bad = EventData {
            op: "o".into(),
            mode: ice::OperationMode::Normal,
            data: Bytes::from_static(&[9, 0, 0, 0, 1, 1]),
            context: Context::new(),
        };
        assert!(Event::from_link(bad).is_err());
    }

    #[test]
    fn names() {
        assert_eq!(
            linked_topic_name(&Identity::new("topic.news2", "IceStorm")),
            "news2"
        );
    }
}
