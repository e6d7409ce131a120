//! The Slice grammar (nom 8): turns preprocessed text into an [`ast::Unit`].
//! `types.rs` has the shared rules (metadata, types, constants),
//! `definitions.rs` the definitions, and `classes.rs` the bodies of classes
//! and interfaces.

mod classes;
mod definitions;
mod members;
mod types;

use std::cell::RefCell;

use crate::ast::{self, Pos};
use crate::lexer::{self, SyntaxError};

/// A syntax error: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseFailure {
    /// Offset into the preprocessed text.
    pub pos: Pos,
    /// The message (`syntax error: expected ...`).
    pub message: String,
}

/// Most syntax errors recorded in one run before parsing stops.
const MAX_ERRORS: usize = 50;

thread_local! {
    static RECOVERED: RefCell<Vec<ParseFailure>> = const { RefCell::new(Vec::new()) };
}

/// Records a syntax error that the grammar recovered from; false once too
/// many were recorded (the caller then stops).
pub(crate) fn record(e: SyntaxError<'_>) -> bool {
    RECOVERED.with(|r| {
        let mut r = r.borrow_mut();
        r.push(failure(e));
        r.len() < MAX_ERRORS
    })
}

/// Parses a whole preprocessed unit. On failure returns every syntax
/// error found (the parser resumes after a broken definition).
pub fn parse_unit(text: &str) -> Result<ast::Unit, Vec<ParseFailure>> {
    lexer::set_total_len(text.len());
    RECOVERED.with(|r| r.borrow_mut().clear());
    lexer::take_ice38_syntax();
    let result = definitions::items(text, 0);
    let mut errors = RECOVERED.with(|r| std::mem::take(&mut *r.borrow_mut()));
    let ice38_syntax = lexer::take_ice38_syntax();
    match result {
        Ok((rest, items)) => {
            let rest_t = lexer::skip_trivia_cheap(rest);
            if !rest_t.is_empty() {
                errors.push(ParseFailure {
                    pos: text.len() - rest_t.len(),
                    message: format!("syntax error: unexpected `{}'", first_token(rest_t)),
                });
            }
            if errors.is_empty() {
                Ok(ast::Unit {
                    items,
                    ice38_syntax,
                })
            } else {
                Err(errors)
            }
        }
        Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => {
            let f = failure(e);
            if !errors.contains(&f) {
                errors.push(f);
            }
            Err(errors)
        }
        Err(nom::Err::Incomplete(_)) => {
            errors.push(ParseFailure {
                pos: text.len(),
                message: "syntax error: unexpected end of input".to_owned(),
            });
            Err(errors)
        }
    }
}

fn first_token(s: &str) -> String {
    let c = s.chars().next().unwrap_or(' ');
    if c.is_ascii_alphanumeric() || c == '_' {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .take(40)
            .collect()
    } else {
        c.to_string()
    }
}

fn failure(e: SyntaxError<'_>) -> ParseFailure {
    let at = lexer::skip_trivia_cheap(e.input);
    let found = if at.is_empty() {
        "end of file".to_owned()
    } else {
        format!("`{}'", first_token(at))
    };
    let mut message = match &e.expected {
        Some(x) => format!("syntax error: expected {x}, found {found}"),
        None => format!("syntax error at {found}"),
    };
    if let Some(ctx) = e.context.first() {
        message.push_str(&format!(" (in {ctx})"));
    }
    let pos = lexer::pos(e.input);
    // Point at the token, not at the whitespace before it (but a missing
    // `;' is reported right after the previous token).
    let pos = if e.expected.as_deref() == Some("`;'") {
        pos
    } else {
        pos + (e.input.len() - at.len())
    };
    ParseFailure { pos, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_everything() {
        let src = r#"
            [["cpp:header-ext:h"]]
            /** Doc */
            module M {
                ["amd"] interface I extends J, ::K::L {
                    idempotent optional(2) int f(int a, out optional(1) string b) throws E;
                    void g();
                }
                class C(3) extends B implements I { int x = 5; optional(1) string s; void op(); }
                local interface LI;
                struct S { int a = -0x10; float f = 1.5f; string s = "x\n"; }
                sequence<["cpp:array"] byte> Bytes;
                dictionary<string, Object*> D;
                enum E { a, b = 3, c, }
                const long X = 010;
                exception Ex extends Base { optional(3) int y; }
                module N { struct \module { int a; }; };
            }
        "#;
        let u = parse_unit(src).unwrap();
        assert_eq!(u.items.len(), 2);
    }

    #[test]
    fn joins_adjacent_metadata_strings() {
        let u =
            parse_unit(r#"module M { ["cpp:type:" "std::list<int>"] sequence<int> L; }"#).unwrap();
        let ast::Item::Definition(m) = &u.items[0] else {
            panic!("{u:?}")
        };
        let ast::DefinitionKind::Module { items, .. } = &m.kind else {
            panic!("{m:?}")
        };
        let ast::Item::Definition(seq) = &items[0] else {
            panic!("{items:?}")
        };
        assert_eq!(seq.metadata[0].text, "cpp:type:std::list<int>");
    }

    #[test]
    fn records_ice38_syntax() {
        let u = parse_unit("module A::B { interface I {} interface J : I {} }").unwrap();
        let kinds: Vec<ast::Ice38Syntax> = u.ice38_syntax.iter().map(|(_, k)| *k).collect();
        assert_eq!(
            kinds,
            [
                ast::Ice38Syntax::NestedModuleName,
                ast::Ice38Syntax::ColonInheritance
            ]
        );
        let u = parse_unit("module M { struct S { int local; } }").unwrap();
        assert_eq!(
            u.ice38_syntax[0].1,
            ast::Ice38Syntax::KeywordAsName("local")
        );
        let u = parse_unit("module A { interface I {} interface J extends ::A::I {} }").unwrap();
        assert!(u.ice38_syntax.is_empty());
    }

    #[test]
    fn reports_position() {
        let src = "module M { struct S { int a } }";
        let e = parse_unit(src).unwrap_err().remove(0);
        assert!(e.message.contains("expected `;'"), "{}", e.message);
        assert_eq!(e.pos, src.find("a }").unwrap() + 1);
    }

    #[test]
    fn recovers_and_reports_every_syntax_error() {
        let src = "module M {\n struct S { int a }\n struct T { int b; }\n interface I { void f(int); }\n const int X = ;\n}\nmodule N { struct U { int c; } }";
        let errs = parse_unit(src).unwrap_err();
        assert_eq!(errs.len(), 3, "{errs:?}");
    }
}
