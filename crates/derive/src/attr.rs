//! `#[floe(...)]` attributes: the keys (as constants, like serde's
//! `symbol.rs`) and their parsing. Every key is checked where it appears;
//! unknown keys, repeated keys and keys in the wrong place are spanned
//! errors.

use proc_macro2::Span;
use syn::{Attribute, LitInt, LitStr};

/// The attribute path: `#[floe(...)]`.
pub const FLOE: &str = "floe";
/// `module = "Demo::Inner"`: the Slice module (type id prefix).
pub const MODULE: &str = "module";
/// `name = "wireName"`: the Slice (wire) name of an operation.
pub const NAME: &str = "name";
/// `tag = N`: an optional parameter, return value or member.
pub const TAG: &str = "tag";
/// `idempotent`: the operation is idempotent (wire mode 2).
pub const IDEMPOTENT: &str = "idempotent";
/// `compact_id = N`: a class's compact type id.
pub const COMPACT_ID: &str = "compact_id";
/// `base`: the field `base` holds the base exception or class.
pub const BASE: &str = "base";

/// The keys found on one item, field, method or parameter.
#[derive(Default)]
pub struct Attrs {
    /// `module = "..."` with its span.
    pub module: Option<(String, Span)>,
    /// `name = "..."`.
    pub name: Option<(String, Span)>,
    /// `tag = N`.
    pub tag: Option<(i32, Span)>,
    /// `idempotent`.
    pub idempotent: Option<Span>,
    /// `compact_id = N`.
    pub compact_id: Option<(i32, Span)>,
    /// `base`.
    pub base: Option<Span>,
}

/// Parses every `#[floe(...)]` in `attrs`, accepting only `allowed` keys
/// (`place` names where they appear, for the message).
pub fn parse(attrs: &[Attribute], allowed: &[&str], place: &str) -> syn::Result<Attrs> {
    let mut out = Attrs::default();
    for attr in attrs {
        if !attr.path().is_ident(FLOE) {
            continue;
        }
        attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_default();
            let span = meta
                .path
                .segments
                .first()
                .map_or_else(Span::call_site, |s| s.ident.span());
            let known = [MODULE, NAME, TAG, IDEMPOTENT, COMPACT_ID, BASE];
            if !known.contains(&key.as_str()) {
                return Err(meta.error(format!(
                    "unknown floe attribute; expected one of: {}",
                    allowed.join(", ")
                )));
            }
            if !allowed.contains(&key.as_str()) {
                return Err(meta.error(format!("`{key}` is not allowed on {place}")));
            }
            let dup = || syn::Error::new(span, format!("duplicate floe attribute `{key}`"));
            match key.as_str() {
                MODULE => {
                    let s: LitStr = meta.value()?.parse()?;
                    if out.module.is_some() {
                        return Err(dup());
                    }
                    out.module = Some((s.value(), s.span()));
                }
                NAME => {
                    let s: LitStr = meta.value()?.parse()?;
                    if out.name.is_some() {
                        return Err(dup());
                    }
                    out.name = Some((s.value(), s.span()));
                }
                TAG | COMPACT_ID => {
                    let n: LitInt = meta.value()?.parse()?;
                    let v: i32 = n.base10_parse().map_err(|_| {
                        syn::Error::new(
                            n.span(),
                            format!("`{key}` must be an integer from 0 to 2147483647"),
                        )
                    })?;
                    if v < 0 {
                        return Err(syn::Error::new(
                            n.span(),
                            format!("`{key}` must be an integer from 0 to 2147483647"),
                        ));
                    }
                    let slot = if key == TAG {
                        &mut out.tag
                    } else {
                        &mut out.compact_id
                    };
                    if slot.is_some() {
                        return Err(dup());
                    }
                    *slot = Some((v, n.span()));
                }
                BASE => {
                    if out.base.is_some() {
                        return Err(dup());
                    }
                    out.base = Some(span);
                }
                _ => {
                    if out.idempotent.is_some() {
                        return Err(dup());
                    }
                    out.idempotent = Some(span);
                }
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// `attrs` without the `#[floe(...)]` ones (for re-emitting user items).
pub fn strip(attrs: &mut Vec<Attribute>) {
    attrs.retain(|a| !a.path().is_ident(FLOE));
}

/// The doc comment text of `attrs` (`///` lines joined).
pub fn doc(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for a in attrs {
        if !a.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &a.meta {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
            {
                let v = s.value();
                lines.push(v.strip_prefix(' ').unwrap_or(&v).to_owned());
            }
        }
    }
    if lines.is_empty() {
        None
    } else {
        Some(lines.join("\n"))
    }
}
