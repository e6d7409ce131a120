//! Slice text from the [`Model`]: the inverse of the front-end, used to
//! export Rust-first interfaces (`#[floe::interface]`) as `.ice` files for
//! C++, Python, Java and JavaScript peers.
//!
//! [`to_slice`] writes the main file's definitions module by module;
//! [`definition_to_slice`] writes one definition (without its module), which
//! `floe-derive` embeds in the code it generates. Names are written as in
//! the model; references are absolute (`::M::T`) so that the text does not
//! depend on where it is placed. Compiling the output again gives the same
//! model (apart from spans and doc comments kept as `/** */`).

use std::fmt::Write as _;

use crate::model::{
    ConstValue, Contained, DataMember, DefId, DefKind, Doc, Model, ModuleId, OperationMode, Type,
};

/// The Slice text of every main-file definition of `model`, in modules.
///
/// # Examples
///
/// ```
/// let out = floe_idl::compile_source(
///     "Hello.ice".as_ref(),
///     "module Demo { interface Hello { idempotent string hi(int n); }; };",
///     &Default::default(),
/// )
/// .unwrap();
/// let text = floe_idl::export::to_slice(&out.model);
/// assert!(text.contains("idempotent string hi(int n);"));
/// ```
pub fn to_slice(model: &Model) -> String {
    let mut out = String::new();
    for &root in &model.roots {
        write_module(model, root, 0, &mut out);
    }
    out
}

/// The Slice text of one definition (no enclosing `module`), ending with
/// `;` and a newline. Nested lines are indented by `indent` levels.
pub fn definition_to_slice(model: &Model, id: DefId, indent: usize) -> String {
    let mut out = String::new();
    write_definition(model, id, indent, &mut out);
    out
}

fn is_main(model: &Model, id: DefId) -> bool {
    model
        .files
        .get(model.def(id).span.file.0 as usize)
        .is_none_or(|f| f.is_main)
}

fn module_has_main(model: &Model, id: ModuleId) -> bool {
    model.module(id).contents.iter().any(|c| match c {
        Contained::Module(m) => module_has_main(model, *m),
        Contained::Definition(d) => is_main(model, *d),
    })
}

fn pad(indent: usize) -> String {
    "    ".repeat(indent)
}

fn write_doc(doc: Option<&Doc>, indent: usize, out: &mut String) {
    let Some(doc) = doc else { return };
    if doc.text.trim().is_empty() {
        return;
    }
    let p = pad(indent);
    let _ = writeln!(out, "{p}/**");
    for line in doc.text.trim().lines() {
        let _ = writeln!(out, "{p} * {}", line.trim_end().replace("*/", "* /"));
    }
    let _ = writeln!(out, "{p} */");
}

fn metadata(list: &[String]) -> String {
    if list.is_empty() {
        return String::new();
    }
    let items: Vec<String> = list.iter().map(|m| format!("\"{}\"", escape(m))).collect();
    format!("[{}] ", items.join(", "))
}

