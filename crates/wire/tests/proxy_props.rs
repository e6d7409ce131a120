//! Property tests for proxies, endpoints and identities: text and wire
//! round trips, and hostile input (arbitrary bytes and strings) that must
//! give errors, never panics.

use std::net::IpAddr;

use bytes::Bytes;
use floe_wire::escape::{escape_string, unescape_string};
use floe_wire::{
    identity_to_string, parse_adapter_endpoints, parse_endpoint, proxy_to_string,
    string_to_identity, string_to_proxy, Decoder, Encoder, EncodingVersion, EndpointData,
    EndpointRole, Identity, OpaqueEndpoint, ParseDefaults, ProtocolVersion, ProxyData, ProxyMode,
    TcpEndpoint, ToStringMode, UdpEndpoint, WsEndpoint, ENCODING_1_0, ENCODING_1_1,
};
use proptest::prelude::*;

fn any_mode() -> impl Strategy<Value = ToStringMode> {
    prop_oneof![
        Just(ToStringMode::Unicode),
        Just(ToStringMode::Ascii),
        Just(ToStringMode::Compat)
    ]
}

fn proxy_mode() -> impl Strategy<Value = ProxyMode> {
    (0u8..=4).prop_map(|b| ProxyMode::from_u8(b).expect("0..=4 are modes"))
}

/// Text that survives a trip through the text form: anything, as escaping
/// covers every character.
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z/ :@\"'\\\\-]{0,8}",
        any::<String>(),
        "\\PC{0,6}",
        "[\\x00-\\x1f\\x7f-\\u{a0}]{0,4}",
    ]
}

/// Facets cannot start with `-` in text: Ice would read the next word as an
/// option (it prints them that way all the same).
fn facet() -> impl Strategy<Value = String> {
    any_text().prop_filter("no leading dash", |f| !f.starts_with('-'))
}

fn identity() -> impl Strategy<Value = Identity> {
    (any_text(), any_text())
        .prop_filter("name must not be empty", |(n, _)| !n.is_empty())
        .prop_map(|(name, category)| Identity::new(name, category))
}

fn version() -> impl Strategy<Value = (u8, u8)> {
    (1u8..=255, any::<u8>())
}

/// The versions an encapsulation may carry on the wire.
fn wire_version() -> impl Strategy<Value = (u8, u8)> {
    prop_oneof![Just((1u8, 0u8)), Just((1, 1))]
}

/// Hosts and similar words that print and parse back (no blanks, quotes or
/// leading dash; `:` is quoted by the printer).
fn host() -> impl Strategy<Value = String> {
    "([a-z0-9][a-z0-9.:_]{0,12})?"
}

fn word() -> impl Strategy<Value = String> {
    "[a-z0-9/][a-z0-9./:_]{0,10}"
}

fn port() -> impl Strategy<Value = i32> {
    0i32..=65535
}

fn timeout() -> impl Strategy<Value = i32> {
    prop_oneof![Just(-1), 1i32..=i32::MAX]
}

fn ip() -> impl Strategy<Value = Option<IpAddr>> {
    proptest::option::of(any::<IpAddr>())
}

fn tcp(text: bool) -> impl Strategy<Value = TcpEndpoint> {
    (host(), port(), timeout(), any::<bool>(), ip()).prop_map(
        move |(host, port, timeout, compress, source)| TcpEndpoint {
            host,
            port,
            timeout,
            compress,
            source_address: if text { source } else { None },
        },
    )
}

fn udp(text: bool) -> impl Strategy<Value = UdpEndpoint> {
    (
        host(),
        port(),
        any::<bool>(),
        any::<bool>(),
        proptest::option::of(0i32..=i32::MAX),
        proptest::option::of(word()),
        ip(),
    )
        .prop_map(
            move |(host, port, compress, connect, ttl, interface, source)| UdpEndpoint {
                host,
                port,
                compress,
                connect: text && connect,
                ttl: ttl.filter(|_| text),
                interface: interface.filter(|_| text),
                source_address: source.filter(|_| text),
            },
        )
}

