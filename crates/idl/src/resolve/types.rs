//! Type references: bases, member and parameter types, data members,
//! operations and enumerators.

use super::*;

impl Resolver<'_> {
    /// Resolves a base of `id` that must be a defined `kw`.
    pub(super) fn base(
        &mut self,
        n: &ScopedName,
        scope: ModuleId,
        kw: &str,
        id: DefId,
    ) -> Option<DefId> {
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

    pub(super) fn ty(&mut self, t: &TypeExpr, scope: ModuleId) -> Option<Type> {
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
                    "class" if proxy && self.rules(n.pos).ice38 => {
                        self.err(
                            n.pos,
                            format!(
                                "`{}' must be an interface (Ice 3.8 has no proxies to classes)",
                                n.text()
                            ),
                        );
                        None
                    }
                    "class" | "interface" if proxy => {
                        if kind == "class" {
                            self.warn_deprecated(n.pos, "proxies to classes are deprecated");
                        }
                        Some(Type::Proxy(id))
                    }
                    "interface" if self.rules(n.pos).ice38 => {
                        self.err(
                            n.pos,
                            format!("add a `*' after the interface name to specify its proxy type: `{}*' (Ice 3.8 has no interfaces by value)", n.text()),
                        );
                        None
                    }
                    "interface" => {
                        if !self.model.def(id).local {
                            self.warn_deprecated(n.pos, "interface by value is deprecated");
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

    pub(super) fn members(
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

    pub(super) fn members_inner(
        &mut self,
        members: &[ast::DataMember],
        scope: ModuleId,
    ) -> Vec<DataMember> {
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

    pub(super) fn operations(&mut self, ops: &[ast::Operation], scope: ModuleId) -> Vec<Operation> {
        let saved = self.introduce_in.take();
        let out = self.operations_inner(ops, scope);
        self.introduce_in = saved;
        out
    }

    pub(super) fn operations_inner(
        &mut self,
        ops: &[ast::Operation],
        scope: ModuleId,
    ) -> Vec<Operation> {
        let mut out = Vec::new();
        // Names used in the interface so far (first component, lower case):
        // an operation may not then take one of them as its name, as
        // slice2cpp rules (`P f(); void p();` is "`p' has changed meaning").
        let mut used: HashSet<String> = HashSet::new();
        let note_use = |used: &mut HashSet<String>, t: &ScopedName| {
            if !t.absolute {
                if let Some(first) = t.parts.first() {
                    used.insert(lower(first));
                }
            }
        };
        let type_name = |t: &TypeExpr| match t {
            TypeExpr::Named(n) | TypeExpr::Proxy(n) => Some(n.clone()),
            TypeExpr::Builtin(..) => None,
        };
        for o in ops {
            self.check_ident(&o.name);
            if let Some(n) = o.return_type.as_ref().and_then(type_name) {
                note_use(&mut used, &n);
            }
            if used.contains(&lower(&o.name.name)) {
                self.err(o.name.pos, format!("`{}' has changed meaning", o.name.name));
            }
            for n in o.params.iter().filter_map(|p| type_name(&p.ty)) {
                note_use(&mut used, &n);
            }
            for t in &o.throws {
                note_use(&mut used, t);
            }
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

    pub(super) fn enumeration(
        &mut self,
        id: DefId,
        enumerators: &[ast::Enumerator],
        scope: ModuleId,
    ) {
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
}
