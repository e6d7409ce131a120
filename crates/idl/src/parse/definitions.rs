//! Grammar rules for definitions: modules, structs, exceptions, sequences,
//! dictionaries, enums and constants (classes and interfaces are in
//! `classes.rs`). After a definition keyword the rest is `cut`: a mistake
//! there is reported where it is, not as "expected a definition".

use nom::combinator::cut;
use nom::error::context;
use nom::Parser;

use super::classes;
use super::members::{doc_and_metadata, member_name, member_rest, opt_semi, opt_value};
use super::types::{const_expr, file_metadata, metadata, optional_tag, type_expr};
use crate::ast::{
    DataMember, Definition, DefinitionKind, Enumerator, Ice38Syntax, Ident, Item, Meta, Pos,
};
use crate::lexer::{
    expect_sym, fail_cut, ident, keyword, peek_keyword, skip_trivia_cheap, sym, ws, In, PResult,
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
    if kw == "module" {
        let (i, (names, items)) =
            context("module definition", cut(|i| module_body(i, depth))).parse(i)?;
        return Ok((i, modules(names, items, doc, metadata, local, pos)));
    }
    let (i, kind) = match kw {
        "struct" => context("struct definition", cut(struct_body)).parse(i)?,
        "class" => context("class definition", cut(classes::class_body)).parse(i)?,
        "interface" => context("interface definition", cut(classes::interface_body)).parse(i)?,
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

/// `module A { ... }`, or Ice 3.8's `module A::B::C { ... }`: the names,
/// outermost first, and the contents.
fn module_body(i: In<'_>, depth: usize) -> PResult<'_, (Vec<Ident>, Vec<Item>)> {
    let (i, _) = ws(i)?;
    if i.starts_with("::") {
        return fail_cut(i, "module name (a module name cannot start with `::')");
    }
    let (mut i, first) = ident(i)?;
    let mut names = vec![first];
    while let Some(rest) = i.strip_prefix("::") {
        if !rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '\\') {
            return fail_cut(rest, "identifier after `::'");
        }
        let (r, name) = ident(rest)?;
        names.push(name);
        i = r;
    }
    if names.len() > 1 {
        crate::lexer::note_ice38(names[0].pos, Ice38Syntax::NestedModuleName);
    }
    if depth + names.len() > MAX_DEPTH {
        return fail_cut(i, "fewer nested modules (nesting too deep)");
    }
    let (i, _) = expect_sym("{")(i)?;
    let (i, items) = items(i, depth + names.len())?;
    let (i, _) = expect_sym("}")(i)?;
    Ok((opt_semi(i), (names, items)))
}

/// The module definition for `module A::B::C { items }`: `A` holding `B`
/// holding `C`, which holds the items. The doc comment goes to the
/// innermost module (the one it describes), the metadata to the outermost
/// (where Ice 3.8 reports it as an error).
fn modules(
    mut names: Vec<Ident>,
    mut items: Vec<Item>,
    mut doc: Option<String>,
    metadata: Vec<Meta>,
    local: bool,
    pos: Pos,
) -> Definition {
    let nested = names.len() > 1;
    let outermost = names.remove(0);
    for name in names.into_iter().rev() {
        let inner = Definition {
            metadata: Vec::new(),
            doc: doc.take(),
            local: false,
            pos: name.pos,
            kind: DefinitionKind::Module {
                name,
                items,
                nested,
            },
        };
        items = vec![Item::Definition(Box::new(inner))];
    }
    Definition {
        metadata,
        doc,
        local,
        pos,
        kind: DefinitionKind::Module {
            name: outermost,
            items,
            nested,
        },
    }
}

/// `[optional(tag)] type name [= value] ;`
fn data_member(i: In<'_>) -> PResult<'_, DataMember> {
    let (i, (doc, metadata)) = doc_and_metadata(i)?;
    let (i, optional) = optional_tag(i)?;
    let (i, ty) = type_expr(i)?;
    member_rest(i, doc, metadata, optional, ty)
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

fn exception_body(i: In<'_>) -> PResult<'_, DefinitionKind> {
    let (i, name) = ident(i)?;
    let (i, base) = classes::single_base(i)?;
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
        let (r, value) = opt_value(r)?;
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
