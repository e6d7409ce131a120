//! Token-level nom parsers: trivia (whitespace and comments, capturing doc
//! comments), identifiers with keyword escapes, keywords, punctuation and
//! literals. Every token parser skips leading trivia, so grammar rules in
//! `parse/` compose them directly.

use nom::error::{ContextError, ErrorKind, ParseError};
use nom::IResult;

use crate::ast::{ConstExpr, Ice38Syntax, Ident, Pos, ScopedName};
use crate::ident::is_keyword;

/// Input of every parser: the rest of the preprocessed text.
pub type In<'a> = &'a str;

/// Result of every parser.
pub type PResult<'a, O> = IResult<In<'a>, O, SyntaxError<'a>>;

/// A parse failure: where, what was expected, and the rules being parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError<'a> {
    /// The input at the failure point.
    pub input: In<'a>,
    /// What was expected there, if known.
    pub expected: Option<String>,
    /// `context` labels, innermost first.
    pub context: Vec<&'static str>,
}

impl<'a> SyntaxError<'a> {
    /// An error expecting `what` at `input`.
    pub fn expected(input: In<'a>, what: impl Into<String>) -> Self {
        SyntaxError {
            input,
            expected: Some(what.into()),
            context: Vec::new(),
        }
    }
}

impl<'a> ParseError<In<'a>> for SyntaxError<'a> {
    fn from_error_kind(input: In<'a>, _kind: ErrorKind) -> Self {
        SyntaxError {
            input,
            expected: None,
            context: Vec::new(),
        }
    }

    fn append(_input: In<'a>, _kind: ErrorKind, other: Self) -> Self {
        other
    }

    fn or(self, other: Self) -> Self {
        // Keep the error that got further; prefer one that says what it wanted.
        match self.input.len().cmp(&other.input.len()) {
            std::cmp::Ordering::Less => self,
            std::cmp::Ordering::Greater => other,
            std::cmp::Ordering::Equal if other.expected.is_some() => other,
            std::cmp::Ordering::Equal => self,
        }
    }
}

impl<'a> ContextError<In<'a>> for SyntaxError<'a> {
    fn add_context(_input: In<'a>, ctx: &'static str, mut other: Self) -> Self {
        other.context.push(ctx);
        other
    }
}

/// Fails with `expected` at `input` (recoverable).
pub fn fail<'a, O>(input: In<'a>, expected: impl Into<String>) -> PResult<'a, O> {
    Err(nom::Err::Error(SyntaxError::expected(input, expected)))
}

/// Fails with `expected` at `input` (committed: no other branch is tried).
pub fn fail_cut<'a, O>(input: In<'a>, expected: impl Into<String>) -> PResult<'a, O> {
    Err(nom::Err::Failure(SyntaxError::expected(input, expected)))
}

