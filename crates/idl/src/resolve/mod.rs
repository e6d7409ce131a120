//! Name resolution: walks the AST in source order (Slice requires a name to
//! be declared before use), merges reopened modules, links forward
//! declarations to definitions, resolves every type and constant reference
//! (relative lookup from the innermost scope outwards, or `::absolute`),
//! checks identifiers and converts constant values. Produces the
//! [`Model`]; structural rules are then checked by `validate.rs`.

mod constants;
mod scope;
mod types;

use std::collections::{HashMap, HashSet};

use constants::member_named;

use crate::ast::{self, Builtin, ConstExpr, DefinitionKind, Item, Pos, ScopedName, TypeExpr};
use crate::diagnostic::{Diagnostics, SourceMap, Span};
use crate::dialect::{self, Dialect};
use crate::ident::{check_identifier, IdentRules};
use crate::model::{
    Class, Const, ConstValue, Contained, DataMember, DefId, DefKind, Definition, Dictionary, Doc,
    Enum, Enumerator, Exception, File, Interface, Model, Module, ModuleId, Operation,
    OperationMode, Param, Sequence, Struct, Type,
};

/// Options that relax identifier rules for every file.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResolveOptions {
    /// `--underscore`.
    pub underscore: bool,
    /// `--ice`.
    pub ice_prefix: bool,
    /// `--dialect`.
    pub dialect: Dialect,
}

#[derive(Debug, Clone, Copy)]
enum Sym {
    Module(ModuleId),
    Def(DefId),
    Enumerator(DefId, usize),
}

struct Entry {
    /// Exact-case scoped name.
    scoped: String,
    sym: Sym,
}

struct Resolver<'a> {
    text: &'a str,
    map: &'a SourceMap,
    opts: ResolveOptions,
    model: Model,
    /// Lower-cased scoped name → symbol.
    symbols: HashMap<String, Entry>,
    diags: Diagnostics,
    /// Per file: a definition was already seen (file metadata must precede).
    file_has_defs: Vec<bool>,
    /// Definitions in which something failed to resolve.
    incomplete: HashSet<DefId>,
    /// While resolving names used directly at module level (bases, sequence
    /// and dictionary types, constants): the module.
    introduce_in: Option<ModuleId>,
    /// (module, lower-cased first name component) → (name as written,
    /// lower-cased scoped name it meant). A later definition in that module
    /// with that name would change its meaning, which Slice forbids.
    introduced: HashMap<(ModuleId, String), (String, String)>,
    /// The constant whose value is being resolved.
    defining: Option<DefId>,
}

/// Builds the model from a parsed unit. Errors go to `diags`; the returned
/// model is complete only if no error was reported. Also returns the
/// definitions in which something failed to resolve (validation skips them
/// to avoid follow-on errors).
pub fn resolve(
    unit: &ast::Unit,
    text: &str,
    map: &SourceMap,
    opts: ResolveOptions,
    diags: &mut Diagnostics,
) -> (Model, HashSet<DefId>) {
    let mut r = Resolver {
        text,
        map,
        opts,
        model: Model::default(),
        symbols: HashMap::new(),
        diags: Diagnostics::default(),
        file_has_defs: vec![false; map.files.len()],
        incomplete: HashSet::new(),
        introduce_in: None,
        introduced: HashMap::new(),
        defining: None,
    };
    if opts.dialect == Dialect::Ice37 {
        for (pos, syntax) in &unit.ice38_syntax {
            r.err(
                *pos,
                format!(
                    "{} is Ice 3.8 syntax (not accepted with --dialect 3.7)",
                    syntax.describe()
                ),
            );
        }
    }
    let ice38 = dialect::ice38_files(opts.dialect, unit, text, map);
    r.model.files = map
        .files
        .iter()
        .zip(ice38)
        .map(|(f, ice38)| File {
            path: f.path.clone(),
            is_main: f.is_main,
            metadata: Vec::new(),
            ice38,
        })
        .collect();
    r.items(&unit.items, None);
    diags.extend(r.diags);
    (r.model, r.incomplete)
}

