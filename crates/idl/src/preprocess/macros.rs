//! Macros as the C preprocessor that slice2cpp uses (mcpp) has them:
//! object-like (`#define N 5`) and function-like (`#define DEFAULT(X) = X`,
//! with `#` stringizing, `##` pasting and `...`/`__VA_ARGS__`), expanded in
//! text lines outside strings and comments. A function-like macro name not
//! followed by `(` is left alone, as in C.

use std::collections::HashMap;

/// Deepest rescanning of expansions (guards against self-reference).
const MAX_DEPTH: usize = 16;

/// One macro definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Macro {
    /// `#define NAME body`.
    Object(String),
    /// `#define NAME(params) body`; a trailing `...` is `__VA_ARGS__`.
    Function {
        params: Vec<String>,
        variadic: bool,
        body: String,
    },
}

/// The macros defined so far.
#[derive(Debug, Default)]
pub(super) struct MacroTable {
    map: HashMap<String, Macro>,
}

impl MacroTable {
    pub(super) fn insert(&mut self, name: &str, m: Macro) {
        self.map.insert(name.to_owned(), m);
    }

    pub(super) fn remove(&mut self, name: &str) {
        self.map.remove(name);
    }

    pub(super) fn contains_key(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    pub(super) fn get(&self, name: &str) -> Option<&Macro> {
        self.map.get(name)
    }

    /// Parses what follows the name in `#define NAME...`: `(params) body`
    /// when `(` comes right after the name, else an object-like body.
    pub(super) fn parse_definition(after_name: &str) -> Result<Macro, String> {
        let Some(rest) = after_name.strip_prefix('(') else {
            return Ok(Macro::Object(after_name.trim().to_owned()));
        };
        let close = rest
            .find(')')
            .ok_or_else(|| "missing `)' in macro parameter list".to_owned())?;
        let mut params = Vec::new();
        let mut variadic = false;
        let list = rest[..close].trim();
        if !list.is_empty() {
            for p in list.split(',').map(str::trim) {
                if variadic {
                    return Err("`...' must be the last macro parameter".to_owned());
                }
                if p == "..." {
                    variadic = true;
                } else if is_ident(p) {
                    if params.iter().any(|q| q == p) {
                        return Err(format!("duplicate macro parameter `{p}'"));
                    }
                    params.push(p.to_owned());
                } else {
                    return Err(format!("invalid macro parameter `{p}'"));
                }
            }
        }
        Ok(Macro::Function {
            params,
            variadic,
            body: rest[close + 1..].trim().to_owned(),
        })
    }

    /// Expands the macros in a text line (not in strings or comments).
    pub(super) fn expand(&self, line: &str) -> String {
        self.expand_at(line, 0)
    }

    fn expand_at(&self, line: &str, depth: usize) -> String {
        if depth > MAX_DEPTH || !line.bytes().any(|b| b.is_ascii_alphabetic() || b == b'_') {
            return line.to_owned();
        }
        let bytes = line.as_bytes();
        let mut out = String::with_capacity(line.len());
        let mut i = 0;
        let mut changed = false;
        while i < bytes.len() {
            let c = bytes[i];
            if c == b'"' || c == b'\'' {
                let end = quoted_end(bytes, i);
                out.push_str(&line[i..end]);
                i = end;
            } else if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
                out.push_str(&line[i..]);
                break;
            } else if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
                let end = line[i + 2..]
                    .find("*/")
                    .map(|e| i + 2 + e + 2)
                    .unwrap_or(bytes.len());
                out.push_str(&line[i..end]);
                i = end;
            } else if c.is_ascii_alphabetic() || c == b'_' || c == b'\\' {
                let start = i;
                i += 1;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let word = &line[start..i];
                match self.map.get(word) {
                    Some(Macro::Object(body)) => {
                        out.push_str(body);
                        changed = true;
                    }
                    Some(m @ Macro::Function { .. }) => {
                        match call_arguments(line, i) {
                            Some((args, end)) => {
                                out.push_str(&substitute(m, &args));
                                i = end;
                                changed = true;
                            }
                            // Not a call: the name stays.
                            None => out.push_str(word),
                        }
                    }
                    None => out.push_str(word),
                }
            } else {
                let ch_len = line[i..].chars().next().map(char::len_utf8).unwrap_or(1);
                out.push_str(&line[i..i + ch_len]);
                i += ch_len;
            }
        }
        if changed {
            self.expand_at(&out, depth + 1)
        } else {
            out
        }
    }
}

