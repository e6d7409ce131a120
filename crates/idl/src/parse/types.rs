//! Grammar rules shared by every definition: metadata, types, constant
//! expressions and `optional(tag)`.

use nom::branch::alt;
use nom::combinator::{cut, map, opt};
use nom::error::context;
use nom::multi::{many1, separated_list1};
use nom::sequence::{delimited, preceded};
use nom::Parser;

use crate::ast::{Builtin, ConstExpr, Meta, Pos, TypeExpr};
use crate::lexer::{
    expect_sym, fail, keyword, number_lit, pos, scoped_name, string_lit, sym, ws, In, PResult,
};

/// One metadata string inside `[...]`: adjacent string literals are joined
/// (`["cpp:type:" "std::list<int>"]`), as Ice 3.7 and 3.8 join them.
fn meta_string(i: In<'_>) -> PResult<'_, Meta> {
    let (i, _) = ws(i)?;
    let p = pos(i);
    map(many1(string_lit), move |parts| Meta {
        text: parts.concat(),
        pos: p,
    })
    .parse(i)
}

/// Zero or more `["a", "b"]` groups (never `[[`).
pub fn metadata(mut i: In<'_>) -> PResult<'_, Vec<Meta>> {
    let mut out = Vec::new();
    loop {
        let (r, _) = ws(i)?;
        if !r.starts_with('[') || r.starts_with("[[") {
            return Ok((i, out));
        }
        let (r, list) = context(
            "metadata",
            delimited(
                sym("["),
                cut(separated_list1(sym(","), meta_string)),
                expect_sym("]"),
            ),
        )
        .parse(r)?;
        out.extend(list);
        i = r;
    }
}

/// `[["a", "b"]]` file metadata.
pub fn file_metadata(i: In<'_>) -> PResult<'_, (Vec<Meta>, Pos)> {
    let (i, p) = sym("[[")(i)?;
    let (i, list) =
        context("file metadata", cut(separated_list1(sym(","), meta_string))).parse(i)?;
    let (i, _) = expect_sym("]]")(i)?;
    Ok((i, (list, p)))
}

fn builtin(i: In<'_>) -> PResult<'_, TypeExpr> {
    let (i, _) = ws(i)?;
    let p = pos(i);
    let (i, b) = alt((
        map(keyword("bool"), |_| Builtin::Bool),
        map(keyword("byte"), |_| Builtin::Byte),
        map(keyword("short"), |_| Builtin::Short),
        map(keyword("int"), |_| Builtin::Int),
        map(keyword("long"), |_| Builtin::Long),
        map(keyword("float"), |_| Builtin::Float),
        map(keyword("double"), |_| Builtin::Double),
        map(keyword("string"), |_| Builtin::String),
        map(keyword("Object"), |_| Builtin::Object),
        map(keyword("Value"), |_| Builtin::Value),
        map(keyword("LocalObject"), |_| Builtin::LocalObject),
    ))
    .parse(i)?;
    if b == Builtin::Object {
        if let Ok((r, _)) = sym("*")(i) {
            return Ok((r, TypeExpr::Builtin(Builtin::ObjectProxy, p)));
        }
    }
    Ok((i, TypeExpr::Builtin(b, p)))
}

/// A type: builtin keyword, `Object*`, a scoped name, or `Name*`.
pub fn type_expr(i: In<'_>) -> PResult<'_, TypeExpr> {
    match builtin(i) {
        Ok(r) => return Ok(r),
        Err(nom::Err::Error(_)) => {}
        Err(e) => return Err(e),
    }
    let (i, name) = match scoped_name(i) {
        Ok(r) => r,
        Err(nom::Err::Error(e)) => {
            let (at, _) = ws(i)?;
            let _ = e;
            return fail(at, "type");
        }
        Err(e) => return Err(e),
    };
    if let Ok((r, _)) = sym("*")(i) {
        return Ok((r, TypeExpr::Proxy(name)));
    }
    Ok((i, TypeExpr::Named(name)))
}

/// A constant expression: number, string, `true`/`false`, or a name.
pub fn const_expr(i: In<'_>) -> PResult<'_, (ConstExpr, Pos)> {
    let (i, _) = ws(i)?;
    let p = pos(i);
    let (i, v) = alt((
        number_lit,
        map(string_lit, ConstExpr::String),
        map(keyword("true"), |_| ConstExpr::Bool(true)),
        map(keyword("false"), |_| ConstExpr::Bool(false)),
        map(scoped_name, ConstExpr::Name),
    ))
    .parse(i)
    .or_else(|e| match e {
        nom::Err::Error(_) => fail(i, "constant value (number, string, true, false or a name)"),
        e => Err(e),
    })?;
    Ok((i, (v, p)))
}

/// `optional(tag)`, if present.
pub fn optional_tag(i: In<'_>) -> PResult<'_, Option<(ConstExpr, Pos)>> {
    opt(preceded(
        keyword("optional"),
        cut(context(
            "optional tag",
            delimited(expect_sym("("), const_expr, expect_sym(")")),
        )),
    ))
    .parse(i)
}