fn lower(s: &str) -> String {
    s.to_ascii_lowercase()
}

fn metas(m: &[ast::Meta]) -> Vec<String> {
    m.iter().map(|m| m.text.clone()).collect()
}

fn doc(d: &ast::Doc) -> Option<Doc> {
    d.as_deref().map(Doc::parse)
}

fn literal_text(e: &ConstExpr) -> String {
    match e {
        ConstExpr::Integer { text, .. } | ConstExpr::Float { text, .. } => text.clone(),
        ConstExpr::String(s) => format!("\"{s}\""),
        ConstExpr::Bool(b) => b.to_string(),
        ConstExpr::Name(n) => n.text(),
    }
}

impl Resolver<'_> {
    fn span(&self, pos: Pos) -> Span {
        self.map.span_at(self.text, pos)
    }

    fn err(&mut self, pos: Pos, msg: impl Into<String>) {
        let s = self.span(pos);
        self.diags.error(s, msg);
    }

    /// A warning, unless the file suppresses every warning
    /// (`[["suppress-warning"]]` or `[["suppress-warning:all"]]`).
    fn warn(&mut self, pos: Pos, msg: impl Into<String>) {
        let s = self.span(pos);
        if !self.model.suppresses_warning(s, "all") {
            self.diags.warning(s, msg);
        }
    }

    /// A deprecation warning, unless the file says
    /// `[["suppress-warning:deprecated"]]` (or suppresses all warnings).
    fn warn_deprecated(&mut self, pos: Pos, msg: impl Into<String>) {
        let s = self.span(pos);
        if !self.model.suppresses_warning(s, "deprecated") {
            self.diags.warning(s, msg);
        }
    }

    fn rules(&self, pos: Pos) -> IdentRules {
        let file = self.model.files.get(self.span(pos).file.0 as usize);
        let md = file.map(|f| f.metadata.as_slice()).unwrap_or(&[]);
        IdentRules {
            underscore: self.opts.underscore || md.iter().any(|m| m == "underscore"),
            ice_prefix: self.opts.ice_prefix || md.iter().any(|m| m == "ice-prefix"),
            ice38: file.is_some_and(|f| f.ice38),
        }
    }

    fn check_ident(&mut self, id: &ast::Ident) {
        let rules = self.rules(id.pos);
        for e in check_identifier(&id.name, rules) {
            self.err(id.pos, e);
        }
    }

    fn scope_name(&self, scope: Option<ModuleId>) -> String {
        scope
            .map(|m| self.model.module(m).scoped.clone())
            .unwrap_or_default()
    }

    fn sym_desc(&self, sym: Sym) -> String {
        match sym {
            Sym::Module(_) => "module".into(),
            Sym::Def(d) => self.model.def(d).kind.keyword().into(),
            Sym::Enumerator(..) => "enumerator".into(),
        }
    }

    fn items(&mut self, items: &[Item], scope: Option<ModuleId>) {
        for item in items {
            match item {
                Item::FileMetadata(m, pos) => {
                    let file = self.span(*pos).file.0 as usize;
                    if scope.is_some() || self.file_has_defs.get(file).copied().unwrap_or(false) {
                        self.err(*pos, "file metadata must appear before any definitions");
                    } else if let Some(f) = self.model.files.get_mut(file) {
                        f.metadata.extend(metas(m));
                    }
                }
                Item::Definition(d) => {
                    let file = self.span(d.pos).file.0 as usize;
                    if let Some(f) = self.file_has_defs.get_mut(file) {
                        *f = true;
                    }
                    self.definition(d, scope);
                }
            }
        }
    }

    fn definition(&mut self, d: &ast::Definition, scope: Option<ModuleId>) {
        let name = d.kind.name();
        self.check_ident(name);
        if d.local && self.rules(d.pos).ice38 {
            self.err(d.pos, "Ice 3.8 has no local definitions");
        }
        if let DefinitionKind::Module { items, nested, .. } = &d.kind {
            if d.local {
                self.err(d.pos, "`local' cannot be applied to a module");
            }
            if let (true, Some(m)) = (nested, d.metadata.first()) {
                // Ice 3.8 says so and goes on without the metadata.
                self.warn(
                    m.pos,
                    "metadata cannot be applied to modules defined using nested module syntax (ignored)",
                );
            }
            if let Some(m) = self.open_module(d, scope) {
                self.items(items, Some(m));
            }
            return;
        }
        let Some(scope) = scope else {
            let what = match &d.kind {
                DefinitionKind::Struct { .. } => "a structure",
                DefinitionKind::Class { .. } | DefinitionKind::ClassDecl { .. } => "a class",
                DefinitionKind::Interface { .. } | DefinitionKind::InterfaceDecl { .. } => {
                    "an interface"
                }
                DefinitionKind::Exception { .. } => "an exception",
                DefinitionKind::Sequence { .. } => "a sequence",
                DefinitionKind::Dictionary { .. } => "a dictionary",
                DefinitionKind::Enum { .. } => "an enumeration",
                _ => "a constant",
            };
            self.err(
                name.pos,
                format!(
                    "`{}': {what} can be defined only at module scope",
                    name.name
                ),
            );
            return;
        };
        let what = match &d.kind {
            DefinitionKind::Struct { .. } => "structure",
            DefinitionKind::Class { .. } | DefinitionKind::ClassDecl { .. } => "class",
            DefinitionKind::Interface { .. } | DefinitionKind::InterfaceDecl { .. } => "interface",
            DefinitionKind::Exception { .. } => "exception",
            DefinitionKind::Sequence { .. } => "sequence",
            DefinitionKind::Dictionary { .. } => "dictionary",
            DefinitionKind::Enum { .. } => "enumeration",
            _ => "constant",
        };
        if self.named_like_enclosing_module(Some(scope), name, what) {
            return;
        }
        let placeholder = match &d.kind {
            DefinitionKind::Class { .. } | DefinitionKind::ClassDecl { .. } => {
                DefKind::Class(Class {
                    defined: false,
                    base: None,
                    implements: vec![],
                    compact_id: None,
                    members: vec![],
                    operations: vec![],
                })
            }
            DefinitionKind::Interface { .. } | DefinitionKind::InterfaceDecl { .. } => {
                DefKind::Interface(Interface {
                    defined: false,
                    bases: vec![],
                    operations: vec![],
                })
            }
            DefinitionKind::Struct { .. } => DefKind::Struct(Struct { members: vec![] }),
            DefinitionKind::Exception { .. } => DefKind::Exception(Exception {
                base: None,
                members: vec![],
            }),
            DefinitionKind::Sequence { .. } => DefKind::Sequence(Sequence {
                element: Type::Int,
                element_metadata: vec![],
            }),
            DefinitionKind::Dictionary { .. } => DefKind::Dictionary(Dictionary {
                key: Type::Int,
                key_metadata: vec![],
                value: Type::Int,
                value_metadata: vec![],
            }),
            DefinitionKind::Enum { .. } => DefKind::Enum(Enum {
                enumerators: vec![],
                max_value: 0,
                explicit_values: false,
            }),
            DefinitionKind::Const { .. } => DefKind::Const(Const {
                ty: Type::Int,
                type_metadata: vec![],
                value: ConstValue::Integer(0),
                literal: String::new(),
            }),
            DefinitionKind::Module { .. } => return,
        };
        let is_decl = matches!(
            d.kind,
            DefinitionKind::ClassDecl { .. } | DefinitionKind::InterfaceDecl { .. }
        );
        let Some(id) = self.declare(d, scope, placeholder, is_decl) else {
            return;
        };
        let errors_before = self.diags.error_count();
        self.definition_body(d, id, scope);
        if self.diags.error_count() > errors_before {
            self.incomplete.insert(id);
        }
    }

    fn definition_body(&mut self, d: &ast::Definition, id: DefId, scope: ModuleId) {
        // Everything resolved here directly (not inside a member or
        // operation) is looked up at module level.
        self.introduce_in = Some(scope);
        self.definition_parts(d, id, scope);
        self.introduce_in = None;
    }

    fn definition_parts(&mut self, d: &ast::Definition, id: DefId, scope: ModuleId) {
        match &d.kind {
            DefinitionKind::Struct { members, .. } => {
                let members = self.members(members, scope, "struct");
                if let DefKind::Struct(s) = &mut self.model.definitions[id.0 as usize].kind {
                    s.members = members;
                }
            }
            DefinitionKind::Class {
                compact_id,
                base,
                implements,
                members,
                operations,
                ..
            } => {
                let base = base.as_ref().and_then(|b| self.base(b, scope, "class", id));
                let implements: Vec<DefId> = implements
                    .iter()
                    .filter_map(|b| self.base(b, scope, "interface", id))
                    .collect();
                if self.rules(d.pos).ice38 {
                    if !implements.is_empty() {
                        self.err(d.pos, "Ice 3.8 classes cannot implement interfaces");
                    }
                    if !operations.is_empty() {
                        self.err(d.pos, "Ice 3.8 classes cannot have operations");
                    }
                } else {
                    if !implements.is_empty() {
                        self.warn_deprecated(
                            d.pos,
                            "classes implementing interfaces are deprecated",
                        );
                    }
                    if !operations.is_empty() && !d.local {
                        self.warn_deprecated(d.pos, "classes with operations are deprecated");
                    }
                }
                let compact_id = compact_id
                    .as_ref()
                    .and_then(|(e, p)| self.compact_id(e, *p, scope));
                if let DefKind::Class(c) = &mut self.model.definitions[id.0 as usize].kind {
                    c.defined = true;
                    c.base = base;
                    c.implements = implements;
                    c.compact_id = compact_id;
                }
                let members = self.members(members, scope, "class");
                let ops = self.operations(operations, scope);
                if let DefKind::Class(c) = &mut self.model.definitions[id.0 as usize].kind {
                    c.members = members;
                    c.operations = ops;
                }
            }
            DefinitionKind::Interface {
                bases, operations, ..
            } => {
                let bases: Vec<DefId> = bases
                    .iter()
                    .filter_map(|b| self.base(b, scope, "interface", id))
                    .collect();
                if let DefKind::Interface(i) = &mut self.model.definitions[id.0 as usize].kind {
                    i.defined = true;
                    i.bases = bases;
                }
                let ops = self.operations(operations, scope);
                if let DefKind::Interface(i) = &mut self.model.definitions[id.0 as usize].kind {
                    i.operations = ops;
                }
            }
            DefinitionKind::Exception { base, members, .. } => {
                let base = base
                    .as_ref()
                    .and_then(|b| self.base(b, scope, "exception", id));
                let members = self.members(members, scope, "exception");
                if let DefKind::Exception(e) = &mut self.model.definitions[id.0 as usize].kind {
                    e.base = base;
                    e.members = members;
                }
            }
            DefinitionKind::Sequence {
                element_metadata,
                element,
                ..
            } => {
                if let Some(t) = self
                    .ty(element, scope)
                    .and_then(|t| self.not_self(t, id, element))
                {
                    self.model.definitions[id.0 as usize].kind = DefKind::Sequence(Sequence {
                        element: t,
                        element_metadata: metas(element_metadata),
                    });
                }
            }
            DefinitionKind::Dictionary {
                key_metadata,
                key,
                value_metadata,
                value,
                ..
            } => {
                let k = self.ty(key, scope).and_then(|t| self.not_self(t, id, key));
                let v = self
                    .ty(value, scope)
                    .and_then(|t| self.not_self(t, id, value));
                if let (Some(k), Some(v)) = (k, v) {
                    self.model.definitions[id.0 as usize].kind = DefKind::Dictionary(Dictionary {
                        key: k,
                        key_metadata: metas(key_metadata),
                        value: v,
                        value_metadata: metas(value_metadata),
                    });
                }
            }
            DefinitionKind::Enum { enumerators, .. } => self.enumeration(id, enumerators, scope),
            DefinitionKind::Const {
                name,
                type_metadata,
                ty,
                value,
                value_pos,
            } => {
                let Some(t) = self.ty(ty, scope) else { return };
                let what = format!("constant `{}'", name.name);
                if !self.const_type_ok(t) {
                    self.err(
                        name.pos,
                        format!("constant `{}' has illegal type", name.name),
                    );
                    return;
                }
                self.defining = Some(id);
                let v = self.value(t, value, *value_pos, scope, &what);
                self.defining = None;
                if let Some(v) = v {
                    self.model.definitions[id.0 as usize].kind = DefKind::Const(Const {
                        ty: t,
                        type_metadata: metas(type_metadata),
                        value: v,
                        literal: literal_text(value),
                    });
                }
            }
            DefinitionKind::Module { .. }
            | DefinitionKind::ClassDecl { .. }
            | DefinitionKind::InterfaceDecl { .. } => {}
        }
        self.check_local(id);
    }

    /// A sequence or dictionary is not in scope inside its own definition.
    fn not_self(&mut self, t: Type, id: DefId, written: &TypeExpr) -> Option<Type> {
        match t {
            Type::Named(x) | Type::Proxy(x) if x == id => {
                let name = self.model.def(id).name.clone();
                self.err(written.pos(), format!("`{name}' is not defined"));
                None
            }
            _ => Some(t),
        }
    }

    /// Non-local definitions may not use local types.
    fn check_local(&mut self, id: DefId) {
        let def = self.model.def(id);
        if def.local {
            return;
        }
        let mut types: Vec<(Type, Span)> = Vec::new();
        match &def.kind {
            DefKind::Struct(s) => types.extend(s.members.iter().map(|m| (m.ty, m.span))),
            DefKind::Class(c) => {
                types.extend(c.members.iter().map(|m| (m.ty, m.span)));
                for o in &c.operations {
                    types.extend(o.return_type.map(|t| (t, o.span)));
                    types.extend(o.params.iter().map(|p| (p.ty, p.span)));
                }
            }
            DefKind::Interface(i) => {
                for o in &i.operations {
                    types.extend(o.return_type.map(|t| (t, o.span)));
                    types.extend(o.params.iter().map(|p| (p.ty, p.span)));
                }
            }
            DefKind::Exception(e) => types.extend(e.members.iter().map(|m| (m.ty, m.span))),
            DefKind::Sequence(s) => types.push((s.element, def.span)),
            DefKind::Dictionary(d) => {
                types.push((d.key, def.span));
                types.push((d.value, def.span));
            }
            _ => {}
        }
        let kw = def.kind.keyword();
        let name = def.name.clone();
        let ops: &[Operation] = match &def.kind {
            DefKind::Interface(i) => &i.operations,
            DefKind::Class(c) => &c.operations,
            _ => &[],
        };
        let mut throw_errors = Vec::new();
        for o in ops {
            for t in &o.throws {
                let ex = self.model.def(*t);
                if ex.local {
                    throw_errors.push((
                        o.span,
                        format!("non-local {kw} `{name}' cannot have operation `{}' throwing local exception `{}'", o.name, ex.name),
                    ));
                }
            }
        }
        for (span, msg) in throw_errors {
            self.diags.error(span, msg);
        }
        for (t, span) in types {
            let local = match t {
                Type::LocalObject => true,
                Type::Named(d) | Type::Proxy(d) => self.model.def(d).local,
                _ => false,
            };
            if local {
                let tn = self.model.type_name(t);
                self.diags.error(
                    span,
                    format!("non-local {kw} `{name}' cannot use local type `{tn}'"),
                );
            }
        }
    }
}

fn article(kw: &str) -> String {
    match kw {
        "interface" | "exception" => format!("an {kw}"),
        _ => format!("a {kw}"),
    }
}
