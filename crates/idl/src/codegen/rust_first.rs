//! Entry point for Rust-first definitions (`floe-derive`): the same
//! generator as `slice2rs`, for one definition whose Rust type the user
//! has already written.
//!
//! `floe-derive` builds a [`Model`] from a Rust item (syn → model) and
//! calls [`generate_impls`]: the generator's output for that definition
//! minus the type definition itself (the user's `struct`/`enum` stays as
//! written), so the `Encode`/`Decode`/`Value`/`UserException` impls are
//! exactly those of the equivalent Slice definition.
//!
//! Types the macro cannot see (another derived type named by path) are
//! stand-in definitions
//! ([`Origin::External`](crate::model::Origin::External)). A struct with
//! such a member gets its `WireType` constants from its members'
//! `WireType` impls instead of from the model, since the model does not
//! know them.

use proc_macro2::TokenStream;
use quote::quote;

use super::ident::type_ident;
use super::{codegen_path, Gen, Settings};
use crate::model::{DefId, DefKind, Model, Type};

/// The generated items for definition `id` without its type definition
/// (`struct`, `enum` or `type` alias named after it).
///
/// # Errors
///
/// A message if the generated tokens do not parse (a generator bug).
pub fn generate_impls(
    model: &Model,
    id: DefId,
    settings: &Settings,
) -> Result<TokenStream, String> {
    let emit = model.files.iter().map(|f| f.is_main).collect();
    // A Rust-first trait declares its outputs as a tuple: they stay one.
    let settings = Settings {
        tuple_outputs: true,
        ..settings.clone()
    };
    let mut gen = Gen::new(model, &settings, emit, None);
    // Only the definition: no registration functions beside it.
    gen.registries = false;
    let tokens = gen.definition(id);
    let file: syn::File = syn::parse2(tokens).map_err(|e| format!("generated code: {e}"))?;
    let def = model.def(id);
    let own = type_ident(&def.name);
    let external_struct = matches!(&def.kind, DefKind::Struct(s)
        if s.members.iter().any(|m| gen.mentions_external(m.ty, 0)));
    let mut out = TokenStream::new();
    for item in file.items {
        match &item {
            syn::Item::Struct(s) if s.ident == own => continue,
            syn::Item::Enum(e) if e.ident == own => continue,
            syn::Item::Type(t) if t.ident == own => continue,
            syn::Item::Impl(i) if external_struct && is_wire_type_impl(i) => {
                out.extend(gen.composed_wire_type(id));
                continue;
            }
            _ => {}
        }
        out.extend(quote!(#item));
    }
    Ok(out)
}

fn is_wire_type_impl(i: &syn::ItemImpl) -> bool {
    i.trait_
        .as_ref()
        .is_some_and(|(_, path, _)| path.segments.last().is_some_and(|s| s.ident == "WireType"))
}

impl Gen<'_> {
    /// Whether `ty` is a Rust-first struct or enum named by path (an
    /// [`Origin::External`](crate::model::Origin::External) struct
    /// stand-in): proxies take it as `<T as ProxyArg>::Arg<'_>`, by value
    /// for enums and by reference for structs, as they take Slice-defined
    /// ones.
    pub(crate) fn is_external_value(&self, ty: Type) -> bool {
        match ty {
            Type::Named(id) => {
                let def = self.model.def(id);
                def.is_external() && matches!(def.kind, DefKind::Struct(_))
            }
            _ => false,
        }
    }

    /// Whether `ty` refers (through sequences and dictionaries) to an
    /// [`Origin::External`](crate::model::Origin::External) definition.
    fn mentions_external(&self, ty: Type, depth: usize) -> bool {
        if depth > 64 {
            return false;
        }
        match ty {
            Type::Named(id) => {
                let def = self.model.def(id);
                if def.is_external() {
                    return true;
                }
                match &def.kind {
                    DefKind::Sequence(s) => self.mentions_external(s.element, depth + 1),
                    DefKind::Dictionary(d) => {
                        self.mentions_external(d.key, depth + 1)
                            || self.mentions_external(d.value, depth + 1)
                    }
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// `WireType` for a struct computed from its members' `WireType`s.
    fn composed_wire_type(&self, id: DefId) -> TokenStream {
        let c = codegen_path();
        let def = self.model.def(id);
        let name = type_ident(&def.name);
        let DefKind::Struct(s) = &def.kind else {
            return TokenStream::new();
        };
        let types: Vec<TokenStream> = s
            .members
            .iter()
            .map(|m| self.rust_type(Some(def.module), m.ty))
            .collect();
        quote! {
            impl #c::WireType for #name {
                const MIN_WIRE_SIZE: usize = 0 #(+ <#types as #c::WireType>::MIN_WIRE_SIZE)*;
                const FIXED_SIZE: ::core::option::Option<usize> = {
                    let mut size = 0usize;
                    let mut fixed = true;
                    #(
                        match <#types as #c::WireType>::FIXED_SIZE {
                            ::core::option::Option::Some(n) => size += n,
                            ::core::option::Option::None => fixed = false,
                        }
                    )*
                    if fixed { ::core::option::Option::Some(size) } else { ::core::option::Option::None }
                };
                const OPTIONAL_KIND: #c::OptionalKind = match <Self as #c::WireType>::FIXED_SIZE {
                    ::core::option::Option::Some(_) => #c::OptionalKind::VSizeLength,
                    ::core::option::Option::None => #c::OptionalKind::FSizeLength,
                };
            }
        }
    }
}
