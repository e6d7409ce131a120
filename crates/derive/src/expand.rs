//! Expansion: the model built by [`ast`](crate::ast) goes through the
//! shared generator (`floe_idl::codegen::rust_first`), plus the
//! `SliceType` impl that exports the definition as Slice text.

use floe_idl::codegen::{rust_first, Settings};
use floe_idl::export::definition_to_slice;
use floe_idl::model::{DefId, DefKind};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{self, Built, DataKind};
use crate::{attr, fallback, inherit};

/// `#[derive(floe::Struct | Enum | Exception | Class)]`.
pub fn derive(input: syn::DeriveInput, kind: DataKind) -> TokenStream {
    let result = ast::from_derive(&input, kind).and_then(|built| expand_data(&input, kind, &built));
    match result {
        Ok(ts) => ts,
        Err(e) => fallback::data(&input, kind, e),
    }
}

fn expand_data(
    input: &syn::DeriveInput,
    kind: DataKind,
    built: &Built,
) -> syn::Result<TokenStream> {
    let ident = &input.ident;
    let impls = rust_first::generate_impls(&built.model, built.id, &Settings::default())
        .map_err(|m| syn::Error::new(ident.span(), m))?;
    let base = match &built.model.def(built.id).kind {
        DefKind::Exception(x) => x.base,
        DefKind::Class(k) => k.base,
        _ => None,
    };
    let (impls, base_check) = match base {
        Some(b) => (
            with_base_ice_ids(impls, kind)?,
            base_check(input, kind, built, b),
        ),
        None => (impls, TokenStream::new()),
    };
    let slice = slice_type_impl(quote!(#ident), built);
    let default = enum_default(input);
    let proxy_arg = match kind {
        DataKind::Struct => quote! {
            impl ::floe::codegen::ProxyArg for #ident {
                type Arg<'a> = &'a Self where Self: 'a;
                fn arg_ref<'a, 'b>(arg: &'b &'a Self) -> &'b Self where Self: 'a {
                    arg
                }
            }
        },
        DataKind::Enum => quote! {
            impl ::floe::codegen::ProxyArg for #ident {
                type Arg<'a> = Self where Self: 'a;
                fn arg_ref<'a, 'b>(arg: &'b Self) -> &'b Self where Self: 'a {
                    arg
                }
            }
        },
        _ => TokenStream::new(),
    };
    let copy_check = if kind == DataKind::Enum {
        quote_spanned! {ident.span()=>
            const _: fn() = || {
                fn enums_must_derive_clone_and_copy<T: ::core::marker::Copy>() {}
                enums_must_derive_clone_and_copy::<#ident>();
            };
        }
    } else {
        TokenStream::new()
    };
    Ok(quote! {
        #copy_check
        #base_check
        #default
        #proxy_arg
        const _: () = {
            #impls
            #slice
        };
    })
}

/// `Default` for an enum: its first enumerator, as slice2rs generates,
/// unless a variant is marked `#[default]` (the user derives `Default`).
fn enum_default(input: &syn::DeriveInput) -> TokenStream {
    let syn::Data::Enum(e) = &input.data else {
        return TokenStream::new();
    };
    if e.variants
        .iter()
        .any(|v| v.attrs.iter().any(|a| a.path().is_ident("default")))
    {
        return TokenStream::new();
    }
    let Some(first) = e.variants.first() else {
        return TokenStream::new();
    };
    let ident = &input.ident;
    let v = &first.ident;
    quote! {
        impl ::core::default::Default for #ident {
            /// The first enumerator.
            fn default() -> Self {
                Self::#v
            }
        }
    }
}

/// A spanned error when the `base` field's type is not a floe exception
/// (or class).
fn base_check(input: &syn::DeriveInput, kind: DataKind, built: &Built, base: DefId) -> TokenStream {
    let Some(dep) = built.deps.iter().find(|d| d.def == base) else {
        return TokenStream::new();
    };
    let ty = &dep.rust;
    let span = match &input.data {
        syn::Data::Struct(s) => s
            .fields
            .iter()
            .find(|f| f.ident.as_ref().is_some_and(|i| i == "base"))
            .map_or(input.ident.span(), |f| f.ty.span()),
        _ => input.ident.span(),
    };
    let c = quote!(::floe::codegen);
    if kind == DataKind::Exception {
        quote_spanned! {span=>
            const _: fn() = || {
                fn base_must_be_a_floe_exception<T: #c::UserExceptionType + #c::UserException>() {}
                base_must_be_a_floe_exception::<#ty>();
            };
        }
    } else {
        quote_spanned! {span=>
            const _: fn() = || {
                fn base_must_be_a_floe_class<T: #c::ValueType + #c::Value>() {}
                base_must_be_a_floe_class::<#ty>();
            };
        }
    }
}

