//! Data derives: `#[derive(floe::Struct, floe::Enum, floe::Exception,
//! floe::Class)]` lowered to Slice structs, enums, exceptions and classes
//! (members, tags, bases, enumerators).

use floe_idl::model::{
    Class, DataMember, DefId, DefKind, Enum, Enumerator, Exception, Span as IdlSpan, Struct,
};
use proc_macro2::Span;
use syn::spanned::Spanned;

use super::{class_stub, module_of, to_lower_camel, unraw, Builder, Built, Ctxt};
use crate::attr;
use crate::valid;

/// What a data derive is for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum DataKind {
    /// `#[derive(floe::Struct)]`.
    Struct,
    /// `#[derive(floe::Enum)]`.
    Enum,
    /// `#[derive(floe::Exception)]`.
    Exception,
    /// `#[derive(floe::Class)]`.
    Class,
}

impl DataKind {
    fn keyword(self) -> &'static str {
        match self {
            DataKind::Struct => "struct",
            DataKind::Enum => "enum",
            DataKind::Exception => "exception",
            DataKind::Class => "class",
        }
    }

    fn derive_name(self) -> &'static str {
        match self {
            DataKind::Struct => "Struct",
            DataKind::Enum => "Enum",
            DataKind::Exception => "Exception",
            DataKind::Class => "Class",
        }
    }
}

impl Builder<'_> {
    /// A data member (struct, class or exception field).
    fn member(&mut self, field: &syn::Field, tags_allowed: bool) -> Option<DataMember> {
        let allowed: &[&str] = if tags_allowed { &[attr::TAG] } else { &[] };
        let place = if tags_allowed {
            "a data member"
        } else {
            "a struct member (Slice structs have no optional members; use a class)"
        };
        let a = match attr::parse(&field.attrs, allowed, place) {
            Ok(a) => a,
            Err(e) => {
                self.cx.push(e);
                return None;
            }
        };
        let ident = field.ident.as_ref()?;
        let name = to_lower_camel(&unraw(ident));
        valid::slice_identifier(self.cx, &name, ident.span(), "member");
        valid::rust_name_round_trip(self.cx, &name, ident, valid::NameKind::Field);
        let (ty, tag) = self.maybe_optional(&field.ty, a.tag)?;
        Some(DataMember {
            name,
            ty,
            tag,
            default: None,
            metadata: vec![],
            doc: attr::doc(&field.attrs).map(|t| floe_idl::model::Doc::parse(&t)),
            span: IdlSpan::default(),
        })
    }

    /// The `#[floe(base)] base: Base` field of an exception or class.
    fn base_field(&mut self, field: &syn::Field, kind: DataKind) -> Option<DefId> {
        if let Err(e) = attr::parse(&field.attrs, &[attr::BASE], "the base field") {
            self.cx.push(e);
            return None;
        }
        let ident = field.ident.as_ref()?;
        if ident != "base" {
            self.cx.error(
                ident.span(),
                format!("the base {} field must be named `base`", kind.keyword()),
            );
            return None;
        }
        let syn::Type::Path(p) = &field.ty else {
            self.cx.error(
                field.ty.span(),
                format!("expected a `#[derive(floe::{})]` type", kind.derive_name()),
            );
            return None;
        };
        let name = p.path.segments.last()?.ident.to_string();
        if p.qself.is_some() || name == self.own_ident || name == "Self" {
            self.cx.error(
                field.ty.span(),
                format!(
                    "expected another `#[derive(floe::{})]` type",
                    kind.derive_name()
                ),
            );
            return None;
        }
        let path = self.user_path(&p.path)?;
        let stub = if kind == DataKind::Exception {
            DefKind::Exception(Exception {
                base: None,
                members: vec![],
            })
        } else {
            class_stub()
        };
        Some(self.external(name, stub, path))
    }
}

