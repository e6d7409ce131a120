//! What floe-storm uses of the IceStorm Slice types beyond the generated
//! code in [`crate::slice`]: short names for them, and small helpers over
//! floe-wire's [`ProxyData`] (proxy mode tests, direct proxies, the
//! marshaled form the store keeps).
//!
//! Everything here is wire-level and transport-free. Section numbers (§)
//! refer to `docs/protocol.md`.

use bytes::Bytes;
use floe::wire::{Decoder, Encoder, Identity, Result};
pub use floe::wire::{EndpointData, ProxyData, ProxyMode, TcpEndpoint};

pub use crate::slice::ice_storm::{
    AlreadySubscribed, BadQoS, EventData, InvalidSubscriber, LinkExists, LinkInfo, NoSuchLink,
    NoSuchTopic, TopicExists,
};

/// `IceStorm::QoS`: `dictionary<string, string>`.
pub type QosDict = crate::slice::ice_storm::QoS;

/// Proxy mode: twoway.
pub const MODE_TWOWAY: ProxyMode = ProxyMode::Twoway;
/// Proxy mode: oneway.
pub const MODE_ONEWAY: ProxyMode = ProxyMode::Oneway;
/// Proxy mode: batch oneway.
pub const MODE_BATCH_ONEWAY: ProxyMode = ProxyMode::BatchOneway;
/// Proxy mode: datagram.
pub const MODE_DATAGRAM: ProxyMode = ProxyMode::Datagram;
/// Proxy mode: batch datagram.
pub const MODE_BATCH_DATAGRAM: ProxyMode = ProxyMode::BatchDatagram;

/// `Ice::OperationMode` (§2.2), shared with floe-wire's protocol layer.
pub use floe::wire::protocol::OperationMode;

/// What floe-storm asks of a proxy beyond floe-wire's [`ProxyData`].
pub trait ProxyExt {
    /// Whether requests through this proxy expect replies.
    fn is_twoway(&self) -> bool;
    /// Whether this is a batch oneway or batch datagram proxy.
    fn is_batch(&self) -> bool;
}

impl ProxyExt for ProxyData {
    fn is_twoway(&self) -> bool {
        self.mode == ProxyMode::Twoway
    }

    fn is_batch(&self) -> bool {
        self.mode.is_batch()
    }
}

/// A twoway, direct proxy for `identity` at `endpoints`, encoding 1.1.
pub fn direct_proxy(identity: Identity, endpoints: Vec<EndpointData>) -> ProxyData {
    ProxyData {
        endpoints,
        encoding: floe::wire::ENCODING_1_1,
        ..ProxyData::new(identity)
    }
}

/// A TCP endpoint (`tcp -h host -p port -t timeout`).
pub fn tcp_endpoint(host: &str, port: u16, timeout_ms: i32) -> EndpointData {
    EndpointData::Tcp(TcpEndpoint {
        timeout: timeout_ms,
        ..TcpEndpoint::new(host, i32::from(port))
    })
}

/// Reads a proxy; `Ok(None)` for the null proxy.
///
/// # Errors
///
/// Out of bounds on truncated input, `ProxyUnmarshal` for more than one
/// facet or a mode above 4.
pub fn read_proxy(dec: &mut Decoder) -> Result<Option<ProxyData>> {
    dec.read()
}

