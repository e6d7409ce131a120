//! `#[floe::interface]`: a trait lowered to a Slice interface, its
//! operations (parameters, tagged optionals, tuple results as
//! out-parameters, `Result` errors as user exceptions) and stand-ins for
//! its base interfaces with their operations.

use floe_idl::model::{
    DefId, DefKind, Exception, Interface, Operation, OperationMode, Param, Span as IdlSpan, Type,
};
use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;

use super::{interface_stub, module_of, to_lower_camel, unraw, Builder, Built, Ctxt};
use crate::attr;
use crate::inherit::BaseEntry;
use crate::valid;

/// Builds the model for `#[floe::interface]`.
pub fn from_trait(
    args: attr::Attrs,
    args_span: Span,
    item: &syn::ItemTrait,
    entries: &[BaseEntry],
) -> syn::Result<Built> {
    let mut cx = Ctxt::default();
    let trait_attrs = match attr::parse(&item.attrs, &[attr::MODULE], "an interface") {
        Ok(a) => a,
        Err(e) => {
            cx.push(e);
            // Don't also report the module as missing.
            attr::Attrs {
                module: args
                    .module
                    .is_none()
                    .then(|| ("Floe".to_owned(), item.ident.span())),
                ..attr::Attrs::default()
            }
        }
    };
    let module_attr = if args.module.is_some() {
        if let Some((_, s)) = trait_attrs.module {
            cx.error(s, "duplicate floe attribute `module`");
        }
        args
    } else {
        trait_attrs
    };
    let _ = args_span;
    if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
        cx.error(item.generics.span(), "a Slice interface cannot be generic");
    }
    if let Some(u) = &item.unsafety {
        cx.error(u.span(), "a Slice interface cannot be an unsafe trait");
    }
    let module = module_of(&mut cx, &module_attr, item.ident.span());
    let mut b = Builder::new(&mut cx, &module, item.ident.span(), &item.ident);
    let mut direct: Vec<(syn::Path, Span)> = Vec::new();
    for bound in &item.supertraits {
        match bound {
            syn::TypeParamBound::Trait(t) => {
                let name = t
                    .path
                    .segments
                    .last()
                    .map(|s| s.ident.to_string())
                    .unwrap_or_default();
                if matches!(name.as_str(), "Send" | "Sync") {
                    continue;
                }
                let Some(path) = b.user_path(&t.path) else {
                    continue;
                };
                let key = path.to_token_stream().to_string();
                if direct
                    .iter()
                    .any(|(p, _)| p.to_token_stream().to_string() == key)
                {
                    b.cx.error(t.span(), "duplicate base interface");
                } else {
                    direct.push((path, t.span()));
                }
            }
            syn::TypeParamBound::Lifetime(l) if l.ident == "static" => {}
            other => b.cx.error(
                other.span(),
                "only base interfaces (and `Send`, `Sync`, `'static`) are allowed as supertraits",
            ),
        }
    }
    let mut operations: Vec<Operation> = Vec::new();
    let mut op_spans: Vec<(String, Span)> = Vec::new();
    for ti in &item.items {
        match ti {
            syn::TraitItem::Fn(f) => {
                if let Some(op) = operation(&mut b, f) {
                    if let Some((_, _)) = op_spans
                        .iter()
                        .find(|(n, _)| n.eq_ignore_ascii_case(&op.name))
                    {
                        b.cx.error(
                            f.sig.ident.span(),
                            format!(
                                "duplicate operation `{}` (Slice names are case-insensitive)",
                                op.name
                            ),
                        );
                    }
                    op_spans.push((op.name.clone(), f.sig.ident.span()));
                    operations.push(op);
                }
            }
            other => b.cx.error(
                other.span(),
                "a Slice interface holds only `async fn` operations",
            ),
        }
    }
    // Synthetic types of the base operations are the bases' own (their
    // Slice text comes with theirs).
    let own_synthetic = b.synthetic.len();
    let by_id = base_interfaces(&mut b, entries);
    let mut bases = Vec::new();
    for (path, span) in &direct {
        let key = path.to_token_stream().to_string();
        match entries
            .iter()
            .position(|e| e.path.to_token_stream().to_string() == key)
        {
            Some(i) => bases.push(by_id[i]),
            // Without entries the chain did not run: another supertrait
            // has an error of its own.
            None if entries.is_empty() => {}
            None => {
                b.cx.error(*span, "this supertrait is not a `#[floe::interface]` trait")
            }
        }
    }
    let mut all = bases.clone();
    for &x in &bases {
        for y in b.model.all_bases(x) {
            if !all.contains(&y) {
                all.push(y);
            }
        }
    }
    for &base in &all {
        let DefKind::Interface(i) = &b.model.def(base).kind else {
            continue;
        };
        for op in &i.operations {
            if let Some((_, span)) = op_spans
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(&op.name))
            {
                b.cx.error(
                    *span,
                    format!(
                        "operation `{}` is already defined by base interface `{}`",
                        op.name,
                        b.model.def(base).scoped
                    ),
                );
            }
        }
    }
    b.synthetic.truncate(own_synthetic);
    b.set_own(
        DefKind::Interface(Interface {
            defined: true,
            bases,
            operations,
        }),
        attr::doc(&item.attrs),
    );
    let built = b.finish();
    cx.check()?;
    Ok(built)
}

