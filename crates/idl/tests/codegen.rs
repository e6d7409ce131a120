//! Golden fixtures: each `tests/codegen/<Name>.ice` must generate exactly
//! `tests/codegen/<Name>.rs`. On a mismatch the test fails; run it with
//! `FLOE_BLESS=1` to rewrite the expected files, then review with
//! `git diff`. (That the generated code compiles and works is checked by
//! crates/codegen-tests.)

mod common;

use std::path::{Path, PathBuf};

const ICE_SLICE: &str = "/usr/share/ice/slice";

fn check(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/codegen");
    let ice = dir.join(format!("{name}.ice"));
    let expected_path = dir.join(format!("{name}.rs"));
    let opts = floe_idl::Options {
        include_dirs: vec![PathBuf::from(ICE_SLICE)],
        ..Default::default()
    };
    let out = match floe_idl::compile(&ice, &opts) {
        Ok(out) => out,
        Err(fail) => panic!("{name}.ice does not compile:\n{}", fail.rendered()),
    };
    let code = floe_idl::codegen::generate(&out.model, &Default::default()).unwrap();
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
    if code == expected {
        return;
    }
    if std::env::var_os("FLOE_BLESS").is_some() {
        std::fs::write(&expected_path, &code).unwrap();
        eprintln!("rewrote {}", expected_path.display());
        return;
    }
    let line = code
        .lines()
        .zip(expected.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(code.lines().count().min(expected.lines().count()));
    panic!(
        "{} differs from the generated code (first difference at line {}); \
         rerun with FLOE_BLESS=1 and review `git diff`",
        expected_path.display(),
        line + 1
    );
}

#[test]
fn hello() {
    check("Hello");
}

#[test]
fn rich() {
    if !Path::new(ICE_SLICE).join("Ice/Identity.ice").is_file() {
        if std::env::var_os("FLOE_NO_INTEROP").is_some() {
            println!("FLOE_NO_INTEROP set and {ICE_SLICE} missing: Rich fixture skipped");
            return;
        }
        panic!(
            "{ICE_SLICE} is missing (Rich.ice includes Ice/Identity.ice): install zeroc-ice-slice"
        );
    }
    check("Rich");
}

#[test]
fn settings_without_interfaces() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/codegen");
    let out = floe_idl::compile(&dir.join("Hello.ice"), &Default::default()).unwrap();
    let settings = floe_idl::codegen::Settings {
        interfaces: false,
        ..Default::default()
    };
    let code = floe_idl::codegen::generate(&out.model, &settings).unwrap();
    assert!(!code.contains("HelloPrx"), "{code}");
}

/// The generator handles every Slice file Ice ships (local definitions
/// generate nothing; the rest must print as valid Rust).
#[test]
fn every_system_slice_file_generates() {
    let Some(dir) = common::system_slice_dir() else {
        return;
    };
    let opts = floe_idl::Options {
        include_dirs: vec![dir.clone()],
        ice_prefix: true,
        ..Default::default()
    };
    let mut generated = 0;
    for file in common::ice_files(&dir) {
        let out = match floe_idl::compile(&file, &opts) {
            Ok(out) => out,
            Err(fail) => panic!("{}: {}", file.display(), fail.rendered()),
        };
        let code = floe_idl::codegen::generate(&out.model, &Default::default())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        generated += code.len();
    }
    assert!(
        generated > 100_000,
        "suspiciously little code: {generated} bytes"
    );
}

/// `["rust:type:CompactString"]` maps one `string` member to
/// `CompactString`; `Settings::compact_strings` maps all of them
/// (parameters stay `&str`/`String`).
#[test]
fn compact_string_members() {
    let dir = std::env::temp_dir().join(format!("floe-compact-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("Compact.ice");
    std::fs::write(
        &file,
        "module M {\n\
         struct S { [\"rust:type:CompactString\"] string a = \"x\"; string b; }\n\
         interface I { string op(string p); }\n\
         }\n",
    )
    .unwrap();
    let out = floe_idl::compile(&file, &Default::default()).unwrap();
    let code = floe_idl::codegen::generate(&out.model, &Default::default()).unwrap();
    assert!(
        code.contains("pub a: ::floe::codegen::CompactString"),
        "{code}"
    );
    assert!(code.contains("pub b: ::std::string::String"), "{code}");
    assert!(code.contains("CompactString::const_new(\"x\")"), "{code}");
    let all = floe_idl::codegen::Settings {
        compact_strings: true,
        ..Default::default()
    };
    let code = floe_idl::codegen::generate(&out.model, &all).unwrap();
    assert!(
        code.contains("pub b: ::floe::codegen::CompactString"),
        "{code}"
    );
    assert!(code.contains("p: &str"), "{code}");
    std::fs::remove_dir_all(&dir).unwrap();
}
