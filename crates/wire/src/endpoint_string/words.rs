//! Cutting endpoint text into words and a list of endpoints into
//! endpoints, with Ice's quoting rules.

use super::parse_error;
use crate::error::Result;

/// Splits text into words as Ice's `splitString` does: whitespace separates
/// words, single or double quotes group them (and are dropped), a backslash
/// before a quote character keeps the quote. Empty words are dropped.
///
/// # Errors
///
/// [`crate::Error::EndpointParse`] for an unterminated quote.
pub fn split_words(s: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Vec<u8> = Vec::new();
    let mut quote: Option<u8> = None;
    let bytes = s.as_bytes();
    let mut pos = 0;
    while pos < bytes.len() {
        let c = bytes[pos];
        match quote {
            None if c == b'"' || c == b'\'' => {
                quote = Some(c);
                pos += 1;
                continue;
            }
            None if c == b'\\' && matches!(bytes.get(pos + 1), Some(b'"' | b'\'')) => {
                pos += 1;
            }
            Some(q) if c == b'\\' && bytes.get(pos + 1) == Some(&q) => {
                pos += 1;
            }
            Some(q) if c == q => {
                quote = None;
                pos += 1;
                continue;
            }
            None if matches!(c, b' ' | b'\t' | b'\n' | b'\r') => {
                pos += 1;
                if !word.is_empty() {
                    words.push(bytes_to_string(std::mem::take(&mut word)));
                }
                continue;
            }
            _ => {}
        }
        word.push(bytes[pos]);
        pos += 1;
    }
    if quote.is_some() {
        return Err(parse_error(s, "mismatched quote"));
    }
    if !word.is_empty() {
        words.push(bytes_to_string(word));
    }
    Ok(words)
}

/// Words are cut at ASCII bytes only, so they stay valid UTF-8.
fn bytes_to_string(word: Vec<u8>) -> String {
    String::from_utf8(word).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Splits a list of endpoints at the `:`s that are outside double quotes,
/// as Ice does for the endpoints of a stringified proxy.
pub fn split_endpoints(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut beg = 0;
    loop {
        let end = find_endpoint_end(s, beg);
        parts.push(&s[beg..end]);
        if end >= s.len() {
            return parts;
        }
        beg = end + 1;
    }
}

/// The position of the first `:` at or after `beg` that is not inside a
/// pair of double quotes (counting quotes from `beg`), or `s.len()`.
pub(crate) fn find_endpoint_end(s: &str, beg: usize) -> usize {
    let bytes = s.as_bytes();
    let find = |c: u8, from: usize| {
        bytes
            .get(from..)
            .and_then(|rest| rest.iter().position(|&b| b == c))
            .map(|p| p + from)
    };
    let mut end = beg;
    loop {
        let Some(colon) = find(b':', end) else {
            return s.len();
        };
        let mut quoted = false;
        let mut quote = beg;
        loop {
            match find(b'"', quote) {
                Some(open) if open < colon => match find(b'"', open + 1) {
                    Some(close) if close > colon => {
                        quoted = true;
                        break;
                    }
                    Some(close) => quote = close + 1,
                    None => break,
                },
                _ => break,
            }
        }
        if !quoted {
            return colon;
        }
        end = colon + 1;
    }
}
