//! Scopes: opening (and reopening) modules, declaring names (forward
//! declarations, redefinitions, names that change meaning), and looking
//! names up from the innermost scope outwards.

use super::*;
use crate::model::Origin;

impl Resolver<'_> {
    /// Ice 3.7 forbids naming a definition like its enclosing module (Ice
    /// 3.8 does not): reports it in a 3.7 file, and returns true if so.
    pub(super) fn named_like_enclosing_module(
        &mut self,
        scope: Option<ModuleId>,
        name: &ast::Ident,
        what: &str,
    ) -> bool {
        let Some(parent) = scope else {
            return false;
        };
        if self.rules(name.pos).ice38 {
            return false;
        }
        let pname = &self.model.module(parent).name;
        let message = if *pname == name.name {
            format!(
                "{what} name `{}' must differ from the name of its immediately enclosing module",
                name.name
            )
        } else if pname.eq_ignore_ascii_case(&name.name) {
            format!(
                "{what} name `{}' cannot differ only in capitalization from its immediately enclosing module name `{pname}'",
                name.name
            )
        } else {
            return false;
        };
        self.err(name.pos, message);
        true
    }

    pub(super) fn open_module(
        &mut self,
        d: &ast::Definition,
        scope: Option<ModuleId>,
    ) -> Option<ModuleId> {
        let name = d.kind.name();
        // Ice 3.8 ignores metadata on `module A::B` (with a warning).
        let metadata = match &d.kind {
            DefinitionKind::Module { nested: true, .. } => Vec::new(),
            _ => metas(&d.metadata),
        };
        if self.named_like_enclosing_module(scope, name, "module") {
            return None;
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
                    module.metadata.extend(metadata);
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
            metadata,
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
    pub(super) fn declare(
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
            origin: Origin::Source,
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
    pub(super) fn check_changed_meaning(
        &mut self,
        scope: ModuleId,
        name: &ast::Ident,
        scoped: &str,
    ) {
        if let Some((written, meaning)) = self.introduced.get(&(scope, lower(&name.name))) {
            if *meaning != lower(scoped) {
                let written = written.clone();
                self.err(name.pos, format!("`{written}' has changed meaning"));
            }
        }
    }

    /// Looks a name up from `scope` outwards. Returns the symbol and its
    /// exact scoped name.
    pub(super) fn lookup(&mut self, n: &ScopedName, scope: Option<ModuleId>) -> Option<Sym> {
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

    pub(super) fn not_defined(&mut self, n: &ScopedName) {
        self.err(n.pos, format!("`{}' is not defined", n.text()));
    }

    /// Deprecated Ice 3.7 lookup: an enumerator named directly in the scope
    /// enclosing its enum.
    pub(super) fn enumerator_in_enclosing_scope(
        &mut self,
        n: &ScopedName,
        scope: ModuleId,
    ) -> Option<Sym> {
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
                self.warn_deprecated(
                    n.pos,
                    format!("referencing enumerator `{last}' in its enumeration's enclosing scope is deprecated"),
                );
                return Some(Sym::Enumerator(id, i));
            }
        }
        None
    }
}
