//! The interface model: the validated, resolved intermediate representation
//! that code generation reads. Built from Slice by `resolve.rs` (and later
//! from Rust traits by `floe-derive`); never refers to parser types.
//!
//! Definitions live in one arena ([`Model::definitions`], indexed by
//! [`DefId`]); modules ([`Model::modules`], indexed by [`ModuleId`]) list
//! their contents in source order. Type references are resolved
//! ([`Type::Named`] holds a `DefId`). Reopened modules are merged; each
//! definition records the file it came from ([`Definition::span`]`.file`),
//! so a generator can emit only the main file's definitions.
//!
//! A generator typically walks [`Model::roots`] → [`Module::contents`],
//! matches [`DefKind`], maps [`Type`]s to Rust types, and uses the helpers
//! that encode Ice's rules once: [`Operation::in_marshal_order`],
//! [`Operation::out_marshal_order`], [`members_marshal_order`],
//! [`Model::all_members`], [`Model::type_ids`], [`Model::optional_format`],
//! [`Model::is_variable_size`], [`Model::min_wire_size`]. Doc comments are
//! parsed into [`Doc`] for rustdoc.

use std::collections::HashMap;
use std::path::PathBuf;

pub use crate::diagnostic::{FileId, Span};

/// Index into [`Model::definitions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DefId(pub u32);

/// Index into [`Model::modules`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModuleId(pub u32);

/// A whole compilation: the main file and everything it includes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Model {
    /// Every file read, main file first ([`FileId`] indexes this).
    pub files: Vec<File>,
    /// All modules (merged across reopenings), outer before inner.
    pub modules: Vec<Module>,
    /// Top-level modules in first-appearance order.
    pub roots: Vec<ModuleId>,
    /// All definitions, in order of first declaration (a class or
    /// interface declared `class C;` keeps the id of that declaration).
    pub definitions: Vec<Definition>,
}

/// One Slice file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// The path as found.
    pub path: PathBuf,
    /// True for the file given on the command line.
    pub is_main: bool,
    /// `[["..."]]` file metadata, in order.
    pub metadata: Vec<String>,
}

/// A module; reopenings are merged into one.
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    /// The name.
    pub name: String,
    /// `::A::B`.
    pub scoped: String,
    /// The enclosing module.
    pub parent: Option<ModuleId>,
    /// Metadata of every opening, in order.
    pub metadata: Vec<String>,
    /// Doc comment of the first opening that has one.
    pub doc: Option<Doc>,
    /// Where it is first opened.
    pub span: Span,
    /// Every opening (file and position), for per-file generation.
    pub openings: Vec<Span>,
    /// Contents in source order.
    pub contents: Vec<Contained>,
}

/// An entry of a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contained {
    /// A nested module.
    Module(ModuleId),
    /// A definition.
    Definition(DefId),
}

/// A parsed doc comment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Doc {
    /// The whole text, comment markers removed.
    pub text: String,
    /// The text before the first `@tag` line.
    pub summary: String,
    /// `@param name text`.
    pub params: Vec<(String, String)>,
    /// `@return text`.
    pub returns: Option<String>,
    /// `@throws Name text` / `@exception Name text`.
    pub throws: Vec<(String, String)>,
    /// `@see ...`.
    pub see: Vec<String>,
    /// `@deprecated [text]`.
    pub deprecated: Option<String>,
}

/// A named definition in a module.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    /// Its id (its index in [`Model::definitions`]).
    pub id: DefId,
    /// Unscoped name as written (escape removed).
    pub name: String,
    /// `::M::N::Name`.
    pub scoped: String,
    /// Enclosing module.
    pub module: ModuleId,
    /// `["..."]` metadata.
    pub metadata: Vec<String>,
    /// Doc comment.
    pub doc: Option<Doc>,
    /// Declared `local`.
    pub local: bool,
    /// Defined by the model's source, or a stand-in for a type defined
    /// elsewhere.
    pub origin: Origin,
    /// Where it is defined (for forward-declared-only classes and
    /// interfaces: the first declaration).
    pub span: Span,
    /// What it is.
    pub kind: DefKind,
}

