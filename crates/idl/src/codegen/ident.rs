//! Rust names for Slice names: `CamelCase` types, `snake_case` modules,
//! fields, methods and parameters, `SCREAMING_SNAKE_CASE` constants, with
//! Rust keywords escaped (`r#type`, `self_`). The Slice name itself is what
//! goes on the wire (operation names, type ids), never the Rust one.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::ident::{escape_rust, to_snake, to_upper_camel};

/// Turns an escaped name (`r#type`, `self_`, `Foo`) into an [`Ident`].
fn make(name: &str) -> Ident {
    match name.strip_prefix("r#") {
        Some(raw) => Ident::new_raw(raw, Span::call_site()),
        None => Ident::new(name, Span::call_site()),
    }
}

/// A type name: `Hello`, `FixedSeq`, `my_type` → `MyType`.
pub fn type_ident(name: &str) -> Ident {
    make(&escape_rust(&to_upper_camel(name)))
}

/// A type name with a suffix: `Hello` + `Prx` → `HelloPrx`.
pub fn suffixed_type_ident(name: &str, suffix: &str) -> Ident {
    make(&escape_rust(&format!("{}{suffix}", to_upper_camel(name))))
}

/// A module name: `Bench` → `bench`, `IceStorm` → `ice_storm`.
pub fn module_ident(name: &str) -> Ident {
    make(&escape_rust(&to_snake(name)))
}

/// A field, parameter or method name: `signalCount` → `signal_count`,
/// `type` → `r#type`.
pub fn field_ident(name: &str) -> Ident {
    make(&escape_rust(&to_snake(name)))
}

/// An enumerator: `red` → `Red`.
pub fn variant_ident(name: &str) -> Ident {
    type_ident(name)
}

/// A constant: `maxSize` → `MAX_SIZE`.
pub fn const_ident(name: &str) -> Ident {
    make(&escape_rust(&to_snake(name).to_ascii_uppercase()))
}

/// `#[doc = "..."]` attributes, one per line, for a doc text.
pub fn doc_attrs(text: &str) -> TokenStream {
    let mut out = TokenStream::new();
    let mut fenced = false;
    for line in text.trim().lines() {
        let line = if line.is_empty() {
            String::new()
        } else if line.trim_start().starts_with("```") {
            fenced = !fenced;
            format!(" {}", line.trim_end())
        } else if fenced {
            format!(" {}", line.trim_end())
        } else {
            format!(" {}", escape_html(&inline_tags(line.trim_end())))
        };
        out.extend(quote!(#[doc = #line]));
    }
    out
}

/// Slice's inline doc tags as code spans: `{@link Topic#create}` →
/// `` `Topic::create` ``, `{@link #destroy}` → `` `destroy` ``, and
/// Doxygen's `@p name` (Ice 3.8's parameter reference) → `` `name` ``.
fn inline_tags(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(['{', '@']) {
        let (before, tail) = rest.split_at(at);
        out.push_str(before);
        let link = tail
            .strip_prefix("{@link ")
            .or_else(|| tail.strip_prefix("{@linkplain "))
            .and_then(|t| t.split_once('}'));
        let param = tail
            .strip_prefix("@p ")
            .filter(|_| !out.ends_with(|c: char| c.is_alphanumeric()));
        if let Some((target, after)) = link {
            let target = target.trim();
            let target = target
                .strip_prefix('#')
                .unwrap_or(target)
                .replace('#', "::");
            out.push_str(&format!("`{target}`"));
            rest = after;
        } else if let Some(t) = param {
            let end = t
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(t.len());
            if end == 0 {
                out.push_str("@p ");
            } else {
                out.push_str(&format!("`{}`", &t[..end]));
            }
            rest = &t[end..];
        } else {
            out.push_str(&tail[..1]);
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// `<` and `>` outside code spans escaped, so that a Slice comment such as
/// `"<name>:<id>"` is text in rustdoc, not an unclosed HTML tag.
fn escape_html(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        match c {
            '`' => {
                in_code = !in_code;
                out.push(c);
            }
            '<' | '>' if !in_code => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_text_is_not_html() {
        let doc = doc_attrs("Describes k: \"<k>:<extra>\" as `Option<T>`.").to_string();
        assert!(doc.contains(r#"\\<k\\>:\\<extra\\>"#), "{doc}");
        assert!(doc.contains("`Option<T>`"), "{doc}");
    }

    #[test]
    fn inline_doc_tags_are_code_spans() {
        assert_eq!(
            inline_tags("A {@link LinkInfo} and {@link Topic#create}; see {@link #destroy}."),
            "A `LinkInfo` and `Topic::create`; see `destroy`."
        );
        assert_eq!(
            inline_tags("Unsubscribes @p subscriber, or @p x."),
            "Unsubscribes `subscriber`, or `x`."
        );
        assert_eq!(
            inline_tags("mail@p x {not a tag} @param"),
            "mail@p x {not a tag} @param"
        );
        assert_eq!(inline_tags("{@link unclosed"), "{@link unclosed");
    }

    #[test]
    fn names() {
        assert_eq!(type_ident("hello").to_string(), "Hello");
        assert_eq!(suffixed_type_ident("Topic", "Prx").to_string(), "TopicPrx");
        assert_eq!(module_ident("IceStorm").to_string(), "ice_storm");
        assert_eq!(field_ident("type").to_string(), "r#type");
        assert_eq!(field_ident("self").to_string(), "self_");
        assert_eq!(field_ident("signalCount").to_string(), "signal_count");
        assert_eq!(const_ident("maxSize").to_string(), "MAX_SIZE");
        assert_eq!(module_ident("mod").to_string(), "r#mod");
    }
}
