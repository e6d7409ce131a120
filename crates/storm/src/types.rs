//! The IceStorm Slice types, encoded by hand with floe-wire until `slice2rs`
//! output replaces this module: the `QoS` dictionary, `LinkInfo`, the
//! internal `EventData` of `TopicLink::forward`, the IceStorm user
//! exceptions, and small helpers over floe-wire's [`ProxyData`].
//!
//! Everything here is wire-level and transport-free. Section numbers (§)
//! refer to `shared/reference/ice-protocol.md`.

use bytes::Bytes;
use floe::wire::{Decoder, Encoder, Error, Identity, Result, ENCODING_1_0};
pub use floe::wire::{EndpointData, ProxyData, ProxyMode, TcpEndpoint};

/// `IceStorm::QoS`: `dictionary<string, string>`.
pub type QosDict = std::collections::BTreeMap<String, String>;

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

/// Writes an optional proxy (`None` = null proxy, `00 00`).
pub fn encode_proxy(enc: &mut Encoder, proxy: Option<&ProxyData>) {
    match proxy {
        Some(p) => enc.write(p),
        None => enc.write_raw(&[0, 0]),
    }
}

/// `IceStorm::LinkInfo { Topic* theTopic; string name; int cost; }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkInfo {
    /// The linked topic.
    pub the_topic: ProxyData,
    /// The linked topic's name.
    pub name: String,
    /// The link's cost.
    pub cost: i32,
}

impl LinkInfo {
    /// Writes the struct.
    pub fn encode(&self, enc: &mut Encoder) {
        enc.write(&self.the_topic);
        enc.write_string(&self.name);
        enc.write_i32(self.cost);
    }
}

/// `Ice::OperationMode` (§2.2), shared with floe-wire's protocol layer.
pub use floe::wire::protocol::OperationMode;

/// The mode for a wire byte.
///
/// # Errors
///
/// `Marshal` for values above 2.
pub fn operation_mode(b: u8) -> Result<OperationMode> {
    OperationMode::from_u8(b).ok_or_else(|| Error::marshal(format!("invalid operation mode {b}")))
}

/// IceStorm's user exceptions, with their type ids and members.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StormException {
    /// `::IceStorm::TopicExists`.
    #[error("topic `{0}` exists")]
    TopicExists(String),
    /// `::IceStorm::NoSuchTopic`.
    #[error("no such topic `{0}`")]
    NoSuchTopic(String),
    /// `::IceStorm::LinkExists`.
    #[error("link to `{0}` exists")]
    LinkExists(String),
    /// `::IceStorm::NoSuchLink`.
    #[error("no link to `{0}`")]
    NoSuchLink(String),
    /// `::IceStorm::AlreadySubscribed`.
    #[error("already subscribed")]
    AlreadySubscribed,
    /// `::IceStorm::InvalidSubscriber`.
    #[error("invalid subscriber: {0}")]
    InvalidSubscriber(String),
    /// `::IceStorm::BadQoS`.
    #[error("bad QoS: {0}")]
    BadQoS(String),
}

impl StormException {
    /// The Slice type id.
    pub fn type_id(&self) -> &'static str {
        match self {
            StormException::TopicExists(_) => "::IceStorm::TopicExists",
            StormException::NoSuchTopic(_) => "::IceStorm::NoSuchTopic",
            StormException::LinkExists(_) => "::IceStorm::LinkExists",
            StormException::NoSuchLink(_) => "::IceStorm::NoSuchLink",
            StormException::AlreadySubscribed => "::IceStorm::AlreadySubscribed",
            StormException::InvalidSubscriber(_) => "::IceStorm::InvalidSubscriber",
            StormException::BadQoS(_) => "::IceStorm::BadQoS",
        }
    }

    /// The single string member, if the exception has one.
    fn member(&self) -> Option<&str> {
        match self {
            StormException::TopicExists(s)
            | StormException::NoSuchTopic(s)
            | StormException::LinkExists(s)
            | StormException::NoSuchLink(s)
            | StormException::InvalidSubscriber(s)
            | StormException::BadQoS(s) => Some(s),
            StormException::AlreadySubscribed => None,
        }
    }

    /// Writes the exception body (the content of a status-1 reply
    /// encapsulation) in the encoder's encoding. Encoding 1.1 is one
    /// compact slice with the last-slice flag, as IceStorm sends it
    /// (`20 <type id> <members>`); 1.0 is `usesClasses = false`, the type
    /// id, and the slice with its int32 size.
    pub fn encode(&self, enc: &mut Encoder) {
        if enc.encoding() == ENCODING_1_0 {
            enc.write_bool(false);
            enc.write_string(self.type_id());
            let pos = enc.start_fsize();
            if let Some(m) = self.member() {
                enc.write_string(m);
            }
            // 1.0 slice sizes include their own 4 bytes.
            let len = (enc.len() - pos) as i32;
            enc.buffer_mut()[pos..pos + 4].copy_from_slice(&len.to_le_bytes());
        } else {
            // Flags 0x20 (last slice): exception type ids are always strings,
            // so the low bits stay 0, exactly as IceStorm sends it (§4.13).
            enc.write_u8(0x20);
            enc.write_string(self.type_id());
            if let Some(m) = self.member() {
                enc.write_string(m);
            }
        }
    }
}

