//! Stringified proxies, parsed and printed exactly as Ice 3.7's
//! `stringToProxy` and `proxyToString` do (§6.1):
//!
//! `identity [-f facet] [-t|-o|-O|-d|-D] [-s] [-e 1.1] [-p 1.0] [:endpoint[:endpoint…] | @ adapter]`
//!
//! The identity (and the facet and adapter id) may be quoted with `"` or
//! `'`, which they must be when they hold spaces, `:` or `@`. Printing
//! always gives the mode and the encoding, so that the text converts back to
//! the same proxy whatever `Ice.Default.EncodingVersion` says. The empty
//! string is the null proxy.

use std::fmt;
use std::str::FromStr;

use crate::endpoint_string::{find_endpoint_end, parse_endpoint, EndpointRole, ParseDefaults};
use crate::error::{Error, Result};
use crate::escape::{escape_string, unescape_string, ToStringMode};
use crate::identity_string::{identity_to_string, string_to_identity};
use crate::proxy::{ProxyData, ProxyMode};
use crate::version::PROTOCOL_1_0;

/// Whitespace between the parts of a stringified proxy.
const BLANKS: &[u8] = b" \t\n\r";
/// Characters that end an unquoted identity or option.
const BLANKS_AND_SEPARATORS: &[u8] = b" \t\n\r:@";

fn find_not_of(s: &str, set: &[u8], from: usize) -> Option<usize> {
    s.as_bytes()
        .get(from..)?
        .iter()
        .position(|b| !set.contains(b))
        .map(|p| p + from)
}

fn find_of(s: &str, set: &[u8], from: usize) -> Option<usize> {
    s.as_bytes()
        .get(from..)?
        .iter()
        .position(|b| set.contains(b))
        .map(|p| p + from)
}

/// If `s[start]` is a quote (`"` or `'`), the position of the matching
/// closing quote (one not preceded by a backslash): `Ok(Some(pos))`;
/// `Ok(None)` if `s[start]` is no quote; `Err(())` if the quote is not closed.
fn check_quote(s: &str, start: usize) -> std::result::Result<Option<usize>, ()> {
    let bytes = s.as_bytes();
    let q = bytes[start];
    if q != b'"' && q != b'\'' {
        return Ok(None);
    }
    let mut from = start + 1;
    while let Some(pos) = find_of(s, &[q], from) {
        if bytes[pos - 1] != b'\\' {
            return Ok(Some(pos));
        }
        from = pos + 1;
    }
    Err(())
}

/// Reads a word starting at `beg` that may be quoted: returns the text
/// (without quotes) and the position after it. Unquoted words end at a
/// byte of `stop`.
fn read_word<'a>(s: &'a str, beg: usize, stop: &[u8]) -> std::result::Result<(&'a str, usize), ()> {
    match check_quote(s, beg)? {
        None => {
            let end = find_of(s, stop, beg).unwrap_or(s.len());
            Ok((&s[beg..end], end))
        }
        Some(close) => Ok((&s[beg + 1..close], close + 1)),
    }
}

