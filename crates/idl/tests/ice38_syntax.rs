//! Ice 3.8's Slice syntax and rules: nested module names and `:` for
//! inheritance mean what their 3.7 spellings mean (the same Rust is
//! generated), each file is read as Ice 3.7 or 3.8 by its own content
//! (`Dialect::Auto`), and doc comments, `///` and `/** */`, reach rustdoc
//! (inline `{@link X}` and `@p name` as code spans).

mod common;

use floe_idl::{Dialect, Failure, Options, Output};

fn compile(
    tmp: &common::TempDir,
    name: &str,
    text: &str,
    dialect: Dialect,
) -> Result<Output, Failure> {
    let file = tmp.0.join(name);
    std::fs::write(&file, text).expect("write");
    let opts = Options {
        include_dirs: vec![tmp.0.clone()],
        dialect,
        ..Default::default()
    };
    floe_idl::compile(&file, &opts)
}

fn rust(tmp: &common::TempDir, name: &str, text: &str) -> String {
    let out = compile(tmp, name, text, Dialect::Auto)
        .unwrap_or_else(|f| panic!("{name}:\n{}", f.rendered()));
    floe_idl::codegen::generate(&out.model, &Default::default()).expect("generate")
}

fn errors(tmp: &common::TempDir, name: &str, text: &str, dialect: Dialect) -> String {
    match compile(tmp, name, text, dialect) {
        Ok(_) => String::new(),
        Err(f) => f.rendered(),
    }
}

#[test]
fn nested_module_name_is_nested_modules() {
    let tmp = common::TempDir::new("nested");
    let body = "struct S { int x; } interface I { S get(); }";
    let nested = rust(&tmp, "Nested.ice", &format!("module A::B::C {{ {body} }}"));
    let classic = rust(
        &tmp,
        "Classic.ice",
        &format!("module A {{ module B {{ module C {{ {body} }} }} }}"),
    );
    assert_eq!(nested, classic);
    assert!(nested.contains("pub mod c"), "{nested}");
    assert!(nested.contains("\"::A::B::C::I\""), "{nested}");
    // Reopened the other way round.
    rust(
        &tmp,
        "Reopen.ice",
        "module A { module B { struct T { int y; } } }\n\
         module A::B { struct U { T t; } }\n\
         module A::B::C { struct V { ::A::B::U u; } }",
    );
}

#[test]
fn colon_is_extends() {
    let tmp = common::TempDir::new("colon");
    let shapes = |ext: &str| {
        format!(
            "module M {{\n\
             interface A {{ void fa(); }} interface B {{ void fb(); }}\n\
             interface C {ext} A, ::M::B {{ void fc(); }}\n\
             class K {{ int k; }} class L(3) {ext} K {{ int l; }}\n\
             exception E {{ string why; }} exception F {ext} E {{ int code; }}\n\
             }}"
        )
    };
    let colon = rust(&tmp, "Colon.ice", &shapes(":"));
    let extends = rust(&tmp, "Extends.ice", &shapes("extends"));
    assert_eq!(colon, extends);
    assert!(colon.contains("pub trait C: A + B"), "{colon}");
}

#[test]
fn each_file_is_read_by_its_own_dialect() {
    let tmp = common::TempDir::new("dialect");
    let plain = "module M { struct IceS { int my_a; } }";
    // A file with nothing of Ice 3.8 is read as Ice 3.7, as slice2cpp 3.7
    // reads it.
    let e = errors(&tmp, "Plain.ice", plain, Dialect::Auto);
    assert!(e.contains("`Ice' prefix is reserved"), "{e}");
    assert!(e.contains("illegal underscore"), "{e}");
    // Ice 3.8 syntax or identifier metadata make it a 3.8 file.
    let e = errors(
        &tmp,
        "Nested.ice",
        "module M::N { struct IceS { int my_a; } }",
        Dialect::Auto,
    );
    assert_eq!(e, "");
    let colon = "module M { class B { int b; } class IceC : B { int my_c; } }";
    assert_eq!(errors(&tmp, "Colon.ice", colon, Dialect::Auto), "");
    let meta = "[\"swift:identifier:Mon\"] module IceMon { struct S { int my_a; } }";
    assert_eq!(errors(&tmp, "Meta.ice", meta, Dialect::Auto), "");
    // Leading, trailing and double underscores stay illegal in 3.8.
    let e = errors(
        &tmp,
        "Double.ice",
        "module M::N { struct S { int a__b; } }",
        Dialect::Auto,
    );
    assert!(e.contains("illegal double underscore"), "{e}");
    // An explicit dialect applies to every file.
    assert_eq!(errors(&tmp, "Plain38.ice", plain, Dialect::Ice38), "");
    let e = errors(&tmp, "Colon37.ice", colon, Dialect::Ice37);
    assert!(e.contains("`:' for inheritance is Ice 3.8 syntax"), "{e}");
    assert!(e.contains("`Ice' prefix is reserved"), "{e}");
    let e = errors(
        &tmp,
        "Nested37.ice",
        "module M::N { struct S { int a; } }",
        Dialect::Ice37,
    );
    assert!(e.contains("nested module name"), "{e}");
}