impl Definition {
    /// The Ice type id (`::M::Name`).
    pub fn type_id(&self) -> &str {
        &self.scoped
    }

    /// Whether `directive` appears in the metadata.
    pub fn has_metadata(&self, directive: &str) -> bool {
        self.metadata.iter().any(|m| m == directive)
    }

    /// Whether it is a stand-in for a Rust type defined elsewhere
    /// ([`Origin::External`]).
    pub fn is_external(&self) -> bool {
        self.origin == Origin::External
    }
}

/// Where a [`Definition`]'s Rust type comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Defined by what the model was built from: a Slice definition, or
    /// the item a `floe-derive` macro expands. Its kind is complete.
    Source,
    /// A stand-in for a Rust type defined elsewhere (`floe-derive`:
    /// another derived type, proxy or base interface named by path). The
    /// model knows its name, type id and kind, not necessarily its
    /// members; generated code refers to the type and never defines it.
    External,
}

/// The kinds of definitions.
#[derive(Debug, Clone, PartialEq)]
pub enum DefKind {
    /// `struct`.
    Struct(Struct),
    /// `class`.
    Class(Class),
    /// `interface`.
    Interface(Interface),
    /// `exception`.
    Exception(Exception),
    /// `sequence`.
    Sequence(Sequence),
    /// `dictionary`.
    Dictionary(Dictionary),
    /// `enum`.
    Enum(Enum),
    /// `const`.
    Const(Const),
}

impl DefKind {
    /// The Slice keyword for this kind (`struct`, `class`, ...).
    pub fn keyword(&self) -> &'static str {
        match self {
            DefKind::Struct(_) => "struct",
            DefKind::Class(_) => "class",
            DefKind::Interface(_) => "interface",
            DefKind::Exception(_) => "exception",
            DefKind::Sequence(_) => "sequence",
            DefKind::Dictionary(_) => "dictionary",
            DefKind::Enum(_) => "enum",
            DefKind::Const(_) => "constant",
        }
    }
}

/// A structure.
#[derive(Debug, Clone, PartialEq)]
pub struct Struct {
    /// Members in order.
    pub members: Vec<DataMember>,
}

/// A class (value type).
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    /// False if only forward-declared (`class C;`) in this compilation.
    pub defined: bool,
    /// Base class.
    pub base: Option<DefId>,
    /// Implemented interfaces (deprecated Slice feature).
    pub implements: Vec<DefId>,
    /// Compact type id, `class C(42)`.
    pub compact_id: Option<i32>,
    /// Data members in declaration order (optional ones included; encoders
    /// sort optionals by tag).
    pub members: Vec<DataMember>,
    /// Operations (deprecated Slice feature).
    pub operations: Vec<Operation>,
}

/// An interface.
#[derive(Debug, Clone, PartialEq)]
pub struct Interface {
    /// False if only forward-declared (`interface I;`).
    pub defined: bool,
    /// Direct bases in order.
    pub bases: Vec<DefId>,
    /// Operations in order.
    pub operations: Vec<Operation>,
}

/// A user exception.
#[derive(Debug, Clone, PartialEq)]
pub struct Exception {
    /// Base exception.
    pub base: Option<DefId>,
    /// Members in order.
    pub members: Vec<DataMember>,
}

/// A sequence type.
#[derive(Debug, Clone, PartialEq)]
pub struct Sequence {
    /// Element type.
    pub element: Type,
    /// Metadata on the element type (`sequence<["cpp:array"] byte>`).
    pub element_metadata: Vec<String>,
}

/// A dictionary type.
#[derive(Debug, Clone, PartialEq)]
pub struct Dictionary {
    /// Key type (validated to be a legal key).
    pub key: Type,
    /// Metadata on the key type.
    pub key_metadata: Vec<String>,
    /// Value type.
    pub value: Type,
    /// Metadata on the value type.
    pub value_metadata: Vec<String>,
}