/// Endpoints. `text`: the ones the text form carries (all options, opaque
/// types that text keeps opaque, short values). Otherwise: what the wire
/// carries (no text-only options, any opaque type but 1..=5).
fn endpoint(text: bool) -> impl Strategy<Value = EndpointData> {
    let opaque_type = if text {
        (6i16..=i16::MAX).boxed()
    } else {
        prop_oneof![i16::MIN..=0, 6..=i16::MAX].boxed()
    };
    let opaque_len = if text { 1..=57usize } else { 0..=80usize };
    // The wire checks encapsulation versions; text keeps any.
    let opaque_version = if text {
        version().boxed()
    } else {
        wire_version().boxed()
    };
    let opaque = (
        opaque_type,
        opaque_version,
        proptest::collection::vec(any::<u8>(), opaque_len),
    )
        .prop_map(|(endpoint_type, (major, minor), bytes)| {
            EndpointData::Opaque(OpaqueEndpoint {
                endpoint_type,
                encoding: EncodingVersion { major, minor },
                bytes: Bytes::from(bytes),
            })
        });
    let ws = move || (tcp(text), word()).prop_map(|(tcp, resource)| WsEndpoint { tcp, resource });
    prop_oneof![
        tcp(text).prop_map(EndpointData::Tcp),
        tcp(text).prop_map(EndpointData::Ssl),
        udp(text).prop_map(EndpointData::Udp),
        ws().prop_map(EndpointData::Ws),
        ws().prop_map(EndpointData::Wss),
        opaque,
    ]
}

fn proxy(text: bool) -> impl Strategy<Value = ProxyData> {
    (
        identity(),
        facet(),
        proxy_mode(),
        any::<bool>(),
        version(),
        version(),
        proptest::collection::vec(endpoint(text), 0..4),
        any_text(),
    )
        .prop_map(
            |(identity, facet, mode, secure, (pa, pi), (ea, ei), endpoints, adapter_id)| {
                ProxyData {
                    identity,
                    facet,
                    mode,
                    secure,
                    protocol: ProtocolVersion {
                        major: pa,
                        minor: pi,
                    },
                    encoding: EncodingVersion {
                        major: ea,
                        minor: ei,
                    },
                    adapter_id: if endpoints.is_empty() {
                        adapter_id
                    } else {
                        String::new()
                    },
                    endpoints,
                }
            },
        )
}

/// Ice (and floe) cannot read back a quoted identity, facet or adapter id
/// whose text ends with an escaped backslash (`"a \\"`): the closing quote
/// looks escaped. Such proxies are left out of the text round trip.
fn no_quote_quirk(p: &ProxyData) -> bool {
    !p.identity.name.ends_with('\\') && !p.facet.ends_with('\\') && !p.adapter_id.ends_with('\\')
}

fn encode(p: &Option<ProxyData>, encoding: EncodingVersion) -> Bytes {
    let mut enc = Encoder::with_buffer(Default::default(), encoding);
    enc.write(p);
    enc.finish()
}