/// Builds the model for a data derive.
pub fn from_derive(input: &syn::DeriveInput, kind: DataKind) -> syn::Result<Built> {
    let mut cx = Ctxt::default();
    let mut allowed = vec![attr::MODULE];
    if kind == DataKind::Class {
        allowed.push(attr::COMPACT_ID);
    }
    let place = format!("a {}", kind.keyword());
    let attrs = match attr::parse(&input.attrs, &allowed, &place) {
        Ok(a) => a,
        Err(e) => {
            cx.push(e);
            // Don't also report the module as missing.
            attr::Attrs {
                module: Some(("Floe".to_owned(), input.ident.span())),
                ..attr::Attrs::default()
            }
        }
    };
    if !input.generics.params.is_empty() {
        cx.error(
            input.generics.span(),
            format!("a Slice {} cannot be generic", kind.keyword()),
        );
    }
    let module = module_of(&mut cx, &attrs, input.ident.span());
    let mut b = Builder::new(&mut cx, &module, input.ident.span(), &input.ident);
    let doc = attr::doc(&input.attrs);
    match (&input.data, kind) {
        (syn::Data::Enum(e), DataKind::Enum) => {
            let en = enumerators(b.cx, e, &input.ident);
            b.set_own(DefKind::Enum(en), doc);
        }
        (syn::Data::Struct(s), DataKind::Struct | DataKind::Exception | DataKind::Class) => {
            let fields = match &s.fields {
                syn::Fields::Named(f) => f.named.iter().collect::<Vec<_>>(),
                syn::Fields::Unit if kind != DataKind::Struct => vec![],
                other => {
                    b.cx.error(
                        other.span(),
                        format!("a Slice {} needs named fields", kind.keyword()),
                    );
                    vec![]
                }
            };
            if kind == DataKind::Struct
                && fields.is_empty()
                && matches!(s.fields, syn::Fields::Named(_))
            {
                b.cx.error(
                    input.ident.span(),
                    "a Slice struct must have at least one member",
                );
            }
            let tags = kind != DataKind::Struct;
            let mut base = None;
            let mut members: Vec<DataMember> = Vec::new();
            for f in &fields {
                let is_base = attr::parse(&f.attrs, &[attr::TAG, attr::BASE], "")
                    .ok()
                    .and_then(|a| a.base);
                match is_base {
                    Some(span) if kind == DataKind::Struct => {
                        b.cx.error(
                            span,
                            "a Slice struct has no base; only exceptions and classes do",
                        );
                    }
                    Some(span) => {
                        if base.is_some() {
                            b.cx.error(span, "only one field can be the base");
                        } else {
                            base = b.base_field(f, kind);
                        }
                    }
                    None => members.extend(b.member(f, tags)),
                }
            }
            let tag_spans: Vec<(i32, Span)> = fields
                .iter()
                .filter_map(|f| {
                    attr::parse(&f.attrs, &[attr::TAG], "")
                        .ok()
                        .and_then(|a| a.tag)
                })
                .collect();
            valid::unique_tags(b.cx, &tag_spans, "member");
            let def = match kind {
                DataKind::Struct => DefKind::Struct(Struct { members }),
                DataKind::Exception => DefKind::Exception(Exception { base, members }),
                _ => DefKind::Class(Class {
                    defined: true,
                    base,
                    implements: vec![],
                    compact_id: attrs.compact_id.map(|(v, _)| v),
                    members,
                    operations: vec![],
                }),
            };
            b.set_own(def, doc);
        }
        (_, k) => {
            let what = if k == DataKind::Enum {
                "`#[derive(floe::Enum)]` needs an enum"
            } else {
                "this derive needs a struct with named fields"
            };
            b.cx.error(input.ident.span(), what);
        }
    }
    let built = b.finish();
    cx.check()?;
    Ok(built)
}

fn enumerators(cx: &mut Ctxt, e: &syn::DataEnum, ident: &syn::Ident) -> Enum {
    let mut out: Vec<Enumerator> = Vec::new();
    let mut next: i64 = 0;
    let mut explicit = false;
    let mut seen: Vec<(i64, String)> = Vec::new();
    if e.variants.is_empty() {
        cx.error(
            ident.span(),
            "a Slice enum must have at least one enumerator",
        );
    }
    for v in &e.variants {
        if !matches!(v.fields, syn::Fields::Unit) {
            cx.error(v.fields.span(), "Slice enumerators cannot carry data");
        }
        if let Err(e) = attr::parse(&v.attrs, &[], "an enumerator") {
            cx.push(e);
        }
        let value = match &v.discriminant {
            Some((_, expr)) => {
                explicit = true;
                match literal_int(expr) {
                    Some(n) => n,
                    None => {
                        cx.error(expr.span(), "enumerator values must be integer literals");
                        next
                    }
                }
            }
            None => next,
        };
        if !(0..=i32::MAX as i64).contains(&value) {
            let span = v
                .discriminant
                .as_ref()
                .map_or(v.ident.span(), |(_, e)| e.span());
            cx.error(span, "Slice enumerator values must be from 0 to 2147483647");
        }
        if let Some((_, other)) = seen.iter().find(|(n, _)| *n == value) {
            cx.error(
                v.ident.span(),
                format!("duplicate enumerator value {value} (also used by `{other}`)"),
            );
        }
        seen.push((value, v.ident.to_string()));
        let rust = unraw(&v.ident);
        let mut name = rust.clone();
        if let Some(first) = name.get(..1) {
            name = format!("{}{}", first.to_ascii_lowercase(), &rust[1..]);
        }
        valid::slice_identifier(cx, &name, v.ident.span(), "enumerator");
        valid::rust_name_round_trip(cx, &name, &v.ident, valid::NameKind::Type);
        out.push(Enumerator {
            name,
            value: value.clamp(0, i32::MAX as i64) as i32,
            metadata: vec![],
            doc: attr::doc(&v.attrs).map(|t| floe_idl::model::Doc::parse(&t)),
            span: IdlSpan::default(),
        });
        next = value.saturating_add(1);
    }
    let max_value = out.iter().map(|e| e.value).max().unwrap_or(0);
    Enum {
        enumerators: out,
        max_value,
        explicit_values: explicit,
    }
}

fn literal_int(expr: &syn::Expr) -> Option<i64> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => literal_int(expr).map(|v| -v),
        syn::Expr::Group(g) => literal_int(&g.expr),
        syn::Expr::Paren(p) => literal_int(&p.expr),
        _ => None,
    }
}