fn escape(s: &str) -> String {
    let mut out = String::new();
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\{:03o}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// A name, escaped with `\` when it is a Slice keyword.
fn name(n: &str) -> String {
    if crate::ident::is_keyword(n) {
        format!("\\{n}")
    } else {
        n.to_owned()
    }
}

fn write_module(model: &Model, id: ModuleId, indent: usize, out: &mut String) {
    if !module_has_main(model, id) {
        return;
    }
    let m = model.module(id);
    let p = pad(indent);
    write_doc(m.doc.as_ref(), indent, out);
    let _ = writeln!(out, "{p}{}module {}", metadata(&m.metadata), name(&m.name));
    let _ = writeln!(out, "{p}{{");
    for c in &m.contents {
        match c {
            Contained::Module(inner) => write_module(model, *inner, indent + 1, out),
            Contained::Definition(d) if is_main(model, *d) => {
                write_definition(model, *d, indent + 1, out)
            }
            Contained::Definition(_) => {}
        }
    }
    let _ = writeln!(out, "{p}}};");
}

fn write_definition(model: &Model, id: DefId, indent: usize, out: &mut String) {
    let def = model.def(id);
    let p = pad(indent);
    let q = pad(indent + 1);
    let md = metadata(&def.metadata);
    let local = if def.local { "local " } else { "" };
    let n = name(&def.name);
    write_doc(def.doc.as_ref(), indent, out);
    match &def.kind {
        DefKind::Struct(s) => {
            let _ = writeln!(out, "{p}{md}{local}struct {n}");
            let _ = writeln!(out, "{p}{{");
            write_members(model, &s.members, indent + 1, out);
            let _ = writeln!(out, "{p}}}");
        }
        DefKind::Class(c) => {
            if !c.defined {
                let _ = writeln!(out, "{p}{md}{local}class {n};");
                return;
            }
            let compact = c.compact_id.map(|i| format!("({i})")).unwrap_or_default();
            let mut head = format!("{p}{md}{local}class {n}{compact}");
            if let Some(b) = c.base {
                let _ = write!(head, " extends {}", model.def(b).scoped);
            }
            if !c.implements.is_empty() {
                let list: Vec<&str> = c
                    .implements
                    .iter()
                    .map(|i| model.def(*i).scoped.as_str())
                    .collect();
                let _ = write!(head, " implements {}", list.join(", "));
            }
            let _ = writeln!(out, "{head}");
            let _ = writeln!(out, "{p}{{");
            write_members(model, &c.members, indent + 1, out);
            for op in &c.operations {
                write_operation(model, op, indent + 1, out);
            }
            let _ = writeln!(out, "{p}}}");
        }
        DefKind::Interface(i) => {
            if !i.defined {
                let _ = writeln!(out, "{p}{md}{local}interface {n};");
                return;
            }
            let mut head = format!("{p}{md}{local}interface {n}");
            if !i.bases.is_empty() {
                let list: Vec<&str> = i
                    .bases
                    .iter()
                    .map(|b| model.def(*b).scoped.as_str())
                    .collect();
                let _ = write!(head, " extends {}", list.join(", "));
            }
            let _ = writeln!(out, "{head}");
            let _ = writeln!(out, "{p}{{");
            for op in &i.operations {
                write_operation(model, op, indent + 1, out);
            }
            let _ = writeln!(out, "{p}}}");
        }
        DefKind::Exception(x) => {
            let mut head = format!("{p}{md}{local}exception {n}");
            if let Some(b) = x.base {
                let _ = write!(head, " extends {}", model.def(b).scoped);
            }
            let _ = writeln!(out, "{head}");
            let _ = writeln!(out, "{p}{{");
            write_members(model, &x.members, indent + 1, out);
            let _ = writeln!(out, "{p}}}");
        }
        DefKind::Sequence(s) => {
            let _ = writeln!(
                out,
                "{p}{md}{local}sequence<{}{}> {n};",
                metadata(&s.element_metadata),
                type_name(model, s.element)
            );
            return;
        }
        DefKind::Dictionary(d) => {
            let _ = writeln!(
                out,
                "{p}{md}{local}dictionary<{}{}, {}{}> {n};",
                metadata(&d.key_metadata),
                type_name(model, d.key),
                metadata(&d.value_metadata),
                type_name(model, d.value)
            );
            return;
        }
        DefKind::Enum(e) => {
            let _ = writeln!(out, "{p}{md}{local}enum {n}");
            let _ = writeln!(out, "{p}{{");
            let count = e.enumerators.len();
            for (i, en) in e.enumerators.iter().enumerate() {
                write_doc(en.doc.as_ref(), indent + 1, out);
                let value = if e.explicit_values {
                    format!(" = {}", en.value)
                } else {
                    String::new()
                };
                let comma = if i + 1 < count { "," } else { "" };
                let _ = writeln!(
                    out,
                    "{q}{}{}{value}{comma}",
                    metadata(&en.metadata),
                    name(&en.name)
                );
            }
            let _ = writeln!(out, "{p}}}");
        }
        DefKind::Const(k) => {
            let _ = writeln!(
                out,
                "{p}{md}const {}{} {n} = {};",
                metadata(&k.type_metadata),
                type_name(model, k.ty),
                value_text(model, &k.value)
            );
            return;
        }
    }
    // Structured definitions end with `};` (the closing brace was written).
    out.pop();
    out.push_str(";\n");
}

fn write_members(model: &Model, members: &[DataMember], indent: usize, out: &mut String) {
    let p = pad(indent);
    for m in members {
        write_doc(m.doc.as_ref(), indent, out);
        let opt = m.tag.map(|t| format!("optional({t}) ")).unwrap_or_default();
        let default = m
            .default
            .as_ref()
            .map(|v| format!(" = {}", value_text(model, v)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{p}{}{opt}{} {}{default};",
            metadata(&m.metadata),
            type_name(model, m.ty),
            name(&m.name)
        );
    }
}

fn write_operation(model: &Model, op: &crate::model::Operation, indent: usize, out: &mut String) {
    let p = pad(indent);
    write_doc(op.doc.as_ref(), indent, out);
    let _ = writeln!(out, "{p}{}", operation_signature(model, op));
}

/// An operation's Slice declaration on one line (metadata, mode, return
/// type, parameters, `throws`), as the generated code's docs show it.
pub(crate) fn operation_signature(model: &Model, op: &crate::model::Operation) -> String {
    let mode = match op.mode {
        OperationMode::Normal => "",
        OperationMode::Idempotent => "idempotent ",
    };
    let ret = match op.return_type {
        None => "void".to_owned(),
        Some(t) => {
            let opt = op
                .return_tag
                .map(|t| format!("optional({t}) "))
                .unwrap_or_default();
            format!("{opt}{}", type_name(model, t))
        }
    };
    let params: Vec<String> = op
        .params
        .iter()
        .map(|prm| {
            let out_kw = if prm.out { "out " } else { "" };
            let opt = prm
                .tag
                .map(|t| format!("optional({t}) "))
                .unwrap_or_default();
            format!(
                "{}{out_kw}{opt}{} {}",
                metadata(&prm.metadata),
                type_name(model, prm.ty),
                name(&prm.name)
            )
        })
        .collect();
    let throws = if op.throws.is_empty() {
        String::new()
    } else {
        let list: Vec<&str> = op
            .throws
            .iter()
            .map(|t| model.def(*t).scoped.as_str())
            .collect();
        format!(" throws {}", list.join(", "))
    };
    format!(
        "{}{mode}{ret} {}({}){throws};",
        metadata(&op.metadata),
        name(&op.name),
        params.join(", ")
    )
}

fn type_name(model: &Model, ty: Type) -> String {
    model.type_name(ty)
}

fn value_text(model: &Model, v: &ConstValue) -> String {
    match v {
        ConstValue::Bool(b) => b.to_string(),
        ConstValue::Integer(i) => i.to_string(),
        ConstValue::Float(f) => {
            let s = format!("{f:?}");
            if s.contains(['.', 'e', 'E']) || s.contains("inf") || s.contains("NaN") {
                s
            } else {
                format!("{s}.0")
            }
        }
        ConstValue::String(s) => format!("\"{}\"", escape(s)),
        ConstValue::Enumerator { enum_id, index } => {
            let def = model.def(*enum_id);
            match &def.kind {
                DefKind::Enum(e) => match e.enumerators.get(*index) {
                    Some(en) => {
                        let scope = def.scoped.rsplit_once("::").map_or("", |(s, _)| s);
                        format!("{scope}::{}", en.name)
                    }
                    None => "0".to_owned(),
                },
                _ => "0".to_owned(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile(src: &str) -> Model {
        match crate::compile_source("T.ice".as_ref(), src, &Default::default()) {
            Ok(out) => out.model,
            Err(f) => panic!("{}\n--- source:\n{src}", f.rendered()),
        }
    }

    /// The model with spans and docs cleared, for comparison.
    fn shape(mut m: Model) -> Model {
        use crate::model::Span;
        m.files.clear();
        for module in &mut m.modules {
            module.span = Span::default();
            module.openings.clear();
        }
        for d in &mut m.definitions {
            d.span = Span::default();
            match &mut d.kind {
                DefKind::Struct(s) => s.members.iter_mut().for_each(|m| m.span = Span::default()),
                DefKind::Class(c) => {
                    c.members.iter_mut().for_each(|m| m.span = Span::default());
                    for op in &mut c.operations {
                        op.span = Span::default();
                        op.params.iter_mut().for_each(|p| p.span = Span::default());
                    }
                }
                DefKind::Exception(x) => {
                    x.members.iter_mut().for_each(|m| m.span = Span::default())
                }
                DefKind::Interface(i) => {
                    for op in &mut i.operations {
                        op.span = Span::default();
                        op.params.iter_mut().for_each(|p| p.span = Span::default());
                    }
                }
                DefKind::Enum(e) => e
                    .enumerators
                    .iter_mut()
                    .for_each(|en| en.span = Span::default()),
                DefKind::Const(k) => k.literal.clear(),
                _ => {}
            }
        }
        m
    }

    const EVERYTHING: &str = r#"
        module Demo
        {
            /** A color. */
            enum Color { red, green = 5, blue };
            enum Plain { a, b, c };
            const int Answer = 42;
            const string Greeting = "hi \"there\"\n";
            const Color Fav = green;
            const double Pi = 3.5;
            sequence<byte> ByteSeq;
            ["rust:type:Vec<u8>"] sequence<byte> ByteList;
            struct Point { int x; int y = 3; };
            sequence<Point> PointSeq;
            dictionary<string, Point> PointDict;
            exception Oops { string reason; optional(2) int code; };
            exception Worse extends Oops { long when; };
            class Node(7) { int value; Node next; optional(1) string label; };
            class Leaf extends Node { bool \module; };
            interface Base { void ping(); };
            interface Other { idempotent int count(); };
            interface Hello extends Base, Other
            {
                ["amd"] string hi(string name, optional(3) int n, out Point p) throws Oops, Worse;
                optional(1) string maybe();
                Hello* self(Object* any, Node n);
            };
            module Inner { struct S { Demo::Color c; }; };
        };
    "#;

    #[test]
    fn round_trip_gives_the_same_model() {
        let first = compile(EVERYTHING);
        let text = to_slice(&first);
        let second = compile(&text);
        assert_eq!(shape(first), shape(second), "exported:\n{text}");
        assert!(text.contains("class Node(7)"), "{text}");
        assert!(text.contains("bool \\module;"), "{text}");
    }

    #[test]
    fn one_definition() {
        let m = compile(EVERYTHING);
        let id = m.lookup("::Demo::Point").unwrap().id;
        assert_eq!(
            definition_to_slice(&m, id, 0),
            "struct Point\n{\n    int x;\n    int y = 3;\n};\n"
        );
    }
}
