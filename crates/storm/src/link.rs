//! Federation (§8.5): a link from topic A to topic B makes A a subscriber of
//! B's `TopicLink` object (`I/B.link` on B's Publish adapter). Events cross
//! a link as one twoway `forward(EventDataSeq)` call carrying, per event,
//! the operation, mode, context and the original params encapsulation
//! inside a `sequence<byte>`.
//!
//! Filtering: an event whose `cost` context entry (default 0) exceeds the
//! link's cost does not cross it; a link of cost 0 forwards everything.
//! Events that arrived over a link never cross another one (one hop).

use std::sync::Arc;

use bytes::Bytes;
use floe::wire::{Encoder, Identity, ENCODING_1_1};

use crate::dispatch::{close_params, open_params, Reply, Request};
use crate::event::Event;
use crate::types::EventData;

/// Whether `event` may cross a link of cost `link_cost`.
pub fn crosses(link_cost: i32, event: &Event) -> bool {
    !event.from_link && (link_cost == 0 || event.cost <= link_cost)
}

/// The params encapsulation of `forward(events)` (encoding 1.1).
pub fn encode_forward(events: &[Arc<Event>]) -> Bytes {
    let size: usize = events.iter().map(|e| e.size()).sum();
    let mut enc = Encoder::with_capacity(size + 16);
    let mark = enc.start_encapsulation(ENCODING_1_1);
    enc.write_size(events.len());
    for e in events {
        enc.write_string(&e.operation);
        enc.write_enum(e.mode as i32, 2);
        // data: sequence<byte> holding the whole encapsulation.
        let size = e.params.wire_size();
        enc.write_size(size);
        enc.write_i32(size as i32);
        enc.write_u8(e.params.encoding.major);
        enc.write_u8(e.params.encoding.minor);
        enc.write_raw(&e.params.data);
        enc.write(&e.context);
    }
    enc.end_encapsulation(mark);
    enc.finish()
}

/// Decodes a received `forward` request into events (marked as coming
/// from a link). Payloads stay zero-copy slices of the request.
///
/// # Errors
///
/// The status-5 reply for malformed params.
pub fn decode_forward(req: &Request) -> Result<Vec<Arc<Event>>, Reply> {
    let mut dec = open_params(req)?;
    let events = EventData::decode_seq(&mut dec).map_err(|e| Reply::marshal_error(&e))?;
    close_params(&mut dec)?;
    events
        .into_iter()
        .map(|d| Event::from_link(d).map_err(|e| Reply::marshal_error(&e)))
        .collect()
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
    use crate::dispatch::parse_encapsulation;
    use crate::types::OperationMode;
    use floe::wire::{Context, Encapsulation};

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
        let got = encode_forward(&[ev(Some("3"))]);
        let want: &[u8] = &[
            0x19, 0, 0, 0, 1, 1, 0x01, 0x01, b'o', 0x00, 0x06, 0x06, 0, 0, 0, 1, 1, 0x01, 0x04,
            b'c', b'o', b's', b't', 0x01, b'3',
        ];
        assert_eq!(&got[..], want);
        let back = decode_forward(&Request::new(
            "forward",
            0,
            parse_encapsulation(got).unwrap(),
        ))
        .unwrap();
        assert_eq!(back.len(), 1);
        assert!(back[0].from_link);
        assert_eq!(back[0].cost, 3);
        assert_eq!(
            back[0].params,
            Encapsulation::empty(floe::wire::ENCODING_1_1)
        );
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
            mode: OperationMode::Normal,
            data: Bytes::from_static(&[6, 0, 0, 0, 1, 1]),
            context: Context::new(),
        };
        assert!(!crosses(0, &Event::from_link(data).unwrap()));
        // A payload that is not one encapsulation is refused.
        let bad = EventData {
            op: "o".into(),
            mode: OperationMode::Normal,
            data: Bytes::from_static(&[9, 0, 0, 0, 1, 1]),
            context: Context::new(),
        };
        assert!(Event::from_link(bad).is_err());
    }

    #[test]
    fn malformed_forward_is_status_5() {
        let r = Request::new(
            "forward",
            0,
            parse_encapsulation(Bytes::from_static(&[8, 0, 0, 0, 1, 1, 9, 1])).unwrap(),
        );
        assert!(matches!(
            decode_forward(&r),
            Err(Reply::UnknownLocalException(_))
        ));
    }

    #[test]
    fn names() {
        assert_eq!(
            linked_topic_name(&Identity::new("topic.news2", "IceStorm")),
            "news2"
        );
    }
}
