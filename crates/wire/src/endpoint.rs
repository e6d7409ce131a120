//! [`EndpointData`]: where a proxy's object can be reached, and how an
//! endpoint is marshaled (§4.11).
//!
//! On the wire an endpoint is its type (int16) followed by an encapsulation.
//! The encapsulation of a known type (TCP, SSL, UDP, WS, WSS) carries the
//! encoding of the enclosing stream and the transport's fields; any other
//! type is kept as an [`OpaqueEndpoint`] whose bytes are re-marshaled
//! unchanged. Text forms (`tcp -h host -p 10000 -t 60000`) live in
//! [`endpoint_string`](crate::endpoint_string).

use std::net::IpAddr;

use bytes::Bytes;

use crate::codec::{Decode, Encode, WireType};
use crate::decoder::Decoder;
use crate::encoder::Encoder;
use crate::error::{Error, Result};
use crate::optional::{OptionalFormat, OptionalKind};
use crate::version::{EncodingVersion, ENCODING_1_0};

/// Endpoint type of `tcp` endpoints.
pub const TCP_ENDPOINT_TYPE: i16 = 1;
/// Endpoint type of `ssl` endpoints.
pub const SSL_ENDPOINT_TYPE: i16 = 2;
/// Endpoint type of `udp` endpoints.
pub const UDP_ENDPOINT_TYPE: i16 = 3;
/// Endpoint type of `ws` (WebSocket over TCP) endpoints.
pub const WS_ENDPOINT_TYPE: i16 = 4;
/// Endpoint type of `wss` (WebSocket over SSL) endpoints.
pub const WSS_ENDPOINT_TYPE: i16 = 5;

/// The Ice default for `Ice.Default.Timeout`: 60 seconds.
pub const DEFAULT_TIMEOUT: i32 = 60_000;

/// The fields of a `tcp` or `ssl` endpoint (and the transport under `ws`/`wss`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TcpEndpoint {
    /// Host name or IP address; empty means "all interfaces" on a server
    /// and no `-h` in the text form.
    pub host: String,
    /// Port (0..=65535 from text; the wire carries an int32).
    pub port: i32,
    /// Timeout in milliseconds, −1 for infinite.
    pub timeout: i32,
    /// Whether requests through this endpoint are compressed (`-z`).
    pub compress: bool,
    /// Local address to connect from (`--sourceAddress`); not marshaled.
    pub source_address: Option<IpAddr>,
}

impl TcpEndpoint {
    /// An endpoint for `host:port` with the default timeout and no compression.
    pub fn new(host: impl Into<String>, port: i32) -> Self {
        TcpEndpoint {
            host: host.into(),
            port,
            timeout: DEFAULT_TIMEOUT,
            compress: false,
            source_address: None,
        }
    }
}

/// The fields of a `udp` endpoint.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UdpEndpoint {
    /// Host name or IP address (possibly multicast); empty means none.
    pub host: String,
    /// Port.
    pub port: i32,
    /// Whether requests are compressed (`-z`).
    pub compress: bool,
    /// Whether a server endpoint connects to the first peer (`-c`); not marshaled.
    pub connect: bool,
    /// Multicast time-to-live (`--ttl`); not marshaled.
    pub ttl: Option<i32>,
    /// Multicast interface (`--interface`); not marshaled.
    pub interface: Option<String>,
    /// Local address to send from (`--sourceAddress`); not marshaled.
    pub source_address: Option<IpAddr>,
}

impl UdpEndpoint {
    /// An endpoint for `host:port` with every option off.
    pub fn new(host: impl Into<String>, port: i32) -> Self {
        UdpEndpoint {
            host: host.into(),
            port,
            compress: false,
            connect: false,
            ttl: None,
            interface: None,
            source_address: None,
        }
    }
}

/// The fields of a `ws` or `wss` endpoint: the TCP/SSL transport, then the
/// HTTP resource of the WebSocket upgrade.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WsEndpoint {
    /// The underlying TCP (for `ws`) or SSL (for `wss`) endpoint's fields.
    pub tcp: TcpEndpoint,
    /// The resource (`-r`, default `/`).
    pub resource: String,
}

