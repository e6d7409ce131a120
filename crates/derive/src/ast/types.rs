//! Rust types → Slice types: primitives, `String`, `Bytes`, `Vec`, maps,
//! `Option` (tagged optionals, class references and proxies) and other
//! Rust types named by path (stand-ins), with the synthetic sequences and
//! dictionaries Slice needs named.

use floe_idl::model::{DefKind, Dictionary, Origin, Sequence, Struct, Type};
use proc_macro2::Span;
use syn::spanned::Spanned;

use super::{class_stub, interface_stub, push_def, Builder};

impl Builder<'_> {
    /// The Slice name used to build synthetic type names (`IntSeq`).
    fn short_name(&self, ty: Type) -> String {
        match ty {
            Type::Bool => "Bool".into(),
            Type::Byte => "Byte".into(),
            Type::Short => "Short".into(),
            Type::Int => "Int".into(),
            Type::Long => "Long".into(),
            Type::Float => "Float".into(),
            Type::Double => "Double".into(),
            Type::String => "String".into(),
            Type::Object | Type::Value | Type::LocalObject => "Value".into(),
            Type::ObjectProxy => "ObjectProxy".into(),
            Type::Named(id) => self.model.def(id).name.clone(),
            Type::Proxy(id) => format!("{}Proxy", self.model.def(id).name),
        }
    }

    /// A synthetic definition in the item's module, reused if it exists.
    fn synthetic(&mut self, name: String, metadata: Vec<String>, kind: DefKind) -> Type {
        if let Some(d) = self
            .model
            .definitions
            .iter()
            .find(|d| d.module == self.module && d.name == name)
        {
            return Type::Named(d.id);
        }
        let scoped = format!("{}::{name}", self.model.module(self.module).scoped);
        let id = push_def(
            &mut self.model,
            self.module,
            name,
            scoped,
            metadata,
            Origin::Source,
            kind,
        );
        self.synthetic.push(id);
        Type::Named(id)
    }

    /// The single generic argument type of `seg` (`Vec<T>` → `T`).
    fn args<'a>(&mut self, seg: &'a syn::PathSegment, n: usize) -> Option<Vec<&'a syn::Type>> {
        let syn::PathArguments::AngleBracketed(a) = &seg.arguments else {
            self.cx.error(
                seg.span(),
                format!("`{}` needs {n} type argument(s)", seg.ident),
            );
            return None;
        };
        let tys: Vec<&syn::Type> = a
            .args
            .iter()
            .filter_map(|g| match g {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect();
        if tys.len() != n || tys.len() != a.args.len() {
            self.cx.error(
                a.span(),
                format!("`{}` needs {n} type argument(s)", seg.ident),
            );
            return None;
        }
        Some(tys)
    }

    /// Maps a Rust type to a Slice type, or records an error.
    pub(super) fn map_type(&mut self, ty: &syn::Type) -> Option<Type> {
        match ty {
            syn::Type::Reference(r) => {
                self.cx.error(
                    r.span(),
                    "references have no Slice equivalent; use an owned type (`String`, `Vec<T>`, `Bytes`)",
                );
                None
            }
            syn::Type::Paren(p) => self.map_type(&p.elem),
            syn::Type::Group(g) => self.map_type(&g.elem),
            syn::Type::Path(p) if p.qself.is_none() => self.map_path(&p.path, ty),
            syn::Type::Tuple(t) if t.elems.is_empty() => {
                self.cx
                    .error(t.span(), "`()` is only allowed as a return type");
                None
            }
            other => {
                self.cx
                    .error(other.span(), "this type has no Slice equivalent");
                None
            }
        }
    }

    fn map_path(&mut self, path: &syn::Path, ty: &syn::Type) -> Option<Type> {
        let last = path.segments.last()?;
        let name = last.ident.to_string();
        let single = path.segments.len() == 1 && path.leading_colon.is_none();
        let plain = last.arguments.is_none();
        if single && plain {
            let prim = match name.as_str() {
                "bool" => Some(Type::Bool),
                "u8" => Some(Type::Byte),
                "i16" => Some(Type::Short),
                "i32" => Some(Type::Int),
                "i64" => Some(Type::Long),
                "f32" => Some(Type::Float),
                "f64" => Some(Type::Double),
                "String" => Some(Type::String),
                _ => None,
            };
            if prim.is_some() {
                return prim;
            }
            let hint = match name.as_str() {
                "i8" => Some("`u8` (byte)"),
                "u16" => Some("`i16` (short) or `i32` (int)"),
                "u32" => Some("`i32` (int) or `i64` (long)"),
                "u64" | "usize" | "isize" | "i128" | "u128" => Some("`i64` (long)"),
                "char" | "str" => Some("`String` (string)"),
                _ => None,
            };
            if let Some(h) = hint {
                self.cx.error(
                    last.ident.span(),
                    format!("`{name}` has no Slice equivalent; use {h}"),
                );
                return None;
            }
            if name == "Self" || name == self.own_ident {
                return Some(Type::Named(self.own));
            }
        }
        match name.as_str() {
            // A `string` kept inline when short (floe::CompactString); the
            // same bytes on the wire as `String`.
            "CompactString" if plain => Some(Type::String),
            "Bytes" if plain => Some(self.synthetic(
                "ByteSeq".into(),
                vec![],
                DefKind::Sequence(Sequence {
                    element: Type::Byte,
                    element_metadata: vec![],
                }),
            )),
            "Vec" => {
                let args = self.args(last, 1)?;
                let elem = self.map_type(args[0])?;
                if elem == Type::Byte {
                    return Some(self.synthetic(
                        "ByteList".into(),
                        vec!["rust:type:Vec<u8>".into()],
                        DefKind::Sequence(Sequence {
                            element: Type::Byte,
                            element_metadata: vec![],
                        }),
                    ));
                }
                let n = format!("{}Seq", self.short_name(elem));
                Some(self.synthetic(
                    n,
                    vec![],
                    DefKind::Sequence(Sequence {
                        element: elem,
                        element_metadata: vec![],
                    }),
                ))
            }
            "BTreeMap" | "HashMap" => {
                let args = self.args(last, 2)?;
                let key = self.map_type(args[0]);
                let value = self.map_type(args[1]);
                let (key, value) = (key?, value?);
                if !self.legal_key(key) {
                    self.cx.error(
                        args[0].span(),
                        "dictionary keys must be integers, `bool`, `String`, enums or structs of those",
                    );
                    return None;
                }
                let hash = name == "HashMap";
                let n = format!(
                    "{}{}{}",
                    self.short_name(key),
                    self.short_name(value),
                    if hash { "HashDict" } else { "Dict" }
                );
                let md = if hash {
                    vec!["rust:type:HashMap".to_owned()]
                } else {
                    vec![]
                };
                Some(self.synthetic(
                    n,
                    md,
                    DefKind::Dictionary(Dictionary {
                        key,
                        key_metadata: vec![],
                        value,
                        value_metadata: vec![],
                    }),
                ))
            }
            "Option" => {
                let args = self.args(last, 1)?;
                self.map_reference(args[0])
            }
            "ClassRef" => {
                self.cx.error(
                    ty.span(),
                    "a class reference is `Option<ClassRef<T>>` (Slice class references can be null)",
                );
                None
            }
            "Result" => {
                self.cx.error(
                    ty.span(),
                    "`Result` is only allowed as the return type of an operation",
                );
                None
            }
            _ if name.ends_with("Prx") => {
                self.cx.error(
                    ty.span(),
                    "a proxy is `Option<XPrx>` (Slice proxies can be null)",
                );
                None
            }
            _ => {
                let p = self.user_path(path)?;
                let id = self.external(name, DefKind::Struct(Struct { members: vec![] }), p);
                Some(Type::Named(id))
            }
        }
    }

    /// `Option<X>` outside an optional: a class reference or a proxy.
    fn map_reference(&mut self, inner: &syn::Type) -> Option<Type> {
        if let syn::Type::Path(p) = inner {
            if p.qself.is_none() {
                if let Some(last) = p.path.segments.last() {
                    let name = last.ident.to_string();
                    if name == "ClassRef" {
                        let args = self.args(last, 1)?;
                        let syn::Type::Path(cp) = args[0] else {
                            self.cx.error(args[0].span(), "expected a class type");
                            return None;
                        };
                        let cname = cp.path.segments.last()?.ident.to_string();
                        if cname == "Self" || cname == self.own_ident {
                            return Some(Type::Named(self.own));
                        }
                        let path = self.user_path(&cp.path)?;
                        let id = self.external(cname, class_stub(), path);
                        return Some(Type::Named(id));
                    }
                    if matches!(name.as_str(), "ObjectPrx" | "ProxyData" | "Proxy")
                        && last.arguments.is_none()
                    {
                        return Some(Type::ObjectProxy);
                    }
                    if name == "ValuePtr" && last.arguments.is_none() {
                        return Some(Type::Value);
                    }
                    if let Some(iface) = name.strip_suffix("Prx") {
                        if iface == self.own_ident && p.path.segments.len() == 1 {
                            return Some(Type::Proxy(self.own));
                        }
                        if !iface.is_empty() {
                            let mut path = self.user_path(&p.path)?;
                            if let Some(l) = path.segments.last_mut() {
                                l.ident = syn::Ident::new(&format!("{iface}Slice"), l.ident.span());
                            }
                            let id = self.external(iface.to_owned(), interface_stub(), path);
                            return Some(Type::Proxy(id));
                        }
                    }
                }
            }
        }
        self.cx.error(
            inner.span(),
            "`Option<T>` is an optional value and needs `#[floe(tag = N)]`; without a tag only `Option<ClassRef<T>>` (class) and `Option<XPrx>` (proxy) are allowed",
        );
        None
    }

    fn legal_key(&self, ty: Type) -> bool {
        match ty {
            Type::Bool | Type::Byte | Type::Short | Type::Int | Type::Long | Type::String => true,
            Type::Named(id) => matches!(
                self.model.def(id).kind,
                DefKind::Struct(_) | DefKind::Enum(_)
            ),
            _ => false,
        }
    }

    /// `Option<T>` with a tag, or a plain type without one.
    pub(super) fn maybe_optional(
        &mut self,
        ty: &syn::Type,
        tag: Option<(i32, Span)>,
    ) -> Option<(Type, Option<i32>)> {
        match tag {
            None => Some((self.map_type(ty)?, None)),
            Some((tag, span)) => match option_inner(ty) {
                // An optional proxy or class reference is the same `Option`
                // as a required one: `None` is both "not set" and "null".
                Some(inner) if is_reference(inner) => Some((self.map_type(ty)?, Some(tag))),
                Some(inner) => Some((self.map_type(inner)?, Some(tag))),
                None => {
                    self.cx
                        .error(span, "a tagged (optional) value must have type `Option<T>`");
                    None
                }
            },
        }
    }
}

/// Whether `ty` names what `Option<ty>` makes a proxy or a class
/// reference: `XPrx`, `ObjectPrx`, `Proxy`, `ProxyData`, `ClassRef<T>` or
/// `ValuePtr`.
fn is_reference(ty: &syn::Type) -> bool {
    let syn::Type::Path(p) = ty else { return false };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    let name = last.ident.to_string();
    name.ends_with("Prx")
        || matches!(
            name.as_str(),
            "Proxy" | "ProxyData" | "ClassRef" | "ValuePtr"
        )
}

/// `T` of `Option<T>`.
pub fn option_inner(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
        return None;
    };
    match a.args.first() {
        Some(syn::GenericArgument::Type(t)) if a.args.len() == 1 => Some(t),
        _ => None,
    }
}
