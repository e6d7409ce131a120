//! syn → floe-idl model (`from_syn`): the Rust front-end. Builds the same
//! [`Model`] the Slice front-end builds, so the shared generator produces
//! the same code and the same bytes.
//!
//! A macro sees one item, so the model holds that definition plus:
//! - *synthetic* sequences and dictionaries for `Vec<T>`, `Bytes` and maps
//!   (Slice needs them named: `IntSeq`, `StringPointDict`);
//! - *external* stand-ins ([`Origin::External`]) for other Rust types
//!   named by path (derived structs, enums, exceptions, classes, proxies,
//!   base interfaces). Their real type ids come from their own
//!   `SliceType` impls when Slice text is exported. Base interfaces are
//!   stand-ins with their real operations and type ids, read from the
//!   descriptions the bases' own expansions pass on (see `inherit`).
//!
//! Errors are collected ([`Ctxt`]) so one expansion reports all of them.
//!
//! This module holds the context (errors, the model under construction,
//! stand-ins) and the entry points; the lowering itself is in [`types`]
//! (Rust types → Slice types), [`data`] (structs, enums, exceptions,
//! classes) and [`interface`] (traits and their operations).

use floe_idl::model::{
    Class, DefId, DefKind, Definition, File, Interface, Model, Module, ModuleId, Origin,
    Span as IdlSpan, Struct,
};
use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;

use crate::attr;
pub use crate::ctxt::Ctxt;
use crate::valid;

mod data;
mod interface;
mod types;

pub use data::{from_derive, DataKind};
pub use interface::from_trait;

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
            ice38: false,
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
            Origin::Source,
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
            vec![],
            Origin::External,
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

/// Adds a definition to `module`.
fn push_def(
    model: &mut Model,
    module: ModuleId,
    name: String,
    scoped: String,
    metadata: Vec<String>,
    origin: Origin,
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
        origin,
        span: IdlSpan::default(),
        kind,
    });
    model.modules[module.0 as usize]
        .contents
        .push(floe_idl::model::Contained::Definition(id));
    id
}