/// An enumeration.
#[derive(Debug, Clone, PartialEq)]
pub struct Enum {
    /// Enumerators in order.
    pub enumerators: Vec<Enumerator>,
    /// Largest value (for the wire size of the encoding).
    pub max_value: i32,
    /// True if any enumerator has an explicit `= value`.
    pub explicit_values: bool,
}

/// One enumerator.
#[derive(Debug, Clone, PartialEq)]
pub struct Enumerator {
    /// Name.
    pub name: String,
    /// Value (implicit: previous + 1, first 0).
    pub value: i32,
    /// Metadata.
    pub metadata: Vec<String>,
    /// Doc comment.
    pub doc: Option<Doc>,
    /// Where.
    pub span: Span,
}

/// A constant.
#[derive(Debug, Clone, PartialEq)]
pub struct Const {
    /// Declared type.
    pub ty: Type,
    /// Metadata written on the type.
    pub type_metadata: Vec<String>,
    /// The value, converted to the declared type.
    pub value: ConstValue,
    /// The initializer as written.
    pub literal: String,
}

/// A constant or default value, already checked against its type.
#[derive(Debug, Clone, PartialEq)]
pub enum ConstValue {
    /// `bool`.
    Bool(bool),
    /// `byte`, `short`, `int`, `long` (in range for the type).
    Integer(i64),
    /// `float`, `double`.
    Float(f64),
    /// `string` (escapes decoded).
    String(String),
    /// An enumerator: the enum and the index into its `enumerators`.
    Enumerator {
        /// The enum definition.
        enum_id: DefId,
        /// Index in [`Enum::enumerators`].
        index: usize,
    },
}

/// A data member of a struct, class or exception.
#[derive(Debug, Clone, PartialEq)]
pub struct DataMember {
    /// Name.
    pub name: String,
    /// Type.
    pub ty: Type,
    /// `optional(tag)`.
    pub tag: Option<i32>,
    /// `= value` default.
    pub default: Option<ConstValue>,
    /// Metadata.
    pub metadata: Vec<String>,
    /// Doc comment.
    pub doc: Option<Doc>,
    /// Where.
    pub span: Span,
}

/// Operation mode (`idempotent` or not) as sent on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperationMode {
    /// Ordinary operation (wire mode 0).
    Normal,
    /// `idempotent` (wire mode 2).
    Idempotent,
}

/// An operation of an interface (or, deprecated, of a class).
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    /// Name (also the name sent on the wire).
    pub name: String,
    /// Normal or idempotent.
    pub mode: OperationMode,
    /// Return type; `None` for `void`.
    pub return_type: Option<Type>,
    /// `optional(tag)` on the return type.
    pub return_tag: Option<i32>,
    /// Parameters in declaration order (in-parameters come first).
    pub params: Vec<Param>,
    /// Exceptions in the `throws` clause.
    pub throws: Vec<DefId>,
    /// Metadata (`amd`, `marshaled-result`, `format:...`, ...).
    pub metadata: Vec<String>,
    /// Doc comment.
    pub doc: Option<Doc>,
    /// Where.
    pub span: Span,
}

impl Operation {
    /// In-parameters in order.
    pub fn in_params(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| !p.out)
    }

    /// Out-parameters in order.
    pub fn out_params(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| p.out)
    }

    /// True if `directive` appears in the operation's metadata.
    pub fn has_metadata(&self, directive: &str) -> bool {
        self.metadata.iter().any(|m| m == directive)
    }

    /// In-parameters in encoding order: required ones as declared, then
    /// optional ones sorted by tag (encoding 1.1).
    pub fn in_marshal_order(&self) -> Vec<Slot<'_>> {
        marshal_order(self.in_params().map(Slot::Param).collect())
    }

    /// The reply's values in encoding order: required out-parameters as
    /// declared, then a required return value, then every optional one
    /// (out-parameters and return) sorted by tag.
    pub fn out_marshal_order(&self) -> Vec<Slot<'_>> {
        let mut slots: Vec<Slot<'_>> = self.out_params().map(Slot::Param).collect();
        if let Some(ty) = self.return_type {
            slots.push(Slot::Return {
                ty,
                tag: self.return_tag,
            });
        }
        marshal_order(slots)
    }
}