thread_local! {
    static TOTAL_LEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Sets the length of the text being parsed, so that [`pos`] can turn the
/// remaining input into an offset.
pub fn set_total_len(len: usize) {
    TOTAL_LEN.with(|t| t.set(len));
}

/// Byte offset of `input` in the text being parsed.
pub fn pos(input: In<'_>) -> Pos {
    TOTAL_LEN.with(|t| t.get().saturating_sub(input.len()))
}

thread_local! {
    static ICE38_SYNTAX: std::cell::RefCell<Vec<(Pos, Ice38Syntax)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Records a use of Ice 3.8 syntax at `pos` (it goes into
/// [`crate::ast::Unit::ice38_syntax`]).
pub fn note_ice38(pos: Pos, syntax: Ice38Syntax) {
    ICE38_SYNTAX.with(|r| r.borrow_mut().push((pos, syntax)));
}

/// The uses of Ice 3.8 syntax recorded since the last call.
pub fn take_ice38_syntax() -> Vec<(Pos, Ice38Syntax)> {
    ICE38_SYNTAX.with(|r| std::mem::take(&mut *r.borrow_mut()))
}

/// Skips whitespace and comments; returns the last doc comment seen
/// (`/** ... */` or a run of `///` lines).
pub fn ws(mut i: In<'_>) -> PResult<'_, Option<String>> {
    let mut doc: Option<String> = None;
    let mut doc_lines_run = false;
    loop {
        let trimmed = i.trim_start_matches([' ', '\t', '\r', '\n', '\x0c', '\x0b']);
        let newlines =
            i.len() != trimmed.len() && i[..i.len() - trimmed.len()].matches('\n').count() > 1;
        if newlines {
            doc_lines_run = false;
        }
        i = trimmed;
        if let Some(rest) = i.strip_prefix("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            let body = &rest[..end];
            if let Some(text) = body.strip_prefix('/').filter(|b| !b.starts_with('/')) {
                let line = text.strip_prefix(' ').unwrap_or(text).trim_end();
                match (&mut doc, doc_lines_run) {
                    (Some(d), true) => {
                        d.push('\n');
                        d.push_str(line);
                    }
                    _ => doc = Some(line.to_owned()),
                }
                doc_lines_run = true;
            } else {
                doc_lines_run = false;
            }
            i = &rest[end..];
        } else if let Some(rest) = i.strip_prefix("/*") {
            let Some(end) = rest.find("*/") else {
                return Err(nom::Err::Failure(SyntaxError::expected(
                    i,
                    "end of comment `*/' (unterminated comment)",
                )));
            };
            let body = &rest[..end];
            if body.starts_with('*') && !body.starts_with("**") && body != "*" {
                doc = Some(clean_block_doc(&body[1..]));
            }
            doc_lines_run = false;
            i = &rest[end + 2..];
        } else {
            return Ok((i, doc));
        }
    }
}

fn clean_block_doc(body: &str) -> String {
    let lines: Vec<&str> = body
        .lines()
        .map(|l| {
            let t = l.trim();
            let t = t.strip_prefix('*').unwrap_or(t);
            t.strip_prefix(' ').unwrap_or(t).trim_end()
        })
        .collect();
    let start = lines
        .iter()
        .position(|l| !l.is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(start, |e| e + 1);
    lines[start..end].join("\n")
}

/// Keywords of Ice 3.7 that Ice 3.8 dropped (with local definitions and
/// classes implementing interfaces).
const ICE37_ONLY_KEYWORDS: [&str; 3] = ["implements", "local", "LocalObject"];

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Reads a raw word (no trivia); returns it with whether it was escaped.
fn raw_word(i: In<'_>) -> PResult<'_, (&str, bool)> {
    let (i, escaped) = match i.strip_prefix('\\') {
        Some(r) => (r, true),
        None => (i, false),
    };
    if !i.starts_with(is_ident_start) {
        return fail(i, "identifier");
    }
    let end = i.find(|c: char| !is_ident_char(c)).unwrap_or(i.len());
    Ok((&i[end..], (&i[..end], escaped)))
}

/// An identifier (not a keyword unless escaped). The words that only Ice
/// 3.7 reserves (`local`, `implements`, `LocalObject`) are names in Ice
/// 3.8: accepted, and recorded as Ice 3.8 syntax.
pub fn ident(i: In<'_>) -> PResult<'_, Ident> {
    let (i, _) = ws(i)?;
    let start = i;
    let (rest, (word, escaped)) = raw_word(i)?;
    if let (false, Some(kw)) = (escaped, ICE37_ONLY_KEYWORDS.iter().find(|k| **k == word)) {
        note_ice38(pos(start), Ice38Syntax::KeywordAsName(kw));
    } else if !escaped && is_keyword(word) {
        return fail(
            start,
            format!("identifier (`{word}' is a keyword; escape it as `\\{word}')"),
        );
    }
    Ok((
        rest,
        Ident {
            name: word.to_owned(),
            escaped,
            pos: pos(start),
        },
    ))
}

/// A keyword, matched as a whole word.
pub fn keyword<'a>(kw: &'static str) -> impl Fn(In<'a>) -> PResult<'a, Pos> {
    move |i: In<'a>| {
        let (i, _) = ws(i)?;
        if let Some(rest) = i.strip_prefix(kw) {
            if !rest.starts_with(is_ident_char) {
                return Ok((rest, pos(i)));
            }
        }
        fail(i, format!("`{kw}'"))
    }
}

/// True if the next word (after trivia) is `kw`.
pub fn peek_keyword(i: In<'_>, kw: &str) -> bool {
    let t = skip_trivia_cheap(i);
    t.strip_prefix(kw)
        .is_some_and(|r| !r.starts_with(is_ident_char))
}

/// Skips whitespace and comments without recording docs (lookahead only).
pub fn skip_trivia_cheap(i: In<'_>) -> In<'_> {
    match ws(i) {
        Ok((r, _)) => r,
        Err(_) => i,
    }
}

/// A punctuation token.
pub fn sym<'a>(s: &'static str) -> impl Fn(In<'a>) -> PResult<'a, Pos> {
    move |i: In<'a>| {
        let before = i;
        let (i, _) = ws(i)?;
        match i.strip_prefix(s) {
            Some(rest) => Ok((rest, pos(i))),
            // A missing `;' is reported right after the previous token.
            None if s == ";" => fail(before, "`;'"),
            None => fail(i, format!("`{s}'")),
        }
    }
}

/// Like [`sym`] but committed: a missing token is a syntax error.
pub fn expect_sym<'a>(s: &'static str) -> impl Fn(In<'a>) -> PResult<'a, Pos> {
    move |i: In<'a>| match sym(s)(i) {
        Ok(r) => Ok(r),
        Err(nom::Err::Error(e)) => Err(nom::Err::Failure(e)),
        Err(e) => Err(e),
    }
}

/// A scoped name: `A`, `A::B`, `::A::B` (components may be escaped).
pub fn scoped_name(i: In<'_>) -> PResult<'_, ScopedName> {
    let (i, _) = ws(i)?;
    let start = i;
    let (mut i, absolute) = match i.strip_prefix("::") {
        Some(r) => (r, true),
        None => (i, false),
    };
    let mut parts = Vec::new();
    loop {
        let before = i;
        let (rest, (word, escaped)) = match raw_word(i) {
            Ok(r) => r,
            Err(e) => {
                if parts.is_empty() {
                    return Err(e);
                }
                return fail_cut(before, "identifier after `::'");
            }
        };
        if !escaped && is_keyword(word) {
            return fail(before, format!("type name (`{word}' is a keyword)"));
        }
        parts.push(word.to_owned());
        i = rest;
        match i.strip_prefix("::") {
            Some(r) => i = r,
            None => break,
        }
    }
    Ok((
        i,
        ScopedName {
            absolute,
            parts,
            pos: pos(start),
        },
    ))
}

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

    #[test]
    fn docs() {
        let (_, d) = ws("/** Hello\n * world\n */\n  x").unwrap();
        assert_eq!(d.as_deref(), Some("Hello\nworld"));
        let (_, d) = ws("/// a\n/// b\nx").unwrap();
        assert_eq!(d.as_deref(), Some("a\nb"));
        let (_, d) = ws("// plain\n/* block */ x").unwrap();
        assert_eq!(d, None);
        assert!(ws("/* open").is_err());
    }

    #[test]
    fn identifiers() {
        set_total_len(100);
        assert_eq!(ident("  foo bar").unwrap().1.name, "foo");
        assert!(ident("struct").is_err());
        assert!(ident("\\struct").unwrap().1.escaped);
        let (_, n) = scoped_name("::A::B x").unwrap();
        assert!(n.absolute);
        assert_eq!(n.parts, vec!["A", "B"]);
    }
}
