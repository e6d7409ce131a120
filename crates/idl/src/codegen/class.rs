//! Classes, following the contract in `floe_wire::class`: a struct with
//! the base class embedded as the field `base`, `ValueType` (type id,
//! compact id) and `Value` (`write_slices` / `read_slices`: own slice with
//! required members in order and optionals by tag, then the base's).
//! Factories are registered by the root-level `register_value_factories`.

use proc_macro2::TokenStream;
use quote::quote;

use super::ident::{field_ident, type_ident};
use super::{codegen_path, Gen};
use crate::model::{Class, DataMember, DefId, DefKind, Definition, ModuleId};

impl Gen<'_> {
    /// The type ids of a class or exception and its bases, most-derived
    /// first.
    pub(crate) fn slice_chain(&self, def: &Definition) -> Vec<String> {
        let mut ids = Vec::new();
        let mut cur = Some(def.id);
        while let Some(id) = cur {
            if ids.len() > self.model.definitions.len() {
                break;
            }
            let d = self.model.def(id);
            ids.push(d.scoped.clone());
            cur = match &d.kind {
                DefKind::Class(c) => c.base,
                DefKind::Exception(e) => e.base,
                _ => None,
            };
        }
        ids
    }

    /// The fields of a class or exception struct (the embedded `base`,
    /// then the members) and its `Default`: a hand-written impl when a
    /// member has a Slice default, otherwise `#[derive(Default)]`.
    pub(crate) fn slice_members(
        &self,
        name: &proc_macro2::Ident,
        from: Option<ModuleId>,
        base: Option<DefId>,
        members: &[DataMember],
        base_doc: &str,
        preserve: bool,
    ) -> SliceMembers {
        let c = codegen_path();
        let base_field = base.map(|b| {
            let p = self.path_to(from, b, "");
            quote!(#[doc = #base_doc]
                pub base: #p,)
        });
        let preserved = preserve.then(|| {
            quote! {
                /// Slices of more-derived types unknown here, kept from
                /// decoding (`["preserve-slice"]`) and written back when the
                /// instance is sent again.
                pub ice_sliced_data: ::core::option::Option<#c::SlicedData>,
            }
        });
        let fields = members
            .iter()
            .map(|m| {
                let f = field_ident(&m.name);
                let t = self.member_type(from, m);
                let doc = self.doc(m.doc.as_ref(), &format!("Slice member `{}`.", m.name));
                quote!(#doc pub #f: #t,)
            })
            .collect();
        let has_defaults = members.iter().any(|m| m.default.is_some());
        let default_impl = if has_defaults {
            let inits = members.iter().map(|m| {
                let f = field_ident(&m.name);
                let v = match &m.default {
                    Some(v) => {
                        let v = self.member_default(from, m, v);
                        if m.tag.is_some() {
                            quote!(::core::option::Option::Some(#v))
                        } else {
                            v
                        }
                    }
                    None => quote!(::core::default::Default::default()),
                };
                quote!(#f: #v,)
            });
            let base_init = base.map(|_| quote!(base: ::core::default::Default::default(),));
            let preserved_init =
                preserve.then(|| quote!(ice_sliced_data: ::core::option::Option::None,));
            quote! {
                impl ::core::default::Default for #name {
                    fn default() -> Self {
                        Self { #base_init #(#inits)* #preserved_init }
                    }
                }
            }
        } else {
            TokenStream::new()
        };
        let derive_default = if has_defaults {
            TokenStream::new()
        } else {
            quote!(Default,)
        };
        let mut fields: Vec<TokenStream> = fields;
        fields.extend(preserved);
        SliceMembers {
            base_field,
            fields,
            default_impl,
            derive_default,
        }
    }

    pub(crate) fn class_def(&self, def: &Definition, k: &Class) -> TokenStream {
        let c = codegen_path();
        let name = type_ident(&def.name);
        let from = Some(def.module);
        let doc = self.doc(def.doc.as_ref(), &format!("Slice class `{}`.", def.scoped));
        let scoped = &def.scoped;
        // `["preserve-slice"]` keeps unknown derived slices in a field of
        // the class that declares it; classes derived from it delegate.
        let base_preserves = self.base_preserves(k);
        let preserve = def.has_metadata("preserve-slice") && !base_preserves;
        let sliced_fns = sliced_data_fns(quote!(#c::Value), preserve, base_preserves);
        let SliceMembers {
            base_field,
            fields,
            default_impl,
            derive_default,
        } = self.slice_members(
            &name,
            from,
            k.base,
            &k.members,
            " The base class's members.",
            preserve,
        );
        let compact = match k.compact_id {
            Some(id) => {
                let id = id as u32;
                quote!(const COMPACT_ID: ::core::option::Option<u32> = ::core::option::Option::Some(#id);)
            }
            None => TokenStream::new(),
        };
        let ids = self.slice_chain(def);
        let last = k.base.is_none();
        let writes = self.write_members(&k.members, quote!(self));
        let reads = self.read_members(&k.members, quote!(self));
        let (write_base, read_end, base_fns) = if k.base.is_some() {
            (
                quote!(self.base.write_slices(enc);),
                quote!(dec.end_slice()?; self.base.read_slices(dec)),
                quote! {
                    fn ice_base(&self) -> ::core::option::Option<&dyn #c::Value> {
                        ::core::option::Option::Some(&self.base)
                    }
                    fn ice_base_mut(&mut self) -> ::core::option::Option<&mut dyn #c::Value> {
                        ::core::option::Option::Some(&mut self.base)
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
        // `ClassRef<Derived>::upcast()` to every base, direct or not.
        let mut extends = Vec::new();
        let mut ancestor = k.base;
        while let Some(b) = ancestor {
            let base = self.path_to(from, b, "");
            extends.push(quote!(impl #c::Extends<#base> for #name {}));
            ancestor = match &self.model.def(b).kind {
                DefKind::Class(bk) => bk.base,
                _ => None,
            };
        }
        // `["rust:hooks"]`: Ice's `ice_preMarshal` / `ice_postUnmarshal`,
        // implemented by the application as `ValueHooks` for the class.
        let hook_fns = if def.has_metadata("rust:hooks") {
            quote! {
                fn ice_pre_marshal(&mut self) {
                    #c::ValueHooks::ice_pre_marshal(self)
                }
                fn ice_has_pre_marshal(&self) -> bool {
                    true
                }
                fn ice_post_unmarshal(&mut self) {
                    #c::ValueHooks::ice_post_unmarshal(self)
                }
            }
        } else {
            TokenStream::new()
        };
        quote! {
            #doc
            #[derive(Clone, Debug, #derive_default PartialEq)]
            pub struct #name {
                #base_field
                #(#fields)*
            }

            #(#extends)*

            #default_impl

            impl #c::ValueType for #name {
                const TYPE_ID: &'static str = #scoped;
                #compact
            }

            impl #c::Value for #name {
                fn ice_id(&self) -> &str {
                    <Self as #c::ValueType>::TYPE_ID
                }
                fn ice_ids(&self) -> &'static [&'static str] {
                    &[#(#ids),*]
                }
                fn write_slices(&self, enc: &mut #c::Encoder) {
                    enc.start_slice(
                        <Self as #c::ValueType>::TYPE_ID,
                        <Self as #c::ValueType>::COMPACT_ID,
                        #last,
                    );
                    #writes
                    enc.end_slice();
                    #write_base
                }
                fn read_slices(&mut self, dec: &mut #c::Decoder) -> #c::WireResult<()> {
                    dec.start_slice()?;
                    #reads
                    #read_end
                }
                #base_fns
                #sliced_fns
                #hook_fns
            }
        }
    }

    /// Whether a base class of `k` (transitively) has `["preserve-slice"]`.
    fn base_preserves(&self, k: &Class) -> bool {
        self.preserves_from(k.base)
    }

    /// Whether `base` or one of its bases (a class or exception chain)
    /// has `["preserve-slice"]`.
    pub(crate) fn preserves_from(&self, base: Option<DefId>) -> bool {
        let mut cur = base;
        let mut steps = 0;
        while let Some(id) = cur {
            steps += 1;
            if steps > self.model.definitions.len() {
                return false;
            }
            let d = self.model.def(id);
            if d.has_metadata("preserve-slice") {
                return true;
            }
            cur = match &d.kind {
                DefKind::Class(b) => b.base,
                DefKind::Exception(b) => b.base,
                _ => None,
            };
        }
        false
    }
}

/// `ice_sliced_data` / `ice_set_sliced_data` of the trait `tr` (`Value`
/// or `UserException`): from the `ice_sliced_data` field of a type that
/// declares `["preserve-slice"]` (`preserve`), through the embedded base of
/// one whose base does (`base_preserves`), else none (the defaults).
pub(crate) fn sliced_data_fns(
    tr: TokenStream,
    preserve: bool,
    base_preserves: bool,
) -> TokenStream {
    let c = codegen_path();
    if preserve {
        quote! {
            fn ice_sliced_data(&self) -> ::core::option::Option<&#c::SlicedData> {
                self.ice_sliced_data.as_ref()
            }
            fn ice_set_sliced_data(&mut self, sliced: #c::SlicedData) {
                self.ice_sliced_data = ::core::option::Option::Some(sliced);
            }
        }
    } else if base_preserves {
        quote! {
            fn ice_sliced_data(&self) -> ::core::option::Option<&#c::SlicedData> {
                #tr::ice_sliced_data(&self.base)
            }
            fn ice_set_sliced_data(&mut self, sliced: #c::SlicedData) {
                #tr::ice_set_sliced_data(&mut self.base, sliced)
            }
        }
    } else {
        TokenStream::new()
    }
}

/// What [`Gen::slice_members`] generates for a class or exception struct.
pub(crate) struct SliceMembers {
    /// `pub base: Base,` when there is a base type.
    pub(crate) base_field: Option<TokenStream>,
    /// One `pub field: Type,` per member, in declaration order.
    pub(crate) fields: Vec<TokenStream>,
    /// A `Default` impl when some member has a Slice default.
    pub(crate) default_impl: TokenStream,
    /// `Default,` for the derive list when no member has a Slice default.
    pub(crate) derive_default: TokenStream,
}
