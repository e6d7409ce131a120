//! The parser's syntax tree. Names are unresolved text; positions are byte
//! offsets into the preprocessed text (`Pos`), turned into file:line:col by
//! the resolver. Only `resolve.rs` reads this; code generation reads
//! [`crate::model`].

/// Byte offset into the preprocessed text.
pub type Pos = usize;

/// An identifier as written (escape backslash removed).
#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Written as `\name` (keyword escape).
    pub escaped: bool,
    /// Where it starts.
    pub pos: Pos,
}

/// A possibly scoped name: `A`, `A::B`, `::A::B`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopedName {
    /// Starts with `::`.
    pub absolute: bool,
    /// The components.
    pub parts: Vec<String>,
    /// Where it starts.
    pub pos: Pos,
}

impl ScopedName {
    /// The name as written.
    pub fn text(&self) -> String {
        let mut s = String::new();
        if self.absolute {
            s.push_str("::");
        }
        s.push_str(&self.parts.join("::"));
        s
    }
}

/// One `["..."]` or `[["..."]]` metadata string.
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    /// The directive text.
    pub text: String,
    /// Where the string starts.
    pub pos: Pos,
}

/// Builtin type keywords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// `bool`
    Bool,
    /// `byte`
    Byte,
    /// `short`
    Short,
    /// `int`
    Int,
    /// `long`
    Long,
    /// `float`
    Float,
    /// `double`
    Double,
    /// `string`
    String,
    /// `Object`
    Object,
    /// `Object*`
    ObjectProxy,
    /// `Value`
    Value,
    /// `LocalObject`
    LocalObject,
}

/// A type as written.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeExpr {
    /// A builtin keyword type.
    Builtin(Builtin, Pos),
    /// A user type by name.
    Named(ScopedName),
    /// `Name*`.
    Proxy(ScopedName),
}

impl TypeExpr {
    /// Where the type starts.
    pub fn pos(&self) -> Pos {
        match self {
            TypeExpr::Builtin(_, p) => *p,
            TypeExpr::Named(n) | TypeExpr::Proxy(n) => n.pos,
        }
    }
}

/// A literal or a name in a constant or default-value position.
#[derive(Debug, Clone, PartialEq)]
pub enum ConstExpr {
    /// Integer literal (sign applied); `text` is as written.
    Integer {
        /// The value, or `None` if it does not fit in 64 bits.
        value: Option<i64>,
        /// As written.
        text: String,
    },
    /// Floating-point literal.
    Float {
        /// The value.
        value: f64,
        /// As written.
        text: String,
    },
    /// String literal (escapes decoded; adjacent literals are not joined).
    String(String),
    /// `true` / `false`.
    Bool(bool),
    /// A constant or enumerator name.
    Name(ScopedName),
}

/// A doc comment's raw text (markers stripped, lines joined by `\n`).
pub type Doc = Option<String>;

/// One file-level or local definition, or a module.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    /// `["..."]` before it.
    pub metadata: Vec<Meta>,
    /// Preceding doc comment.
    pub doc: Doc,
    /// `local` was written.
    pub local: bool,
    /// Where the definition keyword is.
    pub pos: Pos,
    /// What it is.
    pub kind: DefinitionKind,
}

/// The kinds of definitions.
#[derive(Debug, Clone, PartialEq)]
pub enum DefinitionKind {
    /// `module M { ... }`. Ice 3.8's `module A::B { ... }` is parsed as
    /// `module A { module B { ... } }`, each module marked `nested`.
    Module {
        /// Name.
        name: Ident,
        /// Contents.
        items: Vec<Item>,
        /// Part of a nested module name (`module A::B`).
        nested: bool,
    },
    /// `struct S { ... }`.
    Struct {
        /// Name.
        name: Ident,
        /// Members.
        members: Vec<DataMember>,
    },
    /// `class C;` (forward declaration).
    ClassDecl {
        /// Name.
        name: Ident,
    },
    /// `class C(id) extends B implements I, J { ... }`.
    Class {
        /// Name.
        name: Ident,
        /// Compact type id, as written.
        compact_id: Option<(ConstExpr, Pos)>,
        /// Base class.
        base: Option<ScopedName>,
        /// Implemented interfaces (deprecated).
        implements: Vec<ScopedName>,
        /// Data members.
        members: Vec<DataMember>,
        /// Operations (deprecated).
        operations: Vec<Operation>,
    },
    /// `interface I;`.
    InterfaceDecl {
        /// Name.
        name: Ident,
    },
    /// `interface I extends A, B { ... }`.
    Interface {
        /// Name.
        name: Ident,
        /// Bases.
        bases: Vec<ScopedName>,
        /// Operations.
        operations: Vec<Operation>,
    },
    /// `exception E extends B { ... }`.
    Exception {
        /// Name.
        name: Ident,
        /// Base.
        base: Option<ScopedName>,
        /// Members.
        members: Vec<DataMember>,
    },
    /// `sequence<T> S;`.
    Sequence {
        /// Name.
        name: Ident,
        /// Element metadata.
        element_metadata: Vec<Meta>,
        /// Element type.
        element: TypeExpr,
    },
    /// `dictionary<K, V> D;`.
    Dictionary {
        /// Name.
        name: Ident,
        /// Key metadata.
        key_metadata: Vec<Meta>,
        /// Key type.
        key: TypeExpr,
        /// Value metadata.
        value_metadata: Vec<Meta>,
        /// Value type.
        value: TypeExpr,
    },
    /// `enum E { a, b = 3 }`.
    Enum {
        /// Name.
        name: Ident,
        /// Enumerators.
        enumerators: Vec<Enumerator>,
    },
    /// `const T N = v;`.
    Const {
        /// Name.
        name: Ident,
        /// Metadata written between `const` and the type.
        type_metadata: Vec<Meta>,
        /// Type.
        ty: TypeExpr,
        /// Value.
        value: ConstExpr,
        /// Where the value starts.
        value_pos: Pos,
    },
}

