//! Questions generators ask of a [`Model`]: definitions by id, bases,
//! members in layout order, type ids, optional formats, wire sizes.

use super::*;

impl Model {
    /// The definition with id `id`.
    ///
    /// # Panics
    /// If `id` does not come from this model.
    pub fn def(&self, id: DefId) -> &Definition {
        &self.definitions[id.0 as usize]
    }

    /// The module with id `id`.
    ///
    /// # Panics
    /// If `id` does not come from this model.
    pub fn module(&self, id: ModuleId) -> &Module {
        &self.modules[id.0 as usize]
    }

    /// Finds a definition by absolute scoped name (`::M::Name`).
    pub fn lookup(&self, scoped: &str) -> Option<&Definition> {
        self.definitions.iter().find(|d| d.scoped == scoped)
    }

    /// Finds a module by absolute scoped name (`::M`).
    pub fn lookup_module(&self, scoped: &str) -> Option<&Module> {
        self.modules.iter().find(|m| m.scoped == scoped)
    }

    /// Definitions from the main file (what a generator emits).
    pub fn main_definitions(&self) -> impl Iterator<Item = &Definition> {
        self.definitions.iter().filter(|d| {
            self.files
                .get(d.span.file.0 as usize)
                .is_some_and(|f| f.is_main)
        })
    }

    /// Data members of a class or exception including every base's, base
    /// first (the order in which slices are laid out, most-derived last).
    pub fn all_members(&self, id: DefId) -> Vec<&DataMember> {
        let mut chain = Vec::new();
        let mut cur = Some(id);
        let mut guard = 0;
        while let Some(c) = cur {
            guard += 1;
            if guard > self.definitions.len() + 1 {
                break;
            }
            chain.push(c);
            cur = match &self.def(c).kind {
                DefKind::Class(k) => k.base,
                DefKind::Exception(e) => e.base,
                _ => None,
            };
        }
        let mut out = Vec::new();
        for c in chain.into_iter().rev() {
            match &self.def(c).kind {
                DefKind::Class(k) => out.extend(k.members.iter()),
                DefKind::Exception(e) => out.extend(e.members.iter()),
                DefKind::Struct(s) => out.extend(s.members.iter()),
                _ => {}
            }
        }
        out
    }

    /// Every interface `id` inherits from, transitively, each once, in
    /// depth-first order (not including `id`). For a class (a remote
    /// object when it has operations, deprecated in Slice): its base
    /// classes and the interfaces they implement.
    pub fn all_bases(&self, id: DefId) -> Vec<DefId> {
        let mut out = Vec::new();
        let mut stack = vec![id];
        while let Some(c) = stack.pop() {
            for b in self.direct_bases(c).iter().rev() {
                if !out.contains(b) && *b != id {
                    out.push(*b);
                    stack.push(*b);
                }
            }
        }
        out
    }

    /// Whether the file of `span` suppresses warnings of `category`
    /// (`deprecated`, `invalid-metadata`, `invalid-comment`) with Ice's
    /// file metadata `[["suppress-warning:<category>"]]`;
    /// `[["suppress-warning"]]` and `[["suppress-warning:all"]]` suppress
    /// every warning.
    pub fn suppresses_warning(&self, span: crate::diagnostic::Span, category: &str) -> bool {
        let Some(file) = self.files.get(span.file.0 as usize) else {
            return false;
        };
        file.metadata.iter().any(|m| {
            let m = m.trim();
            match m.strip_prefix("suppress-warning") {
                Some("") => true,
                Some(rest) => rest.strip_prefix(':').is_some_and(|cats| {
                    cats.split(',')
                        .any(|c| c.trim() == category || c.trim() == "all")
                }),
                None => false,
            }
        })
    }

