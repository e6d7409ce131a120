//! Interfaces: for `interface Hello` the typed proxy `HelloPrx`, the
//! servant trait `Hello` and the dispatcher `HelloDispatcher<T: Hello>`
//! (an `floe-runtime` `Servant`).
//!
//! - `HelloPrx` wraps the untyped `Proxy` (it derefs to it, so `ice_ping`,
//!   `ice_oneway`, ... are at hand) and has one async method per
//!   operation, base interfaces' included. In-parameters are taken by
//!   value (numbers, enums) or by reference (`&str`, `&[T]`, `&T`),
//!   optional ones as `Option<..>`. Results: the return value, then the
//!   out-parameters in order, as a tuple when there are several. Errors
//!   are the runtime's `Error`; an operation with a `throws` clause
//!   returns `Result<Result<R, Box<dyn UserException>>, Error>`: the inner
//!   error is a declared exception (or one derived from it); any other
//!   user exception is `Error::UnknownUserException`.
//! - The servant trait has one `async fn` per operation taking the
//!   in-parameters (owned) and `&Current`, returning
//!   `Result<R, DispatchError>` (or, with `throws`,
//!   `Result<Result<R, Box<dyn UserException>>, DispatchError>`). Base
//!   interfaces are supertraits.
//! - The dispatcher checks the operation mode as Ice servers do (§2.2),
//!   decodes the parameters, awaits the servant, and encodes the reply:
//!   required outs in order, the return value, then optional outs and an
//!   optional return value by tag (§2.5). `ice_id`/`ice_ids`/`ice_isA`
//!   come from the type ids, answered by the adapter.
//! - Each proxy method `op` has a twin `op_with_context(.., &Context)`
//!   sending that request context instead of the proxy's (`ice_context`);
//!   servants read it in `Current::ctx`.
//! - A required `sequence<byte>` parameter (mapped to `Bytes`) is taken as
//!   `impl Into<Bytes>`; when it is the last parameter on the wire, it is
//!   sent beside the other parameters (`Proxy::invoke_with_payload`): a
//!   large one goes to the socket in a vectored write, never copied. A
//!   trailing `sequence<short|int|long|float|double>` (taken as `&[T]`)
//!   is written from the caller's slice in the same way
//!   (`Proxy::invoke_with_payload_slice`), copied only if the socket does
//!   not take it at once.
//! - Metadata: `["amd"]` (on operations or interfaces) changes nothing:
//!   servant methods are `async` already, which is what AMD gives Ice
//!   servants. `["marshaled-result"]` changes nothing either: the results
//!   are encoded when the servant's future completes, from values it has
//!   handed over. Both are accepted without a warning.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::ident::{field_ident, suffixed_type_ident, type_ident};
use super::{codegen_path, Gen};
use crate::model::{
    DefId, DefKind, Definition, Interface, ModuleId, Operation, OperationMode, Type,
};

/// One value of an operation's signature: a parameter or the return value.
struct Slot<'o> {
    /// Rust binding name.
    var: Ident,
    /// Slice type.
    ty: Type,
    /// Optional tag.
    tag: Option<i32>,
    /// Ties the slot to the operation it describes.
    _op: std::marker::PhantomData<&'o Operation>,
}

