//! What an operation returns to its caller and takes from its servant:
//! `()`, the one output, or, for two or more outputs (a return value and
//! out-parameters), a generated struct `<Interface><Op>Result` with one
//! named field per output, as Ice for C++11 (`DivideResult`) and Java
//! name them: `return_value`, then the out-parameters in order. It
//! converts from and to the tuple of its fields (`let (q, r) =
//! hello.divide(17, 5).await?.into()`, `Ok((q, r).into())`).
//!
//! Rust-first interfaces keep the tuple their trait declares
//! ([`Settings::tuple_outputs`](super::super::Settings::tuple_outputs)).

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::super::ident::{field_ident, suffixed_type_ident, type_ident};
use super::super::Gen;
use crate::model::{DefId, Definition, ModuleId, Operation};

impl Gen<'_> {
    /// Whether `op` returns a generated outputs struct.
    pub(super) fn named_outputs(&self, op: &Operation) -> bool {
        !self.settings.tuple_outputs && self.out_slots(op).len() >= 2
    }

    /// `DivideResult` for operation `divide`: appended to the interface
    /// name.
    fn outputs_suffix(op: &Operation) -> String {
        format!("{}Result", type_ident(&op.name))
    }

    /// The outputs struct's field names, in the order of `out_slots`.
    fn output_fields(&self, op: &Operation) -> Vec<Ident> {
        let outs: Vec<Ident> = op.out_params().map(|p| field_ident(&p.name)).collect();
        let mut fields = Vec::new();
        if op.return_type.is_some() {
            let ret = if outs.iter().any(|o| o == "return_value") {
                format_ident!("return_value_")
            } else {
                format_ident!("return_value")
            };
            fields.push(ret);
        }
        fields.extend(outs);
        fields
    }

    /// The result type seen by callers and servants: `()`, `T`, or the
    /// outputs struct (a tuple for Rust-first interfaces).
    pub(super) fn result_type(
        &self,
        from: Option<ModuleId>,
        owner: DefId,
        op: &Operation,
    ) -> TokenStream {
        if self.named_outputs(op) {
            return self.path_to(from, owner, &Self::outputs_suffix(op));
        }
        let outs = self.out_slots(op);
        let types: Vec<TokenStream> = outs.iter().map(|s| self.owned(from, s)).collect();
        match types.len() {
            0 => quote!(()),
            1 => types.into_iter().next().unwrap_or_else(|| quote!(())),
            _ => quote!((#(#types),*)),
        }
    }

    /// The outputs built from (proxy) or bound to (servant) the result
    /// variables of `out_slots`: the same syntax is an expression and a
    /// pattern.
    pub(super) fn result_expr(
        &self,
        from: Option<ModuleId>,
        owner: DefId,
        op: &Operation,
    ) -> TokenStream {
        let vars: Vec<Ident> = self.out_slots(op).into_iter().map(|s| s.var).collect();
        if self.named_outputs(op) {
            let path = self.path_to(from, owner, &Self::outputs_suffix(op));
            let fields = self.output_fields(op);
            return quote!(#path { #(#fields: #vars),* });
        }
        match vars.len() {
            0 => quote!(()),
            1 => {
                let v = &vars[0];
                quote!(#v)
            }
            _ => quote!((#(#vars),*)),
        }
    }

    /// The outputs struct of `op`, an operation of interface `def`, with
    /// its conversions from and to the tuple of its fields (nothing for an
    /// operation with fewer than two outputs).
    pub(super) fn outputs_struct(
        &self,
        from: Option<ModuleId>,
        def: &Definition,
        op: &Operation,
    ) -> TokenStream {
        if !self.named_outputs(op) {
            return TokenStream::new();
        }
        let name = suffixed_type_ident(&def.name, &Self::outputs_suffix(op));
        let method = field_ident(&op.name);
        let slots = self.out_slots(op);
        let fields = self.output_fields(op);
        let types: Vec<TokenStream> = slots.iter().map(|s| self.owned(from, s)).collect();
        let docs = slots.iter().enumerate().map(|(i, s)| {
            let what = if i == 0 && op.return_type.is_some() {
                "The return value".to_owned()
            } else {
                let p = op
                    .out_params()
                    .nth(i - usize::from(op.return_type.is_some()));
                format!("Out-parameter `{}`", p.map_or("", |p| p.name.as_str()))
            };
            match s.tag {
                Some(tag) => format!(" {what} (optional, tag {tag})."),
                None => format!(" {what}."),
            }
        });
        let doc = format!(
            " The outputs of [`{}::{}`]: the return value, then the out-parameters in order.",
            type_ident(&def.name),
            method.to_string().trim_start_matches("r#")
        );
        quote! {
            #[doc = #doc]
            #[derive(Clone, Debug, PartialEq)]
            pub struct #name {
                #(#[doc = #docs] pub #fields: #types,)*
            }

            impl ::core::convert::From<(#(#types),*)> for #name {
                fn from((#(#fields),*): (#(#types),*)) -> Self {
                    Self { #(#fields),* }
                }
            }

            impl ::core::convert::From<#name> for (#(#types),*) {
                fn from(r: #name) -> Self {
                    (#(r.#fields),*)
                }
            }
        }
    }
}
