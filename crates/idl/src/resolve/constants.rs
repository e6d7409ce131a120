//! Constant expressions: integer values, tags, compact ids, default and
//! constant values checked against their types.

use super::*;

impl Resolver<'_> {
    /// An integer from a literal or an integer constant.
    pub(super) fn integer_value(
        &mut self,
        e: &ConstExpr,
        pos: Pos,
        scope: Option<ModuleId>,
    ) -> Option<i64> {
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

    pub(super) fn tag(&mut self, e: &ConstExpr, pos: Pos, scope: ModuleId) -> Option<i32> {
        let v = self.integer_value(e, pos, Some(scope))?;
        if !(0..=i64::from(i32::MAX)).contains(&v) {
            self.err(pos, "tag for optional is out of range");
            return None;
        }
        Some(v as i32)
    }

    pub(super) fn compact_id(&mut self, e: &ConstExpr, pos: Pos, scope: ModuleId) -> Option<i32> {
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

    pub(super) fn const_type_ok(&self, t: Type) -> bool {
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
    pub(super) fn value(
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

    pub(super) fn check_int_range(
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
pub(super) fn member_named<'m>(members: &'m [ast::DataMember], e: &ConstExpr) -> Option<&'m str> {
    let ConstExpr::Name(n) = e else { return None };
    if n.absolute || n.parts.len() != 1 {
        return None;
    }
    members
        .iter()
        .find(|m| m.name.name == n.parts[0])
        .map(|m| m.name.name.as_str())
}

pub(super) fn is_integer(t: Type) -> bool {
    matches!(t, Type::Byte | Type::Short | Type::Int | Type::Long)
}

pub(super) fn is_float(t: Type) -> bool {
    matches!(t, Type::Float | Type::Double)
}