impl DefinitionKind {
    /// The defined name.
    pub fn name(&self) -> &Ident {
        match self {
            DefinitionKind::Module { name, .. }
            | DefinitionKind::Struct { name, .. }
            | DefinitionKind::ClassDecl { name }
            | DefinitionKind::Class { name, .. }
            | DefinitionKind::InterfaceDecl { name }
            | DefinitionKind::Interface { name, .. }
            | DefinitionKind::Exception { name, .. }
            | DefinitionKind::Sequence { name, .. }
            | DefinitionKind::Dictionary { name, .. }
            | DefinitionKind::Enum { name, .. }
            | DefinitionKind::Const { name, .. } => name,
        }
    }
}

/// A top-level or module-level item.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// `[["..."]]` file metadata.
    FileMetadata(Vec<Meta>, Pos),
    /// A definition.
    Definition(Box<Definition>),
}

/// A data member of a struct, class or exception.
#[derive(Debug, Clone, PartialEq)]
pub struct DataMember {
    /// Metadata.
    pub metadata: Vec<Meta>,
    /// Doc comment.
    pub doc: Doc,
    /// `optional(tag)`, with the tag as written.
    pub optional: Option<(ConstExpr, Pos)>,
    /// Type.
    pub ty: TypeExpr,
    /// Name.
    pub name: Ident,
    /// `= value`.
    pub default: Option<(ConstExpr, Pos)>,
}

/// One operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    /// Metadata.
    pub metadata: Vec<Meta>,
    /// Doc comment.
    pub doc: Doc,
    /// `idempotent`.
    pub idempotent: bool,
    /// `optional(tag)` on the return type.
    pub return_optional: Option<(ConstExpr, Pos)>,
    /// Return type; `None` for `void`.
    pub return_type: Option<TypeExpr>,
    /// Name.
    pub name: Ident,
    /// Parameters.
    pub params: Vec<Param>,
    /// `throws` list.
    pub throws: Vec<ScopedName>,
}

/// One operation parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Metadata.
    pub metadata: Vec<Meta>,
    /// `out`.
    pub out: bool,
    /// `optional(tag)`.
    pub optional: Option<(ConstExpr, Pos)>,
    /// Type.
    pub ty: TypeExpr,
    /// Name.
    pub name: Ident,
}

/// One enumerator.
#[derive(Debug, Clone, PartialEq)]
pub struct Enumerator {
    /// Doc comment.
    pub doc: Doc,
    /// Metadata.
    pub metadata: Vec<Meta>,
    /// Name.
    pub name: Ident,
    /// `= value`.
    pub value: Option<(ConstExpr, Pos)>,
}

/// Syntax that Ice 3.8 accepts and Ice 3.7 rejects. A file that uses it
/// is read with Ice 3.8's rules (see [`crate::Dialect`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ice38Syntax {
    /// `module A::B::C { ... }`.
    NestedModuleName,
    /// `:` for inheritance instead of `extends` (`interface B : A`).
    ColonInheritance,
    /// A keyword of Ice 3.7 only (`local`, `implements`, `LocalObject`)
    /// used as a name.
    KeywordAsName(&'static str),
}

impl Ice38Syntax {
    /// What it is, for diagnostics.
    pub fn describe(self) -> String {
        match self {
            Ice38Syntax::NestedModuleName => "nested module name `module A::B'".to_owned(),
            Ice38Syntax::ColonInheritance => "`:' for inheritance".to_owned(),
            Ice38Syntax::KeywordAsName(kw) => format!("`{kw}' as a name"),
        }
    }
}

/// A parsed compilation unit (main file plus inlined includes).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Unit {
    /// Top-level items in order.
    pub items: Vec<Item>,
    /// Where Ice 3.8 syntax is used, in source order.
    pub ice38_syntax: Vec<(Pos, Ice38Syntax)>,
}