/// One value in an operation's request or reply encapsulation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Slot<'a> {
    /// A parameter.
    Param(&'a Param),
    /// The return value.
    Return {
        /// Its type.
        ty: Type,
        /// `optional(tag)` on the return type.
        tag: Option<i32>,
    },
}

impl Slot<'_> {
    /// The value's type.
    pub fn ty(&self) -> Type {
        match self {
            Slot::Param(p) => p.ty,
            Slot::Return { ty, .. } => *ty,
        }
    }

    /// The optional tag, if optional.
    pub fn tag(&self) -> Option<i32> {
        match self {
            Slot::Param(p) => p.tag,
            Slot::Return { tag, .. } => *tag,
        }
    }
}

fn marshal_order(slots: Vec<Slot<'_>>) -> Vec<Slot<'_>> {
    let (mut optional, mut required): (Vec<_>, Vec<_>) =
        slots.into_iter().partition(|s| s.tag().is_some());
    optional.sort_by_key(|s| s.tag());
    required.extend(optional);
    required
}

/// Data members in encoding order: required ones as declared, then
/// optional ones sorted by tag (one class or exception slice).
pub fn members_marshal_order(members: &[DataMember]) -> Vec<&DataMember> {
    let (mut optional, mut required): (Vec<_>, Vec<_>) =
        members.iter().partition(|m| m.tag.is_some());
    optional.sort_by_key(|m| m.tag);
    required.extend(optional);
    required
}

/// An operation parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Name.
    pub name: String,
    /// Type.
    pub ty: Type,
    /// `out` parameter.
    pub out: bool,
    /// `optional(tag)`.
    pub tag: Option<i32>,
    /// Metadata.
    pub metadata: Vec<String>,
    /// Where.
    pub span: Span,
}

/// A resolved type reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Type {
    /// `bool`.
    Bool,
    /// `byte`.
    Byte,
    /// `short`.
    Short,
    /// `int`.
    Int,
    /// `long`.
    Long,
    /// `float`.
    Float,
    /// `double`.
    Double,
    /// `string`.
    String,
    /// `Object` used as a value type: any class instance.
    Object,
    /// `Object*`: an untyped proxy.
    ObjectProxy,
    /// `Value`: any class instance.
    Value,
    /// `LocalObject` (local definitions only).
    LocalObject,
    /// A struct, class, enum, sequence, dictionary, or (by value,
    /// deprecated) an interface.
    Named(DefId),
    /// `I*`: a proxy to interface (or, deprecated, class) `I`.
    Proxy(DefId),
}

