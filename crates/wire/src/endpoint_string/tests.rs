//! Unit tests of endpoint text parsing and printing (`endpoint_string/`).

use super::*;

fn relay(s: &str) -> String {
    match parse_endpoint(s, &ParseDefaults::default(), EndpointRole::Proxy) {
        Ok(Some(ep)) => ep.to_string(),
        Ok(None) => "unknown".into(),
        Err(e) => format!("ERR {}", e.ice_name()),
    }
}

/// Endpoint texts and what Ice 3.7.8 printed for them (checked with
/// Python Ice: strings.txt and extra probes).
#[test]
fn parse_and_print_like_ice() {
    let cases = [
        (
            "tcp -h 127.0.0.1 -p 10000",
            "tcp -h 127.0.0.1 -p 10000 -t 60000",
        ),
        (
            "tcp -h 127.0.0.1 -p 10000 -t infinite",
            "tcp -h 127.0.0.1 -p 10000 -t infinite",
        ),
        ("tcp -p 10000", "tcp -p 10000 -t 60000"),
        ("tcp -h h -p 1 -z", "tcp -h h -p 1 -t 60000 -z"),
        ("tcp -h \"::1\" -p 1", "tcp -h \"::1\" -p 1 -t 60000"),
        // Alone this is fine; inside a proxy the `:`s split it.
        ("tcp -h ::1 -p 1", "tcp -h \"::1\" -p 1 -t 60000"),
        (
            "udp -h 239.255.1.1 -p 10000 --ttl 5 --interface 127.0.0.1",
            "udp -h 239.255.1.1 -p 10000 --interface 127.0.0.1 --ttl 5",
        ),
        ("ws -h h -p 1 -r /chat", "ws -h h -p 1 -t 60000 -r /chat"),
        ("wss -h h -p 1", "wss -h h -p 1 -t 60000 -r /"),
        (
            "opaque -t 1 -e 1.1 -v CTEyNy4wLjAuMRAnAABg6gAAAA==",
            "tcp -h 127.0.0.1 -p 10000 -t 60000",
        ),
        ("opaque -t 42 -v AAEC", "opaque -t 42 -e 1.0 -v AAEC"),
        ("tcp -h h -p 70000", "ERR ::Ice::EndpointParseException"),
        ("foo -h h", "unknown"),
        ("tcp -h h -p 1 -q", "ERR ::Ice::EndpointParseException"),
        ("tcp -h * -p 1", "ERR ::Ice::EndpointParseException"),
        ("tcp -h h -p 1 -tfoo 5", "tcp -h h -p 1 -t 5"),
        ("tcp -h h -p 1 -t 0", "ERR ::Ice::EndpointParseException"),
        ("tcp -h h -p 1 -t -1", "ERR ::Ice::EndpointParseException"),
        ("tcp -h h -p +5", "tcp -h h -p 5 -t 60000"),
        ("tcp -h h -p 010", "tcp -h h -p 10 -t 60000"),
        ("tcp -h h -p ' 5'", "tcp -h h -p 5 -t 60000"),
        (
            "tcp -h h -p 1 --sourceAddress \"0:0::1\"",
            "tcp -h h -p 1 --sourceAddress \"::1\" -t 60000",
        ),
        (
            "tcp -h h -p 1 --sourceAddress foo",
            "ERR ::Ice::EndpointParseException",
        ),
        ("udp -h h -p 1 -v 1.0", "udp -h h -p 1"),
        ("udp -h h -p 1 --ttl x", "ERR ::Ice::EndpointParseException"),
        (
            "udp -h h -p 1 --interface \"::1\"",
            "udp -h h -p 1 --interface \"::1\"",
        ),
        ("udp -h h -p 1 -t 5", "ERR ::Ice::EndpointParseException"),
        (
            "udp -h h -p 1 -c -z --ttl 3 --interface eth0 --sourceAddress 1.2.3.4",
            "udp -h h -p 1 --sourceAddress 1.2.3.4 --interface eth0 --ttl 3 -c -z",
        ),
        (
            "ws -h h -p 1 -r \"a:b\"",
            "ws -h h -p 1 -t 60000 -r \"a:b\"",
        ),
        ("ws -h h -p 1 -r", "ERR ::Ice::EndpointParseException"),
        ("ws -h h -p 1 -r \"a b\"", "ws -h h -p 1 -t 60000 -r a b"),
        ("ws -h h -p 1 -rx /a", "ws -h h -p 1 -t 60000 -r /a"),
        ("ws -h h -p 1 -r a -t 5 -z", "ws -h h -p 1 -t 5 -z -r a"),
        (
            "opaque -t 65535 -v AAEC",
            "ERR ::Ice::EndpointParseException",
        ),
        ("opaque -t 32767 -v AAEC", "opaque -t 32767 -e 1.0 -v AAEC"),
        ("opaque -t 99 -v AA!C", "ERR ::Ice::EndpointParseException"),
        ("opaque -t 99 -v AAE", "opaque -t 99 -e 1.0 -v AAEA"),
        (
            "opaque -t 1 -v AAEC",
            "ERR ::Ice::UnmarshalOutOfBoundsException",
        ),
        ("opaque -t 3 -e 1.0 -v AWgBAAAAAQABAAA=", "udp -h h -p 1"),
        ("opaque -t 3 -e 1.1 -v AWgBAAAAAQ==", "udp -h h -p 1 -z"),
        (
            "opaque -t 1 -e 1.1 -v AWgBAAAAYOoAAAAA",
            "ERR ::Ice::UnmarshalOutOfBoundsException",
        ),
        (
            "opaque -t 1 -e 1.0 -v AWgBAAAAYOoAAAAA",
            "tcp -h h -p 1 -t 60000",
        ),
        (
            "opaque -t 4 -e 1.1 -v AWgBAAAAYOoAAAABLw==",
            "ws -h h -p 1 -t 60000 -r /",
        ),
        (
            "opaque -t 2 -e 1.1 -v AWgCAAAAZAAAAAA=",
            "ssl -h h -p 2 -t 100",
        ),
        (
            "opaque -t 1 -t 2 -v AA==",
            "ERR ::Ice::EndpointParseException",
        ),
        ("opaque -t 99", "ERR ::Ice::EndpointParseException"),
        ("opaque -t 99 -e 2.0 -v AAEC", "opaque -t 99 -e 2.0 -v AAEC"),
        (
            "opaque -tx 5 -v AA==",
            "ERR ::Ice::UnmarshalOutOfBoundsException",
        ),
        (
            "opaque -t 5 -e 1.1 -v AA== -z",
            "ERR ::Ice::EndpointParseException",
        ),
        ("default -h h -p 1", "tcp -h h -p 1 -t 60000"),
        ("tcp -h h -p 1 -z x", "ERR ::Ice::EndpointParseException"),
        ("tcp -h h -p 1 -", "ERR ::Ice::EndpointParseException"),
        ("tcp -h h", "tcp -h h -p 0 -t 60000"),
        ("udp", "udp -p 0"),
        ("TCP -h h -p 1", "unknown"),
        ("tcp -h h -p 1 -zq", "tcp -h h -p 1 -t 60000 -z"),
        ("tcp -hx h -p 1", "ERR ::Ice::EndpointParseException"),
        ("udp -h h -p 1 -zz", "ERR ::Ice::EndpointParseException"),
        ("tcp -h 'a b' -p 1", "tcp -h a b -p 1 -t 60000"),
        ("tcp -h h\\\"x -p 1", "tcp -h h\"x -p 1 -t 60000"),
        ("tcp -h \"h -p 1", "ERR ::Ice::EndpointParseException"),
        ("   ", "ERR ::Ice::EndpointParseException"),
    ];
    for (text, expected) in cases {
        assert_eq!(relay(text), expected, "{text}");
    }
}

