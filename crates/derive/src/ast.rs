//! syn → floe-idl model (`from_syn`): the Rust front-end. Builds the same
//! [`Model`] the Slice front-end builds, so the shared generator produces
//! the same code and the same bytes.
//!
//! A macro sees one item, so the model holds that definition plus:
//! - *synthetic* sequences and dictionaries for `Vec<T>`, `Bytes` and maps
//!   (Slice needs them named: `IntSeq`, `StringPointDict`);
//! - *external* stand-ins (metadata `floe:external`) for other Rust types
//!   named by path (derived structs, enums, exceptions, classes, proxies,
//!   base interfaces). Their real type ids come from their own
//!   `SliceType` impls when Slice text is exported. Base interfaces are
//!   stand-ins with their real operations and type ids, read from the
//!   descriptions the bases' own expansions pass on (see `inherit`).
//!
//! Errors are collected ([`Ctxt`]) so one expansion reports all of them.

use floe_idl::codegen::rust_first::EXTERNAL;
use floe_idl::model::{
    Class, DataMember, DefId, DefKind, Definition, Dictionary, Enum, Enumerator, Exception, File,
    Interface, Model, Module, ModuleId, Operation, OperationMode, Param, Sequence, Span as IdlSpan,
    Struct, Type,
};
use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;

use crate::attr;
use crate::inherit::BaseEntry;
use crate::valid;

/// Error collector: every error is kept and reported together.
#[derive(Default)]
pub struct Ctxt {
    errors: Option<syn::Error>,
}

impl Ctxt {
    /// Records an error at `span`.
    pub fn error(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.push(syn::Error::new(span, msg));
    }

    /// Records `err`.
    pub fn push(&mut self, err: syn::Error) {
        match &mut self.errors {
            Some(e) => e.combine(err),
            None => self.errors = Some(err),
        }
    }

    /// `Err` with every error, if any.
    pub fn check(self) -> syn::Result<()> {
        match self.errors {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// What a data derive is for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum DataKind {
    /// `#[derive(floe::Struct)]`.
    Struct,
    /// `#[derive(floe::Enum)]`.
    Enum,
    /// `#[derive(floe::Exception)]`.
    Exception,
    /// `#[derive(floe::Class)]`.
    Class,
}

impl DataKind {
    fn keyword(self) -> &'static str {
        match self {
            DataKind::Struct => "struct",
            DataKind::Enum => "enum",
            DataKind::Exception => "exception",
            DataKind::Class => "class",
        }
    }

    fn derive_name(self) -> &'static str {
        match self {
            DataKind::Struct => "Struct",
            DataKind::Enum => "Enum",
            DataKind::Exception => "Exception",
            DataKind::Class => "Class",
        }
    }
}

/// A Rust type outside the macro input that the definition uses.
pub struct Dep {
    /// Its stand-in in the model.
    pub def: DefId,
    /// The Rust type implementing `SliceType` for it.
    pub rust: syn::Path,
}

/// The model built for one item.
pub struct Built {
    /// The model.
    pub model: Model,
    /// The item's own definition.
    pub id: DefId,
    /// Synthetic sequences and dictionaries, dependencies first.
    pub synthetic: Vec<DefId>,
    /// External types, in first-use order.
    pub deps: Vec<Dep>,
}

/// Model under construction.
struct Builder<'c> {
    cx: &'c mut Ctxt,
    model: Model,
    module: ModuleId,
    own: DefId,
    own_ident: String,
    synthetic: Vec<DefId>,
    deps: Vec<Dep>,
    /// While reading a base interface's operations: the path (from the
    /// item's module) to the base's `__floe_iface_<Name>` module, which
    /// re-exports what the base's module sees, and the base's Slice
    /// module (for the type ids of the types it names).
    base_scope: Option<(syn::Path, String)>,
}

