//! Grammar rules for classes and interfaces: their bodies, inheritance
//! lists, operations and parameters.

use nom::combinator::cut;
use nom::error::context;
use nom::Parser;

use super::members::{doc_and_metadata, member_name, member_rest, opt_semi};
use super::types::{const_expr, metadata, optional_tag, type_expr};
use crate::ast::{DefinitionKind, Ice38Syntax, Operation, Param, ScopedName};
use crate::lexer::{
    expect_sym, ident, keyword, peek_keyword, pos, scoped_name, skip_trivia_cheap, sym, ws, In,
    PResult, SyntaxError,
};

fn scoped_list(i: In<'_>) -> PResult<'_, Vec<ScopedName>> {
    let (mut i, first) = cut(scoped_name).parse(i)?;
    let mut out = vec![first];
    while let Ok((r, _)) = sym(",")(i) {
        let (r, n) = cut(scoped_name).parse(r)?;
        out.push(n);
        i = r;
    }
    Ok((i, out))
}

/// `extends`, or Ice 3.8's `:` (not the `::` of a scoped name), before
/// the bases of a class, interface or exception: true if there.
fn inherits(i: In<'_>) -> PResult<'_, bool> {
    if let Ok((r, _)) = keyword("extends")(i) {
        return Ok((r, true));
    }
    let (t, _) = ws(i)?;
    match t.strip_prefix(':') {
        Some(r) if !r.starts_with(':') => {
            crate::lexer::note_ice38(pos(t), Ice38Syntax::ColonInheritance);
            Ok((r, true))
        }
        _ => Ok((i, false)),
    }
}

/// The base of a class or exception: `extends B` or `: B`.
pub(super) fn single_base(i: In<'_>) -> PResult<'_, Option<ScopedName>> {
    match inherits(i)? {
        (r, true) => {
            let (r, b) = cut(scoped_name).parse(r)?;
            Ok((r, Some(b)))
        }
        (r, false) => Ok((r, None)),
    }
}

pub(super) fn class_body(i: In<'_>) -> PResult<'_, DefinitionKind> {
    let (i, name) = ident(i)?;
    if let Ok((r, _)) = sym(";")(i) {
        return Ok((r, DefinitionKind::ClassDecl { name }));
    }
    let (i, compact_id) = match sym("(")(i) {
        Ok((r, _)) => {
            let (r, v) = const_expr(r)?;
            let (r, _) = expect_sym(")")(r)?;
            (r, Some(v))
        }
        Err(_) => (i, None),
    };
    let (i, base) = single_base(i)?;
    let (i, implements) = match keyword("implements")(i) {
        Ok((r, _)) => scoped_list(r)?,
        Err(_) => (i, Vec::new()),
    };
    let (mut i, _) = expect_sym("{")(i)?;
    let mut members = Vec::new();
    let mut operations = Vec::new();
    loop {
        let rest = skip_trivia_cheap(i);
        if rest.starts_with('}') || rest.is_empty() {
            break;
        }
        let (r, (doc, md)) = doc_and_metadata(i)?;
        if peek_keyword(r, "idempotent") || peek_keyword(r, "void") {
            let (r, op) =
                context("operation", cut(|r| operation(r, doc.clone(), md.clone()))).parse(r)?;
            operations.push(op);
            i = r;
            continue;
        }
        let (r, optional) = optional_tag(r)?;
        let (r, ty) = context("data member", cut(type_expr)).parse(r)?;
        let (after_name, _) = member_name(r, "data member or operation name")?;
        if sym("(")(after_name).is_ok() {
            let (r, op) = context(
                "operation",
                cut(|r| {
                    operation_rest(
                        r,
                        doc.clone(),
                        md.clone(),
                        false,
                        optional.clone(),
                        Some(ty.clone()),
                    )
                }),
            )
            .parse(r)?;
            operations.push(op);
            i = r;
        } else {
            let (r, m) = context(
                "data member",
                cut(|r| member_rest(r, doc.clone(), md.clone(), optional.clone(), ty.clone())),
            )
            .parse(r)?;
            members.push(m);
            i = r;
        }
    }
    let (i, _) = expect_sym("}")(i)?;
    Ok((
        opt_semi(i),
        DefinitionKind::Class {
            name,
            compact_id,
            base,
            implements,
            members,
            operations,
        },
    ))
}

pub(super) fn interface_body(i: In<'_>) -> PResult<'_, DefinitionKind> {
    let (i, name) = ident(i)?;
    if let Ok((r, _)) = sym(";")(i) {
        return Ok((r, DefinitionKind::InterfaceDecl { name }));
    }
    let (i, bases) = match inherits(i)? {
        (r, true) => scoped_list(r)?,
        (r, false) => (r, Vec::new()),
    };
    let (mut i, _) = expect_sym("{")(i)?;
    let mut operations = Vec::new();
    loop {
        let rest = skip_trivia_cheap(i);
        if rest.starts_with('}') || rest.is_empty() {
            break;
        }
        let (r, (doc, md)) = doc_and_metadata(i)?;
        let (r, op) =
            context("operation", cut(|r| operation(r, doc.clone(), md.clone()))).parse(r)?;
        operations.push(op);
        i = r;
    }
    let (i, _) = expect_sym("}")(i)?;
    Ok((
        opt_semi(i),
        DefinitionKind::Interface {
            name,
            bases,
            operations,
        },
    ))
}

/// `[idempotent] (void | [optional(n)] type) name ( params ) [throws ...] ;`
fn operation(
    i: In<'_>,
    doc: Option<String>,
    metadata: Vec<crate::ast::Meta>,
) -> PResult<'_, Operation> {
    let (i, idempotent) = match keyword("idempotent")(i) {
        Ok((r, _)) => (r, true),
        Err(_) => (i, false),
    };
    if let Ok((r, _)) = keyword("void")(i) {
        return operation_rest(r, doc, metadata, idempotent, None, None);
    }
    let (i, optional) = optional_tag(i)?;
    let (i, ty) = match type_expr(i) {
        Ok(r) => r,
        Err(nom::Err::Error(e)) => {
            return Err(nom::Err::Failure(SyntaxError {
                expected: Some("return type or `void'".into()),
                ..e
            }))
        }
        Err(e) => return Err(e),
    };
    operation_rest(i, doc, metadata, idempotent, optional, Some(ty))
}

fn operation_rest(
    i: In<'_>,
    doc: Option<String>,
    metadata: Vec<crate::ast::Meta>,
    idempotent: bool,
    return_optional: Option<(crate::ast::ConstExpr, usize)>,
    return_type: Option<crate::ast::TypeExpr>,
) -> PResult<'_, Operation> {
    let (i, name) = member_name(i, "operation name")?;
    let (mut i, _) = expect_sym("(")(i)?;
    let mut params = Vec::new();
    if let Ok((r, _)) = sym(")")(i) {
        i = r;
    } else {
        loop {
            let (r, p) = context("parameter", cut(param)).parse(i)?;
            params.push(p);
            if let Ok((r, _)) = sym(",")(r) {
                i = r;
                continue;
            }
            let (r, _) = expect_sym(")")(r)?;
            i = r;
            break;
        }
    }
    let (i, throws) = match keyword("throws")(i) {
        Ok((r, _)) => scoped_list(r)?,
        Err(_) => (i, Vec::new()),
    };
    let (i, _) = expect_sym(";")(i)?;
    Ok((
        i,
        Operation {
            metadata,
            doc,
            idempotent,
            return_optional,
            return_type,
            name,
            params,
            throws,
        },
    ))
}

/// `[out] [metadata] [optional(n)] type name`
fn param(i: In<'_>) -> PResult<'_, Param> {
    let (i, out) = match keyword("out")(i) {
        Ok((r, _)) => (r, true),
        Err(_) => (i, false),
    };
    let (i, metadata) = metadata(i)?;
    let (i, optional) = optional_tag(i)?;
    let (i, ty) = type_expr(i)?;
    let (i, name) = member_name(i, "parameter name")?;
    Ok((
        i,
        Param {
            metadata,
            out,
            optional,
            ty,
            name,
        },
    ))
}
