//! Name resolution: walks the AST in source order (Slice requires a name to
//! be declared before use), merges reopened modules, links forward
//! declarations to definitions, resolves every type and constant reference
//! (relative lookup from the innermost scope outwards, or `::absolute`),
//! checks identifiers and converts constant values. Produces the
//! [`Model`]; structural rules are then checked by `validate.rs`.

use std::collections::{HashMap, HashSet};

use crate::ast::{self, Builtin, ConstExpr, DefinitionKind, Item, Pos, ScopedName, TypeExpr};
use crate::diagnostic::{Diagnostics, SourceMap, Span};
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
    r.model.files = map
        .files
        .iter()
        .map(|f| File {
            path: f.path.clone(),
            is_main: f.is_main,
            metadata: Vec::new(),
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

    fn warn(&mut self, pos: Pos, msg: impl Into<String>) {
        let s = self.span(pos);
        self.diags.warning(s, msg);
    }

    fn rules(&self, pos: Pos) -> IdentRules {
        let file = self.span(pos).file;
        let md = self
            .model
            .files
            .get(file.0 as usize)
            .map(|f| f.metadata.as_slice())
            .unwrap_or(&[]);
        IdentRules {
            underscore: self.opts.underscore || md.iter().any(|m| m == "underscore"),
            ice_prefix: self.opts.ice_prefix || md.iter().any(|m| m == "ice-prefix"),
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
        if let DefinitionKind::Module { items, .. } = &d.kind {
            if d.local {
                self.err(d.pos, "`local' cannot be applied to a module");
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
                if !implements.is_empty() {
                    self.warn(d.pos, "classes implementing interfaces are deprecated");
                }
                if !operations.is_empty() && !d.local {
                    self.warn(d.pos, "classes with operations are deprecated");
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

    fn open_module(&mut self, d: &ast::Definition, scope: Option<ModuleId>) -> Option<ModuleId> {
        let name = d.kind.name();
        if let Some(parent) = scope {
            let pname = self.model.module(parent).name.clone();
            if pname == name.name {
                self.err(
                    name.pos,
                    format!("module name `{}' must differ from the name of its immediately enclosing module", name.name),
                );
                return None;
            } else if pname.eq_ignore_ascii_case(&name.name) {
                self.err(
                    name.pos,
                    format!(
                        "module name `{}' cannot differ only in capitalization from its immediately enclosing module name `{pname}'",
                        name.name
                    ),
                );
                return None;
            }
        }
        let scoped = format!("{}::{}", self.scope_name(scope), name.name);
        let key = lower(&scoped);
        let span = self.span(name.pos);
        if let Some(e) = self.symbols.get(&key) {
            match e.sym {
                Sym::Module(m) => {
                    if e.scoped != scoped {
                        let prev = self.model.module(m).name.clone();
                        self.err(
                            name.pos,
                            format!(
                                "module `{}' is capitalized inconsistently with its previous name: `{prev}'",
                                name.name
                            ),
                        );
                        return None;
                    }
                    let module = &mut self.model.modules[m.0 as usize];
                    module.metadata.extend(metas(&d.metadata));
                    module.openings.push(span);
                    if module.doc.is_none() {
                        module.doc = doc(&d.doc);
                    }
                    return Some(m);
                }
                sym => {
                    let desc = self.sym_desc(sym);
                    let prev = e.scoped.rsplit("::").next().unwrap_or("").to_owned();
                    if prev == name.name {
                        self.err(
                            name.pos,
                            format!("redefinition of {desc} `{prev}' as module"),
                        );
                    } else {
                        self.err(
                            name.pos,
                            format!(
                                "module `{}' differs only in capitalization from {desc} `{prev}'",
                                name.name
                            ),
                        );
                    }
                    return None;
                }
            }
        }
        if let Some(parent) = scope {
            self.check_changed_meaning(parent, name, &scoped);
        }
        let id = ModuleId(self.model.modules.len() as u32);
        self.model.modules.push(Module {
            name: name.name.clone(),
            scoped: scoped.clone(),
            parent: scope,
            metadata: metas(&d.metadata),
            doc: doc(&d.doc),
            span,
            openings: vec![span],
            contents: Vec::new(),
        });
        match scope {
            Some(p) => self.model.modules[p.0 as usize]
                .contents
                .push(Contained::Module(id)),
            None => self.model.roots.push(id),
        }
        self.symbols.insert(
            key,
            Entry {
                scoped,
                sym: Sym::Module(id),
            },
        );
        Some(id)
    }

    /// Registers a definition (or links a forward declaration).
    fn declare(
        &mut self,
        d: &ast::Definition,
        scope: ModuleId,
        placeholder: DefKind,
        is_decl: bool,
    ) -> Option<DefId> {
        let name = d.kind.name();
        let scoped = format!("{}::{}", self.scope_name(Some(scope)), name.name);
        let key = lower(&scoped);
        let kw = placeholder.keyword();
        if let Some(e) = self.symbols.get(&key) {
            let prev_name = e.scoped.rsplit("::").next().unwrap_or("").to_owned();
            let sym = e.sym;
            let desc = self.sym_desc(sym);
            if prev_name != name.name {
                // slice2cpp treats class declarations case-insensitively: a
                // differently capitalized declaration is ignored, and a
                // definition completes (and renames) a declared-only class.
                if let (Sym::Def(prev), DefKind::Class(_)) = (sym, &placeholder) {
                    let prev_local = self.model.def(prev).local;
                    if let DefKind::Class(c) = &self.model.def(prev).kind {
                        if prev_local != d.local {
                            let (now, was) = if d.local {
                                ("local", "non-local")
                            } else {
                                ("non-local", "local")
                            };
                            self.err(
                                name.pos,
                                format!("{now} `{}' was declared {was}", name.name),
                            );
                            return None;
                        }
                        if is_decl {
                            return None;
                        }
                        if !c.defined {
                            let span = self.span(d.pos);
                            let def = &mut self.model.definitions[prev.0 as usize];
                            def.name = name.name.clone();
                            def.scoped = scoped.clone();
                            def.span = span;
                            def.metadata.extend(metas(&d.metadata));
                            if def.doc.is_none() {
                                def.doc = doc(&d.doc);
                            }
                            self.symbols.insert(
                                key,
                                Entry {
                                    scoped,
                                    sym: Sym::Def(prev),
                                },
                            );
                            return Some(prev);
                        }
                    }
                }
                self.err(
                    name.pos,
                    format!(
                        "{kw} `{}' differs only in capitalization from {desc} `{prev_name}'",
                        name.name
                    ),
                );
                return None;
            }
            if let Sym::Def(prev) = sym {
                let prev_def = self.model.def(prev);
                let (same_kind, prev_defined) = match (&prev_def.kind, &placeholder) {
                    (DefKind::Class(c), DefKind::Class(_)) => (true, c.defined),
                    (DefKind::Interface(i), DefKind::Interface(_)) => (true, i.defined),
                    _ => (false, true),
                };
                if same_kind {
                    if prev_def.local != d.local {
                        self.err(
                            name.pos,
                            format!(
                                "local/non-local mismatch: `{}' was declared {}",
                                name.name,
                                if prev_def.local { "local" } else { "non-local" }
                            ),
                        );
                        return None;
                    }
                    if is_decl {
                        return None; // repeated forward declaration: nothing to do
                    }
                    if !prev_defined {
                        let span = self.span(d.pos);
                        let def = &mut self.model.definitions[prev.0 as usize];
                        def.span = span;
                        def.metadata.extend(metas(&d.metadata));
                        if def.doc.is_none() {
                            def.doc = doc(&d.doc);
                        }
                        if self
                            .model
                            .module(scope)
                            .contents
                            .contains(&Contained::Definition(prev))
                        {
                            // keep the declaration's place; definition order is by DefId
                        }
                        return Some(prev);
                    }
                }
                if !same_kind
                    && matches!(prev_def.kind, DefKind::Class(_) | DefKind::Interface(_))
                    && matches!(placeholder, DefKind::Class(_) | DefKind::Interface(_))
                {
                    let prev_kw = prev_def.kind.keyword();
                    self.err(
                        name.pos,
                        format!(
                            "`{}' was declared as {prev_kw} and is now redefined as {kw}",
                            name.name
                        ),
                    );
                    return None;
                }
            }
            self.err(
                name.pos,
                format!("redefinition of {desc} `{prev_name}' as {kw}"),
            );
            return None;
        }
        self.check_changed_meaning(scope, name, &scoped);
        let id = DefId(self.model.definitions.len() as u32);
        let span = self.span(d.pos);
        self.model.definitions.push(Definition {
            id,
            name: name.name.clone(),
            scoped: scoped.clone(),
            module: scope,
            metadata: metas(&d.metadata),
            doc: doc(&d.doc),
            local: d.local,
            span,
            kind: placeholder,
        });
        self.model.modules[scope.0 as usize]
            .contents
            .push(Contained::Definition(id));
        self.symbols.insert(
            key,
            Entry {
                scoped,
                sym: Sym::Def(id),
            },
        );
        Some(id)
    }

    /// A new name in `scope` must not change what an earlier use of that
    /// name (case-insensitively) in the same module referred to.
    fn check_changed_meaning(&mut self, scope: ModuleId, name: &ast::Ident, scoped: &str) {
        if let Some((written, meaning)) = self.introduced.get(&(scope, lower(&name.name))) {
            if *meaning != lower(scoped) {
                let written = written.clone();
                self.err(name.pos, format!("`{written}' has changed meaning"));
            }
        }
    }

    /// Looks a name up from `scope` outwards. Returns the symbol and its
    /// exact scoped name.
    fn lookup(&mut self, n: &ScopedName, scope: Option<ModuleId>) -> Option<Sym> {
        let rel = n.parts.join("::");
        let mut candidates = Vec::new();
        if n.absolute {
            candidates.push(format!("::{rel}"));
        } else {
            let mut s = scope;
            loop {
                let prefix = self.scope_name(s);
                candidates.push(format!("{prefix}::{rel}"));
                match s {
                    Some(m) => s = self.model.module(m).parent,
                    None => break,
                }
            }
        }
        for c in &candidates {
            if let Some(e) = self.symbols.get(&lower(c)) {
                if let (Some(m), false) = (self.introduce_in, n.absolute) {
                    // Remember what the first component meant in this module.
                    let first = &n.parts[0];
                    let prefix_len = c.len() - rel.len();
                    let meaning = format!("{}{}", &c[..prefix_len], first);
                    self.introduced
                        .entry((m, lower(first)))
                        .or_insert((first.clone(), lower(&meaning)));
                }
                if &e.scoped != c {
                    let found = e.scoped.clone();
                    self.err(
                        n.pos,
                        format!(
                            "`{}' differs only in capitalization from `{}'",
                            n.text(),
                            found.trim_start_matches("::")
                        ),
                    );
                    return None;
                }
                return Some(e.sym);
            }
        }
        None
    }

    fn not_defined(&mut self, n: &ScopedName) {
        self.err(n.pos, format!("`{}' is not defined", n.text()));
    }

    /// Resolves a base of `id` that must be a defined `kw`.
    fn base(&mut self, n: &ScopedName, scope: ModuleId, kw: &str, id: DefId) -> Option<DefId> {
        let Some(sym) = self.lookup(n, Some(scope)) else {
            if !self
                .diags
                .list
                .last()
                .is_some_and(|d| d.message.contains("capitalization"))
            {
                self.not_defined(n);
            }
            return None;
        };
        let Sym::Def(b) = sym else {
            self.err(n.pos, format!("`{}' is not {}", n.text(), article(kw)));
            return None;
        };
        if b == id {
            self.err(n.pos, format!("{kw} `{}' cannot extend itself", n.text()));
            return None;
        }
        let def = self.model.def(b);
        let ok = def.kind.keyword() == kw;
        if !ok {
            self.err(n.pos, format!("`{}' is not {}", n.text(), article(kw)));
            return None;
        }
        let defined = match &def.kind {
            DefKind::Class(c) => c.defined,
            DefKind::Interface(i) => i.defined,
            _ => true,
        };
        if !defined {
            self.err(
                n.pos,
                format!("`{}' has been declared but not defined", n.text()),
            );
            return None;
        }
        let (dl, bl) = (self.model.def(id).local, def.local);
        if dl != bl {
            let name = self.model.def(id).name.clone();
            self.err(
                n.pos,
                format!(
                    "{} {kw} `{name}' cannot extend {} {kw} `{}'",
                    if dl { "local" } else { "non-local" },
                    if bl { "local" } else { "non-local" },
                    n.text()
                ),
            );
            return None;
        }
        Some(b)
    }

    fn ty(&mut self, t: &TypeExpr, scope: ModuleId) -> Option<Type> {
        match t {
            TypeExpr::Builtin(b, _) => Some(match b {
                Builtin::Bool => Type::Bool,
                Builtin::Byte => Type::Byte,
                Builtin::Short => Type::Short,
                Builtin::Int => Type::Int,
                Builtin::Long => Type::Long,
                Builtin::Float => Type::Float,
                Builtin::Double => Type::Double,
                Builtin::String => Type::String,
                Builtin::Object => Type::Object,
                Builtin::ObjectProxy => Type::ObjectProxy,
                Builtin::Value => Type::Value,
                Builtin::LocalObject => Type::LocalObject,
            }),
            TypeExpr::Named(n) | TypeExpr::Proxy(n) => {
                let proxy = matches!(t, TypeExpr::Proxy(_));
                let Some(sym) = self.lookup(n, Some(scope)) else {
                    if !self.diags.list.last().is_some_and(|d| {
                        d.message.contains("capitalization") && d.span == Some(self.span(n.pos))
                    }) {
                        self.not_defined(n);
                    }
                    return None;
                };
                let id = match sym {
                    Sym::Def(id) => id,
                    Sym::Module(_) => {
                        self.err(n.pos, format!("`{}' is a module, not a type", n.text()));
                        return None;
                    }
                    Sym::Enumerator(..) => {
                        self.err(
                            n.pos,
                            format!("`{}' is an enumerator, not a type", n.text()),
                        );
                        return None;
                    }
                };
                let kind = self.model.def(id).kind.keyword();
                match kind {
                    "exception" => {
                        self.err(
                            n.pos,
                            format!(
                                "`{}' is an exception, which cannot be used as a type",
                                n.text()
                            ),
                        );
                        None
                    }
                    "constant" => {
                        self.err(n.pos, format!("`{}' is a constant, not a type", n.text()));
                        None
                    }
                    "interface" if proxy && self.model.def(id).local => {
                        self.err(
                            n.pos,
                            format!("cannot create proxy for local interface `{}'", n.text()),
                        );
                        None
                    }
                    "class" | "interface" if proxy => {
                        if kind == "class" {
                            self.warn(n.pos, "proxies to classes are deprecated");
                        }
                        Some(Type::Proxy(id))
                    }
                    "interface" => {
                        if !self.model.def(id).local {
                            self.warn(n.pos, "interface by value is deprecated");
                        }
                        Some(Type::Named(id))
                    }
                    _ if proxy => {
                        self.err(
                            n.pos,
                            format!("`{}' must be an interface to be used as a proxy", n.text()),
                        );
                        None
                    }
                    _ => Some(Type::Named(id)),
                }
            }
        }
    }

    fn members(
        &mut self,
        members: &[ast::DataMember],
        scope: ModuleId,
        _what: &str,
    ) -> Vec<DataMember> {
        let saved = self.introduce_in.take();
        let out = self.members_inner(members, scope);
        self.introduce_in = saved;
        out
    }

    fn members_inner(&mut self, members: &[ast::DataMember], scope: ModuleId) -> Vec<DataMember> {
        let mut out = Vec::new();
        for m in members {
            self.check_ident(&m.name);
            let Some(ty) = self.ty(&m.ty, scope) else {
                continue;
            };
            let tag = m
                .optional
                .as_ref()
                .and_then(|(e, p)| self.tag(e, *p, scope));
            let default = match &m.default {
                Some((e, p)) => {
                    if !self.const_type_ok(ty) {
                        self.err(
                            m.name.pos,
                            format!(
                                "default value not allowed for data member `{}'",
                                m.name.name
                            ),
                        );
                        None
                    } else if let Some(other) = member_named(members, e) {
                        self.err(
                            *p,
                            format!("illegal initializer: `{other}' is a data member"),
                        );
                        None
                    } else {
                        let what = format!("data member `{}'", m.name.name);
                        self.value(ty, e, *p, scope, &what)
                    }
                }
                None => None,
            };
            out.push(DataMember {
                name: m.name.name.clone(),
                ty,
                tag,
                default,
                metadata: metas(&m.metadata),
                doc: doc(&m.doc),
                span: self.span(m.name.pos),
            });
        }
        out
    }

    fn operations(&mut self, ops: &[ast::Operation], scope: ModuleId) -> Vec<Operation> {
        let saved = self.introduce_in.take();
        let out = self.operations_inner(ops, scope);
        self.introduce_in = saved;
        out
    }

    fn operations_inner(&mut self, ops: &[ast::Operation], scope: ModuleId) -> Vec<Operation> {
        let mut out = Vec::new();
        for o in ops {
            self.check_ident(&o.name);
            let return_type = match &o.return_type {
                Some(t) => match self.ty(t, scope) {
                    Some(t) => Some(t),
                    None => continue,
                },
                None => None,
            };
            let return_tag = o
                .return_optional
                .as_ref()
                .and_then(|(e, p)| self.tag(e, *p, scope));
            let mut params = Vec::new();
            for p in &o.params {
                self.check_ident(&p.name);
                let Some(ty) = self.ty(&p.ty, scope) else {
                    continue;
                };
                let tag = p
                    .optional
                    .as_ref()
                    .and_then(|(e, pos)| self.tag(e, *pos, scope));
                params.push(Param {
                    name: p.name.name.clone(),
                    ty,
                    out: p.out,
                    tag,
                    metadata: metas(&p.metadata),
                    span: self.span(p.name.pos),
                });
            }
            let mut throws = Vec::new();
            for t in &o.throws {
                match self.lookup(t, Some(scope)) {
                    Some(Sym::Def(id)) if self.model.def(id).kind.keyword() == "exception" => {
                        throws.push(id)
                    }
                    Some(_) => self.err(t.pos, format!("`{}' is not an exception", t.text())),
                    None => self.not_defined(t),
                }
            }
            out.push(Operation {
                name: o.name.name.clone(),
                mode: if o.idempotent {
                    OperationMode::Idempotent
                } else {
                    OperationMode::Normal
                },
                return_type,
                return_tag,
                params,
                throws,
                metadata: metas(&o.metadata),
                doc: doc(&o.doc),
                span: self.span(o.name.pos),
            });
        }
        out
    }

    fn enumeration(&mut self, id: DefId, enumerators: &[ast::Enumerator], scope: ModuleId) {
        let mut list: Vec<Enumerator> = Vec::new();
        let mut next: i64 = 0;
        let mut explicit = false;
        let scoped = self.model.def(id).scoped.clone();
        let enum_name = self.model.def(id).name.clone();
        if enumerators.is_empty() {
            let pos = self.model.def(id).span;
            self.diags.error(
                pos,
                format!("enum `{enum_name}' must have at least one enumerator"),
            );
        }
        for e in enumerators {
            self.check_ident(&e.name);
            let value = match &e.value {
                Some((expr, p)) => {
                    explicit = true;
                    match self.integer_value(expr, *p, Some(scope)) {
                        Some(v) if (0..=i64::from(i32::MAX)).contains(&v) => v,
                        Some(_) => {
                            self.err(
                                e.name.pos,
                                format!("value for enumerator `{}' is out of range", e.name.name),
                            );
                            continue;
                        }
                        None => continue,
                    }
                }
                None => {
                    if next > i64::from(i32::MAX) {
                        self.err(
                            e.name.pos,
                            format!("value for enumerator `{}' is out of range", e.name.name),
                        );
                        continue;
                    }
                    next
                }
            };
            next = value + 1;
            if let Some(prev) = list
                .iter()
                .find(|x| x.name.eq_ignore_ascii_case(&e.name.name))
            {
                let msg = if prev.name == e.name.name {
                    format!("redefinition of enumerator `{}'", e.name.name)
                } else {
                    format!(
                        "enumerator `{}' differs only in capitalization from enumerator `{}'",
                        e.name.name, prev.name
                    )
                };
                self.err(e.name.pos, msg);
                continue;
            }
            if let Some(prev) = list.iter().find(|x| i64::from(x.value) == value) {
                let msg = format!(
                    "enumerator `{}' has the same value as enumerator `{}'",
                    e.name.name, prev.name
                );
                self.err(e.name.pos, msg);
                continue;
            }
            let index = list.len();
            self.symbols.insert(
                lower(&format!("{scoped}::{}", e.name.name)),
                Entry {
                    scoped: format!("{scoped}::{}", e.name.name),
                    sym: Sym::Enumerator(id, index),
                },
            );
            list.push(Enumerator {
                name: e.name.name.clone(),
                value: value as i32,
                metadata: metas(&e.metadata),
                doc: doc(&e.doc),
                span: self.span(e.name.pos),
            });
        }
        let max_value = list.iter().map(|e| e.value).max().unwrap_or(0);
        self.model.definitions[id.0 as usize].kind = DefKind::Enum(Enum {
            enumerators: list,
            max_value,
            explicit_values: explicit,
        });
    }

    /// An integer from a literal or an integer constant.
    fn integer_value(&mut self, e: &ConstExpr, pos: Pos, scope: Option<ModuleId>) -> Option<i64> {
        match e {
            ConstExpr::Integer { value: Some(v), .. } => Some(*v),
            ConstExpr::Integer { value: None, text } => {
                self.err(pos, format!("integer constant `{text}' out of range"));
                None
            }
            ConstExpr::Name(n) => match self.lookup(n, scope) {
                Some(Sym::Def(id)) => match &self.model.def(id).kind {
                    DefKind::Const(Const {
                        value: ConstValue::Integer(v),
                        ty: Type::Byte | Type::Short | Type::Int | Type::Long,
                        ..
                    }) => Some(*v),
                    _ => {
                        self.err(pos, format!("`{}' is not an integer constant", n.text()));
                        None
                    }
                },
                Some(_) => {
                    self.err(pos, format!("`{}' is not an integer constant", n.text()));
                    None
                }
                None => {
                    self.not_defined(n);
                    None
                }
            },
            _ => {
                self.err(pos, "expected an integer");
                None
            }
        }
    }

    fn tag(&mut self, e: &ConstExpr, pos: Pos, scope: ModuleId) -> Option<i32> {
        let v = self.integer_value(e, pos, Some(scope))?;
        if !(0..=i64::from(i32::MAX)).contains(&v) {
            self.err(pos, "tag for optional is out of range");
            return None;
        }
        Some(v as i32)
    }

    fn compact_id(&mut self, e: &ConstExpr, pos: Pos, scope: ModuleId) -> Option<i32> {
        let v = self.integer_value(e, pos, Some(scope))?;
        if v < 0 {
            self.err(
                pos,
                "invalid compact id for class: id must be a positive integer",
            );
            return None;
        }
        if v > i64::from(i32::MAX) {
            self.err(pos, "invalid compact id for class: value is out of range");
            return None;
        }
        Some(v as i32)
    }

    fn const_type_ok(&self, t: Type) -> bool {
        match t {
            Type::Bool
            | Type::Byte
            | Type::Short
            | Type::Int
            | Type::Long
            | Type::Float
            | Type::Double
            | Type::String => true,
            Type::Named(id) => matches!(self.model.def(id).kind, DefKind::Enum(_)),
            _ => false,
        }
    }

    /// Converts an initializer to a value of type `t`.
    fn value(
        &mut self,
        t: Type,
        e: &ConstExpr,
        pos: Pos,
        scope: ModuleId,
        what: &str,
    ) -> Option<ConstValue> {
        let tname = self.model.type_name(t);
        let tname = tname.trim_start_matches("::").to_owned();
        let lit_kind = match e {
            ConstExpr::Integer { .. } => "long",
            ConstExpr::Float { .. } => "double",
            ConstExpr::String(_) => "string",
            ConstExpr::Bool(_) => "bool",
            ConstExpr::Name(_) => "",
        };
        let incompatible = |r: &mut Self, kind: &str| {
            r.err(pos, format!("initializer of type `{kind}' is incompatible with the type `{tname}' of {what}"));
            None
        };
        // Names: constants or enumerators.
        if let ConstExpr::Name(n) = e {
            if let Type::Named(enum_id) = t {
                if let DefKind::Enum(en) = &self.model.def(enum_id).kind {
                    // An unscoped enumerator name of the expected enum.
                    if !n.absolute && n.parts.len() == 1 {
                        if let Some(index) =
                            en.enumerators.iter().position(|x| x.name == n.parts[0])
                        {
                            return Some(ConstValue::Enumerator { enum_id, index });
                        }
                    }
                }
            }
            let sym = self.lookup(n, Some(scope));
            let sym = match sym {
                Some(s) => Some(s),
                None => self.enumerator_in_enclosing_scope(n, scope),
            };
            return match sym {
                Some(Sym::Enumerator(eid, index)) => {
                    if Type::Named(eid) == t {
                        Some(ConstValue::Enumerator {
                            enum_id: eid,
                            index,
                        })
                    } else {
                        let full = self.model.def(eid).scoped.clone();
                        match t {
                            Type::Named(id)
                                if matches!(self.model.def(id).kind, DefKind::Enum(_)) =>
                            {
                                self.err(
                                    pos,
                                    format!(
                                        "`{}' does not designate an enumerator of `{}'",
                                        n.text(),
                                        self.model.def(id).scoped
                                    ),
                                );
                                None
                            }
                            _ => incompatible(self, full.trim_start_matches("::")),
                        }
                    }
                }
                Some(Sym::Def(cid)) if Some(cid) == self.defining => {
                    self.err(
                        pos,
                        format!("constant `{}' cannot be initialized with itself", n.text()),
                    );
                    None
                }
                Some(Sym::Def(cid)) => match &self.model.def(cid).kind {
                    DefKind::Const(c) => {
                        let (cty, cval) = (c.ty, c.value.clone());
                        if cty == t {
                            Some(cval)
                        } else {
                            match cval {
                                ConstValue::Integer(v) if is_integer(t) => {
                                    self.check_int_range(t, v, &n.text(), pos, what)
                                }
                                ConstValue::Integer(v) if is_float(t) => {
                                    Some(ConstValue::Float(v as f64))
                                }
                                ConstValue::Float(f) if is_float(t) => Some(ConstValue::Float(f)),
                                _ => {
                                    let k = self.model.type_name(cty);
                                    incompatible(self, k.trim_start_matches("::"))
                                }
                            }
                        }
                    }
                    _ => {
                        self.err(
                            pos,
                            format!(
                                "illegal initializer: `{}' is a {}",
                                n.text(),
                                self.model.def(cid).kind.keyword()
                            ),
                        );
                        None
                    }
                },
                Some(Sym::Module(_)) => {
                    self.err(
                        pos,
                        format!("illegal initializer: `{}' is a module", n.text()),
                    );
                    None
                }
                None => {
                    if let Type::Named(id) = t {
                        if matches!(self.model.def(id).kind, DefKind::Enum(_)) {
                            self.err(
                                pos,
                                format!(
                                    "`{}' does not designate an enumerator of `{}'",
                                    n.text(),
                                    self.model.def(id).scoped
                                ),
                            );
                            return None;
                        }
                    }
                    self.not_defined(n);
                    None
                }
            };
        }
        match (t, e) {
            (Type::Bool, ConstExpr::Bool(b)) => Some(ConstValue::Bool(*b)),
            (Type::String, ConstExpr::String(s)) => Some(ConstValue::String(s.clone())),
            (t, ConstExpr::Integer { value, text }) if is_integer(t) => match value {
                Some(v) => self.check_int_range(t, *v, text, pos, what),
                None => {
                    self.err(pos, format!("integer constant `{text}' out of range"));
                    None
                }
            },
            (t, ConstExpr::Integer { value, text }) if is_float(t) => match value {
                Some(v) => Some(ConstValue::Float(*v as f64)),
                None => {
                    self.err(pos, format!("integer constant `{text}' out of range"));
                    None
                }
            },
            (t, ConstExpr::Float { value, text }) if is_float(t) => {
                if !value.is_finite() {
                    self.err(
                        pos,
                        format!("floating-point constant `{text}' out of range"),
                    );
                    return None;
                }
                Some(ConstValue::Float(*value))
            }
            _ => incompatible(self, lit_kind),
        }
    }

    /// Deprecated Ice 3.7 lookup: an enumerator named directly in the scope
    /// enclosing its enum.
    fn enumerator_in_enclosing_scope(&mut self, n: &ScopedName, scope: ModuleId) -> Option<Sym> {
        let last = n.parts.last()?;
        let prefix = n.parts[..n.parts.len() - 1].join("::");
        // Candidate modules, innermost first (relative names search outwards).
        let mut candidates = Vec::new();
        if n.absolute {
            candidates.push(format!("::{prefix}"));
        } else {
            let mut s = Some(scope);
            loop {
                let base = self.scope_name(s);
                candidates.push(if prefix.is_empty() {
                    base
                } else {
                    format!("{base}::{prefix}")
                });
                match s {
                    Some(m) => s = self.model.module(m).parent,
                    None => break,
                }
            }
        }
        for module_scoped in candidates {
            let module_scoped = module_scoped.trim_end_matches("::");
            let found = self.model.definitions.iter().find_map(|d| match &d.kind {
                DefKind::Enum(en) if self.model.module(d.module).scoped == module_scoped => en
                    .enumerators
                    .iter()
                    .position(|x| &x.name == last)
                    .map(|i| (d.id, i)),
                _ => None,
            });
            if let Some((id, i)) = found {
                self.warn(
                    n.pos,
                    format!("referencing enumerator `{last}' in its enumeration's enclosing scope is deprecated"),
                );
                return Some(Sym::Enumerator(id, i));
            }
        }
        None
    }

    fn check_int_range(
        &mut self,
        t: Type,
        v: i64,
        text: &str,
        pos: Pos,
        what: &str,
    ) -> Option<ConstValue> {
        let (lo, hi, name) = match t {
            Type::Byte => (0, 255, "byte"),
            Type::Short => (i64::from(i16::MIN), i64::from(i16::MAX), "short"),
            Type::Int => (i64::from(i32::MIN), i64::from(i32::MAX), "int"),
            _ => (i64::MIN, i64::MAX, "long"),
        };
        if v < lo || v > hi {
            self.err(
                pos,
                format!("initializer `{text}' for {what} out of range for type {name}"),
            );
            return None;
        }
        Some(ConstValue::Integer(v))
    }
}

/// A default value that names a data member of the same type (Ice looks
/// members up first and rejects them).
fn member_named<'m>(members: &'m [ast::DataMember], e: &ConstExpr) -> Option<&'m str> {
    let ConstExpr::Name(n) = e else { return None };
    if n.absolute || n.parts.len() != 1 {
        return None;
    }
    members
        .iter()
        .find(|m| m.name.name == n.parts[0])
        .map(|m| m.name.name.as_str())
}

fn is_integer(t: Type) -> bool {
    matches!(t, Type::Byte | Type::Short | Type::Int | Type::Long)
}

fn is_float(t: Type) -> bool {
    matches!(t, Type::Float | Type::Double)
}

fn article(kw: &str) -> String {
    match kw {
        "interface" | "exception" => format!("an {kw}"),
        _ => format!("a {kw}"),
    }
}