#[test]
fn included_files_are_decided_on_their_own() {
    let tmp = common::TempDir::new("dialect-inc");
    std::fs::write(
        tmp.0.join("Old.ice"),
        "#pragma once\nmodule Old { struct IceS { int a; } }\n",
    )
    .expect("write");
    std::fs::write(
        tmp.0.join("New.ice"),
        "#pragma once\nmodule New::Types { struct IceS { int my_a; } }\n",
    )
    .expect("write");
    // A 3.8 file including a 3.7 file: the 3.7 file keeps 3.7's rules.
    let e = errors(
        &tmp,
        "Main38.ice",
        "#include <Old.ice>\nmodule App::Main { struct S { Old::IceS s; } }",
        Dialect::Auto,
    );
    assert!(
        e.contains("Old.ice:2:") && e.contains("prefix is reserved"),
        "{e}"
    );
    // A 3.7 file including a 3.8 file (as a user file includes Ice 3.8's
    // IceGrid/Admin.ice): fine.
    let e = errors(
        &tmp,
        "Main37.ice",
        "#include <New.ice>\nmodule App { struct S { New::Types::IceS s; } }",
        Dialect::Auto,
    );
    assert_eq!(e, "");
}

/// Ice 3.8 reports metadata on `module A::B` and goes on without it
/// (slice2py 3.8 exits with 0): a warning.
#[test]
fn metadata_on_a_nested_module_name_is_ignored() {
    let tmp = common::TempDir::new("nested-meta");
    let out = compile(
        &tmp,
        "Meta.ice",
        "[\"cpp:header-ext:hpp\"] module A::B { struct S { int a; } }",
        Dialect::Auto,
    )
    .unwrap_or_else(|f| panic!("{}", f.rendered()));
    let warnings = out.rendered();
    assert!(
        warnings.contains(
            "warning: metadata cannot be applied to modules defined using nested module syntax"
        ),
        "{warnings}"
    );
    assert!(out.model.modules.iter().all(|m| m.metadata.is_empty()));
    let e = errors(
        &tmp,
        "Global.ice",
        "module ::A { struct S { int a; } }",
        Dialect::Auto,
    );
    assert!(e.contains("cannot start with `::'"), "{e}");
}

/// `///` lines (Ice 3.8's style) and `/** */` blocks, before or after the
/// metadata, on every kind of definition, are carried into rustdoc.
#[test]
fn doc_comments_reach_rustdoc() {
    let tmp = common::TempDir::new("docs");
    let code = rust(
        &tmp,
        "Docs.ice",
        r#"
/// Doc of the innermost module.
module Outer::Docs
{
    /// Doc of struct P.
    /// Second line.
    struct P
    {
        /// Doc of member x.
        int x;
        /** Doc of member y. */
        int y;
    }

    /** Doc of enum Colour. */
    enum Colour
    {
        /// Doc of enumerator red.
        red,
        green
    }

    /// Doc of sequence Ps.
    sequence<P> Ps;

    /// Doc of dictionary Names.
    ["java:type:java.util.TreeMap<String, String>"]
    dictionary<string, string> Names;

    ["cpp:type:wstring"]
    /// Doc of const Greeting.
    const string Greeting = "hi";

    /// Doc of exception Refused.
    exception Refused
    {
        /// Doc of member reason.
        string reason;
    }

    /// Doc of class Shape.
    class Shape
    {
        /// Doc of member name.
        string name;
    }

    /// Doc of class Circle.
    class Circle : Shape
    {
        double radius;
    }

    /// Doc of interface Reporter.
    interface Reporter
    {
        /// Doc of operation report, about {@link P} and @p p.
        /// @param p Doc of parameter p.
        /// @return Doc of the return value.
        /// @throws Refused Doc of the throws clause.
        int report(P p) throws Refused;
    }
}
"#,
    );
    for doc in [
        "Doc of the innermost module.",
        "Doc of struct P.",
        "Second line.",
        "Doc of member x.",
        "Doc of member y.",
        "Doc of enum Colour.",
        "Doc of enumerator red.",
        "Doc of sequence Ps.",
        "Doc of dictionary Names.",
        "Doc of const Greeting.",
        "Doc of exception Refused.",
        "Doc of member reason.",
        "Doc of class Shape.",
        "Doc of member name.",
        "Doc of class Circle.",
        "Doc of interface Reporter.",
        "Doc of operation report, about `P` and `p`.",
        "Doc of parameter p.",
        "Doc of the return value.",
    ] {
        assert!(
            code.lines()
                .any(|l| l.trim_start().starts_with("///") && l.contains(doc)),
            "`{doc}' not in the generated code:\n{code}"
        );
    }
    // The doc of `module Outer::Docs` is the inner module's.
    let docs_mod = code.find("pub mod docs").expect("mod docs");
    let doc_at = code
        .find("/// Doc of the innermost module.")
        .expect("module doc");
    assert!(
        doc_at < docs_mod && code[doc_at..docs_mod].lines().count() <= 3,
        "{code}"
    );
}
