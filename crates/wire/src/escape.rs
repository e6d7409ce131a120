//! Ice's backslash escaping of strings in text forms (identities, facets,
//! adapter ids), in the three `Ice.ToStringMode`s, and its unescaping (§6.1).
//!
//! Printing escapes `\`, `'`, `"` and the caller's special characters (`/`
//! for identities) with a backslash, control characters as C escapes or
//! `\uXXXX`, and non-ASCII text according to the mode. Parsing accepts every
//! form any mode prints, plus `\xHH` and octal `\ooo` bytes; an unknown
//! escape such as `\q` is kept as is, backslash included, like Ice does.

use std::fmt::Write as _;

/// How text forms print non-ASCII and non-printable characters
/// (`Ice.ToStringMode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ToStringMode {
    /// Non-ASCII characters are printed as they are (UTF-8); control
    /// characters use C escapes or `\uXXXX`. Ice's default.
    #[default]
    Unicode,
    /// Everything above U+007F is escaped as `\uXXXX` or `\UXXXXXXXX`.
    Ascii,
    /// Every byte outside printable ASCII is an octal escape of its UTF-8
    /// byte (`\303\251`), as Ice 3.6 printed them.
    Compat,
}

impl std::str::FromStr for ToStringMode {
    type Err = String;

    /// Reads an `Ice.ToStringMode` property value: `Unicode`, `ASCII` or `Compat`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "Unicode" => Ok(ToStringMode::Unicode),
            "ASCII" => Ok(ToStringMode::Ascii),
            "Compat" => Ok(ToStringMode::Compat),
            _ => Err(format!(
                "unknown Ice.ToStringMode `{s}' (Unicode, ASCII or Compat)"
            )),
        }
    }
}

