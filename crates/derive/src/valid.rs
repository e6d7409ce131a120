//! Checks of Rust-first definitions that need the Rust spans: Slice
//! identifier rules, names that must survive the Slice → Rust name mapping
//! of the shared generator, and unique tags.

use floe_idl::ident::{check_identifier, escape_rust, to_snake, to_upper_camel, IdentRules};
use proc_macro2::Span;

use crate::ctxt::Ctxt;

/// How the generator derives a Rust name from a Slice name.
#[derive(Clone, Copy)]
pub enum NameKind {
    /// `UpperCamelCase` (types, enumerators).
    Type,
    /// `snake_case` (fields, methods, parameters).
    Field,
}

/// Records Ice's identifier errors for `name` (a `what`).
pub fn slice_identifier(cx: &mut Ctxt, name: &str, span: Span, what: &str) {
    for msg in check_identifier(name, IdentRules::default()) {
        cx.error(span, format!("invalid Slice {what} name: {msg}"));
    }
}

/// The generator names `name` back in Rust; it must give `ident` again.
pub fn rust_name_round_trip(cx: &mut Ctxt, name: &str, ident: &syn::Ident, kind: NameKind) {
    let back = match kind {
        NameKind::Type => escape_rust(&to_upper_camel(name)),
        NameKind::Field => escape_rust(&to_snake(name)),
    };
    if *ident != back {
        cx.error(
            ident.span(),
            format!(
                "the Slice name `{name}` maps back to the Rust name `{back}`; rename `{ident}` to `{back}`"
            ),
        );
    }
}

/// An operation's `name = "..."` must map to the method's Rust name.
pub fn operation_name(cx: &mut Ctxt, name: &str, ident: &syn::Ident, span: Span) {
    let back = escape_rust(&to_snake(name));
    if *ident != back {
        cx.error(
            span,
            format!("the operation `{name}` maps to the Rust method `{back}`; rename `{ident}` to `{back}`"),
        );
    }
}

/// Tags must be unique (within members, or within one operation's
/// parameters).
pub fn unique_tags(cx: &mut Ctxt, tags: &[(i32, Span)], what: &str) {
    for (i, (tag, span)) in tags.iter().enumerate() {
        if tags[..i].iter().any(|(t, _)| t == tag) {
            cx.error(
                *span,
                format!("duplicate tag {tag}: another optional {what} uses it"),
            );
        }
    }
}