/// The encoding-1.1 marshaled form of a proxy (what the store keeps).
pub fn proxy_bytes(p: &ProxyData) -> Bytes {
    let mut enc = Encoder::new();
    enc.write(p);
    enc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe::wire::{UserException, ENCODING_1_0, ENCODING_1_1};

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).unwrap())
            .collect()
    }

    fn exception_body(e: &dyn UserException, encoding: floe::wire::EncodingVersion) -> Vec<u8> {
        // As the generated dispatchers encode declared exceptions.
        floe::runtime::encode_encapsulation(encoding, 64, |enc| enc.write_user_exception(e))[6..]
            .to_vec()
    }

    #[test]
    fn topic_exists_matches_capture() {
        let got = exception_body(
            &TopicExists {
                name: "news".into(),
            },
            ENCODING_1_1,
        );
        // out/icestorm.txt: reply encaps body `20 17 ::IceStorm::TopicExists 04 news`.
        let mut want = vec![0x20, 0x17];
        want.extend_from_slice(b"::IceStorm::TopicExists");
        want.extend_from_slice(b"\x04news");
        assert_eq!(got, want);
    }

    #[test]
    fn already_subscribed_has_no_members() {
        let got = exception_body(&AlreadySubscribed {}, ENCODING_1_1);
        let mut want = vec![0x20, 0x1d];
        want.extend_from_slice(b"::IceStorm::AlreadySubscribed");
        assert_eq!(got, want);
    }

    #[test]
    fn encoding_1_0_exception() {
        // usesClasses = false, type id, then the slice with its int32 size
        // (which counts its own 4 bytes).
        let got = exception_body(&NoSuchTopic { name: "ab".into() }, ENCODING_1_0);
        let mut want = vec![0x00, 0x17];
        want.extend_from_slice(b"::IceStorm::NoSuchTopic");
        want.extend_from_slice(&[7, 0, 0, 0, 2, b'a', b'b']);
        assert_eq!(got, want);
    }

    #[test]
    fn subscriber_proxy_from_capture_round_trips() {
        // subscribeAndGetPublisher({}, sub1) params from out/icestorm.txt.
        let params = hex(
            "00 04 73 75 62 31 00 00 00 00 01 00 01 01 01 01 00 19 00 00 00 01 01 09 \
             31 32 37 2e 30 2e 30 2e 31 c2 5d 00 00 60 ea 00 00 00",
        );
        let mut dec = Decoder::new(Bytes::from(params.clone()));
        let qos: QosDict = dec.read().unwrap();
        assert!(qos.is_empty());
        let p = read_proxy(&mut dec).unwrap().unwrap();
        assert!(dec.is_empty());
        assert_eq!(p.identity, Identity::from_name("sub1"));
        assert_eq!(p.mode, MODE_TWOWAY);
        assert_eq!(p.endpoints.len(), 1);
        assert_eq!(&proxy_bytes(&p)[..], &params[1..]);
        assert_eq!(p.endpoints[0], tcp_endpoint("127.0.0.1", 24002, 60000));
    }

    #[test]
    fn facet_proxy_and_null() {
        let mut dec = Decoder::new(Bytes::from_static(b"\x00\x00"));
        assert!(read_proxy(&mut dec).unwrap().is_none());
        let mut p = direct_proxy(Identity::from_name("sub3"), vec![]);
        p.facet = "f1".into();
        p.mode = MODE_BATCH_ONEWAY;
        let back = read_proxy(&mut Decoder::new(proxy_bytes(&p))).unwrap();
        assert_eq!(back, Some(p));
        // Two facets are refused.
        let mut dec = Decoder::new(Bytes::from_static(b"\x01a\x00\x02\x01x\x01y\x00\x00"));
        assert!(read_proxy(&mut dec).is_err());
    }

    #[test]
    fn event_data_seq_matches_capture() {
        // forward() params from §8.5.
        let want = hex("01 01 6f 00 06 06 00 00 00 01 01 01 04 63 6f 73 74 01 33");
        let mut ctx = floe::wire::Context::new();
        ctx.insert("cost".into(), "3".into());
        let ev = EventData {
            op: "o".into(),
            mode: crate::slice::ice::OperationMode::Normal,
            data: Bytes::from_static(&[6, 0, 0, 0, 1, 1]),
            context: ctx,
        };
        let mut enc = Encoder::new();
        enc.write(&vec![ev.clone()]);
        assert_eq!(&enc.finish()[..], &want[..]);
        let mut dec = Decoder::new(Bytes::from(want));
        assert_eq!(dec.read::<Vec<EventData>>().unwrap(), vec![ev]);
        // A huge count with no bytes behind it is refused before allocating.
        let mut dec = Decoder::new(Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0x7f]));
        assert!(dec.read::<Vec<EventData>>().is_err());
    }
}