/// Escapes `s` for a text form: `\`, `'`, `"` and every character of
/// `special` get a backslash, control characters and (depending on `mode`)
/// non-ASCII characters become escapes.
///
/// ```
/// use floe_wire::escape::{escape_string, ToStringMode};
/// assert_eq!(escape_string("a/b\té", "/", ToStringMode::Unicode), "a\\/b\\té");
/// assert_eq!(escape_string("é", "", ToStringMode::Ascii), "\\u00e9");
/// assert_eq!(escape_string("é", "", ToStringMode::Compat), "\\303\\251");
/// ```
pub fn escape_string(s: &str, special: &str, mode: ToStringMode) -> String {
    let mut out = String::with_capacity(s.len());
    if mode == ToStringMode::Compat {
        for &b in s.as_bytes() {
            match b {
                b'\\' | b'\'' | b'"' => {
                    out.push('\\');
                    out.push(b as char);
                }
                0x08 => out.push_str("\\b"),
                0x0c => out.push_str("\\f"),
                b'\n' => out.push_str("\\n"),
                b'\r' => out.push_str("\\r"),
                b'\t' => out.push_str("\\t"),
                _ if b.is_ascii() && special.as_bytes().contains(&b) => {
                    out.push('\\');
                    out.push(b as char);
                }
                _ if !(32..=126).contains(&b) => {
                    // Writing to a String cannot fail.
                    let _ = write!(out, "\\{b:03o}");
                }
                _ => out.push(b as char),
            }
        }
        return out;
    }
    for c in s.chars() {
        match c {
            '\\' | '\'' | '"' => {
                out.push('\\');
                out.push(c);
            }
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            _ if special.contains(c) => {
                out.push('\\');
                out.push(c);
            }
            _ if (c as u32) < 32 || c == '\x7f' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            _ if mode == ToStringMode::Ascii && (c as u32) > 127 => {
                if (c as u32) <= 0xffff {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                } else {
                    let _ = write!(out, "\\U{:08x}", c as u32);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// Reverses [`escape_string`] for any mode. `special` lists the characters
/// that a backslash turns into themselves beyond the standard ones (`/` for
/// identities).
///
/// ```
/// use floe_wire::escape::unescape_string;
/// assert_eq!(unescape_string("x\\101\\x41\\u0041\\t", "").unwrap(), "xAAA\t");
/// assert_eq!(unescape_string("\\q", "").unwrap(), "\\q");
/// assert!(unescape_string("\\777", "").is_err());
/// ```
///
/// # Errors
///
/// A reason, when the text holds a raw control character, a malformed or
/// out-of-range escape, or bytes that do not form UTF-8.
pub fn unescape_string(s: &str, special: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b != b'\\' {
            if b < 32 || b == 127 {
                return Err(format!(
                    "character after `{}' has invalid ordinal value {b}",
                    String::from_utf8_lossy(&bytes[..i])
                ));
            }
            out.push(b);
            i += 1;
            continue;
        }
        let Some(&e) = bytes.get(i + 1) else {
            // A lone trailing backslash is kept.
            out.push(b'\\');
            break;
        };
        i += 2;
        match e {
            b'\\' | b'\'' | b'"' | b'?' => out.push(e),
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0c),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(0x0b),
            b'u' | b'U' => {
                let n = if e == b'u' { 4 } else { 8 };
                let digits = bytes
                    .get(i..i + n)
                    .filter(|d| d.iter().all(u8::is_ascii_hexdigit));
                let Some(digits) = digits else {
                    return Err("invalid universal character name: too few hex digits".into());
                };
                i += n;
                let mut code: u32 = 0;
                for d in digits {
                    code = code * 16 + hex_value(*d);
                }
                if (0xd800..=0xdfff).contains(&code) {
                    return Err("a universal character name cannot designate a surrogate".into());
                }
                let Some(c) = char::from_u32(code) else {
                    return Err(format!("invalid universal character name \\{}", e as char));
                };
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            b'x' => {
                let mut value: u32 = 0;
                let mut n = 0;
                while n < 2 && i < bytes.len() && bytes[i].is_ascii_hexdigit() {
                    value = value * 16 + hex_value(bytes[i]);
                    i += 1;
                    n += 1;
                }
                if n == 0 {
                    return Err("invalid \\x escape sequence: no hex digit".into());
                }
                out.push(value as u8);
            }
            b'0'..=b'7' => {
                let mut value = u32::from(e - b'0');
                let mut n = 1;
                while n < 3 && i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
                    value = value * 8 + u32::from(bytes[i] - b'0');
                    i += 1;
                    n += 1;
                }
                let Ok(byte) = u8::try_from(value) else {
                    return Err(format!("octal value \\{value:o} ({value}) is out of range"));
                };
                out.push(byte);
            }
            _ if e.is_ascii() && special.as_bytes().contains(&e) => out.push(e),
            _ => {
                // Unknown escape: keep the backslash, then read the next
                // character normally.
                out.push(b'\\');
                i -= 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| "escapes do not form valid UTF-8".to_string())
}

fn hex_value(d: u8) -> u32 {
    match d {
        b'0'..=b'9' => u32::from(d - b'0'),
        b'a'..=b'f' => u32::from(d - b'a' + 10),
        _ => u32::from(d - b'A' + 10),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_in_each_mode() {
        let m = ToStringMode::Unicode;
        assert_eq!(
            escape_string("\x07\x08\x0b\x0c\r\n\t\0", "", m),
            "\\a\\b\\v\\f\\r\\n\\t\\u0000"
        );
        assert_eq!(escape_string("\x1b\x7f", "", m), "\\u001b\\u007f");
        assert_eq!(
            escape_string("\u{80}\u{9f}\u{a0}ÿ", "", m),
            "\u{80}\u{9f}\u{a0}ÿ"
        );
        assert_eq!(escape_string("a?b", "", m), "a?b");
        assert_eq!(escape_string("sp ace:@", "", m), "sp ace:@");
        assert_eq!(escape_string("'", "", m), "\\'");
        assert_eq!(escape_string("é/", "/", m), "é\\/");
        let m = ToStringMode::Ascii;
        assert_eq!(
            escape_string("\x07\x08\x0b\x0c\r\n\t\0", "", m),
            "\\a\\b\\v\\f\\r\\n\\t\\u0000"
        );
        assert_eq!(
            escape_string("\u{80}\u{9f}\u{a0}ÿ", "", m),
            "\\u0080\\u009f\\u00a0\\u00ff"
        );
        assert_eq!(escape_string("\u{100}\u{ffff}", "", m), "\\u0100\\uffff");
        assert_eq!(escape_string("\u{10000}", "", m), "\\U00010000");
        assert_eq!(escape_string("é/", "/", m), "\\u00e9\\/");
        let m = ToStringMode::Compat;
        assert_eq!(
            escape_string("\x07\x08\x0b\x0c\r\n\t\0", "", m),
            "\\007\\b\\013\\f\\r\\n\\t\\000"
        );
        assert_eq!(escape_string("\x1b\x7f", "", m), "\\033\\177");
        assert_eq!(
            escape_string("\u{80}\u{9f}\u{a0}ÿ", "", m),
            "\\302\\200\\302\\237\\302\\240\\303\\277"
        );
        assert_eq!(
            escape_string("\u{100}\u{ffff}", "", m),
            "\\304\\200\\357\\277\\277"
        );
        assert_eq!(escape_string("\u{10000}", "", m), "\\360\\220\\200\\200");
        assert_eq!(escape_string("é/", "/", m), "\\303\\251\\/");
    }

    #[test]
    fn mode_from_property() {
        assert_eq!(
            "ASCII".parse::<ToStringMode>().unwrap(),
            ToStringMode::Ascii
        );
        assert_eq!(
            "Compat".parse::<ToStringMode>().unwrap(),
            ToStringMode::Compat
        );
        assert_eq!(
            "Unicode".parse::<ToStringMode>().unwrap(),
            ToStringMode::Unicode
        );
        assert!("ascii".parse::<ToStringMode>().is_err());
    }

    #[test]
    fn unescapes_like_ice() {
        let ok = |s: &str| unescape_string(s, "/").unwrap();
        assert_eq!(ok("\\q"), "\\q");
        assert_eq!(ok("\\?"), "?");
        assert_eq!(ok("abc\\"), "abc\\");
        assert_eq!(ok("\\8"), "\\8");
        assert_eq!(ok("\\x4"), "\x04");
        assert_eq!(ok("\\x414"), "A4");
        assert_eq!(ok("\\U0010ffff"), "\u{10ffff}");
        assert_eq!(ok("\\303\\251"), "é");
        assert_eq!(ok("\\0"), "\0");
        assert_eq!(ok("\\a\\b\\f\\n\\r\\t\\v"), "\x07\x08\x0c\n\r\t\x0b");
        assert_eq!(ok("a b"), "a b");
        assert_eq!(ok("\\ "), "\\ ");
        assert_eq!(ok("\\/"), "/");
        assert_eq!(ok("\\'x\\\""), "'x\"");
        assert_eq!(ok("\\12"), "\n");
        assert_eq!(ok("\\1234"), "S4");
        assert_eq!(ok("\\x0041"), "\x0041");
        assert_eq!(ok("\\uFFFF"), "\u{ffff}");
        assert_eq!(ok("é"), "é");
        assert_eq!(ok("\\x7F"), "\x7f");
        assert_eq!(ok("\\u0000"), "\0");
        for bad in [
            "\\777",
            "\\400",
            "\\377",
            "\\x",
            "\\xg",
            "\\u00",
            "\\u00e",
            "\\ud800",
            "\\U00110000",
            "a\tb",
            "a\x7fb",
            "\\303",
            "\\uD83D\\uDE00",
        ] {
            assert!(unescape_string(bad, "/").is_err(), "{bad:?} should fail");
        }
    }
}
