//! Stringified proxies: parsing, printing and round trips.

use super::*;
use crate::version::ENCODING_1_0;

fn relay_with(s: &str, d: &ParseDefaults, mode: ToStringMode) -> String {
    match string_to_proxy(s, d) {
        Ok(Some(p)) => proxy_to_string(&p, mode),
        Ok(None) => "null".into(),
        Err(e) => format!("ERR {}", e.ice_name()),
    }
}

fn relay(s: &str) -> String {
    relay_with(s, &ParseDefaults::default(), ToStringMode::Unicode)
}

/// Every `stringToProxy -> proxyToString` case observed with Ice 3.7.8 (docs/protocol.md §6.1).
#[test]
fn strings_txt_cases() {
    let cases = [
        (
            "hello:tcp -h 127.0.0.1 -p 10000",
            "hello -t -e 1.1:tcp -h 127.0.0.1 -p 10000 -t 60000",
        ),
        (
            "hello:tcp -h 127.0.0.1 -p 10000 -t 60000",
            "hello -t -e 1.1:tcp -h 127.0.0.1 -p 10000 -t 60000",
        ),
        (
            "hello:tcp -h 127.0.0.1 -p 10000 -t infinite",
            "hello -t -e 1.1:tcp -h 127.0.0.1 -p 10000 -t infinite",
        ),
        (
            "hello:tcp -p 10000",
            "hello -t -e 1.1:tcp -p 10000 -t 60000",
        ),
        (
            "hello -o:tcp -h h -p 1",
            "hello -o -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        (
            "hello -O:tcp -h h -p 1",
            "hello -O -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        ("hello -d:udp -h h -p 1", "hello -d -e 1.1:udp -h h -p 1"),
        ("hello -D:udp -h h -p 1", "hello -D -e 1.1:udp -h h -p 1"),
        (
            "hello -t:tcp -h h -p 1",
            "hello -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        (
            "hello -s:tcp -h h -p 1:ssl -h h -p 2",
            "hello -t -s -e 1.1:tcp -h h -p 1 -t 60000:ssl -h h -p 2 -t 60000",
        ),
        (
            "hello -f facet:tcp -h h -p 1",
            "hello -f facet -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        (
            "hello -f \"my facet\":tcp -h h -p 1",
            "hello -f \"my facet\" -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        (
            "hello -e 1.0:tcp -h h -p 1",
            "hello -t -e 1.0:tcp -h h -p 1 -t 60000",
        ),
        (
            "hello -p 1.0:tcp -h h -p 1",
            "hello -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        ("hello @ MyAdapter", "hello -t -e 1.1 @ MyAdapter"),
        ("hello@MyAdapter", "hello -t -e 1.1 @ MyAdapter"),
        (
            "hello @ \"Adapter with space\"",
            "hello -t -e 1.1 @ \"Adapter with space\"",
        ),
        ("hello", "hello -t -e 1.1"),
        (
            "cat/name:tcp -h h -p 1",
            "cat/name -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        (
            "\"a b\"/\"c:d\":tcp -h h -p 1",
            "ERR ::Ice::ProxyParseException",
        ),
        (
            "a\\/b:tcp -h h -p 1",
            "a\\/b -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        (
            "\"a b/c:d\":tcp -h h -p 1",
            "\"a b/c:d\" -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        ("\"x@y\" @ adapter", "\"x@y\" -t -e 1.1 @ adapter"),
        (
            "\"id with space\":tcp -h h -p 1",
            "\"id with space\" -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        (
            "café:tcp -h h -p 1",
            "café -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        (
            "tab\\there:tcp -h h -p 1",
            "tab\\there -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        (
            "x\\u00e9y:tcp -h h -p 1",
            "xéy -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        (
            "q\\\"uote:tcp -h h -p 1",
            "q\\\"uote -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        (
            "hello:tcp -h h -p 1 -z",
            "hello -t -e 1.1:tcp -h h -p 1 -t 60000 -z",
        ),
        (
            "hello:tcp -h \"::1\" -p 1",
            "hello -t -e 1.1:tcp -h \"::1\" -p 1 -t 60000",
        ),
        ("hello:tcp -h ::1 -p 1", "ERR ::Ice::EndpointParseException"),
        (
            "hello:udp -h 239.255.1.1 -p 10000 --ttl 5 --interface 127.0.0.1",
            "hello -t -e 1.1:udp -h 239.255.1.1 -p 10000 --interface 127.0.0.1 --ttl 5",
        ),
        (
            "hello:ws -h h -p 1 -r /chat",
            "hello -t -e 1.1:ws -h h -p 1 -t 60000 -r /chat",
        ),
        (
            "hello:wss -h h -p 1",
            "hello -t -e 1.1:wss -h h -p 1 -t 60000 -r /",
        ),
        (
            "hello:opaque -t 1 -e 1.1 -v CTEyNy4wLjAuMRAnAABg6gAAAA==",
            "hello -t -e 1.1:tcp -h 127.0.0.1 -p 10000 -t 60000",
        ),
        (
            "hello:opaque -t 42 -v AAEC",
            "hello -t -e 1.1:opaque -t 42 -e 1.0 -v AAEC",
        ),
        (
            "hello:tcp -h a -p 1:udp -h b -p 2",
            "hello -t -e 1.1:tcp -h a -p 1 -t 60000:udp -h b -p 2",
        ),
        ("", "null"),
        ("   ", "ERR ::Ice::ProxyParseException"),
        ("hello -x:tcp -h h -p 1", "ERR ::Ice::ProxyParseException"),
        ("hello -f:tcp -h h -p 1", "ERR ::Ice::ProxyParseException"),
        (
            "hello:tcp -h h -p 70000",
            "ERR ::Ice::EndpointParseException",
        ),
        ("hello:foo -h h", "ERR ::Ice::EndpointParseException"),
        (
            "hello:tcp -h h -p 1 -q",
            "ERR ::Ice::EndpointParseException",
        ),
        ("\"unterminated", "ERR ::Ice::ProxyParseException"),
        ("a/b/c", "ERR ::Ice::IdentityParseException"),
    ];
    for (text, expected) in cases {
        assert_eq!(relay(text), expected, "{text}");
    }
}

/// The `Ice.Default.*` case of strings.txt.
#[test]
fn defaults_from_configuration() {
    let d = ParseDefaults {
        host: "example.com".into(),
        timeout: 1000,
        encoding: ENCODING_1_0,
        ..ParseDefaults::default()
    };
    let u = ToStringMode::Unicode;
    assert_eq!(
        relay_with("hello:tcp -p 5", &d, u),
        "hello -t -e 1.0:tcp -h example.com -p 5 -t 1000"
    );
    assert_eq!(
        relay_with("hello:tcp -p 5 -t 7", &d, u),
        "hello -t -e 1.0:tcp -h example.com -p 5 -t 7"
    );
}

/// More cases checked against Python Ice 3.7.8 while writing this file.
#[test]
fn probed_cases() {
    let cases = [
        ("hello -tx:tcp -h h -p 1", "ERR ::Ice::ProxyParseException"),
        (
            "hello -t foo:tcp -h h -p 1",
            "ERR ::Ice::ProxyParseException",
        ),
        (
            "hello -e 1.2:tcp -h h -p 1",
            "hello -t -e 1.2:tcp -h h -p 1 -t 60000",
        ),
        (
            "hello -p 2.0:tcp -h h -p 1",
            "hello -t -p 2.0 -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        ("hello -e x", "ERR ::Ice::ProxyParseException"),
        ("hello -e 0.1", "ERR ::Ice::ProxyParseException"),
        ("hello -e +1.+0", "hello -t -e 1.0"),
        ("hello -e \" 1.0\"", "hello -t -e 1.0"),
        ("\"\"", "null"),
        ("\"\" ", "null"),
        ("''", "null"),
        ("\"\" x", "ERR ::Ice::ProxyParseException"),
        ("\"\" @ a", "ERR ::Ice::ProxyParseException"),
        ("\"a/\"", "ERR ::Ice::IllegalIdentityException"),
        ("a/", "ERR ::Ice::IllegalIdentityException"),
        ("/a", "a -t -e 1.1"),
        (
            "'single quoted':tcp -h h -p 1",
            "\"single quoted\" -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        ("hello -f 'a b'", "hello -f \"a b\" -t -e 1.1"),
        ("hello -f a\\tb", "hello -f a\\tb -t -e 1.1"),
        ("hello -f a/b", "hello -f a/b -t -e 1.1"),
        ("hello -f \"a:b\"", "hello -f \"a:b\" -t -e 1.1"),
        ("hello @ a\\tb", "hello -t -e 1.1 @ a\\tb"),
        ("hello @ \"a:b\"", "hello -t -e 1.1 @ \"a:b\""),
        ("hello @", "ERR ::Ice::ProxyParseException"),
        ("hello @ a b", "ERR ::Ice::ProxyParseException"),
        ("hello @ \"\"", "ERR ::Ice::ProxyParseException"),
        (
            "hello : tcp -h h -p 1",
            "hello -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        ("hello:tcp -h h -p 1:", "ERR ::Ice::EndpointParseException"),
        (
            "hello:tcp -h h -p 1::tcp -h h -p 2",
            "ERR ::Ice::EndpointParseException",
        ),
        (
            "hello:tcp -h h -p 1:foo",
            "hello -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        (
            "hello:foo:tcp -h h -p 1",
            "hello -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        ("hello -s -s", "hello -t -s -e 1.1"),
        ("hello -e 1.0 -e 1.1", "hello -t -e 1.1"),
        ("hello:tcp -h * -p 1", "ERR ::Ice::EndpointParseException"),
        (
            "\"a\\tb\":tcp -h h -p 1",
            "a\\tb -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        ("hello:TCP -h h -p 1", "ERR ::Ice::EndpointParseException"),
        ("\"hello\"x:tcp -h h -p 1", "ERR ::Ice::ProxyParseException"),
        (
            "hello\"x\":tcp -h h -p 1",
            "hello\\\"x\\\" -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        ("hello -f", "ERR ::Ice::ProxyParseException"),
        ("hello -f \"unterminated", "ERR ::Ice::ProxyParseException"),
        ("hello @ \"unterminated", "ERR ::Ice::ProxyParseException"),
        ("hello@a@b", "hello -t -e 1.1 @ \"a@b\""),
        ("hello -o -t", "hello -t -e 1.1"),
        ("  hello  ", "hello -t -e 1.1"),
        ("hello\t-o", "hello -o -e 1.1"),
        (
            "hello:tcp -h h -p 1 \t",
            "hello -t -e 1.1:tcp -h h -p 1 -t 60000",
        ),
        (
            "hello:tcp -h \"a:b\" -p 1",
            "hello -t -e 1.1:tcp -h \"a:b\" -p 1 -t 60000",
        ),
        ("hello -x", "ERR ::Ice::ProxyParseException"),
        ("hello -ff x", "ERR ::Ice::ProxyParseException"),
        ("hello x", "ERR ::Ice::ProxyParseException"),
        ("hello -f a -f b", "hello -f b -t -e 1.1"),
        ("hello -p 1.1", "hello -t -p 1.1 -e 1.1"),
        ("hello -f a\\", "hello -f a\\\\ -t -e 1.1"),
        ("hello -f \\u00e9", "hello -f é -t -e 1.1"),
        ("hello @ 'x y'", "hello -t -e 1.1 @ \"x y\""),
        ("hello -f \\x41\\101", "hello -f AA -t -e 1.1"),
        ("hello -f \\q", "hello -f \\\\q -t -e 1.1"),
        ("hello -f \"a\\\"b\"", "hello -f a\\\"b -t -e 1.1"),
        ("'a\\'b'", "a\\'b -t -e 1.1"),
        ("'a\"b'", "a\\\"b -t -e 1.1"),
        ("\"a\"\"b\"", "ERR ::Ice::ProxyParseException"),
        ("hello -f ''", "ERR ::Ice::ProxyParseException"),
        ("\"\":tcp -h h -p 1", "ERR ::Ice::ProxyParseException"),
        ("hello -f \\777", "ERR ::Ice::ProxyParseException"),
        ("hello @ a\x01", "ERR ::Ice::ProxyParseException"),
        ("a\x01", "ERR ::Ice::IdentityParseException"),
        (
            "hello:tcp -h 'a:b' -p 1",
            "ERR ::Ice::EndpointParseException",
        ),
        (
            "hello:ws -h h -p 1 -r \"/a:b\":tcp -h h -p 2",
            "hello -t -e 1.1:ws -h h -p 1 -t 60000 -r \"/a:b\":tcp -h h -p 2 -t 60000",
        ),
        (
            "hello:opaque -t 1 -v AAEC",
            "ERR ::Ice::UnmarshalOutOfBoundsException",
        ),
        (":tcp -h h -p 1", "ERR ::Ice::ProxyParseException"),
        ("@a", "ERR ::Ice::ProxyParseException"),
    ];
    for (text, expected) in cases {
        assert_eq!(relay(text), expected, "{text}");
    }
}

#[test]
fn to_string_modes() {
    let d = ParseDefaults::default();
    let ascii = ToStringMode::Ascii;
    let compat = ToStringMode::Compat;
    let s = "\"é a\" -f é:tcp -h h -p 1";
    assert_eq!(
        relay_with(s, &d, ascii),
        "\"\\u00e9 a\" -f \\u00e9 -t -e 1.1:tcp -h h -p 1 -t 60000"
    );
    assert_eq!(
        relay_with(s, &d, compat),
        "\"\\303\\251 a\" -f \\303\\251 -t -e 1.1:tcp -h h -p 1 -t 60000"
    );
    assert_eq!(relay_with("x @ é", &d, ascii), "x -t -e 1.1 @ \\u00e9");
    assert_eq!(relay_with("x @ é", &d, compat), "x -t -e 1.1 @ \\303\\251");
    let s = "\"a\\x7fb\" -f \\t @ \\t";
    assert_eq!(relay_with(s, &d, ascii), "a\\u007fb -f \\t -t -e 1.1 @ \\t");
    assert_eq!(relay_with(s, &d, compat), "a\\177b -f \\t -t -e 1.1 @ \\t");
}

#[test]
fn from_str_and_display() {
    let p: ProxyData = "cat/id -f fac -o:tcp -h h -p 1".parse().unwrap();
    assert_eq!(
        p.to_string(),
        "cat/id -f fac -o -e 1.1:tcp -h h -p 1 -t 60000"
    );
    assert!("".parse::<ProxyData>().is_err());
}
