//! [`ProxyData`]: everything a proxy carries on the wire, and its
//! marshaling in encoding 1.0 and 1.1 (§4.10).
//!
//! A proxy is its identity (name, then category), its facet as a sequence
//! of zero or one string, its mode byte, the secure flag, protocol and
//! encoding versions (1.1 streams only), then either its endpoints or, when
//! it has none, its adapter id. An empty identity (`00 00`) is the null
//! proxy and nothing follows it, so proxies are read and written as
//! `Option<ProxyData>`. Text forms live in [`proxy_string`](crate::proxy_string).

use crate::codec::{Decode, Encode, WireType};
use crate::decoder::Decoder;
use crate::encoder::Encoder;
use crate::endpoint::EndpointData;
use crate::error::{Error, Result};
use crate::identity::Identity;
use crate::optional::OptionalKind;
use crate::version::{EncodingVersion, ProtocolVersion, ENCODING_1_0, PROTOCOL_1_0};

/// How requests through a proxy are sent (its mode byte on the wire).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ProxyMode {
    /// Request and reply (`-t`, 0).
    #[default]
    Twoway = 0,
    /// Request without reply (`-o`, 1).
    Oneway = 1,
    /// Queued oneway requests sent together (`-O`, 2).
    BatchOneway = 2,
    /// Oneway over UDP (`-d`, 3).
    Datagram = 3,
    /// Queued datagrams sent together (`-D`, 4).
    BatchDatagram = 4,
}

impl ProxyMode {
    /// The mode for a wire byte, if it is one of 0..=4.
    pub fn from_u8(b: u8) -> Option<Self> {
        Some(match b {
            0 => ProxyMode::Twoway,
            1 => ProxyMode::Oneway,
            2 => ProxyMode::BatchOneway,
            3 => ProxyMode::Datagram,
            4 => ProxyMode::BatchDatagram,
            _ => return None,
        })
    }

    /// `twoway`, `oneway`, `batch-oneway`, `datagram` or `batch-datagram`.
    pub fn name(self) -> &'static str {
        match self {
            ProxyMode::Twoway => "twoway",
            ProxyMode::Oneway => "oneway",
            ProxyMode::BatchOneway => "batch-oneway",
            ProxyMode::Datagram => "datagram",
            ProxyMode::BatchDatagram => "batch-datagram",
        }
    }

    /// Whether requests wait for replies.
    pub fn is_twoway(self) -> bool {
        self == ProxyMode::Twoway
    }

    /// The option that selects this mode in a stringified proxy (`-t`, `-o`, ...).
    pub fn option(self) -> &'static str {
        match self {
            ProxyMode::Twoway => "-t",
            ProxyMode::Oneway => "-o",
            ProxyMode::BatchOneway => "-O",
            ProxyMode::Datagram => "-d",
            ProxyMode::BatchDatagram => "-D",
        }
    }

    /// Whether requests get no reply (everything but twoway).
    pub fn is_oneway(self) -> bool {
        self != ProxyMode::Twoway
    }

    /// Whether requests are queued until flushed.
    pub fn is_batch(self) -> bool {
        matches!(self, ProxyMode::BatchOneway | ProxyMode::BatchDatagram)
    }

    /// Whether requests go over a datagram (UDP) endpoint.
    pub fn is_datagram(self) -> bool {
        matches!(self, ProxyMode::Datagram | ProxyMode::BatchDatagram)
    }
}

/// The data of a non-null proxy.
///
/// ```
/// use floe_wire::{Decoder, Encoder, ProxyData};
/// let p: ProxyData = "hello:tcp -h 127.0.0.1 -p 10000".parse().unwrap();
/// assert_eq!(p.to_string(), "hello -t -e 1.1:tcp -h 127.0.0.1 -p 10000 -t 60000");
/// let mut enc = Encoder::new();
/// enc.write(&Some(p.clone()));
/// let mut dec = Decoder::new(enc.finish());
/// assert_eq!(dec.read::<Option<ProxyData>>().unwrap(), Some(p));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProxyData {
    /// The target object (its name is never empty).
    pub identity: Identity,
    /// The facet; empty for the default facet.
    pub facet: String,
    /// How requests are sent.
    pub mode: ProxyMode,
    /// Whether only secure endpoints may be used (`-s`).
    pub secure: bool,
    /// Protocol version for requests (`-p`, always 1.0 in Ice 3.7).
    pub protocol: ProtocolVersion,
    /// Encoding version for request parameters (`-e`).
    pub encoding: EncodingVersion,
    /// Where the object is; empty for an indirect proxy.
    pub endpoints: Vec<EndpointData>,
    /// For an indirect proxy without endpoints, the object adapter to look
    /// up through a locator; empty for a well-known proxy.
    pub adapter_id: String,
}