    /// The direct bases of an interface, or of a class its base class
    /// then the interfaces it implements.
    pub fn direct_bases(&self, id: DefId) -> Vec<DefId> {
        match &self.def(id).kind {
            DefKind::Interface(i) => i.bases.clone(),
            DefKind::Class(k) => k
                .base
                .into_iter()
                .chain(k.implements.iter().copied())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The operations an interface or a class declares itself.
    pub fn own_operations(&self, id: DefId) -> &[super::Operation] {
        match &self.def(id).kind {
            DefKind::Interface(i) => &i.operations,
            DefKind::Class(k) => &k.operations,
            _ => &[],
        }
    }

    /// Whether `id` is a remote object type: a defined interface, or a
    /// class that declares or inherits operations (deprecated in Slice;
    /// Ice generates a proxy and a servant for it).
    pub fn is_remote(&self, id: DefId) -> bool {
        match &self.def(id).kind {
            DefKind::Interface(i) => i.defined,
            DefKind::Class(k) => {
                k.defined
                    && (!k.operations.is_empty()
                        || self
                            .all_bases(id)
                            .iter()
                            .any(|b| !self.own_operations(*b).is_empty()))
            }
            _ => false,
        }
    }

    /// Ice type ids an interface supports (`ice_ids`): itself, its bases
    /// and `::Ice::Object`, sorted.
    pub fn type_ids(&self, id: DefId) -> Vec<String> {
        let mut ids: Vec<String> = self
            .all_bases(id)
            .into_iter()
            .map(|b| self.def(b).scoped.clone())
            .collect();
        ids.push(self.def(id).scoped.clone());
        ids.push("::Ice::Object".to_owned());
        ids.sort();
        ids.dedup();
        ids
    }

    /// True if values of `ty` may hold class instances: `Value`, `Object`
    /// by value, classes, interfaces by value, and structs, sequences and
    /// dictionary values made of them.
    pub fn uses_classes(&self, ty: Type) -> bool {
        self.uses_classes_depth(ty, 0)
    }

    fn uses_classes_depth(&self, ty: Type, depth: usize) -> bool {
        if depth > 64 {
            return true;
        }
        match ty {
            Type::Object | Type::Value => true,
            Type::Named(id) => match &self.def(id).kind {
                DefKind::Class(_) | DefKind::Interface(_) => true,
                DefKind::Struct(s) => s
                    .members
                    .iter()
                    .any(|m| self.uses_classes_depth(m.ty, depth + 1)),
                DefKind::Sequence(s) => self.uses_classes_depth(s.element, depth + 1),
                DefKind::Dictionary(d) => self.uses_classes_depth(d.value, depth + 1),
                _ => false,
            },
            _ => false,
        }
    }

    /// True if values of `ty` have a variable encoded size.
    pub fn is_variable_size(&self, ty: Type) -> bool {
        self.variable_size_memo(ty, &mut HashMap::new())
    }

    fn variable_size_memo(&self, ty: Type, memo: &mut HashMap<DefId, bool>) -> bool {
        match ty {
            Type::Bool
            | Type::Byte
            | Type::Short
            | Type::Int
            | Type::Long
            | Type::Float
            | Type::Double => false,
            Type::Named(id) => match &self.def(id).kind {
                DefKind::Struct(s) => {
                    if let Some(v) = memo.get(&id) {
                        return *v;
                    }
                    memo.insert(id, true);
                    let v = s
                        .members
                        .iter()
                        .any(|m| self.variable_size_memo(m.ty, memo));
                    memo.insert(id, v);
                    v
                }
                _ => true,
            },
            _ => true,
        }
    }

    /// The smallest encoded size of a value of `ty`, in bytes.
    pub fn min_wire_size(&self, ty: Type) -> usize {
        self.min_wire_size_memo(ty, &mut HashMap::new())
    }

    fn min_wire_size_memo(&self, ty: Type, memo: &mut HashMap<DefId, usize>) -> usize {
        match ty {
            Type::Bool | Type::Byte => 1,
            Type::Short => 2,
            Type::Int | Type::Float => 4,
            Type::Long | Type::Double => 8,
            Type::String => 1,
            Type::ObjectProxy | Type::Proxy(_) => 2,
            Type::Object | Type::Value | Type::LocalObject => 1,
            Type::Named(id) => match &self.def(id).kind {
                DefKind::Struct(s) => {
                    if let Some(v) = memo.get(&id) {
                        return *v;
                    }
                    memo.insert(id, 1);
                    let v = s
                        .members
                        .iter()
                        .map(|m| self.min_wire_size_memo(m.ty, memo))
                        .fold(0usize, usize::saturating_add);
                    memo.insert(id, v);
                    v
                }
                _ => 1,
            },
        }
    }

    /// The optional format used to encode an optional of type `ty`.
    pub fn optional_format(&self, ty: Type) -> OptionalFormat {
        match ty {
            Type::Bool | Type::Byte => OptionalFormat::F1,
            Type::Short => OptionalFormat::F2,
            Type::Int | Type::Float => OptionalFormat::F4,
            Type::Long | Type::Double => OptionalFormat::F8,
            Type::String => OptionalFormat::VSize,
            Type::ObjectProxy | Type::Proxy(_) => OptionalFormat::FSize,
            Type::Object | Type::Value | Type::LocalObject => OptionalFormat::Class,
            Type::Named(id) => match &self.def(id).kind {
                DefKind::Enum(_) => OptionalFormat::Size,
                DefKind::Class(_) | DefKind::Interface(_) => OptionalFormat::Class,
                DefKind::Struct(_) => {
                    if self.is_variable_size(ty) {
                        OptionalFormat::FSize
                    } else {
                        OptionalFormat::VSize
                    }
                }
                DefKind::Sequence(s) => {
                    if self.is_variable_size(s.element) {
                        OptionalFormat::FSize
                    } else {
                        OptionalFormat::VSize
                    }
                }
                DefKind::Dictionary(d) => {
                    if self.is_variable_size(d.key) || self.is_variable_size(d.value) {
                        OptionalFormat::FSize
                    } else {
                        OptionalFormat::VSize
                    }
                }
                _ => OptionalFormat::FSize,
            },
        }
    }

    /// A Slice spelling of `ty` (`int`, `::M::S`, `::M::I*`).
    pub fn type_name(&self, ty: Type) -> String {
        match ty {
            Type::Bool => "bool".into(),
            Type::Byte => "byte".into(),
            Type::Short => "short".into(),
            Type::Int => "int".into(),
            Type::Long => "long".into(),
            Type::Float => "float".into(),
            Type::Double => "double".into(),
            Type::String => "string".into(),
            Type::Object => "Object".into(),
            Type::ObjectProxy => "Object*".into(),
            Type::Value => "Value".into(),
            Type::LocalObject => "LocalObject".into(),
            Type::Named(id) => self.def(id).scoped.clone(),
            Type::Proxy(id) => format!("{}*", self.def(id).scoped),
        }
    }
}