/// Converts a Rust name (`signal_count`, `getHttp`) to a Slice name
/// (`signalCount`).
pub fn to_lower_camel(rust: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for (i, c) in rust.chars().enumerate() {
        if c == '_' && i > 0 {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The Rust identifier text without `r#`.
fn unraw(ident: &syn::Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

fn new_model(module_path: &str, span: Span, cx: &mut Ctxt) -> (Model, ModuleId) {
    let mut model = Model {
        files: vec![File {
            path: "<rust>".into(),
            is_main: true,
            metadata: vec![],
        }],
        ..Model::default()
    };
    let segments: Vec<&str> = module_path.trim_start_matches("::").split("::").collect();
    let mut parent: Option<ModuleId> = None;
    let mut scoped = String::new();
    for seg in segments {
        valid::slice_identifier(cx, seg, span, "module");
        scoped = format!("{scoped}::{seg}");
        let id = ModuleId(model.modules.len() as u32);
        model.modules.push(Module {
            name: seg.to_owned(),
            scoped: scoped.clone(),
            parent,
            metadata: vec![],
            doc: None,
            span: IdlSpan::default(),
            openings: vec![],
            contents: vec![],
        });
        match parent {
            Some(p) => model.modules[p.0 as usize]
                .contents
                .push(floe_idl::model::Contained::Module(id)),
            None => model.roots.push(id),
        }
        parent = Some(id);
    }
    // `parent` is set: `split` yields at least one segment.
    (model, parent.unwrap_or(ModuleId(0)))
}

/// Reads the required `#[floe(module = "...")]`.
fn module_of(cx: &mut Ctxt, attrs: &attr::Attrs, item_span: Span) -> String {
    match &attrs.module {
        Some((m, span)) => {
            if m.trim_start_matches("::").is_empty() {
                cx.error(*span, "the module must not be empty");
                "Floe".to_owned()
            } else {
                m.clone()
            }
        }
        None => {
            cx.error(
                item_span,
                "missing `#[floe(module = \"...\")]`: the Slice module gives the type id (`::Module::Name`)",
            );
            "Floe".to_owned()
        }
    }
}

impl<'c> Builder<'c> {
    fn new(cx: &'c mut Ctxt, module: &str, span: Span, ident: &syn::Ident) -> Self {
        let (mut model, module_id) = new_model(module, span, cx);
        let name = unraw(ident);
        valid::slice_identifier(cx, &name, ident.span(), "type");
        valid::rust_name_round_trip(cx, &name, ident, valid::NameKind::Type);
        let scoped = format!("{}::{name}", model.module(module_id).scoped);
        let own = push_def(
            &mut model,
            module_id,
            name,
            scoped,
            vec![],
            DefKind::Struct(Struct { members: vec![] }),
        );
        Builder {
            cx,
            model,
            module: module_id,
            own,
            own_ident: ident.to_string(),
            synthetic: vec![],
            deps: vec![],
            base_scope: None,
        }
    }

    fn finish(self) -> Built {
        Built {
            model: self.model,
            id: self.own,
            synthetic: self.synthetic,
            deps: self.deps,
        }
    }

    fn set_own(&mut self, kind: DefKind, doc: Option<String>) {
        let d = &mut self.model.definitions[self.own.0 as usize];
        d.kind = kind;
        d.doc = doc.map(|t| floe_idl::model::Doc::parse(&t));
    }

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
        let id = push_def(&mut self.model, self.module, name, scoped, metadata, kind);
        self.synthetic.push(id);
        Type::Named(id)
    }

    /// An external stand-in for Rust path `path` (kind `kind`), named
    /// `name`; `rust` implements `SliceType` for it.
    fn external(&mut self, name: String, kind: DefKind, rust: syn::Path) -> DefId {
        // In a base interface's operations, paths are relative to the
        // base's module: reach them through its `__floe_iface_` module;
        // their type ids are in the base's Slice module.
        let written = rust.clone();
        let rust = match &self.base_scope {
            Some((prefix, _)) => {
                let mut p = prefix.clone();
                p.segments.extend(rust.segments);
                p
            }
            None => rust,
        };
        let key = rust.to_token_stream().to_string();
        if let Some(dep) = self
            .deps
            .iter()
            .find(|d| d.rust.to_token_stream().to_string() == key)
        {
            return dep.def;
        }
        // The stand-in sits in a model module per Rust path segment, so
        // the generator's relative paths name the type as written.
        let mut module = self.module;
        for seg in rust
            .segments
            .iter()
            .take(rust.segments.len().saturating_sub(1))
        {
            let seg = seg.ident.to_string();
            let existing = self
                .model
                .module(module)
                .contents
                .iter()
                .find_map(|c| match c {
                    floe_idl::model::Contained::Module(m) if self.model.module(*m).name == seg => {
                        Some(*m)
                    }
                    _ => None,
                });
            module = match existing {
                Some(m) => m,
                None => {
                    let id = ModuleId(self.model.modules.len() as u32);
                    let scoped = format!("{}::{seg}", self.model.module(module).scoped);
                    self.model.modules.push(Module {
                        name: seg,
                        scoped,
                        parent: Some(module),
                        metadata: vec![],
                        doc: None,
                        span: IdlSpan::default(),
                        openings: vec![],
                        contents: vec![],
                    });
                    self.model.modules[module.0 as usize]
                        .contents
                        .push(floe_idl::model::Contained::Module(id));
                    id
                }
            };
        }
        let scoped = match &self.base_scope {
            Some((_, slice_module)) => {
                let mut s = slice_module.clone();
                for seg in written
                    .segments
                    .iter()
                    .take(written.segments.len().saturating_sub(1))
                {
                    s = format!("{s}::{}", seg.ident);
                }
                format!("{s}::{name}")
            }
            None => format!("{}::{name}", self.model.module(module).scoped),
        };
        let id = push_def(
            &mut self.model,
            module,
            name,
            scoped,
            vec![EXTERNAL.to_owned()],
            kind,
        );
        self.deps.push(Dep { def: id, rust });
        id
    }

    /// Checks that a path to another type is usable and returns it.
    fn user_path(&mut self, path: &syn::Path) -> Option<syn::Path> {
        if path.leading_colon.is_some() {
            self.cx.error(
                path.span(),
                "absolute paths are not supported here; import the type with `use` and name it",
            );
            return None;
        }
        for seg in &path.segments {
            if !seg.arguments.is_none() {
                self.cx.error(
                    seg.arguments.span(),
                    "generic types have no Slice equivalent",
                );
                return None;
            }
            let s = seg.ident.to_string();
            if matches!(s.as_str(), "crate" | "super" | "self") {
                self.cx.error(
                    seg.ident.span(),
                    format!("`{s}::` paths are not supported here; import the type with `use` and name it"),
                );
                return None;
            }
        }
        Some(path.clone())
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
    fn map_type(&mut self, ty: &syn::Type) -> Option<Type> {
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

    /// A data member (struct, class or exception field).
    fn member(&mut self, field: &syn::Field, tags_allowed: bool) -> Option<DataMember> {
        let allowed: &[&str] = if tags_allowed { &[attr::TAG] } else { &[] };
        let place = if tags_allowed {
            "a data member"
        } else {
            "a struct member (Slice structs have no optional members; use a class)"
        };
        let a = match attr::parse(&field.attrs, allowed, place) {
            Ok(a) => a,
            Err(e) => {
                self.cx.push(e);
                return None;
            }
        };
        let ident = field.ident.as_ref()?;
        let name = to_lower_camel(&unraw(ident));
        valid::slice_identifier(self.cx, &name, ident.span(), "member");
        valid::rust_name_round_trip(self.cx, &name, ident, valid::NameKind::Field);
        let (ty, tag) = self.maybe_optional(&field.ty, a.tag)?;
        Some(DataMember {
            name,
            ty,
            tag,
            default: None,
            metadata: vec![],
            doc: attr::doc(&field.attrs).map(|t| floe_idl::model::Doc::parse(&t)),
            span: IdlSpan::default(),
        })
    }

    /// The `#[floe(base)] base: Base` field of an exception or class.
    fn base_field(&mut self, field: &syn::Field, kind: DataKind) -> Option<DefId> {
        if let Err(e) = attr::parse(&field.attrs, &[attr::BASE], "the base field") {
            self.cx.push(e);
            return None;
        }
        let ident = field.ident.as_ref()?;
        if ident != "base" {
            self.cx.error(
                ident.span(),
                format!("the base {} field must be named `base`", kind.keyword()),
            );
            return None;
        }
        let syn::Type::Path(p) = &field.ty else {
            self.cx.error(
                field.ty.span(),
                format!("expected a `#[derive(floe::{})]` type", kind.derive_name()),
            );
            return None;
        };
        let name = p.path.segments.last()?.ident.to_string();
        if p.qself.is_some() || name == self.own_ident || name == "Self" {
            self.cx.error(
                field.ty.span(),
                format!(
                    "expected another `#[derive(floe::{})]` type",
                    kind.derive_name()
                ),
            );
            return None;
        }
        let path = self.user_path(&p.path)?;
        let stub = if kind == DataKind::Exception {
            DefKind::Exception(Exception {
                base: None,
                members: vec![],
            })
        } else {
            class_stub()
        };
        Some(self.external(name, stub, path))
    }

    /// `Option<T>` with a tag, or a plain type without one.
    fn maybe_optional(
        &mut self,
        ty: &syn::Type,
        tag: Option<(i32, Span)>,
    ) -> Option<(Type, Option<i32>)> {
        match tag {
            None => Some((self.map_type(ty)?, None)),
            Some((tag, span)) => match option_inner(ty) {
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

fn class_stub() -> DefKind {
    DefKind::Class(Class {
        defined: true,
        base: None,
        implements: vec![],
        compact_id: None,
        members: vec![],
        operations: vec![],
    })
}

fn interface_stub() -> DefKind {
    DefKind::Interface(Interface {
        defined: true,
        bases: vec![],
        operations: vec![],
    })
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

fn push_def(
    model: &mut Model,
    module: ModuleId,
    name: String,
    scoped: String,
    metadata: Vec<String>,
    kind: DefKind,
) -> DefId {
    let id = DefId(model.definitions.len() as u32);
    model.definitions.push(Definition {
        id,
        name,
        scoped,
        module,
        metadata,
        doc: None,
        local: false,
        span: IdlSpan::default(),
        kind,
    });
    model.modules[module.0 as usize]
        .contents
        .push(floe_idl::model::Contained::Definition(id));
    id
}

/// Builds the model for a data derive.
pub fn from_derive(input: &syn::DeriveInput, kind: DataKind) -> syn::Result<Built> {
    let mut cx = Ctxt::default();
    let mut allowed = vec![attr::MODULE];
    if kind == DataKind::Class {
        allowed.push(attr::COMPACT_ID);
    }
    let place = format!("a {}", kind.keyword());
    let attrs = match attr::parse(&input.attrs, &allowed, &place) {
        Ok(a) => a,
        Err(e) => {
            cx.push(e);
            // Don't also report the module as missing.
            attr::Attrs {
                module: Some(("Floe".to_owned(), input.ident.span())),
                ..attr::Attrs::default()
            }
        }
    };
    if !input.generics.params.is_empty() {
        cx.error(
            input.generics.span(),
            format!("a Slice {} cannot be generic", kind.keyword()),
        );
    }
    let module = module_of(&mut cx, &attrs, input.ident.span());
    let mut b = Builder::new(&mut cx, &module, input.ident.span(), &input.ident);
    let doc = attr::doc(&input.attrs);
    match (&input.data, kind) {
        (syn::Data::Enum(e), DataKind::Enum) => {
            let en = enumerators(b.cx, e, &input.ident);
            b.set_own(DefKind::Enum(en), doc);
        }
        (syn::Data::Struct(s), DataKind::Struct | DataKind::Exception | DataKind::Class) => {
            let fields = match &s.fields {
                syn::Fields::Named(f) => f.named.iter().collect::<Vec<_>>(),
                syn::Fields::Unit if kind != DataKind::Struct => vec![],
                other => {
                    b.cx.error(
                        other.span(),
                        format!("a Slice {} needs named fields", kind.keyword()),
                    );
                    vec![]
                }
            };
            if kind == DataKind::Struct
                && fields.is_empty()
                && matches!(s.fields, syn::Fields::Named(_))
            {
                b.cx.error(
                    input.ident.span(),
                    "a Slice struct must have at least one member",
                );
            }
            let tags = kind != DataKind::Struct;
            let mut base = None;
            let mut members: Vec<DataMember> = Vec::new();
            for f in &fields {
                let is_base = attr::parse(&f.attrs, &[attr::TAG, attr::BASE], "")
                    .ok()
                    .and_then(|a| a.base);
                match is_base {
                    Some(span) if kind == DataKind::Struct => {
                        b.cx.error(
                            span,
                            "a Slice struct has no base; only exceptions and classes do",
                        );
                    }
                    Some(span) => {
                        if base.is_some() {
                            b.cx.error(span, "only one field can be the base");
                        } else {
                            base = b.base_field(f, kind);
                        }
                    }
                    None => members.extend(b.member(f, tags)),
                }
            }
            let tag_spans: Vec<(i32, Span)> = fields
                .iter()
                .filter_map(|f| {
                    attr::parse(&f.attrs, &[attr::TAG], "")
                        .ok()
                        .and_then(|a| a.tag)
                })
                .collect();
            valid::unique_tags(b.cx, &tag_spans, "member");
            let def = match kind {
                DataKind::Struct => DefKind::Struct(Struct { members }),
                DataKind::Exception => DefKind::Exception(Exception { base, members }),
                _ => DefKind::Class(Class {
                    defined: true,
                    base,
                    implements: vec![],
                    compact_id: attrs.compact_id.map(|(v, _)| v),
                    members,
                    operations: vec![],
                }),
            };
            b.set_own(def, doc);
        }
        (_, k) => {
            let what = if k == DataKind::Enum {
                "`#[derive(floe::Enum)]` needs an enum"
            } else {
                "this derive needs a struct with named fields"
            };
            b.cx.error(input.ident.span(), what);
        }
    }
    let built = b.finish();
    cx.check()?;
    Ok(built)
}

fn enumerators(cx: &mut Ctxt, e: &syn::DataEnum, ident: &syn::Ident) -> Enum {
    let mut out: Vec<Enumerator> = Vec::new();
    let mut next: i64 = 0;
    let mut explicit = false;
    let mut seen: Vec<(i64, String)> = Vec::new();
    if e.variants.is_empty() {
        cx.error(
            ident.span(),
            "a Slice enum must have at least one enumerator",
        );
    }
    for v in &e.variants {
        if !matches!(v.fields, syn::Fields::Unit) {
            cx.error(v.fields.span(), "Slice enumerators cannot carry data");
        }
        if let Err(e) = attr::parse(&v.attrs, &[], "an enumerator") {
            cx.push(e);
        }
        let value = match &v.discriminant {
            Some((_, expr)) => {
                explicit = true;
                match literal_int(expr) {
                    Some(n) => n,
                    None => {
                        cx.error(expr.span(), "enumerator values must be integer literals");
                        next
                    }
                }
            }
            None => next,
        };
        if !(0..=i32::MAX as i64).contains(&value) {
            let span = v
                .discriminant
                .as_ref()
                .map_or(v.ident.span(), |(_, e)| e.span());
            cx.error(span, "Slice enumerator values must be from 0 to 2147483647");
        }
        if let Some((_, other)) = seen.iter().find(|(n, _)| *n == value) {
            cx.error(
                v.ident.span(),
                format!("duplicate enumerator value {value} (also used by `{other}`)"),
            );
        }
        seen.push((value, v.ident.to_string()));
        let rust = unraw(&v.ident);
        let mut name = rust.clone();
        if let Some(first) = name.get(..1) {
            name = format!("{}{}", first.to_ascii_lowercase(), &rust[1..]);
        }
        valid::slice_identifier(cx, &name, v.ident.span(), "enumerator");
        valid::rust_name_round_trip(cx, &name, &v.ident, valid::NameKind::Type);
        out.push(Enumerator {
            name,
            value: value.clamp(0, i32::MAX as i64) as i32,
            metadata: vec![],
            doc: attr::doc(&v.attrs).map(|t| floe_idl::model::Doc::parse(&t)),
            span: IdlSpan::default(),
        });
        next = value.saturating_add(1);
    }
    let max_value = out.iter().map(|e| e.value).max().unwrap_or(0);
    Enum {
        enumerators: out,
        max_value,
        explicit_values: explicit,
    }
}

fn literal_int(expr: &syn::Expr) -> Option<i64> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => literal_int(expr).map(|v| -v),
        syn::Expr::Group(g) => literal_int(&g.expr),
        syn::Expr::Paren(p) => literal_int(&p.expr),
        _ => None,
    }
}

/// Builds the model for `#[floe::interface]`.
pub fn from_trait(
    args: attr::Attrs,
    args_span: Span,
    item: &syn::ItemTrait,
    entries: &[BaseEntry],
) -> syn::Result<Built> {
    let mut cx = Ctxt::default();
    let trait_attrs = match attr::parse(&item.attrs, &[attr::MODULE], "an interface") {
        Ok(a) => a,
        Err(e) => {
            cx.push(e);
            // Don't also report the module as missing.
            attr::Attrs {
                module: args
                    .module
                    .is_none()
                    .then(|| ("Floe".to_owned(), item.ident.span())),
                ..attr::Attrs::default()
            }
        }
    };
    let module_attr = if args.module.is_some() {
        if let Some((_, s)) = trait_attrs.module {
            cx.error(s, "duplicate floe attribute `module`");
        }
        args
    } else {
        trait_attrs
    };
    let _ = args_span;
    if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
        cx.error(item.generics.span(), "a Slice interface cannot be generic");
    }
    if let Some(u) = &item.unsafety {
        cx.error(u.span(), "a Slice interface cannot be an unsafe trait");
    }
    let module = module_of(&mut cx, &module_attr, item.ident.span());
    let mut b = Builder::new(&mut cx, &module, item.ident.span(), &item.ident);
    let mut direct: Vec<(syn::Path, Span)> = Vec::new();
    for bound in &item.supertraits {
        match bound {
            syn::TypeParamBound::Trait(t) => {
                let name = t
                    .path
                    .segments
                    .last()
                    .map(|s| s.ident.to_string())
                    .unwrap_or_default();
                if matches!(name.as_str(), "Send" | "Sync") {
                    continue;
                }
                let Some(path) = b.user_path(&t.path) else {
                    continue;
                };
                let key = path.to_token_stream().to_string();
                if direct
                    .iter()
                    .any(|(p, _)| p.to_token_stream().to_string() == key)
                {
                    b.cx.error(t.span(), "duplicate base interface");
                } else {
                    direct.push((path, t.span()));
                }
            }
            syn::TypeParamBound::Lifetime(l) if l.ident == "static" => {}
            other => b.cx.error(
                other.span(),
                "only base interfaces (and `Send`, `Sync`, `'static`) are allowed as supertraits",
            ),
        }
    }
    let mut operations: Vec<Operation> = Vec::new();
    let mut op_spans: Vec<(String, Span)> = Vec::new();
    for ti in &item.items {
        match ti {
            syn::TraitItem::Fn(f) => {
                if let Some(op) = operation(&mut b, f) {
                    if let Some((_, _)) = op_spans
                        .iter()
                        .find(|(n, _)| n.eq_ignore_ascii_case(&op.name))
                    {
                        b.cx.error(
                            f.sig.ident.span(),
                            format!(
                                "duplicate operation `{}` (Slice names are case-insensitive)",
                                op.name
                            ),
                        );
                    }
                    op_spans.push((op.name.clone(), f.sig.ident.span()));
                    operations.push(op);
                }
            }
            other => b.cx.error(
                other.span(),
                "a Slice interface holds only `async fn` operations",
            ),
        }
    }
    // Synthetic types of the base operations are the bases' own (their
    // Slice text comes with theirs).
    let own_synthetic = b.synthetic.len();
    let by_id = base_interfaces(&mut b, entries);
    let mut bases = Vec::new();
    for (path, span) in &direct {
        let key = path.to_token_stream().to_string();
        match entries
            .iter()
            .position(|e| e.path.to_token_stream().to_string() == key)
        {
            Some(i) => bases.push(by_id[i]),
            // Without entries the chain did not run: another supertrait
            // has an error of its own.
            None if entries.is_empty() => {}
            None => {
                b.cx.error(*span, "this supertrait is not a `#[floe::interface]` trait")
            }
        }
    }
    let mut all = bases.clone();
    for &x in &bases {
        for y in b.model.all_bases(x) {
            if !all.contains(&y) {
                all.push(y);
            }
        }
    }
    for &base in &all {
        let DefKind::Interface(i) = &b.model.def(base).kind else {
            continue;
        };
        for op in &i.operations {
            if let Some((_, span)) = op_spans
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(&op.name))
            {
                b.cx.error(
                    *span,
                    format!(
                        "operation `{}` is already defined by base interface `{}`",
                        op.name,
                        b.model.def(base).scoped
                    ),
                );
            }
        }
    }
    b.synthetic.truncate(own_synthetic);
    b.set_own(
        DefKind::Interface(Interface {
            defined: true,
            bases,
            operations,
        }),
        attr::doc(&item.attrs),
    );
    let built = b.finish();
    cx.check()?;
    Ok(built)
}

/// Stand-ins for every base interface (direct or not), with their
/// operations, bases and real type ids; returns them in `entries` order.
fn base_interfaces(b: &mut Builder<'_>, entries: &[BaseEntry]) -> Vec<DefId> {
    let ids: Vec<DefId> = entries
        .iter()
        .map(|e| {
            let mut marker = e.path.clone();
            if let Some(l) = marker.segments.last_mut() {
                l.ident = syn::Ident::new(&format!("{}Slice", e.name), l.ident.span());
            }
            b.external(e.name.clone(), interface_stub(), marker)
        })
        .collect();
    for (e, &id) in entries.iter().zip(&ids) {
        let bases: Vec<DefId> = e
            .bases
            .iter()
            .filter_map(|t| entries.iter().position(|x| &x.type_id == t).map(|i| ids[i]))
            .collect();
        let (own, own_ident) = (b.own, std::mem::take(&mut b.own_ident));
        b.own = id;
        b.own_ident = e.name.clone();
        b.base_scope = Some((e.hidden_module(), e.module.clone()));
        let mut operations = Vec::new();
        for ti in &e.items {
            if let syn::TraitItem::Fn(f) = ti {
                if let Some(op) = operation(b, f) {
                    operations.push(op);
                }
            }
        }
        b.base_scope = None;
        b.own = own;
        b.own_ident = own_ident;
        let def = &mut b.model.definitions[id.0 as usize];
        def.scoped = e.type_id.clone();
        def.kind = DefKind::Interface(Interface {
            defined: true,
            bases,
            operations,
        });
    }
    ids
}

fn operation(b: &mut Builder<'_>, f: &syn::TraitItemFn) -> Option<Operation> {
    let sig = &f.sig;
    let a = match attr::parse(
        &f.attrs,
        &[attr::NAME, attr::IDEMPOTENT, attr::TAG],
        "an operation",
    ) {
        Ok(a) => a,
        Err(e) => {
            b.cx.push(e);
            attr::Attrs::default()
        }
    };
    let mut ok = true;
    if sig.asyncness.is_none() {
        b.cx.error(sig.fn_token.span(), "operations must be `async fn`");
        ok = false;
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        b.cx.error(sig.generics.span(), "operations cannot be generic");
        ok = false;
    }
    if let Some(c) = &sig.constness {
        b.cx.error(c.span(), "operations cannot be `const`");
    }
    if let Some(u) = &sig.unsafety {
        b.cx.error(u.span(), "operations cannot be `unsafe`");
    }
    if let Some(v) = &sig.variadic {
        b.cx.error(v.span(), "operations cannot be variadic");
    }
    if let Some(body) = &f.default {
        b.cx.error(
            body.span(),
            "operations have no default body (the servant implements them)",
        );
    }
    let name = match &a.name {
        Some((n, span)) => {
            valid::slice_identifier(b.cx, n, *span, "operation");
            valid::operation_name(b.cx, n, &sig.ident, *span);
            n.clone()
        }
        None => {
            let n = to_lower_camel(&unraw(&sig.ident));
            valid::slice_identifier(b.cx, &n, sig.ident.span(), "operation");
            valid::rust_name_round_trip(b.cx, &n, &sig.ident, valid::NameKind::Field);
            n
        }
    };
    let mut inputs = sig.inputs.iter();
    match inputs.next() {
        Some(syn::FnArg::Receiver(r)) if r.reference.is_some() && r.mutability.is_none() => {}
        Some(other @ syn::FnArg::Receiver(_)) => {
            b.cx.error(other.span(), "operations take `&self`");
            ok = false;
        }
        _ => {
            b.cx.error(
                sig.ident.span(),
                "operations take `&self` as their first parameter",
            );
            ok = false;
        }
    }
    let mut params = Vec::new();
    let mut in_tags = Vec::new();
    for arg in inputs {
        let syn::FnArg::Typed(pt) = arg else { continue };
        let pa = match attr::parse(&pt.attrs, &[attr::TAG], "a parameter") {
            Ok(a) => a,
            Err(e) => {
                b.cx.push(e);
                continue;
            }
        };
        let syn::Pat::Ident(pi) = &*pt.pat else {
            b.cx.error(pt.pat.span(), "parameters must be plain names");
            continue;
        };
        if pi.by_ref.is_some() || pi.subpat.is_some() {
            b.cx.error(pt.pat.span(), "parameters must be plain names");
            continue;
        }
        let pname = to_lower_camel(&unraw(&pi.ident));
        valid::slice_identifier(b.cx, &pname, pi.ident.span(), "parameter");
        valid::rust_name_round_trip(b.cx, &pname, &pi.ident, valid::NameKind::Field);
        if let Some(t) = pa.tag {
            in_tags.push(t);
        }
        let Some((ty, tag)) = b.maybe_optional(&pt.ty, pa.tag) else {
            continue;
        };
        params.push(Param {
            name: pname,
            ty,
            out: false,
            tag,
            metadata: vec![],
            span: IdlSpan::default(),
        });
    }
    valid::unique_tags(b.cx, &in_tags, "parameter");
    let mut throws = Vec::new();
    let (return_type, return_tag) = match &sig.output {
        syn::ReturnType::Default => {
            if let Some((_, span)) = a.tag {
                b.cx.error(span, "`tag` on an operation makes its return value optional; this operation returns nothing");
            }
            (None, None)
        }
        syn::ReturnType::Type(_, ty) => {
            let ok_ty = match result_parts(ty) {
                Some((ok_ty, err_ty)) => {
                    if let Some(e) = exception_path(b, err_ty) {
                        throws.push(e);
                    }
                    ok_ty
                }
                None => ty,
            };
            if is_unit(ok_ty) {
                if let Some((_, span)) = a.tag {
                    b.cx.error(span, "`tag` on an operation makes its return value optional; this operation returns nothing");
                }
                (None, None)
            } else if let syn::Type::Tuple(t) = ok_ty {
                out_params(b, t, a.tag, &mut params)
            } else {
                match b.maybe_optional(ok_ty, a.tag) {
                    Some((t, tag)) => (Some(t), tag),
                    None => (None, None),
                }
            }
        }
    };
    if !ok {
        return None;
    }
    Some(Operation {
        name,
        mode: if a.idempotent.is_some() {
            OperationMode::Idempotent
        } else {
            OperationMode::Normal
        },
        return_type,
        return_tag,
        params,
        throws,
        metadata: vec![],
        doc: attr::doc(&f.attrs).map(|t| floe_idl::model::Doc::parse(&t)),
        span: IdlSpan::default(),
    })
}

/// A tuple result `(R, A, B)`: the return value `R` (`()` for none, with
/// the operation's `tag` if optional) and the out-parameters `out1: A`,
/// `out2: B` (pushed to `params`). This is the shape slice2rs gives
/// `R op(..., out A out1, out B out2)`, so both are wire-identical.
fn out_params(
    b: &mut Builder<'_>,
    t: &syn::TypeTuple,
    tag: Option<(i32, Span)>,
    params: &mut Vec<Param>,
) -> (Option<Type>, Option<i32>) {
    if t.elems.len() < 2 {
        b.cx.error(
            t.span(),
            "a tuple result needs at least two elements: the return value (or `()`) and the out-parameters",
        );
        return (None, None);
    }
    let mut elems = t.elems.iter();
    let first = elems.next();
    let ret = match first {
        Some(f) if is_unit(f) => {
            if let Some((_, span)) = tag {
                b.cx.error(span, "`tag` on an operation makes its return value optional; this operation returns `()` first");
            }
            (None, None)
        }
        Some(f) => match b.maybe_optional(f, tag) {
            Some((ty, tag)) => (Some(ty), tag),
            None => (None, None),
        },
        None => (None, None),
    };
    for (i, e) in elems.enumerate() {
        let name = format!("out{}", i + 1);
        if params.iter().any(|p| p.name.eq_ignore_ascii_case(&name)) {
            b.cx.error(
                e.span(),
                format!("the out-parameter is named `{name}` in Slice, like a parameter of this operation; rename the parameter"),
            );
        }
        if let Some(ty) = b.map_type(e) {
            params.push(Param {
                name,
                ty,
                out: true,
                tag: None,
                metadata: vec![],
                span: IdlSpan::default(),
            });
        }
    }
    ret
}

fn is_unit(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Tuple(t) if t.elems.is_empty())
}

/// `(T, E)` of `Result<T, E>`.
fn result_parts(ty: &syn::Type) -> Option<(&syn::Type, &syn::Type)> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
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
    match tys.as_slice() {
        [t, e] => Some((t, e)),
        _ => None,
    }
}

/// The user exception type `E` of `Result<T, E>`.
fn exception_path(b: &mut Builder<'_>, ty: &syn::Type) -> Option<DefId> {
    let syn::Type::Path(p) = ty else {
        b.cx.error(
            ty.span(),
            "the error type must be a `#[derive(floe::Exception)]` type",
        );
        return None;
    };
    let name = p.path.segments.last()?.ident.to_string();
    let path = b.user_path(&p.path)?;
    Some(b.external(
        name,
        DefKind::Exception(Exception {
            base: None,
            members: vec![],
        }),
        path,
    ))
}
