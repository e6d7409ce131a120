//! On error: the spanned diagnostics plus stub impls of what the macro
//! would have generated, so the user sees the real error once instead of
//! a cascade of "trait not implemented" errors (thiserror's approach).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ast::DataKind;

/// Errors and stub impls for a failed data derive.
pub fn data(input: &syn::DeriveInput, kind: DataKind, err: syn::Error) -> TokenStream {
    let errors = err.to_compile_error();
    if !input.generics.params.is_empty() {
        return errors;
    }
    let ident = &input.ident;
    let c = quote!(::floe::codegen);
    let stub = quote!(::core::unreachable!("floe: this type failed to derive"));
    let codec = quote! {
        impl #c::WireType for #ident {
            const MIN_WIRE_SIZE: usize = 1;
            const OPTIONAL_KIND: #c::OptionalKind = #c::OptionalKind::FSizeLength;
        }
        impl #c::Encode for #ident {
            fn encode(&self, _: &mut #c::Encoder) { #stub }
        }
        impl #c::Decode for #ident {
            fn decode(_: &mut #c::Decoder) -> #c::WireResult<Self> { #stub }
        }
    };
    let specific = match kind {
        DataKind::Struct | DataKind::Enum => quote! {
            #codec
            impl #c::ProxyArg for #ident {
                type Arg<'a> = &'a Self where Self: 'a;
                fn arg_ref<'a, 'b>(arg: &'b &'a Self) -> &'b Self where Self: 'a {
                    arg
                }
            }
        },
        DataKind::Exception => quote! {
            impl #c::UserException for #ident {
                fn ice_id(&self) -> &'static str { #stub }
                fn ice_ids(&self) -> &'static [&'static str] { #stub }
                fn write_slices(&self, _: &mut #c::Encoder) { #stub }
                fn read_slices(&mut self, _: &mut #c::Decoder) -> #c::WireResult<()> { #stub }
            }
        },
        DataKind::Class => quote! {
            impl #c::Value for #ident {
                fn ice_id(&self) -> &str { #stub }
                fn ice_ids(&self) -> &'static [&'static str] { #stub }
                fn write_slices(&self, _: &mut #c::Encoder) { #stub }
                fn read_slices(&mut self, _: &mut #c::Decoder) -> #c::WireResult<()> { #stub }
            }
        },
    };
    quote! {
        #errors
        const _: () = {
            #specific
            impl #c::SliceType for #ident {
                const TYPE_ID: &'static str = "";
                fn slice_parts(_: &mut #c::SliceParts) {}
            }
        };
    }
}

/// Errors, the user's trait (without floe attributes) and a stub marker
/// for a failed `#[floe::interface]`.
pub fn interface(item: &syn::ItemTrait, err: syn::Error) -> TokenStream {
    let errors = err.to_compile_error();
    let marker = format_ident!("{}Slice", item.ident);
    let vis = &item.vis;
    let c = quote!(::floe::codegen);
    quote! {
        #errors
        #item
        #[doc(hidden)]
        #vis struct #marker;
        impl #c::SliceType for #marker {
            const TYPE_ID: &'static str = "";
            fn slice_parts(_: &mut #c::SliceParts) {}
        }
    }
}
