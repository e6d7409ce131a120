//! Structs, enums, sequence and dictionary aliases, and constants.
//!
//! - A struct gets `WireType` (`MIN_WIRE_SIZE` = sum of its members',
//!   `FIXED_SIZE` when every member is fixed-size, optional kind
//!   `VSizeLength` when fixed, `FSizeLength` otherwise), `Encode` and
//!   `Decode` (members in order), and `Default` from the Slice defaults.
//! - An enum is `#[repr(i32)]` with the Slice values as discriminants,
//!   written with `write_enum(value, max)`; values that are not
//!   enumerators are rejected with `Error::Marshal` when read.
//! - Sequences and dictionaries are type aliases; references to them are
//!   spelled out (`Vec<T>`), so included files need no generated aliases.

use proc_macro2::{Literal, TokenStream};
use quote::{quote, ToTokens};

use super::ident::{const_ident, field_ident, type_ident, variant_ident};
use super::{codegen_path, has_rust_type, Gen};
use crate::model::{
    Const, ConstValue, DefKind, Definition, Dictionary, Enum, ModuleId, Sequence, Struct, Type,
};

impl Gen<'_> {
    pub(crate) fn struct_def(&self, def: &Definition, s: &Struct) -> TokenStream {
        let c = codegen_path();
        let name = type_ident(&def.name);
        let from = Some(def.module);
        let doc = self.doc(def.doc.as_ref(), &format!("Slice struct `{}`.", def.scoped));
        let fields = s.members.iter().map(|m| {
            let f = field_ident(&m.name);
            let t = self.member_type(from, m);
            let doc = self.doc(m.doc.as_ref(), &format!("Slice member `{}`.", m.name));
            quote!(#doc pub #f: #t,)
        });
        let ty = Type::Named(def.id);
        let ord = self.is_ord(ty);
        let has_defaults = s.members.iter().any(|m| m.default.is_some());
        let mut derives = vec![quote!(Clone), quote!(Debug)];
        if !has_defaults {
            derives.push(quote!(Default));
        }
        derives.push(quote!(PartialEq));
        if ord {
            derives.extend([quote!(Eq), quote!(Hash), quote!(PartialOrd), quote!(Ord)]);
        }
        let min = Literal::usize_unsuffixed(self.model.min_wire_size(ty));
        let fixed = if self.model.is_variable_size(ty) {
            quote!(::core::option::Option::None)
        } else {
            quote!(::core::option::Option::Some(#min))
        };
        let kind = if self.model.is_variable_size(ty) {
            quote!(#c::OptionalKind::FSizeLength)
        } else {
            quote!(#c::OptionalKind::VSizeLength)
        };
        let writes = s.members.iter().map(|m| {
            let f = field_ident(&m.name);
            quote!(enc.write(&self.#f);)
        });
        let reads = s.members.iter().map(|m| {
            let f = field_ident(&m.name);
            quote!(#f: dec.read()?,)
        });
        let default_impl = if has_defaults {
            let inits = s.members.iter().map(|m| {
                let f = field_ident(&m.name);
                let v = match &m.default {
                    Some(v) => self.member_default(from, m, v),
                    None => quote!(::core::default::Default::default()),
                };
                quote!(#f: #v,)
            });
            quote! {
                impl ::core::default::Default for #name {
                    fn default() -> Self {
                        Self { #(#inits)* }
                    }
                }
            }
        } else {
            TokenStream::new()
        };
        let (bulk_encode, bulk_decode) = self.bulk(s);
        let (enc_arg, dec_arg) = if s.members.is_empty() {
            (quote!(_enc), quote!(_dec))
        } else {
            (quote!(enc), quote!(dec))
        };
        quote! {
            #doc
            #[derive(#(#derives),*)]
            pub struct #name {
                #(#fields)*
            }

            #default_impl

            impl #c::WireType for #name {
                const MIN_WIRE_SIZE: usize = #min;
                const FIXED_SIZE: ::core::option::Option<usize> = #fixed;
                const OPTIONAL_KIND: #c::OptionalKind = #kind;
            }

            impl #c::Encode for #name {
                fn encode(&self, #enc_arg: &mut #c::Encoder) {
                    #(#writes)*
                }
                #bulk_encode
            }

            impl #c::Decode for #name {
                fn decode(#dec_arg: &mut #c::Decoder) -> #c::WireResult<Self> {
                    Ok(Self { #(#reads)* })
                }
                #bulk_decode
            }
        }
    }

    /// For a struct whose members are all numbers or bools (Bench's
    /// `Fixed`), `encode_slice` / `decode_vec` that move a whole sequence
    /// as one block of bytes instead of value by value.
    fn bulk(&self, s: &Struct) -> (TokenStream, TokenStream) {
        let c = codegen_path();
        let width = |ty: Type| match ty {
            Type::Bool | Type::Byte => Some(1usize),
            Type::Short => Some(2),
            Type::Int | Type::Float => Some(4),
            Type::Long | Type::Double => Some(8),
            _ => None,
        };
        let Some(widths) = s
            .members
            .iter()
            .map(|m| width(m.ty))
            .collect::<Option<Vec<usize>>>()
        else {
            return (TokenStream::new(), TokenStream::new());
        };
        if widths.is_empty() {
            return (TokenStream::new(), TokenStream::new());
        }
        let size: usize = widths.iter().sum();
        let size_lit = Literal::usize_unsuffixed(size);
        let mut puts = Vec::new();
        let mut fields = Vec::new();
        let mut offset = 0usize;
        for (m, w) in s.members.iter().zip(&widths) {
            let f = field_ident(&m.name);
            let idx = (offset..offset + w).map(Literal::usize_unsuffixed);
            fields.push(match m.ty {
                Type::Bool => {
                    let o = Literal::usize_unsuffixed(offset);
                    quote!(#f: c[#o] != 0,)
                }
                Type::Byte => {
                    let o = Literal::usize_unsuffixed(offset);
                    quote!(#f: c[#o],)
                }
                ty => {
                    let t = self.rust_type(None, ty);
                    quote!(#f: <#t>::from_le_bytes([#(c[#idx]),*]),)
                }
            });
            puts.push(match m.ty {
                Type::Bool => quote!(buf.extend_from_slice(&[u8::from(item.#f)]);),
                Type::Byte => quote!(buf.extend_from_slice(&[item.#f]);),
                _ => quote!(buf.extend_from_slice(&item.#f.to_le_bytes());),
            });
            offset += w;
        }
        (
            quote! {
                fn encode_slice(items: &[Self], enc: &mut #c::Encoder) {
                    let buf = enc.buffer_mut();
                    buf.reserve(items.len() * #size_lit);
                    for item in items {
                        #(#puts)*
                    }
                }
            },
            quote! {
                fn decode_vec(dec: &mut #c::Decoder, n: usize) -> #c::WireResult<::std::vec::Vec<Self>> {
                    // `n` was checked against the bytes present (n * MIN_WIRE_SIZE).
                    dec.read_slice_with(n * #size_lit, |bytes| {
                        bytes
                            .chunks_exact(#size_lit)
                            .map(|c| Self { #(#fields)* })
                            .collect()
                    })
                }
            },
        )
    }

    pub(crate) fn enum_def(&self, def: &Definition, e: &Enum) -> TokenStream {
        let c = codegen_path();
        let name = type_ident(&def.name);
        let doc = self.doc(def.doc.as_ref(), &format!("Slice enum `{}`.", def.scoped));
        let max = e.max_value;
        let variants = e.enumerators.iter().enumerate().map(|(i, en)| {
            let v = variant_ident(&en.name);
            let value = Literal::i32_unsuffixed(en.value);
            let doc = self.doc(en.doc.as_ref(), &format!("Slice enumerator `{}`.", en.name));
            let default = if i == 0 {
                quote!(#[default])
            } else {
                TokenStream::new()
            };
            quote!(#doc #default #v = #value,)
        });
        let arms = e.enumerators.iter().map(|en| {
            let v = variant_ident(&en.name);
            let value = Literal::i32_unsuffixed(en.value);
            quote!(#value => ::core::option::Option::Some(Self::#v),)
        });
        let scoped = &def.scoped;
        quote! {
            #doc
            #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
            #[repr(i32)]
            pub enum #name {
                #(#variants)*
            }

            impl #name {
                /// The largest enumerator value (it sets the encoding 1.0 size).
                pub const MAX_VALUE: i32 = #max;

                /// The enumerator with Slice value `value`, if there is one.
                pub fn from_value(value: i32) -> ::core::option::Option<Self> {
                    match value {
                        #(#arms)*
                        _ => ::core::option::Option::None,
                    }
                }

                /// The Slice value of this enumerator.
                pub fn value(self) -> i32 {
                    self as i32
                }
            }

            impl #c::WireType for #name {
                const MIN_WIRE_SIZE: usize = 1;
                const OPTIONAL_KIND: #c::OptionalKind =
                    #c::OptionalKind::Plain(#c::OptionalFormat::Size);
            }

            impl #c::Encode for #name {
                fn encode(&self, enc: &mut #c::Encoder) {
                    enc.write_enum(*self as i32, Self::MAX_VALUE);
                }
            }

            impl #c::Decode for #name {
                fn decode(dec: &mut #c::Decoder) -> #c::WireResult<Self> {
                    let value = dec.read_enum(Self::MAX_VALUE)?;
                    Self::from_value(value).ok_or_else(|| {
                        #c::WireError::marshal(::std::format!(
                            "{value} is not an enumerator of {}",
                            #scoped
                        ))
                    })
                }
            }
        }
    }

    pub(crate) fn sequence_def(&self, def: &Definition, s: &Sequence) -> TokenStream {
        let name = type_ident(&def.name);
        let doc = self.doc(
            def.doc.as_ref(),
            &format!("Slice sequence `{}`.", def.scoped),
        );
        let t = self.sequence_type(Some(def.module), &def.metadata, s);
        quote!(#doc pub type #name = #t;)
    }

    pub(crate) fn dictionary_def(&self, def: &Definition, d: &Dictionary) -> TokenStream {
        let name = type_ident(&def.name);
        let doc = self.doc(
            def.doc.as_ref(),
            &format!("Slice dictionary `{}`.", def.scoped),
        );
        let t = self.dictionary_type(Some(def.module), &def.metadata, d);
        quote!(#doc pub type #name = #t;)
    }

    /// `Bytes`, `Vec<u8>` or `Vec<T>`.
    pub(crate) fn sequence_type(
        &self,
        from: Option<ModuleId>,
        metadata: &[String],
        s: &Sequence,
    ) -> TokenStream {
        let c = codegen_path();
        if s.element == Type::Byte && !has_rust_type(metadata, "Vec<u8>") {
            return quote!(#c::Bytes);
        }
        let e = self.rust_type(from, s.element);
        quote!(::std::vec::Vec<#e>)
    }

    /// `BTreeMap<K, V>` or `HashMap<K, V>`.
    pub(crate) fn dictionary_type(
        &self,
        from: Option<ModuleId>,
        metadata: &[String],
        d: &Dictionary,
    ) -> TokenStream {
        let k = self.rust_type(from, d.key);
        let v = self.rust_type(from, d.value);
        if has_rust_type(metadata, "HashMap") {
            quote!(::std::collections::HashMap<#k, #v>)
        } else {
            quote!(::std::collections::BTreeMap<#k, #v>)
        }
    }

    pub(crate) fn const_def(&self, def: &Definition, k: &Const) -> TokenStream {
        let name = const_ident(&def.name);
        let doc = self.doc(
            def.doc.as_ref(),
            &format!("Slice constant `{}`.", def.scoped),
        );
        let from = Some(def.module);
        let t = match k.ty {
            Type::String => quote!(&str),
            ty => self.rust_type(from, ty),
        };
        let v = self.value_expr(from, k.ty, &k.value, true);
        quote!(#doc pub const #name: #t = #v;)
    }

    /// A constant or default value of type `ty`; `as_const` gives `&str`
    /// for strings instead of `String`.
    pub(crate) fn value_expr(
        &self,
        from: Option<ModuleId>,
        ty: Type,
        v: &ConstValue,
        as_const: bool,
    ) -> TokenStream {
        let resolved = ty;
        match v {
            ConstValue::Bool(b) => quote!(#b),
            ConstValue::Integer(i) => match resolved {
                Type::Byte => Literal::u8_unsuffixed(*i as u8).into_token_stream(),
                Type::Short => Literal::i16_unsuffixed(*i as i16).into_token_stream(),
                Type::Int => Literal::i32_unsuffixed(*i as i32).into_token_stream(),
                Type::Float => Literal::f32_suffixed(*i as f32).into_token_stream(),
                Type::Double => Literal::f64_suffixed(*i as f64).into_token_stream(),
                _ => Literal::i64_unsuffixed(*i).into_token_stream(),
            },
            ConstValue::Float(f) => match resolved {
                Type::Float => Literal::f32_suffixed(*f as f32).into_token_stream(),
                _ => Literal::f64_suffixed(*f).into_token_stream(),
            },
            ConstValue::String(s) => {
                if as_const {
                    quote!(#s)
                } else {
                    quote!(::std::string::String::from(#s))
                }
            }
            ConstValue::Enumerator { enum_id, index } => {
                let p = self.path_to(from, *enum_id, "");
                let en = match &self.model.def(*enum_id).kind {
                    DefKind::Enum(e) => e.enumerators.get(*index).map(|e| variant_ident(&e.name)),
                    _ => None,
                };
                match en {
                    Some(v) => quote!(#p::#v),
                    None => quote!(::core::default::Default::default()),
                }
            }
        }
    }
}