/// How an optional value is encoded (encoding 1.1 optional formats).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionalFormat {
    /// 1 byte.
    F1,
    /// 2 bytes.
    F2,
    /// 4 bytes.
    F4,
    /// 8 bytes.
    F8,
    /// A size.
    Size,
    /// Variable length with a size prefix.
    VSize,
    /// Fixed 4-byte length prefix.
    FSize,
    /// A class instance.
    Class,
}

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
    /// depth-first order (not including `id`).
    pub fn all_bases(&self, id: DefId) -> Vec<DefId> {
        let mut out = Vec::new();
        let mut stack = vec![id];
        while let Some(c) = stack.pop() {
            if let DefKind::Interface(i) = &self.def(c).kind {
                for b in i.bases.iter().rev() {
                    if !out.contains(b) && *b != id {
                        out.push(*b);
                        stack.push(*b);
                    }
                }
            }
        }
        out
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

impl Doc {
    /// Splits raw doc-comment text into summary and tags.
    pub fn parse(text: &str) -> Doc {
        let mut doc = Doc {
            text: text.to_owned(),
            ..Doc::default()
        };
        enum Cur {
            Summary,
            Param,
            Return,
            Throws,
            See,
            Deprecated,
        }
        let mut cur = Cur::Summary;
        for line in text.lines() {
            let t = line.trim();
            if let Some(rest) = t.strip_prefix('@') {
                let (tag, body) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let body = body.trim();
                let (first, remainder) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
                match tag {
                    "param" => {
                        doc.params
                            .push((first.to_owned(), remainder.trim().to_owned()));
                        cur = Cur::Param;
                    }
                    "return" | "returns" => {
                        doc.returns = Some(body.to_owned());
                        cur = Cur::Return;
                    }
                    "throws" | "exception" => {
                        doc.throws
                            .push((first.to_owned(), remainder.trim().to_owned()));
                        cur = Cur::Throws;
                    }
                    "see" => {
                        doc.see.push(body.to_owned());
                        cur = Cur::See;
                    }
                    "deprecated" => {
                        doc.deprecated = Some(body.to_owned());
                        cur = Cur::Deprecated;
                    }
                    _ => {}
                }
                continue;
            }
            let append = |s: &mut String| {
                if !s.is_empty() {
                    s.push(if t.is_empty() { '\n' } else { ' ' });
                }
                s.push_str(t);
            };
            match cur {
                Cur::Summary => {
                    if !doc.summary.is_empty() {
                        doc.summary.push('\n');
                    }
                    doc.summary.push_str(t);
                }
                Cur::Param => {
                    if let Some(p) = doc.params.last_mut() {
                        append(&mut p.1);
                    }
                }
                Cur::Return => {
                    if let Some(r) = doc.returns.as_mut() {
                        append(r);
                    }
                }
                Cur::Throws => {
                    if let Some(p) = doc.throws.last_mut() {
                        append(&mut p.1);
                    }
                }
                Cur::See => {}
                Cur::Deprecated => {
                    if let Some(r) = doc.deprecated.as_mut() {
                        append(r);
                    }
                }
            }
        }
        doc.summary = doc.summary.trim().to_owned();
        doc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(name: &str, out: bool, tag: Option<i32>) -> Param {
        Param {
            name: name.into(),
            ty: Type::Int,
            out,
            tag,
            metadata: vec![],
            span: Span::default(),
        }
    }

    #[test]
    fn marshal_order_puts_optionals_last_by_tag() {
        let op = Operation {
            name: "f".into(),
            mode: OperationMode::Normal,
            return_type: Some(Type::String),
            return_tag: None,
            params: vec![
                param("a", false, Some(5)),
                param("b", false, None),
                param("c", false, Some(2)),
                param("x", true, Some(1)),
                param("y", true, None),
            ],
            throws: vec![],
            metadata: vec![],
            doc: None,
            span: Span::default(),
        };
        let names = |v: Vec<Slot<'_>>| -> Vec<String> {
            v.iter()
                .map(|s| match s {
                    Slot::Param(p) => p.name.clone(),
                    Slot::Return { .. } => "<return>".into(),
                })
                .collect()
        };
        assert_eq!(names(op.in_marshal_order()), ["b", "c", "a"]);
        assert_eq!(names(op.out_marshal_order()), ["y", "<return>", "x"]);
        let mut op2 = op.clone();
        op2.return_tag = Some(0);
        assert_eq!(names(op2.out_marshal_order()), ["y", "<return>", "x"]);
        op2.return_tag = Some(3);
        assert_eq!(names(op2.out_marshal_order()), ["y", "x", "<return>"]);
    }

    #[test]
    fn doc_tags() {
        let d = Doc::parse("Does it.\nReally.\n@param a the input\n  continued\n@return result\n@throws E when bad\n@deprecated use g");
        assert_eq!(d.summary, "Does it.\nReally.");
        assert_eq!(
            d.params,
            vec![("a".to_owned(), "the input continued".to_owned())]
        );
        assert_eq!(d.returns.as_deref(), Some("result"));
        assert_eq!(d.throws[0].0, "E");
        assert_eq!(d.deprecated.as_deref(), Some("use g"));
    }
}