impl Gen<'_> {
    pub(crate) fn interface_def(&self, def: &Definition, _i: &Interface) -> TokenStream {
        let c = codegen_path();
        let from = Some(def.module);
        let prx = suffixed_type_ident(&def.name, "Prx");
        let tr = type_ident(&def.name);
        let disp = suffixed_type_ident(&def.name, "Dispatcher");
        let scoped = &def.scoped;
        let type_ids = self.model.type_ids(def.id);
        let doc = self.doc(
            def.doc.as_ref(),
            &format!("Slice interface `{}`.", def.scoped),
        );
        let prx_doc = format!(" Typed proxy for `{scoped}`.");
        let disp_doc = format!(
            " Dispatches requests for `{scoped}` to a [`{}`] implementation; add it to an object adapter.",
            def.name
        );

        // Every operation, own and inherited, with the interface declaring it.
        let mut ops: Vec<(DefId, &Operation)> = Vec::new();
        let mut owners = vec![def.id];
        owners.extend(self.model.all_bases(def.id));
        for owner in &owners {
            if let DefKind::Interface(i) = &self.model.def(*owner).kind {
                for op in &i.operations {
                    if !ops.iter().any(|(_, o)| o.name == op.name) {
                        ops.push((*owner, op));
                    }
                }
            }
        }

        let own_ops: Vec<&Operation> = match &def.kind {
            DefKind::Interface(i) => i.operations.iter().collect(),
            _ => Vec::new(),
        };
        let proxy_methods = ops
            .iter()
            .map(|(owner, op)| self.proxy_method(from, *owner, op));
        let trait_methods = own_ops.iter().map(|op| self.trait_method(from, op));
        let supertraits: Vec<TokenStream> = match &def.kind {
            DefKind::Interface(i) => i.bases.iter().map(|b| self.path_to(from, *b, "")).collect(),
            _ => Vec::new(),
        };
        let supertraits = if supertraits.is_empty() {
            quote!(::core::marker::Send + ::core::marker::Sync + 'static)
        } else {
            quote!(#(#supertraits)+*)
        };
        let arms = ops
            .iter()
            .map(|(owner, op)| self.dispatch_arm(from, *owner, op));
        let upcasts = self.model.all_bases(def.id).into_iter().map(|b| {
            let base = self.path_to(from, b, "Prx");
            quote! {
                impl ::core::convert::From<#prx> for #base {
                    fn from(p: #prx) -> Self {
                        #base::unchecked_cast(p.0)
                    }
                }
            }
        });
        quote! {
            #[doc = #prx_doc]
            #[derive(Clone, Debug, PartialEq)]
            pub struct #prx(#c::Proxy);

            impl #prx {
                /// The Slice type id of the interface.
                pub const TYPE_ID: &'static str = #scoped;

                /// Wraps `proxy` without asking the object (Ice's `uncheckedCast`).
                pub fn unchecked_cast(proxy: #c::Proxy) -> Self {
                    Self(proxy)
                }

                /// Asks the object whether it implements the interface
                /// (`ice_isA`) and wraps `proxy` if it does (Ice's `checkedCast`).
                ///
                /// # Errors
                ///
                /// Any invocation error of `ice_isA`.
                pub async fn checked_cast(proxy: #c::Proxy) -> #c::Result<::core::option::Option<Self>> {
                    if proxy.ice_is_a(Self::TYPE_ID).await? {
                        Ok(::core::option::Option::Some(Self(proxy)))
                    } else {
                        Ok(::core::option::Option::None)
                    }
                }

                /// The untyped proxy.
                pub fn proxy(&self) -> &#c::Proxy {
                    &self.0
                }

                /// Unwraps the untyped proxy.
                pub fn into_proxy(self) -> #c::Proxy {
                    self.0
                }

                #(#proxy_methods)*
            }

            impl #c::ProxyType for #prx {
                fn write_proxy(&self, enc: &mut #c::Encoder) {
                    #c::ProxyType::write_proxy(&self.0, enc)
                }
                fn from_proxy_data(
                    data: #c::ProxyData,
                    dec: &#c::Decoder,
                ) -> #c::WireResult<Self> {
                    <#c::Proxy as #c::ProxyType>::from_proxy_data(data, dec).map(Self)
                }
            }

            #c::typed_proxy_variants!(#prx);

            impl ::core::ops::Deref for #prx {
                type Target = #c::Proxy;
                fn deref(&self) -> &#c::Proxy {
                    &self.0
                }
            }

            #(#upcasts)*

            #doc
            pub trait #tr: #supertraits {
                #(#trait_methods)*
            }

            #[doc = #disp_doc]
            #[derive(Debug)]
            pub struct #disp<T>(pub ::std::sync::Arc<T>);

            impl<T: #tr> #disp<T> {
                /// A dispatcher for `servant`, ready for `ObjectAdapter::add`.
                pub fn new(servant: T) -> ::std::sync::Arc<Self> {
                    ::std::sync::Arc::new(Self(::std::sync::Arc::new(servant)))
                }
            }

            impl<T: #tr> #c::Servant for #disp<T> {
                fn dispatch(
                    self: ::std::sync::Arc<Self>,
                    current: #c::Current,
                    params: #c::Encapsulation,
                ) -> #c::Dispatch {
                    match current.operation.as_str() {
                        #(#arms)*
                        _ => #c::Dispatch::error(#c::DispatchError::operation_not_exist()),
                    }
                }
                fn ice_id(&self) -> &str {
                    #scoped
                }
                fn ice_ids(&self) -> &[&str] {
                    &[#(#type_ids),*]
                }
            }
        }
    }

    /// The in-parameters, required in order then optional by tag (wire order).
    fn in_slots<'o>(&self, op: &'o Operation) -> Vec<Slot<'o>> {
        let mut v: Vec<Slot> = op
            .in_params()
            .map(|p| Slot {
                var: field_ident(&p.name),
                ty: p.ty,
                tag: p.tag,
                _op: std::marker::PhantomData,
            })
            .collect();
        sort_wire(&mut v);
        v
    }

    /// The results in the order the caller sees them (return value first,
    /// then out-parameters in declaration order).
    fn out_slots<'o>(&self, op: &'o Operation) -> Vec<Slot<'o>> {
        let mut v = Vec::new();
        if let Some(ty) = op.return_type {
            v.push(Slot {
                var: format_ident!("ret"),
                ty,
                tag: op.return_tag,
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
                _op: std::marker::PhantomData,
            });
        }
        v
    }

    /// The results in wire order: required outs, required return value,
    /// then optional ones by tag (§2.5).
    fn out_wire<'o>(&self, op: &'o Operation) -> Vec<Slot<'o>> {
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

    /// The owned type of a value (`Option<T>` when optional).
    fn owned(&self, from: Option<ModuleId>, s: &Slot) -> TokenStream {
        let t = self.rust_type(from, s.ty);
        if s.tag.is_some() {
            quote!(::core::option::Option<#t>)
        } else {
            t
        }
    }

    /// How an in-parameter is taken by the proxy method: by value for
    /// numbers and enums, else by reference.
    fn borrowed(&self, from: Option<ModuleId>, s: &Slot) -> (TokenStream, bool) {
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
        if s.tag.is_some() {
            (quote!(::core::option::Option<#t>), by_value)
        } else {
            (t, by_value)
        }
    }

    /// Whether `ty` is a `sequence<byte>` mapped to `Bytes`.
    fn is_bytes(&self, ty: Type) -> bool {
        match ty {
            Type::Named(id) => {
                let def = self.model.def(id);
                matches!(&def.kind, DefKind::Sequence(seq) if seq.element == Type::Byte)
                    && !super::has_rust_type(&def.metadata, "Vec<u8>")
            }
            _ => false,
        }
    }

    /// The element type of a `sequence<short|int|long|float|double>`
    /// (taken as a slice, `&[T]`, whose memory is the wire form on
    /// little-endian targets).
    fn number_element(&self, ty: Type) -> Option<Type> {
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

    fn is_copy(&self, ty: Type) -> bool {
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

    /// The result type seen by callers and servants: `()`, `T` or a tuple.
    fn result_type(&self, from: Option<ModuleId>, op: &Operation) -> TokenStream {
        let outs = self.out_slots(op);
        let types: Vec<TokenStream> = outs.iter().map(|s| self.owned(from, s)).collect();
        match types.len() {
            0 => quote!(()),
            1 => types.into_iter().next().unwrap_or_else(|| quote!(())),
            _ => quote!((#(#types),*)),
        }
    }

    fn result_expr(&self, op: &Operation) -> TokenStream {
        let vars: Vec<Ident> = self.out_slots(op).into_iter().map(|s| s.var).collect();
        match vars.len() {
            0 => quote!(()),
            1 => {
                let v = &vars[0];
                quote!(#v)
            }
            _ => quote!((#(#vars),*)),
        }
    }

    fn wire_mode(&self, op: &Operation) -> TokenStream {
        let c = codegen_path();
        match op.mode {
            OperationMode::Normal => quote!(#c::OperationMode::Normal),
            OperationMode::Idempotent if op.has_metadata("nonmutating") => {
                quote!(#c::OperationMode::Nonmutating)
            }
            OperationMode::Idempotent => quote!(#c::OperationMode::Idempotent),
        }
    }

    /// The user exceptions a client or server accepts for `op`: the
    /// declared ones and every exception of the model derived from one.
    fn accepted_exceptions(&self, op: &Operation) -> Vec<DefId> {
        let mut out = Vec::new();
        for def in &self.model.definitions {
            if !matches!(def.kind, DefKind::Exception(_)) || def.local {
                continue;
            }
            let chain = self.slice_chain(def);
            if op
                .throws
                .iter()
                .any(|t| chain.contains(&self.model.def(*t).scoped))
            {
                out.push(def.id);
            }
        }
        out
    }

    /// The doc of an operation's generated method: the Slice doc comment
    /// (or a summary), the Slice declaration, the outputs in the order the
    /// method returns them, the declared exceptions, and idempotence.
    fn op_doc(&self, op: &Operation) -> TokenStream {
        let mut text = match &op.doc {
            Some(d) if !d.summary.is_empty() => d.summary.clone(),
            _ => format!("Slice operation `{}`.", op.name),
        };
        text.push_str(&format!(
            "\n\n```slice\n{}\n```",
            crate::export::operation_signature(self.model, op)
        ));
        if let Some(d) = &op.doc {
            for (p, t) in &d.params {
                text.push_str(&format!("\n\n- `{}`: {t}", field_ident(p)));
            }
            if let Some(r) = &d.returns {
                text.push_str(&format!("\n\nReturns: {r}"));
            }
        }
        let mut outputs: Vec<String> = Vec::new();
        if op.return_type.is_some() {
            outputs.push("the return value".to_owned());
        }
        outputs.extend(op.out_params().map(|p| format!("`{}`", p.name)));
        if outputs.len() > 1 {
            text.push_str(&format!(
                "\n\nOutputs, as a tuple in this order: {}.",
                outputs.join(", ")
            ));
        }
        if !op.throws.is_empty() {
            let list: Vec<String> = op
                .throws
                .iter()
                .map(|t| format!("`{}`", self.model.def(*t).scoped))
                .collect();
            text.push_str(&format!(
                "\n\nDeclared user exceptions: {}.",
                list.join(", ")
            ));
        }
        if op.mode == crate::model::OperationMode::Idempotent {
            text.push_str("\n\nIdempotent: the runtime may retry it after a connection failure.");
        }
        super::ident::doc_attrs(&text)
    }

    fn proxy_method(&self, from: Option<ModuleId>, owner: DefId, op: &Operation) -> TokenStream {
        let set_format = self.set_class_format(owner, op, quote!(enc_));
        let c = codegen_path();
        let name = field_ident(&op.name);
        let wire_name = &op.name;
        let doc = self.op_doc(op);
        let ins = self.in_slots(op);
        let mut decl_params = Vec::new();
        for p in op.in_params() {
            let s = Slot {
                var: field_ident(&p.name),
                ty: p.ty,
                tag: p.tag,
                _op: std::marker::PhantomData,
            };
            let (t, _) = self.borrowed(from, &s);
            let v = &s.var;
            decl_params.push(quote!(#v: #t));
        }
        // A trailing `sequence<byte>` goes beside the other parameters,
        // shared rather than copied, and a trailing number sequence is
        // written from the caller's slice (not with classes: encoding 1.0
        // writes their instances at the end of the encapsulation).
        let payload = ins
            .last()
            .filter(|s| s.tag.is_none())
            .filter(|s| self.is_bytes(s.ty) || self.number_element(s.ty).is_some())
            .filter(|_| !ins.iter().any(|s| self.may_hold_class(s.ty, 0)))
            .map(|s| (s.var.clone(), self.number_element(s.ty)));
        let into_bytes: Vec<TokenStream> = ins
            .iter()
            .filter(|s| s.tag.is_none() && self.is_bytes(s.ty))
            .map(|s| {
                let v = &s.var;
                quote!(let #v: #c::Bytes = #v.into();)
            })
            .collect();
        let writes = ins
            .iter()
            .filter(|s| Some(&s.var) != payload.as_ref().map(|(v, _)| v))
            .map(|s| {
                let v = &s.var;
                let (_, by_value) = self.borrowed(from, s);
                if self.is_external_value(s.ty) {
                    let t = self.rust_type(from, s.ty);
                    let arg = quote!(<#t as #c::ProxyArg>::arg_ref);
                    return match s.tag {
                        None => quote!(enc_.write(#arg(&#v));),
                        Some(tag) => {
                            let tag = proc_macro2::Literal::u32_unsuffixed(tag as u32);
                            quote!(enc_.write_optional(#tag, #v.as_ref().map(|a_| #arg(a_)));)
                        }
                    };
                }
                match s.tag {
                    None if by_value => quote!(enc_.write(&#v);),
                    None => quote!(enc_.write(#v);),
                    Some(tag) => {
                        let tag = proc_macro2::Literal::u32_unsuffixed(tag as u32);
                        if by_value {
                            quote!(enc_.write_optional(#tag, #v.as_ref());)
                        } else {
                            quote!(enc_.write_optional(#tag, #v);)
                        }
                    }
                }
            });
        let mode = self.wire_mode(op);
        let (params, invoke) = match &payload {
            Some((v, element)) => (
                quote! {
                    let prefix_ = self.0.encode_params_prefix(|enc_| {
                        #set_format
                        #(#writes)*
                        enc_.write_size(#v.len());
                    });
                },
                match element {
                    None => quote! {
                        self.0.invoke_with_payload(#wire_name, #mode, &prefix_, &#v, context_)
                    },
                    Some(e) => {
                        let e = self.rust_type(from, *e);
                        quote! {
                            self.0.invoke_with_payload_slice(
                                #wire_name,
                                #mode,
                                &prefix_,
                                &<#e as #c::WireNumber>::wire_bytes(#v),
                                context_,
                            )
                        }
                    }
                },
            ),
            None => {
                let params = if ins.is_empty() {
                    quote!(self.0.empty_params())
                } else {
                    quote!(self.0.encode_params(|enc_| { #set_format #(#writes)* }))
                };
                (
                    quote!(let params = #params;),
                    quote!(self.0.invoke_with_context(#wire_name, #mode, params, context_)),
                )
            }
        };
        let result = self.result_type(from, op);
        let outs = self.out_wire(op);
        let twoway_check = if outs.is_empty() {
            TokenStream::new()
        } else {
            quote! {
                if !self.0.mode().is_twoway() {
                    return ::core::result::Result::Err(#c::Error::TwowayOnly);
                }
            }
        };
        let factories = self.factories_stmt(from, op);
        let reads = outs.iter().map(|s| {
            let v = &s.var;
            match s.tag {
                None => quote!(let #v = dec.read()?;),
                Some(tag) => {
                    let tag = proc_macro2::Literal::u32_unsuffixed(tag as u32);
                    quote!(let #v = dec.read_optional_value(#tag)?;)
                }
            }
        });
        let result_expr = self.result_expr(op);
        // Results that may hold proxies need the communicator to decode.
        let live = outs.iter().any(|s| self.may_hold_proxy(s.ty));
        let (reply_decoder, proxy_param, proxy_arg) = if live {
            (
                quote!(proxy_.reply_decoder(encaps)?),
                quote!(proxy_: &#c::Proxy,),
                quote!(&self.0,),
            )
        } else {
            (
                quote!(#c::Decoder::from_encapsulation(encaps)?),
                TokenStream::new(),
                TokenStream::new(),
            )
        };
        let decode_ok = if outs.is_empty() {
            quote! {
                let _ = encaps;
                ::core::result::Result::Ok(())
            }
        } else {
            quote! {
                let mut dec = #reply_decoder;
                #factories
                #(#reads)*
                dec.finish_encapsulation()?;
                ::core::result::Result::Ok(#result_expr)
            }
        };
        let many = many_args(op.in_params().count() + 2);
        let live_binding = if live {
            quote!(let proxy_ = &self.0;)
        } else {
            TokenStream::new()
        };
        let (ret, errors, body) = if op.throws.is_empty() {
            (
                quote!(#c::Result<#result>),
                quote! {
                    /// Any invocation error; a user exception is `Error::UnknownUserException`.
                },
                quote! {
                    #twoway_check
                    #(#into_bytes)*
                    #params
                    let encaps = #invoke.await?.into_ok()?;
                    #live_binding
                    #decode_ok
                },
            )
        } else {
            let accepted: Vec<TokenStream> = self
                .accepted_exceptions(op)
                .into_iter()
                .map(|x| self.path_to(from, x, ""))
                .collect();
            let declared: Vec<&str> = op
                .throws
                .iter()
                .map(|t| self.model.def(*t).scoped.as_str())
                .collect();
            (
                quote!(#c::Result<::core::result::Result<#result, ::std::boxed::Box<dyn #c::UserException>>>),
                quote! {
                    /// The outer error is any invocation error (an undeclared user
                    /// exception is `Error::UnknownUserException`); the inner one a
                    /// declared user exception.
                },
                quote! {
                    #twoway_check
                    #(#into_bytes)*
                    #params
                    let encaps = match #invoke.await? {
                        #c::Response::Ok(encaps) => encaps,
                        #c::Response::UserException(encaps) => {
                            let mut registry = #c::UserExceptionRegistry::new();
                            #(registry.register::<#accepted>();)*
                            let mut dec = self.0.reply_decoder(encaps)?;
                            #factories
                            let ex = match dec.read_user_exception(&registry) {
                                ::core::result::Result::Ok(ex) => ex,
                                ::core::result::Result::Err(#c::WireError::UnknownUserException { type_id }) => {
                                    return ::core::result::Result::Err(#c::Error::UnknownUserException(type_id));
                                }
                                ::core::result::Result::Err(e) => return ::core::result::Result::Err(e.into()),
                            };
                            if [#(#declared),*].iter().any(|id| ex.is_a(id)) {
                                return ::core::result::Result::Ok(::core::result::Result::Err(ex));
                            }
                            return ::core::result::Result::Err(#c::Error::UnknownUserException(ex.ice_id().to_owned()));
                        }
                    };
                    fn decode_reply(#proxy_param encaps: #c::Encapsulation) -> #c::Result<#result> {
                        #decode_ok
                    }
                    decode_reply(#proxy_arg encaps).map(::core::result::Result::Ok)
                },
            )
        };
        // `self` is `self_`: `self_with_context`, `invoke_self_`.
        let plain = name.to_string();
        let plain = plain.trim_start_matches("r#").trim_end_matches('_');
        let with_context = format_ident!("{plain}_with_context");
        let inner = format_ident!("invoke_{plain}_");
        let args: Vec<&Ident> = op
            .in_params()
            .map(|p| ins.iter().find(|s| s.var == field_ident(&p.name)))
            .filter_map(|s| s.map(|s| &s.var))
            .collect();
        let with_context_doc = format!(
            " [`Self::{name}`] with the request context `context` instead of the proxy's \
             (`ice_context`); servants see it in `Current::ctx`."
        );
        quote! {
            #doc
            ///
            /// # Errors
            ///
            #errors
            #many
            pub async fn #name(&self, #(#decl_params),*) -> #ret {
                self.#inner(#(#args,)* ::core::option::Option::None).await
            }

            #[doc = #with_context_doc]
            ///
            /// # Errors
            ///
            /// As without a context.
            #many
            pub async fn #with_context(
                &self,
                #(#decl_params,)*
                context: &#c::Context,
            ) -> #ret {
                self.#inner(#(#args,)* ::core::option::Option::Some(context)).await
            }

            #many
            async fn #inner(
                &self,
                #(#decl_params,)*
                context_: ::core::option::Option<&#c::Context>,
            ) -> #ret {
                #body
            }
        }
    }

    /// `dec.set_value_factories(..)` when the operation's values may hold
    /// class instances of this file.
    fn factories_stmt(&self, from: Option<ModuleId>, op: &Operation) -> TokenStream {
        if !self.file_has_classes() {
            return TokenStream::new();
        }
        let uses = op.params.iter().any(|p| self.may_hold_class(p.ty, 0))
            || op.return_type.is_some_and(|t| self.may_hold_class(t, 0))
            || !op.throws.is_empty();
        if !uses {
            return TokenStream::new();
        }
        let root = self.root_path(from);
        if self.in_set() {
            // The set's registry: every class of every file of the set.
            quote!(dec.set_value_factories(#root super::value_factories());)
        } else {
            quote!(dec.set_value_factories(#root value_factories());)
        }
    }

    /// `super::super::` from module `from` to the file's root.
    pub(crate) fn root_path(&self, from: Option<ModuleId>) -> TokenStream {
        let mut depth = 0;
        let mut cur = from;
        while let Some(m) = cur {
            depth += 1;
            cur = self.model.module(m).parent;
        }
        let supers = (0..depth).map(|_| quote!(super::));
        quote!(#(#supers)*)
    }

    /// Whether this output (or, for a file of a set, the set) defines
    /// classes, so that its decoders need value factories.
    pub(crate) fn file_has_classes(&self) -> bool {
        if let Some(has) = self.set_has_classes() {
            return has;
        }
        self.main_definitions()
            .any(|d| matches!(&d.kind, DefKind::Class(c) if c.defined) && !d.local)
    }

    fn may_hold_class(&self, ty: Type, depth: usize) -> bool {
        if depth > 64 {
            return true;
        }
        match ty {
            Type::Object | Type::Value => true,
            Type::Named(id) => match &self.model.def(id).kind {
                DefKind::Class(_) | DefKind::Interface(_) => true,
                DefKind::Struct(s) => s
                    .members
                    .iter()
                    .any(|m| self.may_hold_class(m.ty, depth + 1)),
                DefKind::Sequence(s) => self.may_hold_class(s.element, depth + 1),
                DefKind::Dictionary(d) => self.may_hold_class(d.value, depth + 1),
                _ => false,
            },
            _ => false,
        }
    }

    fn trait_method(&self, from: Option<ModuleId>, op: &Operation) -> TokenStream {
        let c = codegen_path();
        let name = field_ident(&op.name);
        let doc = self.op_doc(op);
        let params = op.in_params().map(|p| {
            let s = Slot {
                var: field_ident(&p.name),
                ty: p.ty,
                tag: p.tag,
                _op: std::marker::PhantomData,
            };
            let v = &s.var;
            let t = self.owned(from, &s);
            quote!(#v: #t)
        });
        let result = self.result_type(from, op);
        let (ret, complex) = if op.throws.is_empty() {
            (
                quote!(::core::result::Result<#result, #c::DispatchError>),
                TokenStream::new(),
            )
        } else {
            (
                quote!(::core::result::Result<::core::result::Result<#result, ::std::boxed::Box<dyn #c::UserException>>, #c::DispatchError>),
                // The nested result keeps declared user exceptions apart from
                // dispatch failures without a generated error type per operation.
                quote!(#[allow(clippy::type_complexity)]),
            )
        };
        let many = many_args(op.in_params().count() + 2);
        let current = if op.in_params().any(|p| field_ident(&p.name) == "current") {
            format_ident!("current_")
        } else {
            format_ident!("current")
        };
        quote! {
            #doc
            #complex
            #many
            fn #name(
                &self,
                #(#params,)*
                #current: &#c::Current,
            ) -> impl ::core::future::Future<Output = #ret> + ::core::marker::Send;
        }
    }

    /// `["format:sliced"]` / `["format:compact"]` on the operation, else on
    /// the interface that declares it: the statement that sets the class
    /// format on encoder `enc` (none for `["format:default"]` or no
    /// metadata: the communicator's `Ice.Default.SlicedFormat` applies).
    fn set_class_format(&self, owner: DefId, op: &Operation, enc: TokenStream) -> TokenStream {
        let c = codegen_path();
        let pick = |meta: &dyn Fn(&str) -> bool| -> Option<Option<Ident>> {
            if meta("format:sliced") {
                Some(Some(format_ident!("Sliced")))
            } else if meta("format:compact") {
                Some(Some(format_ident!("Compact")))
            } else if meta("format:default") {
                Some(None)
            } else {
                None
            }
        };
        let interface = self.model.def(owner);
        let format = pick(&|m| op.has_metadata(m))
            .or_else(|| pick(&|m| interface.has_metadata(m)))
            .flatten();
        match format {
            Some(f) => quote!(#enc.set_class_format(#c::ClassFormat::#f);),
            None => TokenStream::new(),
        }
    }

    fn dispatch_arm(&self, from: Option<ModuleId>, owner: DefId, op: &Operation) -> TokenStream {
        let set_format = self.set_class_format(owner, op, quote!(enc));
        let c = codegen_path();
        let wire_name = &op.name;
        let method = field_ident(&op.name);
        let tr = self.path_to(from, owner, "");
        let ins = self.in_slots(op);
        let factories = self.factories_stmt(from, op);
        // Locals end with `_`, which no Slice name can, so they never clash
        // with `current`, `dec` or each other.
        let local = |name: &str| {
            format_ident!(
                "{}_",
                field_ident(name).to_string().trim_start_matches("r#")
            )
        };
        let reads = ins.iter().map(|s| {
            let v = format_ident!("{}_", s.var.to_string().trim_start_matches("r#"));
            match s.tag {
                None => quote!(let #v = dec.read()?;),
                Some(tag) => {
                    let tag = proc_macro2::Literal::u32_unsuffixed(tag as u32);
                    quote!(let #v = dec.read_optional_value(#tag)?;)
                }
            }
        });
        let args = op.in_params().map(|p| local(&p.name));
        let mode_ok = match op.mode {
            OperationMode::Normal => quote!(matches!(current.mode, #c::OperationMode::Normal)),
            OperationMode::Idempotent => quote!(matches!(
                current.mode,
                #c::OperationMode::Nonmutating | #c::OperationMode::Idempotent
            )),
        };
        let expected = match op.mode {
            OperationMode::Normal => "Normal",
            OperationMode::Idempotent => "Idempotent",
        };
        let outs = self.out_wire(op);
        let result_pat = self.result_expr(op);
        let write = |s: &Slot| {
            let v = &s.var;
            match s.tag {
                None => quote!(enc.write(&#v);),
                Some(tag) => {
                    let tag = proc_macro2::Literal::u32_unsuffixed(tag as u32);
                    quote!(enc.write_optional(#tag, #v.as_ref());)
                }
            }
        };
        // A trailing `sequence<byte>` result goes beside the reply head,
        // shared rather than copied (as in-parameters do on the proxy side),
        // and so does a trailing number sequence, the servant's vector
        // itself becoming the payload.
        let payload = outs
            .last()
            .filter(|s| s.tag.is_none())
            .filter(|s| self.is_bytes(s.ty) || self.number_element(s.ty).is_some())
            .filter(|_| !outs.iter().any(|s| self.may_hold_class(s.ty, 0)));
        let reply = if outs.is_empty() {
            quote!(::core::result::Result::<_, #c::DispatchError>::Ok(current.empty_reply()))
        } else if let Some(last) = payload {
            let v = &last.var;
            let writes = outs[..outs.len() - 1].iter().map(write);
            match self.number_element(last.ty) {
                None => quote! {
                    current.encode_reply_with_payload(|enc| { #set_format #(#writes)* enc.write_size(#v.len()); }, &#v)
                },
                Some(e) => {
                    let e = self.rust_type(from, e);
                    quote! {{
                        let count_ = #v.len();
                        let payload_ = <#e as #c::WireNumber>::into_wire_bytes(#v);
                        current.encode_reply_with_payload(|enc| { #set_format #(#writes)* enc.write_size(count_); }, &payload_)
                    }}
                }
            }
        } else {
            let writes = outs.iter().map(write);
            quote!(::core::result::Result::<_, #c::DispatchError>::Ok(current.encode_reply(|enc| { #set_format #(#writes)* })))
        };
        let args: Vec<Ident> = args.collect();
        let call = quote!(<T as #tr>::#method(&*self.0, #(#args,)* &current).await?);
        let body = if op.throws.is_empty() {
            if outs.is_empty() {
                quote!(#call; #reply)
            } else {
                quote!(let #result_pat = #call; #reply)
            }
        } else {
            let declared: Vec<&str> = op
                .throws
                .iter()
                .map(|t| self.model.def(*t).scoped.as_str())
                .collect();
            quote! {
                match #call {
                    ::core::result::Result::Ok(#result_pat) => #reply,
                    ::core::result::Result::Err(ex) => {
                        if [#(#declared),*].iter().any(|id| ex.is_a(id)) {
                            ::core::result::Result::Err(#c::DispatchError::UserException(
                                current.encode_reply(|enc| {
                                    #set_format
                                    enc.write_user_exception(&*ex)
                                }),
                            ))
                        } else {
                            ::core::result::Result::Err(#c::DispatchError::UnknownUserException(
                                ex.ice_id().to_owned(),
                            ))
                        }
                    }
                }
            }
        };
        let decode = if ins.is_empty() {
            quote! {
                let mut dec = #c::Decoder::from_encapsulation(params)?;
                dec.finish_encapsulation()?;
            }
        } else if ins.iter().any(|s| self.may_hold_proxy(s.ty)) {
            // Parameters that may hold proxies need the communicator.
            quote! {
                let mut dec = current.params_decoder(params)?;
                #factories
                #(#reads)*
                dec.finish_encapsulation()?;
            }
        } else {
            quote! {
                let mut dec = #c::Decoder::from_encapsulation(params)?;
                #factories
                #(#reads)*
                dec.finish_encapsulation()?;
            }
        };
        quote! {
            #wire_name => {
                if !(#mode_ok) {
                    return #c::Dispatch::error(
                        #c::WireError::marshal(::std::format!(
                            "unexpected operation mode. expected = {} received = {:?}",
                            #expected,
                            current.mode
                        ))
                        .into(),
                    );
                }
                #c::Dispatch::future(async move {
                    #decode
                    #body
                })
            }
        }
    }
}

/// `#[allow(clippy::too_many_arguments)]` when a method has more than
/// clippy's limit of 7 arguments: the Slice operation fixes the list.
fn many_args(n: usize) -> TokenStream {
    if n > 7 {
        quote!(#[allow(clippy::too_many_arguments)])
    } else {
        TokenStream::new()
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
