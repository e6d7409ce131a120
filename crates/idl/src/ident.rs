//! Slice identifiers: the keyword list, Ice's identifier rules (underscores,
//! reserved prefix and suffixes), case-insensitive comparison, and the Rust
//! case conversions the code generator uses.

/// Slice 3.7 keywords. A keyword is usable as an identifier only when escaped
/// with a leading backslash (`\module`).
pub const KEYWORDS: &[&str] = &[
    "bool",
    "byte",
    "class",
    "const",
    "dictionary",
    "double",
    "enum",
    "exception",
    "extends",
    "false",
    "float",
    "idempotent",
    "implements",
    "int",
    "interface",
    "local",
    "LocalObject",
    "long",
    "module",
    "Object",
    "optional",
    "out",
    "sequence",
    "short",
    "string",
    "struct",
    "throws",
    "true",
    "Value",
    "void",
];

/// True if `word` is a Slice keyword (case-sensitive).
pub fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word)
}

/// Suffixes that Ice reserves for generated names.
const RESERVED_SUFFIXES: &[&str] = &["Helper", "Holder", "Prx", "Ptr"];

/// What the identifier check may relax, from file metadata and the file's
/// [`crate::Dialect`].
#[derive(Debug, Clone, Copy, Default)]
pub struct IdentRules {
    /// `[["underscore"]]`: underscores inside identifiers are allowed.
    pub underscore: bool,
    /// `[["ice-prefix"]]`: identifiers may start with `Ice`.
    pub ice_prefix: bool,
    /// Ice 3.8's rules: the `Ice` prefix is not reserved, one underscore
    /// inside a name is allowed (and, checked by the resolver, a definition
    /// may be named like its module).
    pub ice38: bool,
}

/// Checks one (unscoped) identifier against Ice's rules and returns every
/// violation as a message, in the order slice2cpp reports them.
pub fn check_identifier(id: &str, rules: IdentRules) -> Vec<String> {
    let mut errors = Vec::new();
    for suffix in RESERVED_SUFFIXES {
        if id.len() > suffix.len() && id.ends_with(suffix) {
            errors.push(format!(
                "illegal identifier `{id}': `{suffix}' suffix is reserved"
            ));
        }
    }
    if id.starts_with('_') {
        errors.push(format!("illegal leading underscore in identifier `{id}'"));
    } else if id.contains("__") {
        errors.push(format!("illegal double underscore in identifier `{id}'"));
    } else if id.len() > 1 && id.ends_with('_') {
        errors.push(format!("illegal trailing underscore in identifier `{id}'"));
    } else if !(rules.underscore || rules.ice38) && id.contains('_') {
        errors.push(format!("illegal underscore in identifier `{id}'"));
    }
    if !(rules.ice_prefix || rules.ice38) && id.len() > 3 && id[..3].eq_ignore_ascii_case("ice") {
        errors.push(format!(
            "illegal identifier `{id}': `Ice' prefix is reserved"
        ));
    }
    errors
}

/// Ice compares names case-insensitively to find clashes.
pub fn ci_eq(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Converts a Slice name (`myOperation`, `MyType`) to `snake_case`.
pub fn to_snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
            if i > 0 && !out.ends_with('_') && (prev_lower || (prev_upper && next_lower)) {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Converts a Slice name to `UpperCamelCase`.
pub fn to_upper_camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = true;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Rust keywords that need a raw identifier (`r#type`) or, for the few that
/// cannot be raw, a trailing underscore.
const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Makes `name` usable as a Rust identifier: `type` → `r#type`,
/// `self` → `self_`.
pub fn escape_rust(name: &str) -> String {
    match name {
        "self" | "Self" | "super" | "crate" => format!("{name}_"),
        _ if RUST_KEYWORDS.contains(&name) => format!("r#{name}"),
        _ => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn underscores() {
        let r = IdentRules::default();
        assert!(check_identifier("_S", r)[0].contains("leading underscore"));
        assert!(check_identifier("S_", r)[0].contains("trailing underscore"));
        assert!(check_identifier("S__T", r)[0].contains("double underscore"));
        assert!(check_identifier("S_T", r)[0].contains("illegal underscore"));
        let u = IdentRules {
            underscore: true,
            ..r
        };
        assert!(check_identifier("S_T", u).is_empty());
        assert!(check_identifier("IceX", r)[0].contains("prefix"));
        assert!(check_identifier("FooPrx", r)[0].contains("suffix"));
        assert!(check_identifier("Prx", r).is_empty());
        let ice38 = IdentRules { ice38: true, ..r };
        assert!(check_identifier("S_T", ice38).is_empty());
        assert!(check_identifier("IceX", ice38).is_empty());
        assert!(check_identifier("S__T", ice38)[0].contains("double underscore"));
        assert!(check_identifier("_S", ice38)[0].contains("leading underscore"));
        assert!(check_identifier("FooPrx", ice38)[0].contains("suffix"));
    }

    #[test]
    fn cases() {
        assert_eq!(to_snake("sendByteSeq"), "send_byte_seq");
        assert_eq!(to_snake("HTTPServer"), "http_server");
        assert_eq!(to_snake("o"), "o");
        assert_eq!(to_upper_camel("my_type"), "MyType");
        assert_eq!(escape_rust("type"), "r#type");
        assert_eq!(escape_rust("self"), "self_");
    }
}