fn is_ident(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The index just past the string or character literal starting at `i`.
fn quoted_end(bytes: &[u8], i: usize) -> usize {
    let quote = bytes[i];
    let mut j = i + 1;
    while j < bytes.len() && bytes[j] != quote {
        if bytes[j] == b'\\' {
            j += 1;
        }
        j += 1;
    }
    (j + 1).min(bytes.len())
}

/// The arguments of a call whose name ends at `i` (`None` if no `(`
/// follows, or it is not closed on this line), and the index past `)`.
fn call_arguments(line: &str, i: usize) -> Option<(Vec<String>, usize)> {
    let bytes = line.as_bytes();
    let mut j = i;
    while j < bytes.len() && bytes[j].is_ascii_whitespace() {
        j += 1;
    }
    if bytes.get(j) != Some(&b'(') {
        return None;
    }
    j += 1;
    let mut args = Vec::new();
    let mut depth = 0usize;
    let mut start = j;
    while j < bytes.len() {
        match bytes[j] {
            b'"' | b'\'' => {
                j = quoted_end(bytes, j);
                continue;
            }
            b'(' => depth += 1,
            b')' if depth == 0 => {
                args.push(line[start..j].trim().to_owned());
                return Some((args, j + 1));
            }
            b')' => depth -= 1,
            b',' if depth == 0 => {
                args.push(line[start..j].trim().to_owned());
                start = j + 1;
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// The body of function-like macro `m` with `args` put in.
fn substitute(m: &Macro, args: &[String]) -> String {
    let Macro::Function {
        params,
        variadic,
        body,
    } = m
    else {
        return String::new();
    };
    let arg = |name: &str| -> Option<String> {
        if *variadic && name == "__VA_ARGS__" {
            return Some(args.get(params.len()..).unwrap_or_default().join(", "));
        }
        let k = params.iter().position(|p| p == name)?;
        // `M()` for a one-parameter macro is one empty argument.
        Some(args.get(k).cloned().unwrap_or_default())
    };
    let bytes = body.as_bytes();
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'"' || c == b'\'' {
            let end = quoted_end(bytes, i);
            out.push_str(&body[i..end]);
            i = end;
        } else if c == b'#' && bytes.get(i + 1) == Some(&b'#') {
            // Pasting: drop the operator and the blanks around it.
            while out.ends_with(char::is_whitespace) {
                out.pop();
            }
            i += 2;
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
        } else if c == b'#' {
            // Stringizing `#param`.
            let mut j = i + 1;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            let st = j;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                j += 1;
            }
            match arg(&body[st..j]) {
                Some(a) => {
                    out.push('"');
                    for ch in a.chars() {
                        if ch == '"' || ch == '\\' {
                            out.push('\\');
                        }
                        out.push(ch);
                    }
                    out.push('"');
                    i = j;
                }
                None => {
                    out.push('#');
                    i += 1;
                }
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let st = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &body[st..i];
            match arg(word) {
                Some(a) => out.push_str(&a),
                None => out.push_str(word),
            }
        } else {
            let l = body[i..].chars().next().map(char::len_utf8).unwrap_or(1);
            out.push_str(&body[i..i + l]);
            i += l;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(defs: &[(&str, &str)]) -> MacroTable {
        let mut t = MacroTable::default();
        for (name, after) in defs {
            t.insert(name, MacroTable::parse_definition(after).unwrap());
        }
        t
    }

    #[test]
    fn function_like_macros_expand_their_arguments() {
        let t = table(&[("DEFAULT", "(X) = X"), ("PAIR", "(A, B) A, B"), ("N", " 5")]);
        assert_eq!(t.expand("int i DEFAULT(5);"), "int i = 5;");
        assert_eq!(t.expand("int j DEFAULT(N);"), "int j = 5;");
        assert_eq!(t.expand("f(PAIR(g(1, 2), \"a,b\"))"), "f(g(1, 2), \"a,b\")");
        // Not a call: the name stays; strings and comments are untouched.
        assert_eq!(
            t.expand("DEFAULT; \"DEFAULT(1)\" // DEFAULT(2)"),
            "DEFAULT; \"DEFAULT(1)\" // DEFAULT(2)"
        );
    }

    #[test]
    fn stringizing_pasting_and_variadics() {
        let t = table(&[
            ("STR", "(x) #x"),
            ("CAT", "(a, b) a ## b"),
            ("LIST", "(first, ...) first: __VA_ARGS__"),
        ]);
        assert_eq!(t.expand("STR(a \"b\")"), "\"a \\\"b\\\"\"");
        assert_eq!(t.expand("CAT(Foo, Bar)"), "FooBar");
        assert_eq!(t.expand("LIST(1, 2, 3)"), "1: 2, 3");
    }

    #[test]
    fn bad_parameter_lists_are_errors() {
        assert!(MacroTable::parse_definition("(a, a) a").is_err());
        assert!(MacroTable::parse_definition("(a b) a").is_err());
        assert!(MacroTable::parse_definition("(..., a) a").is_err());
        assert!(MacroTable::parse_definition("(a").is_err());
        assert_eq!(
            MacroTable::parse_definition(" (a) a").unwrap(),
            Macro::Object("(a) a".into()),
            "a blank before `(' makes an object-like macro"
        );
    }

    #[test]
    fn self_reference_terminates() {
        let t = table(&[("X", "(a) X(a)"), ("Y", " Y")]);
        assert_eq!(t.expand("X(1)"), "X(1)");
        assert_eq!(t.expand("Y"), "Y");
    }
}
