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

mod doc;
mod operation;
mod queries;

pub use doc::Doc;
pub use operation::{members_marshal_order, Operation, OperationMode, Param, Slot};

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
    /// Read with Ice 3.8's rules (see [`crate::Dialect`]).
    pub ice38: bool,
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