/// Replaces the generated `ice_ids` of a derived exception or class: the
/// model knows the base's type id but not the base's own bases, so the
/// chain is this type's id then the base's `ice_ids`, built once.
fn with_base_ice_ids(impls: TokenStream, kind: DataKind) -> syn::Result<TokenStream> {
    let c = quote!(::floe::codegen);
    let (tr, ty_tr) = if kind == DataKind::Exception {
        (quote!(#c::UserException), quote!(#c::UserExceptionType))
    } else {
        (quote!(#c::Value), quote!(#c::ValueType))
    };
    let mut file: syn::File = syn::parse2(impls)?;
    for item in &mut file.items {
        let syn::Item::Impl(i) = item else { continue };
        let is_target = i.trait_.as_ref().is_some_and(|(_, p, _)| {
            p.segments
                .last()
                .is_some_and(|s| s.ident == "UserException" || s.ident == "Value")
        });
        if !is_target {
            continue;
        }
        for ii in &mut i.items {
            if let syn::ImplItem::Fn(f) = ii {
                if f.sig.ident == "ice_ids" {
                    f.block = syn::parse_quote!({
                        static IDS: ::std::sync::OnceLock<::std::vec::Vec<&'static str>> =
                            ::std::sync::OnceLock::new();
                        IDS.get_or_init(|| {
                            let mut ids = ::std::vec![<Self as #ty_tr>::TYPE_ID];
                            ids.extend_from_slice(#tr::ice_ids(&self.base));
                            ids
                        })
                    });
                }
            }
        }
    }
    Ok(quote!(#file))
}

/// `impl SliceType for #target`: the definition's Slice text (with the
/// external types' type ids filled in when it runs) after its
/// dependencies'.
fn slice_type_impl(target: TokenStream, built: &Built) -> TokenStream {
    let c = quote!(::floe::codegen);
    let mut model = built.model.clone();
    for (i, dep) in built.deps.iter().enumerate() {
        model.definitions[dep.def.0 as usize].scoped = format!("\u{1}{i}\u{1}");
    }
    let def = model.def(built.id);
    let module = model.module(def.module).scoped.clone();
    let scoped = built.model.def(built.id).scoped.clone();
    let mut parts: Vec<(String, String)> = Vec::new();
    if matches!(def.kind, DefKind::Class(_)) {
        parts.push((
            format!("{};forward", def.name),
            format!("class {};\n", def.name),
        ));
    }
    for &s in &built.synthetic {
        parts.push((model.def(s).name.clone(), definition_to_slice(&model, s, 0)));
    }
    parts.push((def.name.clone(), definition_to_slice(&model, built.id, 0)));
    let deps: Vec<&syn::Path> = built.deps.iter().map(|d| &d.rust).collect();
    let placeholders: Vec<String> = (0..deps.len()).map(|i| format!("\u{1}{i}\u{1}")).collect();
    let adds = parts.iter().map(|(name, text)| {
        quote! {
            let mut text = ::std::string::String::from(#text);
            #( text = text.replace(#placeholders, <#deps as #c::SliceType>::TYPE_ID); )*
            parts.add(#module, #name, text);
        }
    });
    quote! {
        impl #c::SliceType for #target {
            const TYPE_ID: &'static str = #scoped;
            fn slice_parts(parts: &mut #c::SliceParts) {
                if !parts.enter(<Self as #c::SliceType>::TYPE_ID) {
                    return;
                }
                #( <#deps as #c::SliceType>::slice_parts(parts); )*
                #( #adds )*
            }
        }
    }
}

/// `#[floe::interface]`: a trait with base interfaces first collects
/// their descriptions (see [`inherit`]).
pub fn interface(args: TokenStream, item: syn::ItemTrait) -> TokenStream {
    match inherit::base_paths(&item) {
        Some(bases) if !bases.is_empty() => inherit::start(args, &item, bases),
        _ => interface_with_bases(args, item, &[]),
    }
}

/// `#[floe::interface]` once the base interfaces are known.
pub fn interface_with_bases(
    args: TokenStream,
    mut item: syn::ItemTrait,
    bases: &[inherit::BaseEntry],
) -> TokenStream {
    let args_span = proc_macro2::Span::call_site();
    let parsed = if args.is_empty() {
        Ok(attr::Attrs::default())
    } else {
        let a: syn::Attribute = syn::parse_quote!(#[floe(#args)]);
        attr::parse(&[a], &[attr::MODULE], "`#[floe::interface(...)]`")
    };
    let result = parsed
        .and_then(|a| ast::from_trait(a, args_span, &item, bases))
        .and_then(|built| expand_interface(&item, &built, bases));
    match result {
        Ok(ts) => ts,
        Err(e) => {
            strip_trait(&mut item);
            fallback::interface(&item, e)
        }
    }
}

fn expand_interface(
    item: &syn::ItemTrait,
    built: &Built,
    bases: &[inherit::BaseEntry],
) -> syn::Result<TokenStream> {
    let ident = &item.ident;
    let vis = &item.vis;
    let generated = rust_first::generate_impls(&built.model, built.id, &Settings::default())
        .map_err(|m| syn::Error::new(ident.span(), m))?;
    let file: syn::File = syn::parse2(generated.clone())?;
    let has_trait = file
        .items
        .iter()
        .any(|i| matches!(i, syn::Item::Trait(t) if t.ident == *ident));
    let user_trait = if has_trait {
        TokenStream::new()
    } else {
        let mut t = item.clone();
        strip_trait(&mut t);
        quote!(#t)
    };
    let marker = format_ident!("{}Slice", ident);
    // The generated dispatcher compares thrown exceptions with the type ids
    // the model holds for them (the interface's module + the Rust name);
    // check at compile time that they are the exceptions' real ones.
    let checks = built.deps.iter().filter_map(|d| {
        let def = built.model.def(d.def);
        if !matches!(def.kind, DefKind::Exception(_)) {
            return None;
        }
        let path = &d.rust;
        let expected = &def.scoped;
        let msg = format!(
            "the exception `{}` must be defined with #[floe(module)] giving the type id `{expected}`",
            def.name
        );
        Some(quote! {
            const _: () = {
                const fn same(a: &str, b: &str) -> bool {
                    let (a, b) = (a.as_bytes(), b.as_bytes());
                    if a.len() != b.len() {
                        return false;
                    }
                    let mut i = 0;
                    while i < a.len() {
                        if a[i] != b[i] {
                            return false;
                        }
                        i += 1;
                    }
                    true
                }
                ::core::assert!(
                    same(<#path as ::floe::codegen::UserExceptionType>::TYPE_ID, #expected),
                    #msg
                );
            };
        })
    });
    let slice = slice_type_impl(quote!(#marker), built);
    let own_def = built.model.def(built.id);
    let own_entry = inherit::BaseEntry {
        path: ident.clone().into(),
        name: ident.to_string(),
        type_id: own_def.scoped.clone(),
        module: built.model.module(own_def.module).scoped.clone(),
        bases: match &own_def.kind {
            DefKind::Interface(i) => i
                .bases
                .iter()
                .map(|b| built.model.def(*b).scoped.clone())
                .collect(),
            _ => Vec::new(),
        },
        items: item.items.clone(),
    };
    let exports = inherit::exports(vis, &own_entry, bases);
    let doc = format!(
        "The Slice definition of interface `{}` (see [`{marker}::ice_slice`]).",
        built.model.def(built.id).scoped
    );
    Ok(quote! {
        #user_trait
        #generated

        #[doc = #doc]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #marker;

        impl #marker {
            /// The Slice type id of the interface.
            pub const TYPE_ID: &'static str = <Self as ::floe::codegen::SliceType>::TYPE_ID;

            /// The `.ice` text defining this interface and every type it
            /// uses, for `slice2cpp`, `slice2py`, ...
            pub fn ice_slice() -> ::std::string::String {
                ::floe::slice_of::<Self>()
            }
        }

        #slice
        #(#checks)*
        #exports
    })
}

/// Removes `#[floe(...)]` attributes from a trait, its methods and their
/// parameters (rustc does not know them).
pub fn strip_trait(item: &mut syn::ItemTrait) {
    attr::strip(&mut item.attrs);
    for ti in &mut item.items {
        if let syn::TraitItem::Fn(f) = ti {
            attr::strip(&mut f.attrs);
            for arg in &mut f.sig.inputs {
                if let syn::FnArg::Typed(pt) = arg {
                    attr::strip(&mut pt.attrs);
                }
            }
        }
    }
}
