//! The `slice2rs` command line: options mirror slice2cpp, exit status is 0
//! on success and 1 on any error, diagnostics are `file:line:col: error:`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_slice2rs"))
        .args(args)
        .output()
        .expect("run slice2rs")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

#[test]
fn version_and_help() {
    let out = run(&["-v"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        env!("CARGO_PKG_VERSION")
    );
    let out = run(&["-h"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "-I",
        "-D",
        "-U",
        "-E",
        "--output-dir",
        "--depend",
        "--validate",
        "--no-interfaces",
        "Writes <file stem>.rs",
    ] {
        assert!(help.contains(flag), "help lacks {flag}:\n{help}");
    }
    assert_eq!(run(&["--no-such-flag"]).status.code(), Some(1));
    assert_eq!(run(&[]).status.code(), Some(1));
}

#[test]
fn defines_includes_and_errors() {
    let tmp = common::TempDir::new("cli");
    let inc = tmp.0.join("inc");
    std::fs::create_dir_all(&inc).expect("mkdir");
    write(
        &inc,
        "Base.ice",
        "#pragma once\nmodule Base { struct P { int x; } }\n",
    );
    let main = write(
        &tmp.0,
        "Main.ice",
        "#include <Base.ice>\n#include \"inc/Base.ice\"\nmodule M {\n#ifdef WITH_T\n  struct T { Base::P p; }\n#else\n  struct T { Missing m; }\n#endif\n#if LEVEL >= 2\n  const int L = LEVEL;\n#endif\n}\n",
    );
    let inc_arg = format!("-I{}", inc.display());
    let main_s = main.to_str().expect("utf-8 path");

    // Without WITH_T the #else branch refers to an unknown type: error at line 7.
    let out = run(&["--validate", &inc_arg, main_s]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Main.ice:7:14: error: `Missing' is not defined"),
        "{err}"
    );

    let out = run(&["--validate", &inc_arg, "-DWITH_T", "-D", "LEVEL=3", main_s]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // -U removes a -D given before it.
    let out = run(&["--validate", &inc_arg, "-DWITH_T", "-UWITH_T", main_s]);
    assert_eq!(out.status.code(), Some(1));

    // A missing include directory: the include is not found.
    let out = run(&["--validate", "-DWITH_T", main_s]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot find include file `Base.ice'"));

    // -E prints the preprocessed text with line markers, comments kept.
    let out = run(&["-E", &inc_arg, "-DWITH_T", "-DLEVEL=2", main_s]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("module Base") && text.contains("const int L = 2;"),
        "{text}"
    );
    assert!(
        text.contains("#line 3 \"") && !text.contains("Missing"),
        "{text}"
    );

    // --depend lists the included file once.
    let out = run(&["--depend", &inc_arg, "-DWITH_T", main_s]);
    let deps = String::from_utf8_lossy(&out.stdout);
    assert!(deps.starts_with("Main.rs:"), "{deps}");
    assert_eq!(deps.matches("Base.ice").count(), 1, "{deps}");

    // --output-dir must exist.
    let out = run(&[
        "--validate",
        "--output-dir",
        "/nonexistent/dir",
        &inc_arg,
        "-DWITH_T",
        main_s,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let outdir = tmp.0.join("out");
    std::fs::create_dir_all(&outdir).expect("mkdir");
    let out = run(&[
        "--output-dir",
        outdir.to_str().expect("utf-8"),
        &inc_arg,
        "-DWITH_T",
        main_s,
    ]);
    assert!(out.status.success());
}

#[test]
fn all_errors_are_reported_at_once() {
    let tmp = common::TempDir::new("cli-many");
    let f = write(
        &tmp.0,
        "Many.ice",
        "module M {\n  struct A { Unknown u; }\n  const byte B = 300;\n  enum E { x = 1, y = 1 }\n  interface I { void f(out int a, int b); }\n}\n",
    );
    let out = run(&["--validate", f.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Many.ice:2:14: error:"), "{err}");
    assert!(err.contains("Many.ice:3:18: error:"), "{err}");
    assert!(err.contains("Many.ice:4:19: error:"), "{err}");
    assert!(
        err.lines().filter(|l| l.contains(": error:")).count() >= 3,
        "{err}"
    );
}

#[test]
fn generates_rust_into_output_dir() {
    let tmp = common::TempDir::new("cli-gen");
    let out_dir = tmp.0.join("out");
    std::fs::create_dir_all(&out_dir).expect("mkdir");
    let main = write(
        &tmp.0,
        "Hello.ice",
        "module Demo { interface Hello { string sayHello(int delay); } }\n",
    );
    let out = run(&[
        "--output-dir",
        out_dir.to_str().expect("utf-8 path"),
        main.to_str().expect("utf-8 path"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let code = std::fs::read_to_string(out_dir.join("Hello.rs")).expect("Hello.rs written");
    assert!(code.contains("pub mod demo"), "{code}");
    assert!(code.contains("pub struct HelloPrx"), "{code}");
    assert!(code.contains("pub trait Hello"), "{code}");
    // --validate writes nothing.
    std::fs::remove_file(out_dir.join("Hello.rs")).expect("rm");
    let out = run(&[
        "--validate",
        "--output-dir",
        out_dir.to_str().expect("utf-8 path"),
        main.to_str().expect("utf-8 path"),
    ]);
    assert!(out.status.success());
    assert!(!out_dir.join("Hello.rs").exists());
}