/// Parses a stringified proxy as Ice's `Communicator::stringToProxy`.
/// Returns `None` for the null proxy (the empty string, or `""`).
///
/// ```
/// use floe_wire::{proxy_to_string, string_to_proxy, ParseDefaults, ToStringMode};
/// let d = ParseDefaults::default();
/// let p = string_to_proxy("hello @ \"Adapter with space\"", &d).unwrap().unwrap();
/// assert_eq!(p.adapter_id, "Adapter with space");
/// assert_eq!(proxy_to_string(&p, ToStringMode::Unicode), "hello -t -e 1.1 @ \"Adapter with space\"");
/// assert!(string_to_proxy("", &d).unwrap().is_none());
/// assert!(string_to_proxy("hello -x", &d).is_err());
/// ```
///
/// # Errors
///
/// [`Error::ProxyParse`] for malformed text and unknown options,
/// [`Error::IdentityParse`] for a bad identity, [`Error::IllegalIdentity`]
/// for a category without a name, [`Error::EndpointParse`] (or a decoding
/// error of an opaque endpoint) for bad endpoints.
pub fn string_to_proxy(s: &str, defaults: &ParseDefaults) -> Result<Option<ProxyData>> {
    let err = |reason: String| Error::ProxyParse {
        input: s.to_string(),
        reason,
    };
    if s.is_empty() {
        return Ok(None);
    }
    let Some(beg) = find_not_of(s, BLANKS, 0) else {
        return Err(err("no non-whitespace characters found".into()));
    };
    let (id_text, mut end) = read_word(s, beg, BLANKS_AND_SEPARATORS)
        .map_err(|()| err("mismatched quotes around identity".into()))?;
    if beg == end {
        return Err(err("no identity".into()));
    }
    let identity = string_to_identity(id_text)?;
    if identity.name.is_empty() {
        if !identity.category.is_empty() {
            return Err(Error::IllegalIdentity(identity));
        }
        if find_not_of(s, BLANKS, end).is_some() {
            return Err(err("invalid characters after identity".into()));
        }
        return Ok(None);
    }

    let mut proxy = ProxyData::new(identity);
    proxy.encoding = defaults.encoding;
    let mut next = None;
    while let Some(beg) = find_not_of(s, BLANKS, end) {
        let c = s.as_bytes()[beg];
        if c == b':' || c == b'@' {
            next = Some(beg);
            break;
        }
        end = find_of(s, BLANKS_AND_SEPARATORS, beg).unwrap_or(s.len());
        let option = &s[beg..end];
        if option.len() != 2 || !option.starts_with('-') {
            return Err(err(format!("expected a proxy option but found `{option}'")));
        }
        let mut argument: Option<&str> = None;
        if let Some(arg_beg) = find_not_of(s, BLANKS, end) {
            if !matches!(s.as_bytes()[arg_beg], b'@' | b':' | b'-') {
                let (arg, arg_end) =
                    read_word(s, arg_beg, BLANKS_AND_SEPARATORS).map_err(|()| {
                        err(format!(
                            "mismatched quotes around value for {option} option"
                        ))
                    })?;
                argument = Some(arg);
                end = arg_end;
            }
        }
        let argument = argument.filter(|a| !a.is_empty());
        let required =
            || argument.ok_or_else(|| err(format!("no argument provided for {option} option")));
        let set_mode = |proxy: &mut ProxyData, mode| match argument {
            Some(a) => Err(err(format!(
                "unexpected argument `{a}' provided for {option} option"
            ))),
            None => {
                proxy.mode = mode;
                Ok(())
            }
        };
        match option.as_bytes()[1] {
            b'f' => {
                proxy.facet = unescape_string(required()?, "")
                    .map_err(|r| err(format!("invalid facet: {r}")))?;
            }
            b't' => set_mode(&mut proxy, ProxyMode::Twoway)?,
            b'o' => set_mode(&mut proxy, ProxyMode::Oneway)?,
            b'O' => set_mode(&mut proxy, ProxyMode::BatchOneway)?,
            b'd' => set_mode(&mut proxy, ProxyMode::Datagram)?,
            b'D' => set_mode(&mut proxy, ProxyMode::BatchDatagram)?,
            b's' => {
                if let Some(a) = argument {
                    return Err(err(format!(
                        "unexpected argument `{a}' provided for -s option"
                    )));
                }
                proxy.secure = true;
            }
            b'e' => {
                let arg = required()?;
                proxy.encoding = arg
                    .parse()
                    .map_err(|e| err(format!("invalid encoding version `{arg}': {e}")))?;
            }
            b'p' => {
                let arg = required()?;
                proxy.protocol = arg
                    .parse()
                    .map_err(|e| err(format!("invalid protocol version `{arg}': {e}")))?;
            }
            _ => return Err(err(format!("unknown option `{option}'"))),
        }
    }

    let Some(beg) = next else {
        return Ok(Some(proxy));
    };
    if s.as_bytes()[beg] == b':' {
        let mut unknown = Vec::new();
        let mut end = beg;
        while end < s.len() && s.as_bytes()[end] == b':' {
            let beg = end + 1;
            end = find_endpoint_end(s, beg);
            let text = &s[beg..end];
            match parse_endpoint(text, defaults, EndpointRole::Proxy)? {
                Some(ep) => proxy.endpoints.push(ep),
                None => unknown.push(text),
            }
        }
        if proxy.endpoints.is_empty() {
            return Err(Error::EndpointParse {
                input: s.to_string(),
                reason: format!("invalid endpoint `{}'", unknown.first().unwrap_or(&"")),
            });
        }
        return Ok(Some(proxy));
    }

    // `@ adapter`
    let Some(beg) = find_not_of(s, BLANKS, beg + 1) else {
        return Err(err("missing adapter id".into()));
    };
    let (adapter, end) = read_word(s, beg, BLANKS)
        .map_err(|()| err("mismatched quotes around adapter id".into()))?;
    if find_not_of(s, BLANKS, end).is_some() {
        return Err(err(
            "invalid trailing characters after the adapter id".into()
        ));
    }
    proxy.adapter_id =
        unescape_string(adapter, "").map_err(|r| err(format!("invalid adapter id: {r}")))?;
    if proxy.adapter_id.is_empty() {
        return Err(err("empty adapter id".into()));
    }
    Ok(Some(proxy))
}

