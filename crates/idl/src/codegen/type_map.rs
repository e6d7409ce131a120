//! The Rust type of each Slice type as generated code names it, and the
//! type properties the generators ask about (nullable, ordered, may hold a
//! proxy, has a typed proxy).

use super::*;

impl Gen<'_> {
    /// The Rust type of a value of Slice type `ty` seen from module `from`.
    pub(crate) fn rust_type(&self, from: Option<ModuleId>, ty: Type) -> TokenStream {
        let c = codegen_path();
        match ty {
            Type::Bool => quote!(bool),
            Type::Byte => quote!(u8),
            Type::Short => quote!(i16),
            Type::Int => quote!(i32),
            Type::Long => quote!(i64),
            Type::Float => quote!(f32),
            Type::Double => quote!(f64),
            Type::String => quote!(::std::string::String),
            Type::Object | Type::Value | Type::LocalObject => {
                quote!(::core::option::Option<#c::ValuePtr>)
            }
            Type::ObjectProxy => self.untyped_proxy(),
            Type::Proxy(id) if self.has_typed_proxy(id) => {
                let p = self.path_to(from, id, "Prx");
                quote!(::core::option::Option<#p>)
            }
            Type::Proxy(_) => self.untyped_proxy(),
            Type::Named(id) => {
                let def = self.model.def(id);
                if let Some(special) = well_known(&def.scoped) {
                    return special;
                }
                match &def.kind {
                    DefKind::Sequence(s) => self.sequence_type(from, &def.metadata, s),
                    DefKind::Dictionary(d) => self.dictionary_type(from, &def.metadata, d),
                    DefKind::Class(_) => {
                        let p = self.path_to(from, id, "");
                        quote!(::core::option::Option<#c::ClassRef<#p>>)
                    }
                    DefKind::Interface(_) => quote!(::core::option::Option<#c::ValuePtr>),
                    _ => self.path_to(from, id, ""),
                }
            }
        }
    }

    /// `Option<Proxy>` (Ice's `ObjectPrx`), or `Option<ProxyData>` when
    /// no runtime code is generated or [`Settings::proxy_data`] asks.
    fn untyped_proxy(&self) -> TokenStream {
        let c = codegen_path();
        if self.settings.live_proxies() {
            quote!(::core::option::Option<#c::Proxy>)
        } else {
            quote!(::core::option::Option<#c::ProxyData>)
        }
    }

    /// Whether interface `id` (or class with operations) has a generated
    /// typed proxy (`IPrx`): it is defined (here or in an included file),
    /// not local, and interfaces are generated.
    pub(crate) fn has_typed_proxy(&self, id: DefId) -> bool {
        let def = self.model.def(id);
        self.settings.live_proxies() && !def.local && self.model.is_remote(id)
    }

    /// Whether values of `ty` may hold proxies (classes may: their
    /// members are not all known here), so that decoding them needs a
    /// decoder carrying the communicator.
    pub(crate) fn may_hold_proxy(&self, ty: Type) -> bool {
        self.may_hold_proxy_depth(ty, 0)
    }

    fn may_hold_proxy_depth(&self, ty: Type, depth: usize) -> bool {
        if depth > 64 {
            return true;
        }
        match ty {
            Type::ObjectProxy | Type::Proxy(_) | Type::Object | Type::Value => true,
            Type::Named(id) => {
                let def = self.model.def(id);
                if well_known(&def.scoped).is_some() {
                    return false;
                }
                match &def.kind {
                    DefKind::Class(_) | DefKind::Interface(_) => true,
                    DefKind::Struct(s) => s
                        .members
                        .iter()
                        .any(|m| self.may_hold_proxy_depth(m.ty, depth + 1)),
                    DefKind::Sequence(s) => self.may_hold_proxy_depth(s.element, depth + 1),
                    DefKind::Dictionary(d) => {
                        self.may_hold_proxy_depth(d.key, depth + 1)
                            || self.may_hold_proxy_depth(d.value, depth + 1)
                    }
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// Whether values of `ty` have a total order and a hash (so that a
    /// struct of them can derive `Eq`, `Hash`, `Ord` and be a key).
    pub(crate) fn is_ord(&self, ty: Type) -> bool {
        self.is_ord_depth(ty, 0)
    }

    fn is_ord_depth(&self, ty: Type, depth: usize) -> bool {
        if depth > 64 {
            return false;
        }
        match ty {
            Type::Bool | Type::Byte | Type::Short | Type::Int | Type::Long | Type::String => true,
            Type::Named(id) => {
                let def = self.model.def(id);
                if well_known(&def.scoped).is_some() {
                    return def.scoped == "::Ice::Identity";
                }
                match &def.kind {
                    DefKind::Enum(_) => true,
                    DefKind::Struct(s) => {
                        s.members.iter().all(|m| self.is_ord_depth(m.ty, depth + 1))
                    }
                    DefKind::Sequence(s) => self.is_ord_depth(s.element, depth + 1),
                    DefKind::Dictionary(d) => {
                        !has_rust_type(&def.metadata, "HashMap")
                            && self.is_ord_depth(d.key, depth + 1)
                            && self.is_ord_depth(d.value, depth + 1)
                    }
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// Whether values of `ty` are already an `Option` (proxies and class
    /// references, which can be null): an optional one is that same
    /// `Option`, `None` standing for both "not set" and "null".
    pub(crate) fn is_nullable(&self, ty: Type) -> bool {
        match ty {
            Type::Object | Type::Value | Type::LocalObject | Type::ObjectProxy | Type::Proxy(_) => {
                true
            }
            Type::Named(id) => {
                let def = self.model.def(id);
                well_known(&def.scoped).is_none()
                    && matches!(def.kind, DefKind::Class(_) | DefKind::Interface(_))
            }
            _ => false,
        }
    }
}