/// Stand-ins for every base interface (direct or not), with their
/// operations, bases and real type ids; returns them in `entries` order.
fn base_interfaces(b: &mut Builder<'_>, entries: &[BaseEntry]) -> Vec<DefId> {
    let ids: Vec<DefId> = entries
        .iter()
        .map(|e| {
            let mut marker = e.path.clone();
            if let Some(l) = marker.segments.last_mut() {
                l.ident = syn::Ident::new(&format!("{}Slice", e.name), l.ident.span());
            }
            b.external(e.name.clone(), interface_stub(), marker)
        })
        .collect();
    for (e, &id) in entries.iter().zip(&ids) {
        let bases: Vec<DefId> = e
            .bases
            .iter()
            .filter_map(|t| entries.iter().position(|x| &x.type_id == t).map(|i| ids[i]))
            .collect();
        let (own, own_ident) = (b.own, std::mem::take(&mut b.own_ident));
        b.own = id;
        b.own_ident = e.name.clone();
        b.base_scope = Some((e.hidden_module(), e.module.clone()));
        let mut operations = Vec::new();
        for ti in &e.items {
            if let syn::TraitItem::Fn(f) = ti {
                if let Some(op) = operation(b, f) {
                    operations.push(op);
                }
            }
        }
        b.base_scope = None;
        b.own = own;
        b.own_ident = own_ident;
        let def = &mut b.model.definitions[id.0 as usize];
        def.scoped = e.type_id.clone();
        def.kind = DefKind::Interface(Interface {
            defined: true,
            bases,
            operations,
        });
    }
    ids
}

fn operation(b: &mut Builder<'_>, f: &syn::TraitItemFn) -> Option<Operation> {
    let sig = &f.sig;
    let a = match attr::parse(
        &f.attrs,
        &[attr::NAME, attr::IDEMPOTENT, attr::TAG],
        "an operation",
    ) {
        Ok(a) => a,
        Err(e) => {
            b.cx.push(e);
            attr::Attrs::default()
        }
    };
    let mut ok = true;
    if sig.asyncness.is_none() {
        b.cx.error(sig.fn_token.span(), "operations must be `async fn`");
        ok = false;
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        b.cx.error(sig.generics.span(), "operations cannot be generic");
        ok = false;
    }
    if let Some(c) = &sig.constness {
        b.cx.error(c.span(), "operations cannot be `const`");
    }
    if let Some(u) = &sig.unsafety {
        b.cx.error(u.span(), "operations cannot be `unsafe`");
    }
    if let Some(v) = &sig.variadic {
        b.cx.error(v.span(), "operations cannot be variadic");
    }
    if let Some(body) = &f.default {
        b.cx.error(
            body.span(),
            "operations have no default body (the servant implements them)",
        );
    }
    let name = match &a.name {
        Some((n, span)) => {
            valid::slice_identifier(b.cx, n, *span, "operation");
            valid::operation_name(b.cx, n, &sig.ident, *span);
            n.clone()
        }
        None => {
            let n = to_lower_camel(&unraw(&sig.ident));
            valid::slice_identifier(b.cx, &n, sig.ident.span(), "operation");
            valid::rust_name_round_trip(b.cx, &n, &sig.ident, valid::NameKind::Field);
            n
        }
    };
    let mut inputs = sig.inputs.iter();
    match inputs.next() {
        Some(syn::FnArg::Receiver(r)) if r.reference.is_some() && r.mutability.is_none() => {}
        Some(other @ syn::FnArg::Receiver(_)) => {
            b.cx.error(other.span(), "operations take `&self`");
            ok = false;
        }
        _ => {
            b.cx.error(
                sig.ident.span(),
                "operations take `&self` as their first parameter",
            );
            ok = false;
        }
    }
    let mut params = Vec::new();
    let mut in_tags = Vec::new();
    for arg in inputs {
        let syn::FnArg::Typed(pt) = arg else { continue };
        let pa = match attr::parse(&pt.attrs, &[attr::TAG], "a parameter") {
            Ok(a) => a,
            Err(e) => {
                b.cx.push(e);
                continue;
            }
        };
        let syn::Pat::Ident(pi) = &*pt.pat else {
            b.cx.error(pt.pat.span(), "parameters must be plain names");
            continue;
        };
        if pi.by_ref.is_some() || pi.subpat.is_some() {
            b.cx.error(pt.pat.span(), "parameters must be plain names");
            continue;
        }
        let pname = to_lower_camel(&unraw(&pi.ident));
        valid::slice_identifier(b.cx, &pname, pi.ident.span(), "parameter");
        valid::rust_name_round_trip(b.cx, &pname, &pi.ident, valid::NameKind::Field);
        if let Some(t) = pa.tag {
            in_tags.push(t);
        }
        let Some((ty, tag)) = b.maybe_optional(&pt.ty, pa.tag) else {
            continue;
        };
        params.push(Param {
            name: pname,
            ty,
            out: false,
            tag,
            metadata: vec![],
            span: IdlSpan::default(),
        });
    }
    valid::unique_tags(b.cx, &in_tags, "parameter");
    let mut throws = Vec::new();
    let (return_type, return_tag) = match &sig.output {
        syn::ReturnType::Default => {
            if let Some((_, span)) = a.tag {
                b.cx.error(span, "`tag` on an operation makes its return value optional; this operation returns nothing");
            }
            (None, None)
        }
        syn::ReturnType::Type(_, ty) => {
            let ok_ty = match result_parts(ty) {
                Some((ok_ty, err_ty)) => {
                    if let Some(e) = exception_path(b, err_ty) {
                        throws.push(e);
                    }
                    ok_ty
                }
                None => ty,
            };
            if is_unit(ok_ty) {
                if let Some((_, span)) = a.tag {
                    b.cx.error(span, "`tag` on an operation makes its return value optional; this operation returns nothing");
                }
                (None, None)
            } else if let syn::Type::Tuple(t) = ok_ty {
                out_params(b, t, a.tag, &mut params)
            } else {
                match b.maybe_optional(ok_ty, a.tag) {
                    Some((t, tag)) => (Some(t), tag),
                    None => (None, None),
                }
            }
        }
    };
    if !ok {
        return None;
    }
    Some(Operation {
        name,
        mode: if a.idempotent.is_some() {
            OperationMode::Idempotent
        } else {
            OperationMode::Normal
        },
        return_type,
        return_tag,
        params,
        throws,
        metadata: vec![],
        doc: attr::doc(&f.attrs).map(|t| floe_idl::model::Doc::parse(&t)),
        span: IdlSpan::default(),
    })
}