/// Quotes `text` if the proxy parser would split it (it holds a space, `:` or `@`).
fn push_quoted(out: &mut String, text: &str) {
    if text.contains([' ', ':', '@']) {
        out.push('"');
        out.push_str(text);
        out.push('"');
    } else {
        out.push_str(text);
    }
}

/// Prints a proxy as Ice's `proxyToString` does with `Ice.ToStringMode` = `mode`.
///
/// ```
/// use floe_wire::{proxy_to_string, Identity, ProxyData, ToStringMode};
/// let mut p = ProxyData::new(Identity::new("id", "cat"));
/// p.facet = "my facet".into();
/// assert_eq!(proxy_to_string(&p, ToStringMode::Unicode), "cat/id -f \"my facet\" -t -e 1.1");
/// ```
pub fn proxy_to_string(p: &ProxyData, mode: ToStringMode) -> String {
    let mut out = String::new();
    push_quoted(&mut out, &identity_to_string(&p.identity, mode));
    if !p.facet.is_empty() {
        out.push_str(" -f ");
        push_quoted(&mut out, &escape_string(&p.facet, "", mode));
    }
    out.push(' ');
    out.push_str(p.mode.option());
    if p.secure {
        out.push_str(" -s");
    }
    if p.protocol != PROTOCOL_1_0 {
        out.push_str(" -p ");
        out.push_str(&p.protocol.to_string());
    }
    out.push_str(" -e ");
    out.push_str(&p.encoding.to_string());
    if !p.endpoints.is_empty() {
        for ep in &p.endpoints {
            out.push(':');
            out.push_str(&ep.to_string());
        }
    } else if !p.adapter_id.is_empty() {
        out.push_str(" @ ");
        push_quoted(&mut out, &escape_string(&p.adapter_id, "", mode));
    }
    out
}

impl fmt::Display for ProxyData {
    /// Prints the proxy in [`ToStringMode::Unicode`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&proxy_to_string(self, ToStringMode::Unicode))
    }
}

impl FromStr for ProxyData {
    type Err = Error;

    /// Parses with Ice's default configuration ([`ParseDefaults::default`]).
    ///
    /// # Errors
    ///
    /// As [`string_to_proxy`], and [`Error::ProxyParse`] for the null proxy.
    fn from_str(s: &str) -> Result<Self> {
        string_to_proxy(s, &ParseDefaults::default())?.ok_or_else(|| Error::ProxyParse {
            input: s.to_string(),
            reason: "this is the null proxy".into(),
        })
    }
}

#[cfg(test)]
mod tests {
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
}