/// `IceStorm::EventData { string op; Ice::OperationMode mode; Ice::ByteSeq
/// data; Ice::Context context; }`, the element of `TopicLink::forward`'s
/// `EventDataSeq` (§8.5). `data` holds the original params encapsulation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventData {
    /// Operation name.
    pub op: String,
    /// Operation mode.
    pub mode: OperationMode,
    /// The published params encapsulation, verbatim.
    pub data: Bytes,
    /// The request context.
    pub context: floe::wire::Context,
}

impl EventData {
    /// Writes one `EventData`.
    pub fn encode(&self, enc: &mut Encoder) {
        enc.write_string(&self.op);
        enc.write_enum(self.mode as i32, 2);
        enc.write_byte_seq(&self.data);
        enc.write(&self.context);
    }

    /// Reads one `EventData`; `data` is a zero-copy slice of the input.
    ///
    /// # Errors
    ///
    /// Out of bounds on truncated input; `Marshal` for an invalid mode.
    pub fn decode(dec: &mut Decoder) -> Result<EventData> {
        let op = dec.read_string()?;
        let mode = operation_mode(u8::try_from(dec.read_enum(2)?).unwrap_or(u8::MAX))?;
        let data = dec.read_byte_seq()?;
        let context = dec.read()?;
        Ok(EventData {
            op,
            mode,
            data,
            context,
        })
    }

    /// Reads an `EventDataSeq`.
    ///
    /// # Errors
    ///
    /// As [`EventData::decode`]; the count is checked against the bytes
    /// present (each element takes at least 4 bytes).
    pub fn decode_seq(dec: &mut Decoder) -> Result<Vec<EventData>> {
        let n = dec.read_count(4)?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(Self::decode(dec)?);
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).unwrap())
            .collect()
    }

    #[test]
    fn topic_exists_matches_capture() {
        let mut enc = Encoder::new();
        StormException::TopicExists("news".into()).encode(&mut enc);
        // out/icestorm.txt: reply encaps body `20 17 ::IceStorm::TopicExists 04 news`.
        let mut want = vec![0x20, 0x17];
        want.extend_from_slice(b"::IceStorm::TopicExists");
        want.extend_from_slice(b"\x04news");
        assert_eq!(&enc.finish()[..], &want[..]);
    }

    #[test]
    fn already_subscribed_has_no_members() {
        let mut enc = Encoder::new();
        StormException::AlreadySubscribed.encode(&mut enc);
        let mut want = vec![0x20, 0x1d];
        want.extend_from_slice(b"::IceStorm::AlreadySubscribed");
        assert_eq!(&enc.finish()[..], &want[..]);
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
            mode: OperationMode::Normal,
            data: Bytes::from_static(&[6, 0, 0, 0, 1, 1]),
            context: ctx,
        };
        let mut enc = Encoder::new();
        enc.write_size(1);
        ev.encode(&mut enc);
        assert_eq!(&enc.finish()[..], &want[..]);
        let mut dec = Decoder::new(Bytes::from(want));
        assert_eq!(EventData::decode_seq(&mut dec).unwrap(), vec![ev]);
        // A huge count with no bytes behind it is refused before allocating.
        let mut dec = Decoder::new(Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0x7f]));
        assert!(EventData::decode_seq(&mut dec).is_err());
    }
}
