//! The typed proxy's method for one operation: parameters encoded (byte
//! and number sequences sent beside the frame), the call, the results and
//! declared user exceptions decoded.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::super::ident::field_ident;
use super::super::{codegen_path, Gen};
use super::{many_args, Slot};
use crate::model::{DefId, ModuleId, Operation};

impl Gen<'_> {
    pub(super) fn proxy_method(
        &self,
        from: Option<ModuleId>,
        owner: DefId,
        op: &Operation,
    ) -> TokenStream {
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
                keep_null: super::keeps_null(&p.metadata),
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
            .filter(|_| !ins.iter().any(|s| self.may_hold_class(s.ty)))
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
                    Some(tag) if self.collapses_null(s) => {
                        // Taken as `&Option<T>`, as a required proxy.
                        let tag = proc_macro2::Literal::u32_unsuffixed(tag as u32);
                        quote!(enc_.write_optional_nullable(#tag, #v);)
                    }
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
                    // Encoding 1.0 writes class instances after the
                    // parameters (nothing in 1.1).
                    let pending = if ins
                        .iter()
                        .any(|s| s.tag.is_none() && self.may_hold_class(s.ty))
                    {
                        quote!(enc_.write_pending_values();)
                    } else {
                        TokenStream::new()
                    };
                    quote!(self.0.encode_params(|enc_| { #set_format #(#writes)* #pending }))
                };
                (
                    quote!(let params = #params;),
                    quote!(self.0.invoke_encoded(#wire_name, #mode, &params, context_)),
                )
            }
        };
        let result = self.result_type(from, owner, op);
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
                    let read = self.read_optional(s.ty, tag as u32, s.keep_null);
                    quote!(let #v = #read;)
                }
            }
        });
        let result_expr = self.result_expr(from, owner, op);
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
        let read_pending = if outs
            .iter()
            .any(|s| s.tag.is_none() && self.may_hold_class(s.ty))
        {
            quote!(dec.read_pending_values()?;)
        } else {
            TokenStream::new()
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
                #read_pending
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
        let encaps = self.reply_encaps(from, op, &invoke);
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
                    #encaps
                    #live_binding
                    #decode_ok
                },
            )
        } else {
            let declared_doc = format!(
                " A declared user exception ({}) is `Error::UserException`:",
                op.throws
                    .iter()
                    .map(|t| format!("`{}`", self.model.def(*t).scoped))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            (
                quote!(#c::Result<#result>),
                quote! {
                    #[doc = #declared_doc]
                    /// view it with `Error::user_exception::<E>()`. An undeclared one
                    /// is `Error::UnknownUserException`; anything else is an
                    /// invocation error.
                },
                quote! {
                    #twoway_check
                    #(#into_bytes)*
                    #params
                    #encaps
                    fn decode_reply(#proxy_param encaps: #c::Encapsulation) -> #c::Result<#result> {
                        #decode_ok
                    }
                    decode_reply(#proxy_arg encaps)
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

    /// `let encaps = ..;`: the reply's results, or the error for a user
    /// exception, decoded with every user exception the caller knows (this
    /// Slice file's or set's `user_exceptions()`, as an Ice client knows
    /// every exception linked into it, plus declared ones from elsewhere)
    /// and sorted by `Proxy::user_exception_error` into declared or not.
    /// An operation that declares none in a file that defines none uses
    /// `Response::into_ok`.
    fn reply_encaps(
        &self,
        from: Option<ModuleId>,
        op: &Operation,
        invoke: &TokenStream,
    ) -> TokenStream {
        let c = codegen_path();
        let file = self.file_has_exceptions();
        if op.throws.is_empty() && !file {
            return quote!(let encaps = #invoke.await?.into_ok()?;);
        }
        // Declared ones (and their derived types) the file's registry lacks.
        let foreign: Vec<TokenStream> = self
            .accepted_exceptions(op)
            .into_iter()
            .filter(|&x| !self.in_exception_registry(x))
            .map(|x| self.path_to(from, x, ""))
            .collect();
        let declared: Vec<&str> = op
            .throws
            .iter()
            .map(|t| self.model.def(*t).scoped.as_str())
            .collect();
        let root = self.root_path(from);
        let set = if self.in_set() {
            quote!(super::)
        } else {
            TokenStream::new()
        };
        let values = if self.file_has_classes() {
            quote!(::core::option::Option::Some(#root #set value_factories))
        } else {
            quote!(::core::option::Option::None)
        };
        if foreign.is_empty() {
            return quote! {
                let encaps = #invoke.await?.ok_or_user_exception(
                    &self.0, #root #set user_exceptions(), #values, &[#(#declared),*],
                )?;
            };
        }
        // Rare: built only when such a reply comes.
        let base = if file {
            quote!(#root #set user_exceptions().clone())
        } else {
            quote!(#c::UserExceptionRegistry::new())
        };
        quote! {
            let encaps = match #invoke.await? {
                #c::Response::Ok(encaps) => encaps,
                #c::Response::UserException(encaps) => {
                    let mut known = #base;
                    #(known.register::<#foreign>();)*
                    return ::core::result::Result::Err(
                        self.0.user_exception_error(encaps, &known, #values, &[#(#declared),*]),
                    );
                }
            };
        }
    }

    /// Whether exception `id` is in this file's (or set's)
    /// `user_exceptions()`.
    fn in_exception_registry(&self, id: DefId) -> bool {
        let def = self.model.def(id);
        if def.local || !self.registries {
            return false;
        }
        match self.set {
            Some(layout) => layout.files.contains(&(def.span.file.0 as usize)),
            None => self.emits(id),
        }
    }
}
