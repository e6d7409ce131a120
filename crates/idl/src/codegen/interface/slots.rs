//! How an operation's parameters are laid out: the in and out [`Slot`]s in
//! wire order (required in order, then optional by tag), and how each is
//! passed (owned, borrowed, as `Bytes`, as a number slice).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{keeps_null, Slot};
use crate::codegen::ident::field_ident;
use crate::codegen::{codegen_path, Gen};
use crate::model::{DefKind, ModuleId, Operation, Type};

impl Gen<'_> {
    /// The in-parameters, required in order then optional by tag (wire order).
    pub(super) fn in_slots<'o>(&self, op: &'o Operation) -> Vec<Slot<'o>> {
        let mut v: Vec<Slot> = op
            .in_params()
            .map(|p| Slot {
                var: field_ident(&p.name),
                ty: p.ty,
                tag: p.tag,
                keep_null: keeps_null(&p.metadata),
                _op: std::marker::PhantomData,
            })
            .collect();
        sort_wire(&mut v);
        v
    }

    /// The results in the order the caller sees them (return value first,
    /// then out-parameters in declaration order).
    pub(super) fn out_slots<'o>(&self, op: &'o Operation) -> Vec<Slot<'o>> {
        let mut v = Vec::new();
        if let Some(ty) = op.return_type {
            v.push(Slot {
                var: format_ident!("ret"),
                ty,
                tag: op.return_tag,
                keep_null: keeps_null(&op.metadata),
                _op: std::marker::PhantomData,
            });
        }
        for p in op.out_params() {
            v.push(Slot {
                var: format_ident!(
                    "out_{}",
                    field_ident(&p.name).to_string().trim_start_matches("r#")
                ),
                ty: p.ty,
                tag: p.tag,
                keep_null: keeps_null(&p.metadata),
                _op: std::marker::PhantomData,
            });
        }
        v
    }

    /// The results in wire order: required outs, required return value,
    /// then optional ones by tag (§2.5).
    pub(super) fn out_wire<'o>(&self, op: &'o Operation) -> Vec<Slot<'o>> {
        let mut slots = self.out_slots(op);
        let ret = if op.return_type.is_some() && op.return_tag.is_none() {
            Some(slots.remove(0))
        } else {
            None
        };
        let mut required: Vec<Slot> = Vec::new();
        let mut optional: Vec<Slot> = Vec::new();
        for s in slots {
            if s.tag.is_some() {
                optional.push(s);
            } else {
                required.push(s);
            }
        }
        required.extend(ret);
        optional.sort_by_key(|s| s.tag);
        required.extend(optional);
        required
    }

    /// Whether optional slot `s` maps unset and null to one `None`: a class
    /// or proxy (already an `Option`) without `["rust:optional-null"]`.
    pub(super) fn collapses_null(&self, s: &Slot) -> bool {
        self.is_nullable(s.ty) && !s.keep_null
    }

    /// The owned type of a value (`Option<T>` when optional).
    pub(super) fn owned(&self, from: Option<ModuleId>, s: &Slot) -> TokenStream {
        let t = self.rust_type(from, s.ty);
        if s.tag.is_some() && !self.collapses_null(s) {
            quote!(::core::option::Option<#t>)
        } else {
            t
        }
    }

    /// How an in-parameter is taken by the proxy method: by value for
    /// numbers and enums, else by reference.
    pub(super) fn borrowed(&self, from: Option<ModuleId>, s: &Slot) -> (TokenStream, bool) {
        let c = codegen_path();
        if s.tag.is_none() && self.is_bytes(s.ty) {
            // Converted to `Bytes` on entry: a `Vec<u8>` or `Bytes` moves in
            // without a copy.
            return (quote!(impl ::core::convert::Into<#c::Bytes>), true);
        }
        let by_value = self.is_copy(s.ty);
        let t = match s.ty {
            _ if by_value => self.rust_type(from, s.ty),
            _ if self.is_external_value(s.ty) => {
                let t = self.rust_type(from, s.ty);
                quote!(<#t as #c::ProxyArg>::Arg<'_>)
            }
            Type::String => quote!(&str),
            Type::Named(id) => match &self.model.def(id).kind {
                DefKind::Sequence(seq) if seq.element == Type::Byte => quote!(&[u8]),
                DefKind::Sequence(seq) => {
                    let e = self.rust_type(from, seq.element);
                    quote!(&[#e])
                }
                _ => {
                    let t = self.rust_type(from, s.ty);
                    quote!(&#t)
                }
            },
            _ => {
                let t = self.rust_type(from, s.ty);
                quote!(&#t)
            }
        };
        if s.tag.is_some() && !self.collapses_null(s) {
            (quote!(::core::option::Option<#t>), by_value)
        } else {
            (t, by_value)
        }
    }

    /// Whether `ty` is a `sequence<byte>` mapped to `Bytes`.
    pub(super) fn is_bytes(&self, ty: Type) -> bool {
        match ty {
            Type::Named(id) => {
                let def = self.model.def(id);
                matches!(&def.kind, DefKind::Sequence(seq) if seq.element == Type::Byte)
                    && !crate::codegen::has_rust_type(&def.metadata, "Vec<u8>")
            }
            _ => false,
        }
    }

    /// The element type of a `sequence<short|int|long|float|double>`
    /// (taken as a slice, `&[T]`, whose memory is the wire form on
    /// little-endian targets).
    pub(super) fn number_element(&self, ty: Type) -> Option<Type> {
        let Type::Named(id) = ty else {
            return None;
        };
        match &self.model.def(id).kind {
            DefKind::Sequence(seq)
                if matches!(
                    seq.element,
                    Type::Short | Type::Int | Type::Long | Type::Float | Type::Double
                ) =>
            {
                Some(seq.element)
            }
            _ => None,
        }
    }

    pub(super) fn is_copy(&self, ty: Type) -> bool {
        match ty {
            Type::Bool
            | Type::Byte
            | Type::Short
            | Type::Int
            | Type::Long
            | Type::Float
            | Type::Double => true,
            Type::Named(id) => matches!(self.model.def(id).kind, DefKind::Enum(_)),
            _ => false,
        }
    }
}

/// Sorts slots into wire order: required ones as they are, then optional
/// ones by tag.
fn sort_wire(v: &mut Vec<Slot>) {
    let mut required: Vec<Slot> = Vec::new();
    let mut optional: Vec<Slot> = Vec::new();
    for s in v.drain(..) {
        if s.tag.is_some() {
            optional.push(s);
        } else {
            required.push(s);
        }
    }
    optional.sort_by_key(|s| s.tag);
    v.extend(required);
    v.extend(optional);
}