impl ProxyData {
    /// A twoway proxy for `identity` with no endpoints (a well-known proxy),
    /// protocol 1.0 and encoding 1.1.
    pub fn new(identity: Identity) -> Self {
        ProxyData {
            identity,
            facet: String::new(),
            mode: ProxyMode::Twoway,
            secure: false,
            protocol: PROTOCOL_1_0,
            encoding: EncodingVersion::default(),
            endpoints: Vec::new(),
            adapter_id: String::new(),
        }
    }

    /// Whether the proxy has no endpoints (it must be resolved through a
    /// locator, by adapter id or as a well-known object).
    pub fn is_indirect(&self) -> bool {
        self.endpoints.is_empty()
    }

    /// Whether the proxy has neither endpoints nor adapter id.
    pub fn is_well_known(&self) -> bool {
        self.endpoints.is_empty() && self.adapter_id.is_empty()
    }

    /// Reads the rest of a proxy whose (non-null) identity was already read.
    pub(crate) fn decode_after_identity(identity: Identity, dec: &mut Decoder) -> Result<Self> {
        let facets: Vec<String> = dec.read_seq().map_err(|e| e.at("facet"))?;
        if facets.len() > 1 {
            return Err(Error::ProxyUnmarshal(format!(
                "facet path with {} elements (at most 1 allowed)",
                facets.len()
            )));
        }
        let facet = facets.into_iter().next().unwrap_or_default();
        let mode_byte = dec.read_u8().map_err(|e| e.at("mode"))?;
        let mode = ProxyMode::from_u8(mode_byte)
            .ok_or_else(|| Error::ProxyUnmarshal(format!("invalid proxy mode {mode_byte}")))?;
        let secure = dec.read_bool().map_err(|e| e.at("secure"))?;
        let (protocol, encoding) = if dec.encoding() == ENCODING_1_0 {
            (PROTOCOL_1_0, ENCODING_1_0)
        } else {
            let mut v = [0u8; 4];
            for b in &mut v {
                *b = dec.read_u8().map_err(|e| e.at("versions"))?;
            }
            (
                ProtocolVersion {
                    major: v[0],
                    minor: v[1],
                },
                EncodingVersion {
                    major: v[2],
                    minor: v[3],
                },
            )
        };
        // Each endpoint takes at least 8 bytes: the count cannot make us
        // allocate more than the input justifies.
        let count = dec
            .read_count(EndpointData::MIN_WIRE_SIZE)
            .map_err(|e| e.at("endpoints"))?;
        let mut endpoints = Vec::with_capacity(count);
        let mut adapter_id = String::new();
        if count > 0 {
            for _ in 0..count {
                endpoints.push(EndpointData::decode(dec).map_err(|e| e.at("endpoints"))?);
            }
        } else {
            adapter_id = dec.read_string().map_err(|e| e.at("adapter_id"))?;
        }
        Ok(ProxyData {
            identity,
            facet,
            mode,
            secure,
            protocol,
            encoding,
            endpoints,
            adapter_id,
        })
    }
}

impl WireType for ProxyData {
    const MIN_WIRE_SIZE: usize = 2;
    const OPTIONAL_KIND: OptionalKind = OptionalKind::FSizeLength;
}

