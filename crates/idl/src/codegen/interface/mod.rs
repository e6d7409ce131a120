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
//!   are the runtime's `Error`: a declared user exception (or one derived
//!   from it) is `Error::UserException`, viewed as its type with
//!   `Error::user_exception::<E>()`; any other user exception is
//!   `Error::UnknownUserException`.
//! - The servant trait has one `async fn` per operation taking the
//!   in-parameters (owned) and `&Current`, returning
//!   `Result<R, DispatchError>`. A servant raises a user exception `E`
//!   with `Err(E { .. }.into())` or `?` (every generated exception
//!   implements `From<E> for DispatchError`); the dispatcher encodes it in
//!   the request's encoding and the operation's class format. Base
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

mod doc;
mod outputs;
mod proxy;
mod servant;
mod slots;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::ident::{suffixed_type_ident, type_ident};
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
    /// An optional class or proxy with `["rust:optional-null"]`: its Rust
    /// type tells unset (`None`) from set to null (`Some(None)`).
    keep_null: bool,
    /// Ties the slot to the operation it describes.
    _op: std::marker::PhantomData<&'o Operation>,
}

impl Gen<'_> {
    pub(crate) fn interface_def(&self, def: &Definition, _i: &Interface) -> TokenStream {
        self.remote_def(def)
    }

    /// The name suffix of the servant trait of remote type `id`: none for
    /// an interface, `Disp` for a class with operations (whose own name is
    /// its value struct's), as Ice for C++11 and Python name it.
    pub(crate) fn servant_suffix(&self, id: DefId) -> &'static str {
        match self.model.def(id).kind {
            DefKind::Class(_) => "Disp",
            _ => "",
        }
    }

    /// The direct bases of remote type `id` that are remote types too
    /// (a base class without operations has no proxy or servant).
    fn remote_direct_bases(&self, id: DefId) -> Vec<DefId> {
        self.model
            .direct_bases(id)
            .into_iter()
            .filter(|b| self.model.is_remote(*b))
            .collect()
    }

    /// Proxy, servant trait and dispatcher of an interface or of a class
    /// with operations.
    pub(crate) fn remote_def(&self, def: &Definition) -> TokenStream {
        let c = codegen_path();
        let from = Some(def.module);
        let prx = suffixed_type_ident(&def.name, "Prx");
        let tr = match self.servant_suffix(def.id) {
            "" => type_ident(&def.name),
            suffix => suffixed_type_ident(&def.name, suffix),
        };
        let disp = suffixed_type_ident(&def.name, "Dispatcher");
        let scoped = &def.scoped;
        let type_ids = self.model.type_ids(def.id);
        let doc = self.doc(
            def.doc.as_ref(),
            &format!("Slice interface `{}`.", def.scoped),
        );
        let doc = if matches!(def.kind, DefKind::Class(_)) {
            let text = format!(
                " The operations of Slice class `{scoped}` (classes with operations are deprecated in Slice): a servant implements them, and [`{disp}`] dispatches to it."
            );
            quote!(#[doc = #text])
        } else {
            doc
        };
        let prx_doc = format!(" Typed proxy for `{scoped}`.");
        let disp_doc = format!(
            " Dispatches requests for `{scoped}` to a [`{tr}`] implementation; add it to an object adapter."
        );

        // Every operation, own and inherited, with the type declaring it.
        let mut ops: Vec<(DefId, &Operation)> = Vec::new();
        let mut owners = vec![def.id];
        owners.extend(self.model.all_bases(def.id));
        for owner in &owners {
            for op in self.model.own_operations(*owner) {
                if !ops.iter().any(|(_, o)| o.name == op.name) {
                    ops.push((*owner, op));
                }
            }
        }

        let own_ops: Vec<&Operation> = self.model.own_operations(def.id).iter().collect();
        let direct = self.remote_direct_bases(def.id);
        // The proxy dereferences to its first base's proxy, which has that
        // base's operations and its ancestors' (down to `Proxy`): only the
        // operations of this interface and of its other bases are emitted.
        let first_base = direct.first().copied();
        let via_first: Vec<DefId> = first_base
            .map(|b| {
                let mut v = vec![b];
                v.extend(self.model.all_bases(b));
                v
            })
            .unwrap_or_default();
        let proxy_methods = ops
            .iter()
            .filter(|(owner, _)| !via_first.contains(owner))
            .map(|(owner, op)| self.proxy_method(from, *owner, op));
        let (deref_target, deref_body) = match first_base {
            Some(b) => {
                let base = self.path_to(from, b, "Prx");
                (quote!(#base), quote!(#base::from_proxy_ref(&self.0)))
            }
            None => (quote!(#c::Proxy), quote!(&self.0)),
        };
        let trait_methods = own_ops.iter().map(|op| self.trait_method(from, def.id, op));
        let outputs = own_ops.iter().map(|op| self.outputs_struct(from, def, op));
        let supertraits: Vec<TokenStream> = direct
            .iter()
            .map(|b| self.path_to(from, *b, self.servant_suffix(*b)))
            .collect();
        let supertraits = if supertraits.is_empty() {
            quote!(::core::marker::Send + ::core::marker::Sync + 'static)
        } else {
            quote!(#(#supertraits)+*)
        };
        let arms = ops
            .iter()
            .map(|(owner, op)| self.dispatch_arm(from, *owner, op));
        // An interface without operations (its own or inherited) has no
        // operation to look up.
        let dispatch_body = if ops.is_empty() {
            quote!(#c::Dispatch::error(#c::DispatchError::operation_not_exist()))
        } else {
            quote! {
                match current.operation.as_str() {
                    #(#arms)*
                    _ => #c::Dispatch::error(#c::DispatchError::operation_not_exist()),
                }
            }
        };
        let (current_name, params_name) = if ops.is_empty() {
            (format_ident!("_current"), format_ident!("_params"))
        } else {
            (format_ident!("current"), format_ident!("params"))
        };
        let remote_bases: Vec<DefId> = self
            .model
            .all_bases(def.id)
            .into_iter()
            .filter(|b| self.model.is_remote(*b))
            .collect();
        let upcasts = remote_bases.into_iter().map(|b| {
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
            #[repr(transparent)]
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

                /// Views `proxy` as this typed proxy without asking the object
                /// (what a derived interface's proxy dereferences to).
                pub fn from_proxy_ref(proxy: &#c::Proxy) -> &Self {
                    // SAFETY: `Self` is `#[repr(transparent)]` over `Proxy`.
                    unsafe { &*(proxy as *const #c::Proxy as *const Self) }
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
                type Target = #deref_target;
                fn deref(&self) -> &#deref_target {
                    #deref_body
                }
            }

            #(#upcasts)*

            #doc
            pub trait #tr: #supertraits {
                #(#trait_methods)*
            }

            #(#outputs)*

            #[doc = #disp_doc]
            #[derive(Debug)]
            pub struct #disp<T>(pub ::std::sync::Arc<T>);

            impl<T: #tr> #disp<T> {
                /// A dispatcher for `servant`, ready for `ObjectAdapter::add`.
                pub fn new(servant: T) -> ::std::sync::Arc<Self> {
                    ::std::sync::Arc::new(Self(::std::sync::Arc::new(servant)))
                }
            }

            impl<T: #tr + #c::Builtins> #disp<T> {
                /// A dispatcher whose built-in operations (`ice_ping`,
                /// `ice_isA`, `ice_id`, `ice_ids`) `servant` answers itself
                /// (`Builtins`), as an Ice servant that overrides them.
                pub fn with_builtins(servant: T) -> ::std::sync::Arc<#c::WithBuiltins<Self, T>> {
                    let servant = ::std::sync::Arc::new(servant);
                    #c::WithBuiltins::new(::std::sync::Arc::new(Self(servant.clone())), servant)
                }
            }

            impl<T: #tr> #c::Servant for #disp<T> {
                fn dispatch(
                    self: ::std::sync::Arc<Self>,
                    #current_name: #c::Current,
                    #params_name: #c::Encapsulation,
                ) -> #c::Dispatch {
                    #dispatch_body
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

    /// `dec.set_value_factories(..)` when the operation's values may hold
    /// class instances of this file.
    fn factories_stmt(&self, from: Option<ModuleId>, op: &Operation) -> TokenStream {
        if !self.file_has_classes() {
            return TokenStream::new();
        }
        let uses = op.params.iter().any(|p| self.may_hold_class(p.ty))
            || op.return_type.is_some_and(|t| self.may_hold_class(t))
            || !op.throws.is_empty();
        if !uses {
            return TokenStream::new();
        }
        self.value_factories_stmt(from)
    }

    /// `dec.set_value_factories(..)` with this file's (or set's) classes,
    /// when it defines any.
    pub(crate) fn value_factories_stmt(&self, from: Option<ModuleId>) -> TokenStream {
        if !self.file_has_classes() {
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

    /// Whether this file (or its set) has `user_exceptions()`.
    pub(crate) fn file_has_exceptions(&self) -> bool {
        if !self.registries {
            return false;
        }
        if let Some(has) = self.set_has_exceptions() {
            return has;
        }
        self.main_definitions()
            .any(|d| self.emits(d.id) && matches!(d.kind, DefKind::Exception(_)))
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

    pub(crate) fn may_hold_class(&self, ty: Type) -> bool {
        self.model.uses_classes(ty)
    }

    /// `["format:sliced"]` / `["format:compact"]` on the operation, else on
    /// the interface that declares it: the statement that sets the class
    /// format on encoder `enc` (none for `["format:default"]` or no
    /// metadata: the communicator's `Ice.Default.SlicedFormat` applies).
    fn set_class_format(&self, owner: DefId, op: &Operation, enc: TokenStream) -> TokenStream {
        let c = codegen_path();
        match self.class_format(owner, op) {
            Some(f) => quote!(#enc.set_class_format(#c::ClassFormat::#f);),
            None => TokenStream::new(),
        }
    }

    /// The class format of `set_class_format` as an
    /// `Option<ClassFormat>` expression (`None`: the communicator's).
    fn class_format_expr(&self, owner: DefId, op: &Operation) -> TokenStream {
        let c = codegen_path();
        match self.class_format(owner, op) {
            Some(f) => quote!(::core::option::Option::Some(#c::ClassFormat::#f)),
            None => quote!(::core::option::Option::None),
        }
    }

    /// The `ClassFormat` variant the metadata asks for, if any.
    fn class_format(&self, owner: DefId, op: &Operation) -> Option<Ident> {
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
        pick(&|m| op.has_metadata(m))
            .or_else(|| pick(&|m| interface.has_metadata(m)))
            .flatten()
    }
}

/// Whether metadata asks an optional class or proxy to tell unset from
/// null (`["rust:optional-null"]`: `Option<Option<..>>`).
pub(crate) fn keeps_null(metadata: &[String]) -> bool {
    metadata.iter().any(|m| m == "rust:optional-null")
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
