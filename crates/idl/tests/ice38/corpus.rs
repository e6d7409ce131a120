//! Ice 3.8's own Slice files compile without flags, through the library
//! (and generate Rust) and through `slice2rs --validate`; the 3.8 fixtures
//! get the same verdicts from slice2rs and from Ice 3.8's slice2py.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::common;

fn options(dir: &Path, dialect: floe_idl::Dialect) -> floe_idl::Options {
    floe_idl::Options {
        include_dirs: vec![dir.to_path_buf()],
        dialect,
        ..Default::default()
    }
}

#[test]
fn every_ice38_slice_file_compiles_and_generates() {
    let Some(python) = super::python("every_ice38_slice_file_compiles_and_generates") else {
        return;
    };
    let dir = super::slice_dir(&python);
    let files = common::ice_files(&dir);
    assert!(
        files.len() >= 32,
        "expected Ice 3.8's Slice set (32 files), found {}",
        files.len()
    );
    let (definitions, generated) =
        common::compile_each(&files, &options(&dir, floe_idl::Dialect::Auto));
    println!(
        "Ice 3.8: {} files, {definitions} main-file definitions, {generated} bytes of Rust",
        files.len()
    );
    assert!(definitions > 180, "too few definitions: {definitions}");
}

#[test]
fn slice2rs_validate_accepts_every_ice38_file() {
    let Some(python) = super::python("slice2rs_validate_accepts_every_ice38_file") else {
        return;
    };
    let dir = super::slice_dir(&python);
    let files = common::ice_files(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_slice2rs"))
        .arg("--validate")
        .arg(format!("-I{}", dir.display()))
        .args(&files)
        .output()
        .expect("run slice2rs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "slice2rs failed:\n{stderr}");
    assert!(!stderr.contains("error:"), "{stderr}");
}

/// Read as Ice 3.7 (`--dialect 3.7`), the files that define `IceGrid`,
/// `IceMX`, `IceBox`... are rejected for the `Ice` prefix, as Ice 3.7's
/// slice2cpp would reject them: it is the per-file dialect that makes them
/// compile, not a relaxed rule for every file.
#[test]
fn as_ice37_the_ice_prefixed_files_are_rejected() {
    let Some(python) = super::python("as_ice37_the_ice_prefixed_files_are_rejected") else {
        return;
    };
    let dir = super::slice_dir(&python);
    let files = common::ice_files(&dir);
    let opts = options(&dir, floe_idl::Dialect::Ice37);
    let mut rejected = Vec::new();
    for f in &files {
        if let Err(fail) = floe_idl::compile(f, &opts) {
            let text = fail.rendered();
            for line in text.lines().filter(|l| l.contains("error:")) {
                assert!(line.contains("`Ice' prefix is reserved"), "{line}");
            }
            rejected.push(f.strip_prefix(&dir).unwrap_or(f).display().to_string());
        }
    }
    println!(
        "as Ice 3.7: {} of {} files rejected: {rejected:?}",
        rejected.len(),
        files.len()
    );
    assert!(
        rejected.iter().any(|f| f.contains("IceGrid")),
        "{rejected:?}"
    );
}

/// The `.ice` files of `tests/ice38/<kind>`.
fn fixtures(kind: &str) -> Vec<PathBuf> {
    common::ice_files(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/ice38")
            .join(kind),
    )
}

fn slice2rs(file: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_slice2rs"))
        .arg("--validate")
        .arg(file)
        .output()
        .expect("run slice2rs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Each `tests/ice38/valid` file is accepted and each `tests/ice38/invalid`
/// file rejected with the diagnostic its first line names
/// (`// expect: LINE: text`), without flags.
#[test]
fn slice2rs_verdicts_on_the_ice38_fixtures() {
    for f in fixtures("valid") {
        let (ok, stderr) = slice2rs(&f);
        assert!(ok, "{} rejected:\n{stderr}", f.display());
    }
    let invalid = fixtures("invalid");
    assert!(invalid.len() >= 7);
    for f in &invalid {
        let text = std::fs::read_to_string(f).expect("read");
        let (line, want) = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("// expect: "))
            .and_then(|l| l.split_once(": "))
            .unwrap_or_else(|| panic!("{}: no `// expect: LINE: text'", f.display()));
        let (ok, stderr) = slice2rs(f);
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        let at = format!("{name}:{line}:");
        assert!(!ok, "{name} accepted");
        assert!(
            stderr.lines().any(|l| l.contains(&at) && l.contains(want)),
            "{name}: wanted line {line} `{want}', got:\n{stderr}"
        );
    }
}

/// Ice 3.8's slice2py (`python -m slice2py`) on `files`: true if it
/// accepts them all, and its diagnostics.
fn slice2py38(python: &Path, files: &[PathBuf]) -> (bool, String) {
    let tmp = common::TempDir::new("py38");
    let out = Command::new(python)
        .args(["-m", "slice2py", "--output-dir"])
        .arg(&tmp.0)
        .args(files)
        .output()
        .expect("run slice2py 3.8");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The reference: Ice 3.8's own compiler accepts its Slice files and the
/// valid fixtures and rejects each invalid one, as slice2rs does.
#[test]
fn slice2py_38_agrees() {
    let Some(python) = super::python("slice2py_38_agrees") else {
        return;
    };
    let mut problems = Vec::new();
    let dir = super::slice_dir(&python);
    let (ok, stderr) = slice2py38(&python, &common::ice_files(&dir));
    if !ok {
        problems.push(format!("slice2py 3.8 rejects Ice 3.8's Slice:\n{stderr}"));
    }
    let (valid, invalid) = (fixtures("valid"), fixtures("invalid"));
    let (ok, stderr) = slice2py38(&python, &valid);
    if !ok {
        problems.push(format!("slice2py 3.8 rejects a valid fixture:\n{stderr}"));
    }
    for f in &invalid {
        if slice2py38(&python, std::slice::from_ref(f)).0 {
            problems.push(format!("slice2py 3.8 accepts {}", f.display()));
        }
    }
    println!(
        "slice2py 3.8: Ice 3.8's Slice, {} valid and {} invalid fixtures, {} disagreements",
        valid.len(),
        invalid.len(),
        problems.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