impl Encode for ProxyData {
    /// Writes a non-null proxy. The versions are written only in a 1.1
    /// stream; endpoints use the stream's encoding.
    fn encode(&self, enc: &mut Encoder) {
        self.identity.encode(enc);
        if self.facet.is_empty() {
            enc.write_size(0);
        } else {
            enc.write_size(1);
            enc.write_string(&self.facet);
        }
        enc.write_u8(self.mode as u8);
        enc.write_bool(self.secure);
        if enc.encoding() != ENCODING_1_0 {
            enc.write_u8(self.protocol.major);
            enc.write_u8(self.protocol.minor);
            enc.write_u8(self.encoding.major);
            enc.write_u8(self.encoding.minor);
        }
        enc.write_size(self.endpoints.len());
        if self.endpoints.is_empty() {
            enc.write_string(&self.adapter_id);
        } else {
            for ep in &self.endpoints {
                ep.encode(enc);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::{OpaqueEndpoint, TcpEndpoint, UdpEndpoint, WsEndpoint};
    use crate::version::ENCODING_1_1;
    use bytes::Bytes;

    fn tcp(host: &str, port: i32) -> EndpointData {
        EndpointData::Tcp(TcpEndpoint::new(host, port))
    }

    fn proxy(name: &str, endpoints: Vec<EndpointData>) -> ProxyData {
        ProxyData {
            endpoints,
            ..ProxyData::new(Identity::from_name(name))
        }
    }

    /// The prx() request encapsulations captured from Ice 3.7.8
    /// (docs/protocol.md §4.10), parameters only (after the 6-byte header).
    fn captured() -> Vec<(&'static str, Option<ProxyData>)> {
        vec![
            (
                "0568656c6c6f 00 00 00 00 01000101 01 0100 19000000 0101 093132372e302e302e31 10270000 60ea0000 00",
                Some(proxy("hello", vec![tcp("127.0.0.1", 10000)])),
            ),
            (
                "0568656c6c6f 00 00 00 00 01000101 01 0100 19000000 0101 093132372e302e302e31 10270000 60ea0000 01",
                Some(proxy(
                    "hello",
                    vec![EndpointData::Tcp(TcpEndpoint {
                        compress: true,
                        ..TcpEndpoint::new("127.0.0.1", 10000)
                    })],
                )),
            ),
            (
                "026964 03636174 01 03666163 01 00 01000101 01 0100 11000000 0101 0168 01000000 60ea0000 00",
                Some(ProxyData {
                    identity: Identity::new("id", "cat"),
                    facet: "fac".into(),
                    mode: ProxyMode::Oneway,
                    ..proxy("id", vec![tcp("h", 1)])
                }),
            ),
            (
                "026964 00 00 04 01 01000100 01 0300 15000000 0101 093233392e302e302e31 88130000 00",
                Some(ProxyData {
                    mode: ProxyMode::BatchDatagram,
                    secure: true,
                    encoding: ENCODING_1_0,
                    ..proxy("id", vec![EndpointData::Udp(UdpEndpoint::new("239.0.0.1", 5000))])
                }),
            ),
            (
                "026964 00 00 00 00 01000101 03 \
                 0200 11000000 0101 0168 02000000 64000000 00 \
                 0400 17000000 0101 0168 03000000 60ea0000 00 052f70617468 \
                 0500 13000000 0101 0168 04000000 60ea0000 00 012f",
                Some(proxy(
                    "id",
                    vec![
                        EndpointData::Ssl(TcpEndpoint {
                            timeout: 100,
                            ..TcpEndpoint::new("h", 2)
                        }),
                        EndpointData::Ws(WsEndpoint {
                            tcp: TcpEndpoint::new("h", 3),
                            resource: "/path".into(),
                        }),
                        EndpointData::Wss(WsEndpoint {
                            tcp: TcpEndpoint::new("h", 4),
                            resource: "/".into(),
                        }),
                    ],
                )),
            ),
            (
                "026964 00 00 00 00 01000101 02 \
                 0100 11000000 0101 0161 01000000 60ea0000 00 \
                 0100 11000000 0101 0162 02000000 60ea0000 00",
                Some(proxy("id", vec![tcp("a", 1), tcp("b", 2)])),
            ),
            (
                "026964 00 00 00 00 01000101 01 6300 0a000000 0101 01020304",
                Some(proxy(
                    "id",
                    vec![EndpointData::Opaque(OpaqueEndpoint {
                        endpoint_type: 99,
                        encoding: ENCODING_1_1,
                        bytes: Bytes::from_static(&[1, 2, 3, 4]),
                    })],
                )),
            ),
            (
                "026964 00 00 00 00 01000101 00 094d7941646170746572",
                Some(ProxyData {
                    adapter_id: "MyAdapter".into(),
                    ..proxy("id", vec![])
                }),
            ),
            ("026964 00 00 00 00 01000101 00 00", Some(proxy("id", vec![]))),
            ("00 00", None),
        ]
    }

    fn unhex(s: &str) -> Vec<u8> {
        hex::decode(s.replace(' ', "")).unwrap()
    }

    #[test]
    fn captured_proxies_encode_and_decode() {
        for (text, p) in captured() {
            let bytes = unhex(text);
            let mut enc = Encoder::new();
            enc.write(&p);
            assert_eq!(hex::encode(enc.finish()), hex::encode(&bytes), "{p:?}");
            let mut dec = Decoder::new(Bytes::from(bytes));
            assert_eq!(dec.read::<Option<ProxyData>>().unwrap(), p);
            assert!(dec.is_empty());
        }
    }

    #[test]
    fn encoding_1_0_stream() {
        let p = ProxyData {
            facet: "f".into(),
            encoding: ENCODING_1_0,
            ..proxy(
                "id",
                vec![tcp("h", 1), EndpointData::Udp(UdpEndpoint::new("u", 2))],
            )
        };
        let mut enc = Encoder::with_buffer(Default::default(), ENCODING_1_0);
        enc.write(&Some(p.clone()));
        let bytes = enc.finish();
        assert_eq!(
            hex::encode(&bytes),
            hex::encode(unhex(
                "026964 00 010166 00 00 02 \
                 0100 11000000 0100 0168 01000000 60ea0000 00 \
                 0300 11000000 0100 0175 02000000 01000100 00"
            ))
        );
        let mut dec = Decoder::with_encoding(bytes, ENCODING_1_0);
        assert_eq!(dec.read::<Option<ProxyData>>().unwrap(), Some(p));
    }

    #[test]
    fn unmarshal_errors() {
        // Mode 5.
        let bad_mode = unhex("026964 00 00 05 00 01000101 00 00");
        let e = Decoder::new(bad_mode.into())
            .read::<Option<ProxyData>>()
            .unwrap_err();
        assert!(matches!(e, Error::ProxyUnmarshal(_)), "{e}");
        // Two facets.
        let two_facets = unhex("026964 00 02 0161 0162 00 00 01000101 00 00");
        let e = Decoder::new(two_facets.into())
            .read::<Option<ProxyData>>()
            .unwrap_err();
        assert!(matches!(e, Error::ProxyUnmarshal(_)), "{e}");
        // The null proxy ends after its identity.
        let mut dec = Decoder::new(unhex("00 00 ff").into());
        assert_eq!(dec.read::<Option<ProxyData>>().unwrap(), None);
        assert_eq!(dec.remaining(), 1);
        // An empty name with a category is not null (as Ice 3.7.8 reads it).
        let mut dec = Decoder::new(unhex("00 03636174 00 00 00 01000101 00 0161").into());
        let p = dec.read::<Option<ProxyData>>().unwrap().unwrap();
        assert_eq!(p.identity, Identity::new("", "cat"));
        assert_eq!(p.adapter_id, "a");
        // Truncated after a category-only identity.
        let mut dec = Decoder::new(unhex("00 03636174").into());
        assert!(dec.read::<Option<ProxyData>>().is_err());
        // A huge endpoint count is rejected before allocating.
        let huge = unhex("026964 00 00 00 00 01000101 ff ffffff7f");
        assert!(Decoder::new(huge.into())
            .read::<Option<ProxyData>>()
            .is_err());
        // Every truncation of a valid proxy fails cleanly.
        for (text, _) in captured() {
            let bytes = unhex(text);
            for n in 0..bytes.len() {
                let r =
                    Decoder::new(Bytes::copy_from_slice(&bytes[..n])).read::<Option<ProxyData>>();
                assert!(r.is_err() || n >= 2 && bytes[0] == 0, "{text} cut at {n}");
            }
        }
    }

    #[test]
    fn optional_proxy_uses_fsize() {
        let p = Some(proxy("id", vec![]));
        let mut enc = Encoder::new();
        enc.write_optional(11, Some(&p));
        assert_eq!(
            hex::encode(enc.finish()),
            hex::encode(unhex("5e 0d000000 026964 00 00 00 00 01000101 00 00"))
        );
    }
}
