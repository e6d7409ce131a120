//! Stringified proxies and identities (§6.1), the subset the runtime needs
//! until floe-wire's full parser lands: `identity [-f facet] [-t|-o|-O|-d|-D]
//! [-s] [-e 1.x] [-p 1.0] [:endpoint...| @ adapter]`.

use floe_wire::{EncodingVersion, Identity};

use crate::endpoint::{split_endpoints, Endpoint};
use crate::error::{Error, Result};
use crate::proxy::InvocationMode;

/// The parsed parts of a stringified proxy.
#[derive(Clone, Debug, Default)]
pub(crate) struct ProxyParts {
    pub(crate) identity: Identity,
    pub(crate) facet: String,
    pub(crate) mode: InvocationMode,
    pub(crate) secure: bool,
    pub(crate) encoding: Option<EncodingVersion>,
    pub(crate) endpoints: Vec<Endpoint>,
    pub(crate) adapter_id: String,
}

fn parse_err(input: &str, reason: impl Into<String>) -> Error {
    Error::Protocol(floe_wire::Error::ProxyParse {
        input: input.to_string(),
        reason: reason.into(),
    })
}

/// Splits the options part into words, honouring double quotes.
fn words(text: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut has = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' if quoted => {
                if let Some(n) = chars.next() {
                    cur.push('\\');
                    cur.push(n);
                }
            }
            '"' => {
                quoted = !quoted;
                has = true;
            }
            c if c.is_whitespace() && !quoted => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            c => {
                cur.push(c);
                has = true;
            }
        }
    }
    if quoted {
        return Err(parse_err(text, "unbalanced quotes"));
    }
    if has {
        out.push(cur);
    }
    Ok(out)
}

/// Parses `category/name` with backslash escapes.
pub(crate) fn parse_identity(text: &str) -> Result<Identity> {
    let err = |reason: &str| {
        Error::Protocol(floe_wire::Error::IdentityParse {
            input: text.to_string(),
            reason: reason.to_string(),
        })
    };
    let mut parts = vec![String::new()];
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') => parts.last_mut().map(|p| p.push('\n')).unwrap_or(()),
                Some('t') => parts.last_mut().map(|p| p.push('\t')).unwrap_or(()),
                Some(n) => parts.last_mut().map(|p| p.push(n)).unwrap_or(()),
                None => return Err(err("trailing backslash")),
            },
            '/' => parts.push(String::new()),
            c => parts.last_mut().map(|p| p.push(c)).unwrap_or(()),
        }
    }
    let id = match parts.len() {
        1 => Identity::new(parts.remove(0), ""),
        2 => {
            let name = parts.remove(1);
            Identity::new(name, parts.remove(0))
        }
        _ => return Err(err("unescaped '/' in identity")),
    };
    if id.name.is_empty() && !id.category.is_empty() {
        return Err(err("empty identity name"));
    }
    Ok(id)
}

/// Escapes one identity component.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '/' | '\\' | '\'' | '"' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// `category/name`, or `name` when the category is empty.
pub fn identity_to_string(id: &Identity) -> String {
    if id.category.is_empty() {
        escape(&id.name)
    } else {
        format!("{}/{}", escape(&id.category), escape(&id.name))
    }
}

/// Quotes `s` if it contains blanks or separators.
pub(crate) fn quote_if_needed(s: &str) -> String {
    if s.is_empty() || s.contains([' ', ':', '@', '\t']) {
        format!("\"{s}\"")
    } else {
        s.to_string()
    }
}

/// Parses a stringified proxy.
pub(crate) fn parse_proxy(text: &str, default_host: Option<&str>) -> Result<ProxyParts> {
    let text = text.trim();
    // Split off endpoints / adapter id outside quotes.
    let mut quoted = false;
    let mut split = None;
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ':' | '@' if !quoted => {
                split = Some(i);
                break;
            }
            _ => {}
        }
    }
    let (head, tail) = match split {
        Some(i) => (&text[..i], Some(&text[i..])),
        None => (text, None),
    };
    let words = words(head)?;
    let mut it = words.into_iter();
    let Some(id) = it.next() else {
        return Err(parse_err(text, "no identity"));
    };
    let mut parts = ProxyParts {
        identity: parse_identity(&id)?,
        ..Default::default()
    };
    while let Some(opt) = it.next() {
        match opt.as_str() {
            "-f" => {
                parts.facet = it
                    .next()
                    .ok_or_else(|| parse_err(text, "missing argument for -f"))?
            }
            "-t" => parts.mode = InvocationMode::Twoway,
            "-o" => parts.mode = InvocationMode::Oneway,
            "-O" => parts.mode = InvocationMode::BatchOneway,
            "-d" => parts.mode = InvocationMode::Datagram,
            "-D" => parts.mode = InvocationMode::BatchDatagram,
            "-s" => parts.secure = true,
            "-e" | "-p" => {
                let v = it
                    .next()
                    .ok_or_else(|| parse_err(text, format!("missing argument for {opt}")))?;
                let (ma, mi) = v
                    .split_once('.')
                    .and_then(|(a, b)| Some((a.parse::<u8>().ok()?, b.parse::<u8>().ok()?)))
                    .ok_or_else(|| parse_err(text, format!("invalid version `{v}`")))?;
                if opt == "-e" {
                    parts.encoding = Some(EncodingVersion {
                        major: ma,
                        minor: mi,
                    });
                }
            }
            other => return Err(parse_err(text, format!("unknown option `{other}`"))),
        }
    }
    match tail {
        Some(t) if t.starts_with('@') => {
            let w = self::words(&t[1..])?;
            parts.adapter_id = w.into_iter().next().unwrap_or_default();
        }
        Some(t) => {
            for e in split_endpoints(&t[1..]) {
                if e.trim().is_empty() {
                    return Err(parse_err(text, "empty endpoint"));
                }
                parts.endpoints.push(Endpoint::parse(&e, default_host)?);
            }
        }
        None => {}
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_forms() {
        let p = parse_proxy("hello:tcp -h 127.0.0.1 -p 10000", None).unwrap();
        assert_eq!(p.identity, Identity::from_name("hello"));
        assert_eq!(p.endpoints, vec![Endpoint::tcp("127.0.0.1", 10000)]);
        let p = parse_proxy("cat/id -f fac -o:udp -h 239.0.0.1 -p 5", None).unwrap();
        assert_eq!(p.identity, Identity::new("id", "cat"));
        assert_eq!(p.facet, "fac");
        assert_eq!(p.mode, InvocationMode::Oneway);
        let p = parse_proxy("\"a b\" -f \"my facet\" @ Adapter", None).unwrap();
        assert_eq!(p.identity.name, "a b");
        assert_eq!(p.facet, "my facet");
        assert_eq!(p.adapter_id, "Adapter");
        assert!(parse_proxy("x -x", None).is_err());
        assert!(parse_proxy("x -f", None).is_err());
        assert!(parse_proxy("a/b/c", None).is_err());
        assert!(parse_proxy("x:foo -p 1", None).is_err());
    }

    #[test]
    fn identity_text() {
        assert_eq!(identity_to_string(&Identity::new("ego", "cat")), "cat/ego");
        assert_eq!(identity_to_string(&Identity::from_name("a/b")), "a\\/b");
        assert_eq!(parse_identity("a\\/b").unwrap(), Identity::from_name("a/b"));
    }
}
