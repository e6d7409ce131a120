//! Operations: parameters, modes, and the order in which their values are
//! marshaled.

use super::*;

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