/// A tuple result `(R, A, B)`: the return value `R` (`()` for none, with
/// the operation's `tag` if optional) and the out-parameters `out1: A`,
/// `out2: B` (pushed to `params`). This is the shape slice2rs gives
/// `R op(..., out A out1, out B out2)`, so both are wire-identical.
fn out_params(
    b: &mut Builder<'_>,
    t: &syn::TypeTuple,
    tag: Option<(i32, Span)>,
    params: &mut Vec<Param>,
) -> (Option<Type>, Option<i32>) {
    if t.elems.len() < 2 {
        b.cx.error(
            t.span(),
            "a tuple result needs at least two elements: the return value (or `()`) and the out-parameters",
        );
        return (None, None);
    }
    let mut elems = t.elems.iter();
    let first = elems.next();
    let ret = match first {
        Some(f) if is_unit(f) => {
            if let Some((_, span)) = tag {
                b.cx.error(span, "`tag` on an operation makes its return value optional; this operation returns `()` first");
            }
            (None, None)
        }
        Some(f) => match b.maybe_optional(f, tag) {
            Some((ty, tag)) => (Some(ty), tag),
            None => (None, None),
        },
        None => (None, None),
    };
    for (i, e) in elems.enumerate() {
        let name = format!("out{}", i + 1);
        if params.iter().any(|p| p.name.eq_ignore_ascii_case(&name)) {
            b.cx.error(
                e.span(),
                format!("the out-parameter is named `{name}` in Slice, like a parameter of this operation; rename the parameter"),
            );
        }
        if let Some(ty) = b.map_type(e) {
            params.push(Param {
                name,
                ty,
                out: true,
                tag: None,
                metadata: vec![],
                span: IdlSpan::default(),
            });
        }
    }
    ret
}

fn is_unit(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Tuple(t) if t.elems.is_empty())
}

/// `(T, E)` of `Result<T, E>`.
fn result_parts(ty: &syn::Type) -> Option<(&syn::Type, &syn::Type)> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
        return None;
    };
    let tys: Vec<&syn::Type> = a
        .args
        .iter()
        .filter_map(|g| match g {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    match tys.as_slice() {
        [t, e] => Some((t, e)),
        _ => None,
    }
}

/// The user exception type `E` of `Result<T, E>`.
fn exception_path(b: &mut Builder<'_>, ty: &syn::Type) -> Option<DefId> {
    let syn::Type::Path(p) = ty else {
        b.cx.error(
            ty.span(),
            "the error type must be a `#[derive(floe::Exception)]` type",
        );
        return None;
    };
    let name = p.path.segments.last()?.ident.to_string();
    let path = b.user_path(&p.path)?;
    Some(b.external(
        name,
        DefKind::Exception(Exception {
            base: None,
            members: vec![],
        }),
        path,
    ))
}
