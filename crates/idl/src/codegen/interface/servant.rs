//! The servant side of one operation: the async method of the servant
//! trait, and the dispatcher's match arm that decodes the parameters, calls
//! it and encodes the results or the user exception.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::super::ident::field_ident;
use super::super::{codegen_path, Gen};
use super::{many_args, Slot};
use crate::model::{DefId, ModuleId, Operation, OperationMode};

impl Gen<'_> {
    pub(super) fn trait_method(
        &self,
        from: Option<ModuleId>,
        owner: DefId,
        op: &Operation,
    ) -> TokenStream {
        let c = codegen_path();
        let name = field_ident(&op.name);
        let doc = self.op_doc(op);
        let params = op.in_params().map(|p| {
            let s = Slot {
                var: field_ident(&p.name),
                ty: p.ty,
                tag: p.tag,
                keep_null: super::keeps_null(&p.metadata),
                _op: std::marker::PhantomData,
            };
            let v = &s.var;
            let t = self.owned(from, &s);
            quote!(#v: #t)
        });
        let result = self.result_type(from, owner, op);
        let ret = quote!(::core::result::Result<#result, #c::DispatchError>);
        let many = many_args(op.in_params().count() + 2);
        let current = if op.in_params().any(|p| field_ident(&p.name) == "current") {
            format_ident!("current_")
        } else {
            format_ident!("current")
        };
        quote! {
            #doc
            #many
            fn #name(
                &self,
                #(#params,)*
                #current: &#c::Current,
            ) -> impl ::core::future::Future<Output = #ret> + ::core::marker::Send;
        }
    }

    pub(super) fn dispatch_arm(
        &self,
        from: Option<ModuleId>,
        owner: DefId,
        op: &Operation,
    ) -> TokenStream {
        let set_format = self.set_class_format(owner, op, quote!(enc));
        let c = codegen_path();
        let wire_name = &op.name;
        let method = field_ident(&op.name);
        let tr = self.path_to(from, owner, self.servant_suffix(owner));
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
                    let read = self.read_optional(s.ty, tag as u32, s.keep_null);
                    quote!(let #v = #read;)
                }
            }
        });
        let args = op.in_params().map(|p| local(&p.name));
        let declared = match op.mode {
            OperationMode::Normal => quote!(#c::OperationMode::Normal),
            OperationMode::Idempotent => quote!(#c::OperationMode::Idempotent),
        };
        let outs = self.out_wire(op);
        let result_pat = self.result_expr(from, owner, op);
        let write = |s: &Slot| {
            let v = &s.var;
            match s.tag {
                None => quote!(enc.write(&#v);),
                Some(tag) => {
                    self.write_optional(quote!(enc), s.ty, tag as u32, quote!(#v), s.keep_null)
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
            .filter(|_| !outs.iter().any(|s| self.may_hold_class(s.ty)));
        let reply = if outs.is_empty() {
            quote!(::core::result::Result::<#c::ReplyData, #c::DispatchError>::Ok(#c::ReplyData::from(current.empty_reply())))
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
            // Encoding 1.0 writes class instances after the results.
            let pending = if outs
                .iter()
                .any(|s| s.tag.is_none() && self.may_hold_class(s.ty))
            {
                quote!(enc.write_pending_values();)
            } else {
                TokenStream::new()
            };
            quote!(::core::result::Result::<#c::ReplyData, #c::DispatchError>::Ok(#c::ReplyData::from(current.encode_reply(|enc| { #set_format #(#writes)* #pending }))))
        };
        let args: Vec<Ident> = args.collect();
        // Any user exception the servant raises is sent (status 1) in the
        // request's encoding and the operation's format, as Ice servers do:
        // the client decides whether its operation declares it
        // (`UnknownUserException` if not).
        let format = self.class_format_expr(owner, op);
        let call = quote! {
            <T as #tr>::#method(&*self.0, #(#args,)* &current)
                .await
                .map_err(|e| current.encode_user_exception(e, #format))?
        };
        let body = if outs.is_empty() {
            quote!(#call; #reply)
        } else {
            quote!(let #result_pat = #call; #reply)
        };
        let read_pending = if ins
            .iter()
            .any(|s| s.tag.is_none() && self.may_hold_class(s.ty))
        {
            quote!(dec.read_pending_values()?;)
        } else {
            TokenStream::new()
        };
        // An operation without parameters checks its empty encapsulation
        // before the future is made, which then holds no parameters.
        let decode = if ins.is_empty() {
            TokenStream::new()
        } else if ins.iter().any(|s| self.may_hold_proxy(s.ty)) {
            // Parameters that may hold proxies need the communicator.
            quote! {
                let mut dec = current.params_decoder(params)?;
                #factories
                #(#reads)*
                #read_pending
                dec.finish_encapsulation()?;
            }
        } else {
            quote! {
                let mut dec = #c::Decoder::from_encapsulation(params)?;
                #factories
                #(#reads)*
                #read_pending
                dec.finish_encapsulation()?;
            }
        };
        let check_empty = if ins.is_empty() {
            quote! {
                if let ::std::result::Result::Err(e) = #c::Decoder::read_empty_params(params) {
                    return #c::Dispatch::error(e.into());
                }
            }
        } else {
            TokenStream::new()
        };
        quote! {
            #wire_name => {
                if let ::std::result::Result::Err(e) = current.check_mode(#declared) {
                    return #c::Dispatch::error(e);
                }
                #check_empty
                #c::Dispatch::pending(async move {
                    #decode
                    #body
                })
            }
        }
    }
}