/// An endpoint of a type floe does not know, kept byte for byte.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpaqueEndpoint {
    /// The endpoint type (never 1..=5 when parsed: those become known endpoints).
    pub endpoint_type: i16,
    /// The version in the endpoint encapsulation's header.
    pub encoding: EncodingVersion,
    /// The encapsulation's content, after its 6-byte header.
    pub bytes: Bytes,
}

/// One endpoint of a proxy or object adapter.
///
/// ```
/// use floe_wire::{EndpointData, Encoder, TcpEndpoint};
/// let ep = EndpointData::Tcp(TcpEndpoint::new("h", 1));
/// assert_eq!(ep.to_string(), "tcp -h h -p 1 -t 60000");
/// let mut enc = Encoder::new();
/// enc.write(&ep);
/// assert_eq!(
///     &enc.finish()[..],
///     b"\x01\x00\x11\x00\x00\x00\x01\x01\x01h\x01\x00\x00\x00\x60\xea\x00\x00\x00"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum EndpointData {
    /// `tcp` (type 1).
    Tcp(TcpEndpoint),
    /// `ssl` (type 2): TCP fields, TLS transport.
    Ssl(TcpEndpoint),
    /// `udp` (type 3).
    Udp(UdpEndpoint),
    /// `ws` (type 4).
    Ws(WsEndpoint),
    /// `wss` (type 5).
    Wss(WsEndpoint),
    /// Any other type, kept opaque.
    Opaque(OpaqueEndpoint),
}

impl EndpointData {
    /// The endpoint type marshaled in front of the encapsulation.
    pub fn endpoint_type(&self) -> i16 {
        match self {
            EndpointData::Tcp(_) => TCP_ENDPOINT_TYPE,
            EndpointData::Ssl(_) => SSL_ENDPOINT_TYPE,
            EndpointData::Udp(_) => UDP_ENDPOINT_TYPE,
            EndpointData::Ws(_) => WS_ENDPOINT_TYPE,
            EndpointData::Wss(_) => WSS_ENDPOINT_TYPE,
            EndpointData::Opaque(o) => o.endpoint_type,
        }
    }

