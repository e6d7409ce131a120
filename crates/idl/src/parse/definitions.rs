//! Grammar rules for definitions: modules, structs, classes, interfaces,
//! exceptions, sequences, dictionaries, enums and constants. After a
//! definition keyword the rest is `cut`: a mistake there is reported where
//! it is, not as "expected a definition".

use nom::combinator::cut;
use nom::error::context;
use nom::Parser;

use super::types::{const_expr, file_metadata, metadata, optional_tag, type_expr};
use crate::ast::{
    DataMember, Definition, DefinitionKind, Enumerator, Item, Operation, Param, ScopedName,
};
use crate::lexer::{
    expect_sym, fail_cut, ident, keyword, peek_keyword, scoped_name, skip_trivia_cheap, sym, ws,
    In, PResult, SyntaxError,
};

/// Deepest module nesting accepted.
const MAX_DEPTH: usize = 32;

/// Items until `}` (inside a module) or end of input (top level).
pub fn items(mut i: In<'_>, depth: usize) -> PResult<'_, Vec<Item>> {
    let mut out = Vec::new();
    loop {
        let rest = skip_trivia_cheap(i);
        if rest.is_empty() || rest.starts_with('}') {
            // Let `ws` report an unterminated comment.
            let (r, _) = ws(i)?;
            return Ok((r, out));
        }
        if rest.starts_with("[[") {
            let (r, (m, p)) = file_metadata(i)?;
            out.push(Item::FileMetadata(m, p));
            i = r;
            continue;
        }
        match definition(i, depth) {
            Ok((r, def)) => {
                out.push(Item::Definition(Box::new(def)));
                i = r;
            }
            Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => {
                // Record the error and resume after this definition, so that
                // one run reports every syntax error.
                if !super::record(e.clone()) {
                    return Err(nom::Err::Failure(e));
                }
                let r = skip_definition(i);
                i = if r.len() == i.len() {
                    let mut chars = r.chars();
                    chars.next();
                    chars.as_str()
                } else {
                    r
                };
            }
            Err(e) => return Err(e),
        }
    }
}

/// Skips the rest of a broken definition: up to and including a `;` at
/// brace depth 0 or the `}` that closes its body, but not a `}` that closes
/// the enclosing module.
fn skip_definition(i: In<'_>) -> In<'_> {
    let b = i.as_bytes();
    let mut depth = 0usize;
    let mut k = 0;
    while k < b.len() {
        match b[k] {
            b'"' => {
                k += 1;
                while k < b.len() && b[k] != b'"' && b[k] != b'\n' {
                    if b[k] == b'\\' {
                        k += 1;
                    }
                    k += 1;
                }
            }
            b'/' if b.get(k + 1) == Some(&b'/') => {
                while k < b.len() && b[k] != b'\n' {
                    k += 1;
                }
            }
            b'/' if b.get(k + 1) == Some(&b'*') => match i[k + 2..].find("*/") {
                Some(e) => k += 2 + e + 1,
                None => return "",
            },
            b'{' => depth += 1,
            b'}' => {
                if depth == 0 {
                    return &i[k..];
                }
                depth -= 1;
                if depth == 0 {
                    return opt_semi(&i[k + 1..]);
                }
            }
            b';' if depth == 0 => return &i[k + 1..],
            _ => {}
        }
        k += 1;
    }
    ""
}

/// Skips an optional `;` after a closing brace.
fn opt_semi(i: In<'_>) -> In<'_> {
    match sym(";")(i) {
        Ok((r, _)) => r,
        Err(_) => i,
    }
}

/// Doc comment then metadata (or metadata then doc comment).
fn doc_and_metadata(i: In<'_>) -> PResult<'_, (Option<String>, Vec<crate::ast::Meta>)> {
    let (i, doc) = ws(i)?;
    let (i, md) = metadata(i)?;
    let (i, doc2) = ws(i)?;
    Ok((i, (doc2.or(doc), md)))
}

fn definition(i: In<'_>, depth: usize) -> PResult<'_, Definition> {
    let (i, (doc, metadata)) = doc_and_metadata(i)?;
    let (i, local) = match keyword("local")(i) {
        Ok((r, _)) => (r, true),
        Err(_) => (i, false),
    };
    let (i, _) = ws(i)?;
    let pos = crate::lexer::pos(i);
    let kw = [
        "module",
        "struct",
        "class",
        "interface",
        "exception",
        "sequence",
        "dictionary",
        "enum",
        "const",
    ]
    .into_iter()
    .find(|k| peek_keyword(i, k));
    let Some(kw) = kw else {
        return fail_cut(
            i,
            "definition (module, struct, class, interface, exception, sequence, dictionary, enum or const)",
        );
    };
    let (i, _) = keyword(kw)(i)?;
    let (i, kind) = match kw {
        "module" => context("module definition", cut(|i| module_body(i, depth))).parse(i)?,
        "struct" => context("struct definition", cut(struct_body)).parse(i)?,
        "class" => context("class definition", cut(class_body)).parse(i)?,
        "interface" => context("interface definition", cut(interface_body)).parse(i)?,
        "exception" => context("exception definition", cut(exception_body)).parse(i)?,
        "sequence" => context("sequence definition", cut(sequence_body)).parse(i)?,
        "dictionary" => context("dictionary definition", cut(dictionary_body)).parse(i)?,
        "enum" => context("enum definition", cut(enum_body)).parse(i)?,
        _ => context("const definition", cut(const_body)).parse(i)?,
    };
    Ok((
        i,
        Definition {
            metadata,
            doc,
            local,
            pos,
            kind,
        },
    ))
}

fn module_body(i: In<'_>, depth: usize) -> PResult<'_, DefinitionKind> {
    let (i, name) = ident(i)?;
    if depth >= MAX_DEPTH {
        return fail_cut(i, "fewer nested modules (nesting too deep)");
    }
    let (i, _) = expect_sym("{")(i)?;
    let (i, items) = items(i, depth + 1)?;
    let (i, _) = expect_sym("}")(i)?;
    Ok((opt_semi(i), DefinitionKind::Module { name, items }))
}

/// `[optional(tag)] type name [= value] ;`
fn data_member(i: In<'_>) -> PResult<'_, DataMember> {
    let (i, (doc, metadata)) = doc_and_metadata(i)?;
    let (i, optional) = optional_tag(i)?;
    let (i, ty) = type_expr(i)?;
    member_rest(i, doc, metadata, optional, ty)
}

fn member_rest(
    i: In<'_>,
    doc: Option<String>,
    metadata: Vec<crate::ast::Meta>,
    optional: Option<(crate::ast::ConstExpr, usize)>,
    ty: crate::ast::TypeExpr,
) -> PResult<'_, DataMember> {
    let (i, name) = member_name(i, "data member name")?;
    let (i, default) = match sym("=")(i) {
        Ok((r, _)) => {
            let (r, v) = cut(const_expr).parse(r)?;
            (r, Some(v))
        }
        Err(_) => (i, None),
    };
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

/// A member or parameter name; a bare keyword here gets a specific message.
fn member_name<'a>(i: In<'a>, what: &'static str) -> PResult<'a, crate::ast::Ident> {
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

fn members_until_brace(mut i: In<'_>) -> PResult<'_, Vec<DataMember>> {
    let mut out = Vec::new();
    loop {
        let rest = skip_trivia_cheap(i);
        if rest.starts_with('}') || rest.is_empty() {
            return Ok((i, out));
        }
        let (r, m) = context("data member", cut(data_member)).parse(i)?;
        out.push(m);
        i = r;
    }
}

fn struct_body(i: In<'_>) -> PResult<'_, DefinitionKind> {
    let (i, name) = ident(i)?;
    let (i, _) = expect_sym("{")(i)?;
    let (i, members) = members_until_brace(i)?;
    let (i, _) = expect_sym("}")(i)?;
    Ok((opt_semi(i), DefinitionKind::Struct { name, members }))
}

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

fn class_body(i: In<'_>) -> PResult<'_, DefinitionKind> {
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
    let (i, base) = match keyword("extends")(i) {
        Ok((r, _)) => {
            let (r, b) = cut(scoped_name).parse(r)?;
            (r, Some(b))
        }
        Err(_) => (i, None),
    };
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

fn interface_body(i: In<'_>) -> PResult<'_, DefinitionKind> {
    let (i, name) = ident(i)?;
    if let Ok((r, _)) = sym(";")(i) {
        return Ok((r, DefinitionKind::InterfaceDecl { name }));
    }
    let (i, bases) = match keyword("extends")(i) {
        Ok((r, _)) => scoped_list(r)?,
        Err(_) => (i, Vec::new()),
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

fn exception_body(i: In<'_>) -> PResult<'_, DefinitionKind> {
    let (i, name) = ident(i)?;
    let (i, base) = match keyword("extends")(i) {
        Ok((r, _)) => {
            let (r, b) = cut(scoped_name).parse(r)?;
            (r, Some(b))
        }
        Err(_) => (i, None),
    };
    let (i, _) = expect_sym("{")(i)?;
    let (i, members) = members_until_brace(i)?;
    let (i, _) = expect_sym("}")(i)?;
    Ok((
        opt_semi(i),
        DefinitionKind::Exception {
            name,
            base,
            members,
        },
    ))
}

fn sequence_body(i: In<'_>) -> PResult<'_, DefinitionKind> {
    let (i, _) = expect_sym("<")(i)?;
    let (i, element_metadata) = metadata(i)?;
    let (i, element) = type_expr(i)?;
    let (i, _) = expect_sym(">")(i)?;
    let (i, name) = ident(i)?;
    let (i, _) = expect_sym(";")(i)?;
    Ok((
        i,
        DefinitionKind::Sequence {
            name,
            element_metadata,
            element,
        },
    ))
}

fn dictionary_body(i: In<'_>) -> PResult<'_, DefinitionKind> {
    let (i, _) = expect_sym("<")(i)?;
    let (i, key_metadata) = metadata(i)?;
    let (i, key) = type_expr(i)?;
    let (i, _) = expect_sym(",")(i)?;
    let (i, value_metadata) = metadata(i)?;
    let (i, value) = type_expr(i)?;
    let (i, _) = expect_sym(">")(i)?;
    let (i, name) = ident(i)?;
    let (i, _) = expect_sym(";")(i)?;
    Ok((
        i,
        DefinitionKind::Dictionary {
            name,
            key_metadata,
            key,
            value_metadata,
            value,
        },
    ))
}

fn enum_body(i: In<'_>) -> PResult<'_, DefinitionKind> {
    let (i, name) = ident(i)?;
    let (mut i, _) = expect_sym("{")(i)?;
    let mut enumerators = Vec::new();
    loop {
        if let Ok((r, _)) = sym("}")(i) {
            return Ok((opt_semi(r), DefinitionKind::Enum { name, enumerators }));
        }
        let (r, (doc, metadata)) = doc_and_metadata(i)?;
        let (r, ename) = member_name(r, "enumerator")?;
        let (r, value) = match sym("=")(r) {
            Ok((r, _)) => {
                let (r, v) = cut(const_expr).parse(r)?;
                (r, Some(v))
            }
            Err(_) => (r, None),
        };
        enumerators.push(Enumerator {
            doc,
            metadata,
            name: ename,
            value,
        });
        match sym(",")(r) {
            Ok((r, _)) => i = r,
            Err(_) => {
                let (r, _) = match sym("}")(r) {
                    Ok(x) => x,
                    Err(_) => return fail_cut(skip_trivia_cheap(r), "`,' or `}' after enumerator"),
                };
                return Ok((opt_semi(r), DefinitionKind::Enum { name, enumerators }));
            }
        }
    }
}

fn const_body(i: In<'_>) -> PResult<'_, DefinitionKind> {
    let (i, type_metadata) = metadata(i)?;
    let (i, ty) = type_expr(i)?;
    let (i, name) = ident(i)?;
    let (i, _) = expect_sym("=")(i)?;
    let (i, (value, value_pos)) = const_expr(i)?;
    let (i, _) = match expect_sym(";")(i) {
        Ok(r) => r,
        Err(_) => return fail_cut(skip_trivia_cheap(i), "`;' after const definition"),
    };
    Ok((
        i,
        DefinitionKind::Const {
            name,
            type_metadata,
            ty,
            value,
            value_pos,
        },
    ))
}
