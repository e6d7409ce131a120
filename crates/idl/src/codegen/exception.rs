//! User exceptions, following the contract in `floe_wire::exception`: a
//! struct with the base exception embedded as `base`,
//! `UserExceptionType` (type id) and `UserException` (slices,
//! most-derived first), plus `Display` and `std::error::Error`.

use proc_macro2::TokenStream;
use quote::quote;

use super::class::SliceMembers;
use super::ident::type_ident;
use super::{codegen_path, Gen};
use crate::model::{Definition, Exception};

impl Gen<'_> {
    pub(crate) fn exception_def(&self, def: &Definition, x: &Exception) -> TokenStream {
        let c = codegen_path();
        let name = type_ident(&def.name);
        let from = Some(def.module);
        let doc = self.doc(
            def.doc.as_ref(),
            &format!("Slice exception `{}`.", def.scoped),
        );
        let scoped = &def.scoped;
        // `["preserve-slice"]` keeps the slices of unknown more-derived
        // exceptions in a field of the exception that declares it (derived
        // ones delegate to their base), to write them back when the
        // exception is relayed.
        let base_preserves = self.preserves_from(x.base);
        let preserve = def.has_metadata("preserve-slice") && !base_preserves;
        let sliced_fns =
            super::class::sliced_data_fns(quote!(#c::UserException), preserve, base_preserves);
        let SliceMembers {
            base_field,
            fields,
            default_impl,
            derive_default,
        } = self.slice_members(
            &name,
            from,
            x.base,
            &x.members,
            " The base exception's members.",
            preserve,
        );
        let ids = self.slice_chain(def);
        let last = x.base.is_none();
        // Encoding 1.0 flags exceptions whose members hold classes (the
        // instances follow the slices), even when none is written.
        let uses_classes = self
            .model
            .all_members(def.id)
            .iter()
            .any(|m| m.tag.is_none() && self.may_hold_class(m.ty));
        let uses_classes_fn = if uses_classes {
            quote! {
                fn ice_uses_classes(&self) -> bool {
                    true
                }
            }
        } else {
            TokenStream::new()
        };
        let writes = self.write_members(&x.members, quote!(self));
        let reads = self.read_members(&x.members, quote!(self));
        let (write_base, read_end, base_fn) = if x.base.is_some() {
            (
                quote!(self.base.write_slices(enc);),
                quote!(dec.end_slice()?; self.base.read_slices(dec)),
                quote! {
                    fn ice_base(&self) -> ::core::option::Option<&dyn #c::UserException> {
                        ::core::option::Option::Some(&self.base)
                    }
                },
            )
        } else {
            (
                TokenStream::new(),
                quote!(dec.end_slice()),
                TokenStream::new(),
            )
        };
        quote! {
            #doc
            #[derive(Clone, Debug, #derive_default PartialEq)]
            pub struct #name {
                #base_field
                #(#fields)*
            }

            #default_impl

            impl #c::UserExceptionType for #name {
                const TYPE_ID: &'static str = #scoped;
            }

            impl #c::UserException for #name {
                fn ice_id(&self) -> &'static str {
                    <Self as #c::UserExceptionType>::TYPE_ID
                }
                fn ice_ids(&self) -> &'static [&'static str] {
                    &[#(#ids),*]
                }
                fn write_slices(&self, enc: &mut #c::Encoder) {
                    enc.start_slice(<Self as #c::UserExceptionType>::TYPE_ID, ::core::option::Option::None, #last);
                    #writes
                    enc.end_slice();
                    #write_base
                }
                fn read_slices(&mut self, dec: &mut #c::Decoder) -> #c::WireResult<()> {
                    dec.start_slice()?;
                    #reads
                    #read_end
                }
                #base_fn
                #uses_classes_fn
                #sliced_fns
            }

            impl ::core::fmt::Display for #name {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.write_str(#scoped)
                }
            }

            impl ::std::error::Error for #name {}

            /// A servant raises the exception with `?` or `Err(e.into())`.
            impl ::core::convert::From<#name> for #c::DispatchError {
                fn from(e: #name) -> Self {
                    #c::DispatchError::UserException(#c::UserError::new(e))
                }
            }
        }
    }
}
