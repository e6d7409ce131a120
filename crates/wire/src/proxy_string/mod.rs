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
mod tests;
