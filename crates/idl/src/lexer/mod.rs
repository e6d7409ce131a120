//! Token-level nom parsers: trivia (whitespace and comments, capturing doc
//! comments), identifiers with keyword escapes, keywords, punctuation and
//! literals. Every token parser skips leading trivia, so grammar rules in
//! `parse/` compose them directly.

use nom::error::{ContextError, ErrorKind, ParseError};
use nom::IResult;

use crate::ast::{Ice38Syntax, Ident, Pos, ScopedName};
use crate::ident::is_keyword;

mod literals;

pub use literals::{number_lit, string_lit};

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

#[cfg(test)]
mod tests {
    use super::*;

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
        take_ice38_syntax();
        set_total_len("local x".len());
        assert_eq!(ident("local x").unwrap().1.name, "local");
        assert_eq!(
            take_ice38_syntax(),
            [(0, Ice38Syntax::KeywordAsName("local"))]
        );
        let (_, n) = scoped_name("::A::B x").unwrap();
        assert!(n.absolute);
        assert_eq!(n.parts, vec!["A", "B"]);
    }
}