    /// The protocol name that starts the text form (`tcp`, `ssl`, `udp`,
    /// `ws`, `wss` or `opaque`).
    pub fn protocol(&self) -> &'static str {
        match self {
            EndpointData::Tcp(_) => "tcp",
            EndpointData::Ssl(_) => "ssl",
            EndpointData::Udp(_) => "udp",
            EndpointData::Ws(_) => "ws",
            EndpointData::Wss(_) => "wss",
            EndpointData::Opaque(_) => "opaque",
        }
    }

    /// The host, for IP endpoints (empty if none was given).
    pub fn host(&self) -> Option<&str> {
        match self {
            EndpointData::Tcp(t) | EndpointData::Ssl(t) => Some(&t.host),
            EndpointData::Ws(w) | EndpointData::Wss(w) => Some(&w.tcp.host),
            EndpointData::Udp(u) => Some(&u.host),
            EndpointData::Opaque(_) => None,
        }
    }

    /// The port, for IP endpoints.
    pub fn port(&self) -> Option<i32> {
        match self {
            EndpointData::Tcp(t) | EndpointData::Ssl(t) => Some(t.port),
            EndpointData::Ws(w) | EndpointData::Wss(w) => Some(w.tcp.port),
            EndpointData::Udp(u) => Some(u.port),
            EndpointData::Opaque(_) => None,
        }
    }

    /// The timeout in milliseconds (−1 infinite), for stream endpoints.
    pub fn timeout(&self) -> Option<i32> {
        self.tcp().map(|t| t.timeout)
    }

    /// Whether the endpoint asks for compression.
    pub fn compress(&self) -> bool {
        match self {
            EndpointData::Udp(u) => u.compress,
            EndpointData::Opaque(_) => false,
            _ => self.tcp().is_some_and(|t| t.compress),
        }
    }

    /// Whether the transport is secure (`ssl`, `wss`).
    pub fn is_secure(&self) -> bool {
        matches!(self, EndpointData::Ssl(_) | EndpointData::Wss(_))
    }

    /// Whether the transport is datagram-oriented (`udp`).
    pub fn is_datagram(&self) -> bool {
        matches!(self, EndpointData::Udp(_))
    }

    /// The TCP-level fields of a `tcp`, `ssl`, `ws` or `wss` endpoint.
    pub fn tcp(&self) -> Option<&TcpEndpoint> {
        match self {
            EndpointData::Tcp(t) | EndpointData::Ssl(t) => Some(t),
            EndpointData::Ws(w) | EndpointData::Wss(w) => Some(&w.tcp),
            _ => None,
        }
    }

    /// Writes the encapsulation's content for a known type in `encoding`
    /// (the encoding only matters for UDP).
    fn encode_body(&self, enc: &mut Encoder) {
        let encoding = enc.encoding();
        match self {
            EndpointData::Tcp(t) | EndpointData::Ssl(t) => encode_tcp(t, enc),
            EndpointData::Ws(w) | EndpointData::Wss(w) => {
                encode_tcp(&w.tcp, enc);
                enc.write_string(&w.resource);
            }
            EndpointData::Udp(u) => {
                enc.write_string(&u.host);
                enc.write_i32(u.port);
                if encoding == ENCODING_1_0 {
                    // Protocol 1.0 and encoding 1.0, a leftover of Ice 3.3.
                    enc.write_raw(&[1, 0, 1, 0]);
                }
                enc.write_bool(u.compress);
            }
            EndpointData::Opaque(o) => enc.write_raw(&o.bytes),
        }
    }

    /// Builds an endpoint from its type and encapsulation, as Ice's
    /// endpoint factories do: known types are decoded (in the
    /// encapsulation's encoding, which must be 1.0 or 1.1), others are kept
    /// opaque.
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedEncoding`] for a known type in another encoding;
    /// out-of-bounds or [`Error::Encapsulation`] errors when the content
    /// does not match the type.
    pub fn from_encapsulation(
        endpoint_type: i16,
        encoding: EncodingVersion,
        data: Bytes,
    ) -> Result<Self> {
        let known = (TCP_ENDPOINT_TYPE..=WSS_ENDPOINT_TYPE).contains(&endpoint_type);
        if !known {
            return Ok(EndpointData::Opaque(OpaqueEndpoint {
                endpoint_type,
                encoding,
                bytes: data,
            }));
        }
        if !encoding.is_supported() {
            return Err(Error::UnsupportedEncoding {
                major: encoding.major,
                minor: encoding.minor,
            });
        }
        let mut dec = Decoder::with_encoding(data, encoding);
        let ep = match endpoint_type {
            TCP_ENDPOINT_TYPE => EndpointData::Tcp(decode_tcp(&mut dec)?),
            SSL_ENDPOINT_TYPE => EndpointData::Ssl(decode_tcp(&mut dec)?),
            UDP_ENDPOINT_TYPE => {
                let host = dec.read_string().map_err(|e| e.at("host"))?;
                let port = dec.read_i32().map_err(|e| e.at("port"))?;
                if encoding == ENCODING_1_0 {
                    dec.skip(4).map_err(|e| e.at("versions"))?;
                }
                let compress = dec.read_bool().map_err(|e| e.at("compress"))?;
                EndpointData::Udp(UdpEndpoint {
                    compress,
                    ..UdpEndpoint::new(host, port)
                })
            }
            WS_ENDPOINT_TYPE | WSS_ENDPOINT_TYPE => {
                let tcp = decode_tcp(&mut dec)?;
                let resource = dec.read_string().map_err(|e| e.at("resource"))?;
                let ws = WsEndpoint { tcp, resource };
                if endpoint_type == WS_ENDPOINT_TYPE {
                    EndpointData::Ws(ws)
                } else {
                    EndpointData::Wss(ws)
                }
            }
            // `known` covers exactly the five types matched above.
            _ => unreachable!("endpoint type {endpoint_type} is not a known type"),
        };
        end_endpoint_encapsulation(&mut dec)?;
        Ok(ep)
    }
}

fn encode_tcp(t: &TcpEndpoint, enc: &mut Encoder) {
    enc.write_string(&t.host);
    enc.write_i32(t.port);
    enc.write_i32(t.timeout);
    enc.write_bool(t.compress);
}

fn decode_tcp(dec: &mut Decoder) -> Result<TcpEndpoint> {
    let host = dec.read_string().map_err(|e| e.at("host"))?;
    let port = dec.read_i32().map_err(|e| e.at("port"))?;
    let timeout = dec.read_i32().map_err(|e| e.at("timeout"))?;
    let compress = dec.read_bool().map_err(|e| e.at("compress"))?;
    Ok(TcpEndpoint {
        host,
        port,
        timeout,
        compress,
        source_address: None,
    })
}

/// Ends an endpoint encapsulation as Ice does: in 1.1, what is left is
/// skipped as optional values up to an end marker; in 1.0 one stray byte
/// is tolerated (an old Ice bug). Anything else left over is an error.
fn end_endpoint_encapsulation(dec: &mut Decoder) -> Result<()> {
    if dec.encoding() == ENCODING_1_0 {
        if dec.remaining() > 1 {
            return Err(Error::encapsulation(format!(
                "{} bytes left over at the end of an endpoint",
                dec.remaining()
            )));
        }
        return Ok(());
    }
    while let Some(b) = dec.peek_u8() {
        dec.skip(1)?;
        if b == 0xff {
            break;
        }
        if b >> 3 == 30 {
            dec.read_size()?;
        }
        dec.skip_optional(OptionalFormat::from_bits(b))?;
    }
    if !dec.is_empty() {
        return Err(Error::encapsulation(format!(
            "{} bytes left over at the end of an endpoint",
            dec.remaining()
        )));
    }
    Ok(())
}

impl WireType for EndpointData {
    /// Type (2 bytes) and an empty encapsulation (6 bytes).
    const MIN_WIRE_SIZE: usize = 8;
    const OPTIONAL_KIND: OptionalKind = OptionalKind::FSizeLength;
}

impl Encode for EndpointData {
    /// Writes the type and the encapsulation; known types use the
    /// encoder's current encoding, opaque endpoints their own.
    fn encode(&self, enc: &mut Encoder) {
        enc.write_i16(self.endpoint_type());
        let encoding = match self {
            EndpointData::Opaque(o) => o.encoding,
            _ => enc.encoding(),
        };
        let mark = enc.start_encapsulation(encoding);
        self.encode_body(enc);
        enc.end_encapsulation(mark);
    }
}

impl Decode for EndpointData {
    /// Reads the type and the encapsulation.
    ///
    /// # Errors
    ///
    /// As [`EndpointData::from_encapsulation`]; also
    /// [`Error::UnsupportedEncoding`] for an opaque endpoint whose
    /// encapsulation version is not 1.0 or 1.1, as Ice checks every
    /// encapsulation it opens.
    fn decode(dec: &mut Decoder) -> Result<Self> {
        let endpoint_type = dec.read_i16().map_err(|e| e.at("type").at("Endpoint"))?;
        let encaps = dec.read_encapsulation().map_err(|e| e.at("Endpoint"))?;
        if !encaps.encoding.is_supported() {
            return Err(Error::UnsupportedEncoding {
                major: encaps.encoding.major,
                minor: encaps.encoding.minor,
            });
        }
        Self::from_encapsulation(endpoint_type, encaps.encoding, encaps.data)
            .map_err(|e| e.at("Endpoint"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::ENCODING_1_1;

    fn encoded(ep: &EndpointData, encoding: EncodingVersion) -> Vec<u8> {
        let mut enc = Encoder::with_buffer(Default::default(), encoding);
        enc.write(ep);
        enc.finish().to_vec()
    }

    fn decoded(bytes: &[u8], encoding: EncodingVersion) -> Result<EndpointData> {
        let mut dec = Decoder::with_encoding(Bytes::copy_from_slice(bytes), encoding);
        let ep = dec.read::<EndpointData>()?;
        assert!(dec.is_empty());
        Ok(ep)
    }

    /// Endpoint encapsulations captured from Ice 3.7.8 (docs/protocol.md §4.11).
    #[test]
    fn captured_endpoints() {
        let cases: [(&str, EndpointData); 5] = [
            (
                "0100 19000000 0101 093132372e302e302e31 10270000 60ea0000 00",
                EndpointData::Tcp(TcpEndpoint::new("127.0.0.1", 10000)),
            ),
            (
                "0200 11000000 0101 0168 02000000 64000000 00",
                EndpointData::Ssl(TcpEndpoint {
                    timeout: 100,
                    ..TcpEndpoint::new("h", 2)
                }),
            ),
            (
                "0400 17000000 0101 0168 03000000 60ea0000 00 052f70617468",
                EndpointData::Ws(WsEndpoint {
                    tcp: TcpEndpoint::new("h", 3),
                    resource: "/path".into(),
                }),
            ),
            (
                "0300 15000000 0101 093233392e302e302e31 88130000 00",
                EndpointData::Udp(UdpEndpoint::new("239.0.0.1", 5000)),
            ),
            (
                "6300 0a000000 0101 01020304",
                EndpointData::Opaque(OpaqueEndpoint {
                    endpoint_type: 99,
                    encoding: ENCODING_1_1,
                    bytes: Bytes::from_static(&[1, 2, 3, 4]),
                }),
            ),
        ];
        for (hex_text, ep) in cases {
            let bytes = hex::decode(hex_text.replace(' ', "")).unwrap();
            assert_eq!(encoded(&ep, ENCODING_1_1), bytes, "{ep:?}");
            assert_eq!(decoded(&bytes, ENCODING_1_1).unwrap(), ep);
        }
    }

    #[test]
    fn udp_in_a_1_0_stream_carries_versions() {
        let ep = EndpointData::Udp(UdpEndpoint {
            compress: true,
            ..UdpEndpoint::new("h", 1)
        });
        let bytes = encoded(&ep, ENCODING_1_0);
        assert_eq!(
            hex::encode(&bytes),
            "03001100000001000168010000000100010001"
        );
        assert_eq!(decoded(&bytes, ENCODING_1_0).unwrap(), ep);
    }

    #[test]
    fn trailing_bytes_follow_ice_rules() {
        // 1.0: one stray byte is tolerated, two are not.
        let one = "0100 12000000 0100 0168 01000000 60ea0000 00 00".replace(' ', "");
        assert!(decoded(&hex::decode(one).unwrap(), ENCODING_1_1).is_ok());
        let two = "0100 13000000 0100 0168 01000000 60ea0000 00 0000".replace(' ', "");
        assert!(decoded(&hex::decode(two).unwrap(), ENCODING_1_1).is_err());
        // 1.1: a stray 00 is read as an optional F1 with no byte left.
        let stray = "0100 12000000 0101 0168 01000000 60ea0000 00 00".replace(' ', "");
        assert!(decoded(&hex::decode(stray).unwrap(), ENCODING_1_1).is_err());
        // 1.1: an end marker is fine.
        let marker = "0100 12000000 0101 0168 01000000 60ea0000 00 ff".replace(' ', "");
        assert!(decoded(&hex::decode(marker).unwrap(), ENCODING_1_1).is_ok());
    }

    #[test]
    fn bad_input_is_an_error() {
        for text in [
            "",
            "01",
            "0100",
            "0100 05000000 0101",
            "0100 ffffffff 0101",
            "0100 07000000 0101 05",
            "0100 08000000 0101 0568",
            "0100 0a000000 0201 00000000",
            "6300 06000000 0201",
        ] {
            let bytes = hex::decode(text.replace(' ', "")).unwrap();
            assert!(decoded(&bytes, ENCODING_1_1).is_err(), "{text}");
        }
    }
}