/// Words that steer random text into the parsers' deeper paths.
fn proxy_soup() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("hello".to_string()),
        Just(" ".to_string()),
        Just(":".to_string()),
        Just("@".to_string()),
        Just("\"".to_string()),
        Just("'".to_string()),
        Just("\\".to_string()),
        Just("/".to_string()),
        Just("-f".to_string()),
        Just("-e".to_string()),
        Just("-p".to_string()),
        Just("-h".to_string()),
        Just("-t".to_string()),
        Just("-v".to_string()),
        Just("-r".to_string()),
        Just("--ttl".to_string()),
        Just("--sourceAddress".to_string()),
        Just("tcp".to_string()),
        Just("udp".to_string()),
        Just("ws".to_string()),
        Just("opaque".to_string()),
        Just("1.1".to_string()),
        Just("infinite".to_string()),
        Just("AAEC".to_string()),
        Just("\\u00".to_string()),
        Just("\\x4".to_string()),
        Just("\\377".to_string()),
        "[0-9]{1,6}",
        "\\PC{1,3}",
    ];
    proptest::collection::vec(token, 0..16).prop_map(|t| t.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn identity_text_round_trips(id in identity(), mode in any_mode()) {
        let text = identity_to_string(&id, mode);
        prop_assert_eq!(string_to_identity(&text).unwrap(), id);
    }

    #[test]
    fn escaping_round_trips(s in any_text(), mode in any_mode()) {
        prop_assert_eq!(unescape_string(&escape_string(&s, "/", mode), "/").unwrap(), s);
    }

    #[test]
    fn proxy_text_round_trips(p in proxy(true).prop_filter("Ice quirk", no_quote_quirk), mode in any_mode()) {
        let text = proxy_to_string(&p, mode);
        let back = string_to_proxy(&text, &ParseDefaults::default());
        prop_assert_eq!(back, Ok(Some(p)), "text: {}", text);
    }

    #[test]
    fn proxy_wire_round_trips(p in proxy(false)) {
        let bytes = encode(&Some(p.clone()), ENCODING_1_1);
        let mut dec = Decoder::new(bytes);
        prop_assert_eq!(dec.read::<Option<ProxyData>>().unwrap(), Some(p));
        prop_assert!(dec.is_empty());
    }

    #[test]
    fn proxy_wire_round_trips_in_1_0(p in proxy(false)) {
        let bytes = encode(&Some(p.clone()), ENCODING_1_0);
        let mut dec = Decoder::with_encoding(bytes, ENCODING_1_0);
        let back = dec.read::<Option<ProxyData>>().unwrap().unwrap();
        prop_assert!(dec.is_empty());
        // A 1.0 stream has no versions: they read as 1.0.
        let expected = ProxyData {
            protocol: ProtocolVersion { major: 1, minor: 0 },
            encoding: ENCODING_1_0,
            ..p
        };
        prop_assert_eq!(back, expected);
    }

    #[test]
    fn endpoint_text_round_trips(ep in endpoint(true)) {
        let text = ep.to_string();
        let back = parse_endpoint(&text, &ParseDefaults::default(), EndpointRole::Proxy);
        prop_assert_eq!(back, Ok(Some(ep)), "text: {}", text);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        for encoding in [ENCODING_1_0, ENCODING_1_1] {
            let mut dec = Decoder::with_encoding(Bytes::from(bytes.clone()), encoding);
            let _ = dec.read::<Option<ProxyData>>();
            let mut dec = Decoder::with_encoding(Bytes::from(bytes.clone()), encoding);
            let _ = dec.read::<EndpointData>();
        }
    }

    #[test]
    fn mutated_proxies_never_panic(
        p in proxy(false),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = encode(&Some(p), ENCODING_1_1).to_vec();
        for (i, b) in flips {
            let i = i.index(bytes.len());
            bytes[i] = b;
        }
        let _ = Decoder::new(Bytes::from(bytes)).read::<Option<ProxyData>>();
    }

    #[test]
    fn arbitrary_text_never_panics(s in prop_oneof![any::<String>(), proxy_soup()]) {
        let d = ParseDefaults::default();
        if let Ok(Some(p)) = string_to_proxy(&s, &d) {
            // Whatever parses prints; printing never fails.
            let _ = proxy_to_string(&p, ToStringMode::Compat);
        }
        let _ = string_to_identity(&s);
        let _ = unescape_string(&s, "/");
        let _ = parse_endpoint(&s, &d, EndpointRole::Proxy);
        let _ = parse_endpoint(&s, &d, EndpointRole::ObjectAdapter);
        let _ = parse_adapter_endpoints(&s, &d);
    }
}
