//! Literal tokens: string literals (with Ice's escapes) and numbers.

use super::{fail, fail_cut, is_ident_char, ws, In, PResult};
use crate::ast::ConstExpr;

/// A string literal with escapes decoded.
pub fn string_lit(i: In<'_>) -> PResult<'_, String> {
    let (i, _) = ws(i)?;
    let Some(mut rest) = i.strip_prefix('"') else {
        return fail(i, "string literal");
    };
    let mut bytes: Vec<u8> = Vec::new();
    loop {
        let mut chars = rest.chars();
        let Some(c) = chars.next() else {
            return fail_cut(i, "closing `\"' (unterminated string literal)");
        };
        match c {
            '"' => {
                return Ok((chars.as_str(), String::from_utf8_lossy(&bytes).into_owned()));
            }
            '\n' => return fail_cut(i, "closing `\"' (unterminated string literal)"),
            '\\' => {
                let Some(e) = chars.next() else {
                    return fail_cut(i, "closing `\"' (unterminated string literal)");
                };
                let after = chars.as_str();
                let simple = match e {
                    '\\' => Some(b'\\'),
                    '"' => Some(b'"'),
                    '\'' => Some(b'\''),
                    '?' => Some(b'?'),
                    'a' => Some(7),
                    'b' => Some(8),
                    'f' => Some(12),
                    'n' => Some(b'\n'),
                    'r' => Some(b'\r'),
                    't' => Some(b'\t'),
                    'v' => Some(11),
                    _ => None,
                };
                if let Some(b) = simple {
                    bytes.push(b);
                    rest = after;
                    continue;
                }
                match e {
                    '0'..='7' => {
                        let digits: String = std::iter::once(e)
                            .chain(
                                after
                                    .chars()
                                    .take_while(|c| ('0'..='7').contains(c))
                                    .take(2),
                            )
                            .collect();
                        let v = u32::from_str_radix(&digits, 8).unwrap_or(0);
                        if v > 255 {
                            return fail_cut(
                                rest,
                                "octal escape sequence in range 0-255 (\\0 to \\377)",
                            );
                        }
                        bytes.push(v as u8);
                        rest = &rest[1 + digits.len()..];
                    }
                    'x' => {
                        // At most two digits, as Ice reads them:
                        // `\x5C101` is a backslash followed by `101`.
                        let digits: String = after
                            .chars()
                            .take_while(|c| c.is_ascii_hexdigit())
                            .take(2)
                            .collect();
                        if digits.is_empty() {
                            return fail_cut(rest, "one or two hex digits after `\\x'");
                        }
                        let v = u8::from_str_radix(&digits, 16).unwrap_or(0);
                        bytes.push(v);
                        rest = &after[digits.len()..];
                    }
                    'u' | 'U' => {
                        let n = if e == 'u' { 4 } else { 8 };
                        let digits: String = after.chars().take(n).collect();
                        if digits.len() != n || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
                            return fail_cut(rest, format!("{n} hex digits after `\\{e}'"));
                        }
                        let v = u32::from_str_radix(&digits, 16).unwrap_or(0);
                        let Some(ch) = char::from_u32(v) else {
                            return fail_cut(
                                rest,
                                "a valid Unicode code point in universal character name",
                            );
                        };
                        let mut buf = [0u8; 4];
                        bytes.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        rest = &after[n..];
                    }
                    other => {
                        // Unknown escapes keep the backslash, as Ice does.
                        bytes.push(b'\\');
                        let mut buf = [0u8; 4];
                        bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                        rest = after;
                    }
                }
            }
            c => {
                let mut buf = [0u8; 4];
                bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                rest = chars.as_str();
            }
        }
    }
}

