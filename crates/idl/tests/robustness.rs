//! Robustness: arbitrary text, random token soup and mutated system Slice
//! files never make the compiler panic (they compile or give diagnostics).

mod common;

use std::path::Path;

use proptest::prelude::*;

fn compile(src: &str) {
    let opts = floe_idl::Options {
        include_dirs: vec![common::SYSTEM_SLICE.into()],
        ..Default::default()
    };
    let path = Path::new(common::SYSTEM_SLICE)
        .join("Ice")
        .join("Mutated.ice");
    match floe_idl::compile_source(&path, src, &opts) {
        Ok(out) => {
            let _ = out.rendered();
        }
        Err(fail) => {
            let text = fail.rendered();
            assert!(
                text.contains("error"),
                "failure without an error line: {text}"
            );
        }
    }
}

const TOKENS: &[&str] = &[
    "module",
    "struct",
    "class",
    "interface",
    "exception",
    "sequence",
    "dictionary",
    "enum",
    "const",
    "local",
    "extends",
    "implements",
    "throws",
    "idempotent",
    "optional",
    "out",
    "void",
    "int",
    "string",
    "bool",
    "byte",
    "long",
    "float",
    "double",
    "Object",
    "Object*",
    "Value",
    "LocalObject",
    "true",
    "false",
    "{",
    "}",
    "(",
    ")",
    "<",
    ">",
    ";",
    ",",
    "=",
    "*",
    "::",
    "[",
    "]",
    "[[",
    "]]",
    "\"md\"",
    "\"\\x41\"",
    "A",
    "B",
    "C",
    "a",
    "b",
    "M",
    "N",
    "::M::A",
    "0",
    "1",
    "-1",
    "0x7f",
    "1.5f",
    "2147483648",
    "9223372036854775808",
    "/** doc */",
    "// c\n",
    "/*",
    "*/",
    "\\module",
    "#include <Ice/Identity.ice>\n",
    "#if 1\n",
    "#endif\n",
    "#else\n",
    "#define X 2\n",
    "\n",
    "_x",
    "x_",
    "IceX",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..80).prop_map(|v| v.join(" "))
}

fn system_sources() -> Vec<String> {
    common::ice_files(Path::new(common::SYSTEM_SLICE))
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize, usize),
    Insert(usize, &'static str),
    Duplicate(usize, usize),
    Truncate(usize),
    Swap(usize, usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..40usize).prop_map(|(a, n)| Mutation::Delete(a, n)),
        (any::<usize>(), prop::sample::select(TOKENS)).prop_map(|(a, t)| Mutation::Insert(a, t)),
        (any::<usize>(), 1..200usize).prop_map(|(a, n)| Mutation::Duplicate(a, n)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<usize>(), 1..30usize).prop_map(|(a, b, n)| Mutation::Swap(a, b, n)),
    ]
}

fn boundary(s: &str, at: usize) -> usize {
    let mut i = if s.is_empty() { 0 } else { at % (s.len() + 1) };
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(src: &str, m: &Mutation) -> String {
    let mut s = src.to_owned();
    match *m {
        Mutation::Delete(a, n) => {
            let a = boundary(&s, a);
            let b = boundary(&s, a + n);
            if b > a {
                s.replace_range(a..b, "");
            }
        }
        Mutation::Insert(a, t) => {
            let a = boundary(&s, a);
            s.insert_str(a, t);
        }
        Mutation::Duplicate(a, n) => {
            let a = boundary(&s, a);
            let b = boundary(&s, a + n).max(a);
            let piece = s[a..b].to_owned();
            s.insert_str(b, &piece);
        }
        Mutation::Truncate(a) => {
            let a = boundary(&s, a);
            s.truncate(a);
        }
        Mutation::Swap(a, b, n) => {
            let a0 = boundary(&s, a);
            let a1 = boundary(&s, a0 + n).max(a0);
            let piece = s[a0..a1].to_owned();
            s.replace_range(a0..a1, "");
            let b = boundary(&s, b);
            s.insert_str(b, &piece);
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(src in "\\PC{0,300}") {
        compile(&src);
    }

    #[test]
    fn token_soup_never_panics(src in token_soup()) {
        compile(&src);
    }

    #[test]
    fn mutated_system_files_never_panic(
        which in any::<prop::sample::Index>(),
        muts in prop::collection::vec(mutation(), 1..6),
    ) {
        let sources = system_sources();
        if sources.is_empty() {
            // Without the system files (FLOE_NO_INTEROP=1) there is nothing to mutate.
            return Ok(());
        }
        let mut s = which.get(&sources).clone();
        for m in &muts {
            s = apply(&s, m);
        }
        compile(&s);
    }
}

#[test]
fn deep_nesting_is_rejected_not_overflowed() {
    let src = format!("{}{}", "module M { ".repeat(5000), "}".repeat(5000));
    compile(&src);
    let src = "#if 1\n".repeat(10000);
    compile(&src);
    let src = format!(
        "module M {{ const int X = {}1{}; }}",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    compile(&src);
    let src = format!("#if {}1{}\n#endif\n", "(".repeat(5000), ")".repeat(5000));
    compile(&src);
    let src = format!("#if {}1\n#endif\n", "!".repeat(100000));
    compile(&src);
}

#[test]
fn wide_type_graphs_stay_fast() {
    // Each struct holds two of the previous one, each interface extends the
    // two previous ones: naive recursion would take 2^60 steps.
    let mut src = String::from("module M {\n struct S0 { int a; }\n interface I0 { void f0(); }\n interface I1 extends I0 { void f1(); }\n");
    for i in 1..60 {
        src.push_str(&format!(" struct S{i} {{ S{p} a; S{p} b; }}\n", p = i - 1));
        if i >= 2 {
            src.push_str(&format!(
                " interface I{i} extends I{}, I{} {{ void f{i}(); }}\n",
                i - 1,
                i - 2
            ));
        }
    }
    src.push_str(" dictionary<S59, int> D;\n sequence<S59> Q;\n}\n");
    let start = std::time::Instant::now();
    let out = floe_idl::compile_source(Path::new("wide.ice"), &src, &floe_idl::Options::default())
        .unwrap_or_else(|f| panic!("{}", f.rendered()));
    let m = &out.model;
    let s = m.lookup("::M::S59").expect("S59").id;
    assert_eq!(
        m.min_wire_size(floe_idl::model::Type::Named(s)),
        4usize << 59
    );
    assert!(!m.is_variable_size(floe_idl::model::Type::Named(s)));
    let i = m.lookup("::M::I59").expect("I59").id;
    assert_eq!(m.all_bases(i).len(), 59);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}