#[test]
fn long_opaque_values_break_lines_like_ice() {
    let text = format!("opaque -t 99 -v {}", "A".repeat(232));
    let line = "A".repeat(76);
    assert_eq!(
        relay(&text),
        format!("opaque -t 99 -e 1.0 -v {line}\r\n{line}\r\n{line}\r\nAAAA")
    );
}

#[test]
fn defaults_and_roles() {
    let d = ParseDefaults {
        host: "example.com".into(),
        timeout: 1000,
        source_address: Some("127.0.0.1".parse().unwrap()),
        ..ParseDefaults::default()
    };
    let p = |s: &str| {
        parse_endpoint(s, &d, EndpointRole::Proxy)
            .unwrap()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        p("tcp -p 5"),
        "tcp -h example.com -p 5 --sourceAddress 127.0.0.1 -t 1000"
    );
    assert_eq!(
        p("tcp -p 5 -t 7 -h other"),
        "tcp -h other -p 5 --sourceAddress 127.0.0.1 -t 7"
    );
    let a = |s: &str| parse_endpoint(s, &ParseDefaults::default(), EndpointRole::ObjectAdapter);
    assert_eq!(
        a("tcp -h * -p 0").unwrap().unwrap().to_string(),
        "tcp -p 0 -t 60000"
    );
    assert!(a("tcp -h h -p 0 --sourceAddress 1.2.3.4").is_err());
    let eps = parse_adapter_endpoints("tcp -h * -p 0:udp -h \"::1\" -p 5", &d).unwrap();
    assert_eq!(eps.len(), 2);
    assert_eq!(eps[1].to_string(), "udp -h \"::1\" -p 5");
    // A trailing `:` ends the list; a blank or empty endpoint after it is an error.
    assert_eq!(parse_adapter_endpoints("tcp -p 0:", &d).unwrap().len(), 1);
    assert!(parse_adapter_endpoints("tcp -p 0: ", &d).is_err());
    assert!(parse_adapter_endpoints("tcp -p 0::udp -p 1", &d).is_err());
    assert!(parse_adapter_endpoints("tcp -p 0:foo", &d).is_err());
    assert!(parse_adapter_endpoints("", &d).unwrap().is_empty());
}

#[test]
fn splitting() {
    assert_eq!(
        split_words(" a  'b c' \"d\\\"e\" f\\'g ").unwrap(),
        ["a", "b c", "d\"e", "f'g"]
    );
    assert!(split_words("a 'b").is_err());
    assert_eq!(split_words("a '' b").unwrap(), ["a", "b"]);
    assert_eq!(
        split_endpoints("tcp -h \"a:b\" -p 1:udp -p 2"),
        ["tcp -h \"a:b\" -p 1", "udp -p 2"]
    );
    assert_eq!(split_endpoints("tcp -h 'a:b'"), ["tcp -h 'a", "b'"]);
    assert_eq!(split_endpoints(""), [""]);
}
