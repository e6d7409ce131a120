//! What the definitions and the bodies of classes and interfaces share:
//! the doc comment and metadata before an item, a data member after its
//! type, member and parameter names, the optional `;` after a brace.

use nom::combinator::cut;
use nom::Parser;

use super::types::{const_expr, metadata};
use crate::ast::DataMember;
use crate::lexer::{expect_sym, ident, sym, ws, In, PResult, SyntaxError};

/// Skips an optional `;` after a closing brace.
pub(super) fn opt_semi(i: In<'_>) -> In<'_> {
    match sym(";")(i) {
        Ok((r, _)) => r,
        Err(_) => i,
    }
}

/// Doc comment then metadata (or metadata then doc comment).
pub(super) fn doc_and_metadata(i: In<'_>) -> PResult<'_, (Option<String>, Vec<crate::ast::Meta>)> {
    let (i, doc) = ws(i)?;
    let (i, md) = metadata(i)?;
    let (i, doc2) = ws(i)?;
    Ok((i, (doc2.or(doc), md)))
}

/// A data member after its type: the name, an optional `= value`, `;`.
pub(super) fn member_rest(
    i: In<'_>,
    doc: Option<String>,
    metadata: Vec<crate::ast::Meta>,
    optional: Option<(crate::ast::ConstExpr, usize)>,
    ty: crate::ast::TypeExpr,
) -> PResult<'_, DataMember> {
    let (i, name) = member_name(i, "data member name")?;
    let (i, default) = opt_value(i)?;
    let (i, _) = expect_sym(";")(i)?;
    Ok((
        i,
        DataMember {
            metadata,
            doc,
            optional,
            ty,
            name,
            default,
        },
    ))
}

/// An optional `= value` (a data member's default, an enumerator's value).
pub(super) fn opt_value(i: In<'_>) -> PResult<'_, Option<(crate::ast::ConstExpr, usize)>> {
    match sym("=")(i) {
        Ok((r, _)) => {
            let (r, v) = cut(const_expr).parse(r)?;
            Ok((r, Some(v)))
        }
        Err(_) => Ok((i, None)),
    }
}

/// A member or parameter name; a bare keyword here gets a specific message.
pub(super) fn member_name<'a>(i: In<'a>, what: &'static str) -> PResult<'a, crate::ast::Ident> {
    match ident(i) {
        Ok(r) => Ok(r),
        Err(nom::Err::Error(e)) => Err(nom::Err::Failure(SyntaxError {
            expected: Some(match e.expected {
                Some(x) if x.contains("keyword") => format!("{what}: {x}"),
                _ => what.to_owned(),
            }),
            ..e
        })),
        Err(e) => Err(e),
    }
}