/// A numeric literal with optional sign: integer (decimal, `0x` hex,
/// leading-`0` octal) or floating point (fraction, exponent, `f` suffix).
pub fn number_lit(i: In<'_>) -> PResult<'_, ConstExpr> {
    let (i, _) = ws(i)?;
    let start = i;
    let (body, negative) = match i.as_bytes().first() {
        Some(b'-') => (&i[1..], true),
        Some(b'+') => (&i[1..], false),
        _ => (i, false),
    };
    let b = body.as_bytes();
    if b.is_empty()
        || !(b[0].is_ascii_digit() || (b[0] == b'.' && b.get(1).is_some_and(u8::is_ascii_digit)))
    {
        return fail(start, "number");
    }
    // Hexadecimal.
    if b.len() > 1 && b[0] == b'0' && b[1] == b'x' {
        let digits_len = body[2..]
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(body.len() - 2);
        if digits_len == 0 {
            return fail_cut(&body[2..], "hexadecimal digits after `0x'");
        }
        let rest = &body[2 + digits_len..];
        if rest.starts_with(is_ident_char) {
            return fail_cut(rest, "end of integer literal");
        }
        let value = u64::from_str_radix(&body[2..2 + digits_len], 16)
            .ok()
            .and_then(|v| signed(v, negative));
        let text = start[..start.len() - rest.len()].to_owned();
        return Ok((rest, ConstExpr::Integer { value, text }));
    }
    let int_len = body
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(body.len());
    let mut j = int_len;
    let mut is_float = false;
    if b.get(j) == Some(&b'.') {
        is_float = true;
        j += 1;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(b.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        if b.get(k).is_some_and(u8::is_ascii_digit) {
            while b.get(k).is_some_and(u8::is_ascii_digit) {
                k += 1;
            }
            j = k;
            is_float = true;
        } else {
            return fail_cut(&body[j..], "exponent digits");
        }
    }
    if is_float {
        let num = &body[..j];
        if matches!(b.get(j), Some(b'f' | b'F')) {
            j += 1;
        }
        let rest = &body[j..];
        if rest.starts_with(is_ident_char) {
            return fail_cut(rest, "end of floating-point literal");
        }
        let mut value: f64 = num.parse().unwrap_or(0.0);
        if negative {
            value = -value;
        }
        let text = start[..start.len() - rest.len()].to_owned();
        return Ok((rest, ConstExpr::Float { value, text }));
    }
    let digits = &body[..int_len];
    let rest = &body[int_len..];
    if rest.starts_with(is_ident_char) {
        return fail_cut(rest, "end of integer literal");
    }
    let parsed = if digits.len() > 1 && digits.starts_with('0') {
        if digits.bytes().any(|c| c == b'8' || c == b'9') {
            // slice2cpp accepts `08`; read it as decimal.
            digits.parse::<u64>().ok()
        } else {
            u64::from_str_radix(&digits[1..], 8).ok()
        }
    } else {
        digits.parse::<u64>().ok()
    };
    let value = parsed.and_then(|v| signed(v, negative));
    let text = start[..start.len() - rest.len()].to_owned();
    Ok((rest, ConstExpr::Integer { value, text }))
}

fn signed(v: u64, negative: bool) -> Option<i64> {
    if negative {
        if v == 1u64 << 63 {
            Some(i64::MIN)
        } else {
            i64::try_from(v).ok().map(|x| -x)
        }
    } else {
        i64::try_from(v).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::super::set_total_len;
    use super::*;

    fn num(s: &str) -> ConstExpr {
        set_total_len(s.len());
        number_lit(s).map(|(_, v)| v).unwrap()
    }

    #[test]
    fn numbers() {
        assert!(matches!(
            num("0x1F"),
            ConstExpr::Integer {
                value: Some(31),
                ..
            }
        ));
        assert!(matches!(
            num("010"),
            ConstExpr::Integer { value: Some(8), .. }
        ));
        assert!(matches!(
            num("-9223372036854775808"),
            ConstExpr::Integer {
                value: Some(i64::MIN),
                ..
            }
        ));
        assert!(matches!(
            num("9223372036854775808"),
            ConstExpr::Integer { value: None, .. }
        ));
        assert!(
            matches!(num(".5e-3"), ConstExpr::Float { value, .. } if (value - 0.0005).abs() < 1e-12)
        );
        assert!(matches!(num("1.5f"), ConstExpr::Float { value, .. } if value == 1.5));
        assert!(matches!(num("1."), ConstExpr::Float { value, .. } if value == 1.0));
        assert!(matches!(num("-2.5E+3"), ConstExpr::Float { value, .. } if value == -2500.0));
        assert!(matches!(
            num("08"),
            ConstExpr::Integer { value: Some(8), .. }
        ));
        assert!(number_lit("0X1F").is_err());
        assert!(number_lit("abc").is_err());
    }

    #[test]
    fn strings() {
        let s = r#""a\x41\101\u0041\U00000041\n\t\\\"\?\q" rest"#;
        set_total_len(s.len());
        let (rest, v) = string_lit(s).unwrap();
        assert_eq!(v, "aAAAA\n\t\\\"?\\q");
        assert_eq!(rest, " rest");
        assert!(string_lit("\"abc").is_err());
        // Two hex digits at most: a backslash, then `101` as they are.
        let s = r#""\x5C101" rest"#;
        set_total_len(s.len());
        assert_eq!(string_lit(s).unwrap().1, "\\101");
        assert!(string_lit(r#""\xg""#).is_err());
    }
}
