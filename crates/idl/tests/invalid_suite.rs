//! The error-detection suite. Each `tests/invalid/NNN_name.ice` starts with
//! `// expect: LINE: substring`: slice2rs must reject it with a diagnostic
//! at that line containing that text, and the real slice2cpp (Ice 3.7) must
//! reject it too. Each `tests/valid/*.ice` must be accepted by both. A
//! second line `// slice2rs: ARGS` adds options to slice2rs's command line
//! (`--dialect 3.7` for a file that Ice 3.8 would accept).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name)
}

fn expectation(path: &Path) -> (u32, String) {
    let text = std::fs::read_to_string(path).expect("read test file");
    let first = text.lines().next().unwrap_or("");
    let rest = first.strip_prefix("// expect: ").unwrap_or_else(|| {
        panic!(
            "{}: first line must be `// expect: LINE: text'",
            path.display()
        )
    });
    let (line, sub) = rest
        .split_once(": ")
        .unwrap_or_else(|| panic!("{}: bad expect line", path.display()));
    (line.parse().expect("line number"), sub.to_owned())
}

fn slice2rs(file: &Path) -> (bool, String) {
    let text = std::fs::read_to_string(file).expect("read test file");
    let extra = text
        .lines()
        .nth(1)
        .and_then(|l| l.strip_prefix("// slice2rs: "))
        .unwrap_or("");
    let out = Command::new(env!("CARGO_BIN_EXE_slice2rs"))
        .arg("--validate")
        .arg(format!("-I{}", common::SYSTEM_SLICE))
        .args(extra.split_whitespace())
        .arg(file)
        .output()
        .expect("run slice2rs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the real slice2cpp into a throwaway directory (its `--validate`
/// only checks options in 3.7). `None` if slice2cpp is unavailable and
/// FLOE_NO_INTEROP=1.
fn slice2cpp(file: &Path) -> Option<(bool, String)> {
    let tmp = common::TempDir::new("cpp");
    match Command::new("slice2cpp")
        .arg(format!("-I{}", common::SYSTEM_SLICE))
        .arg("--output-dir")
        .arg(&tmp.0)
        .arg(file)
        .output()
    {
        Ok(out) => Some((out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())),
        Err(e) if common::no_interop() => {
            println!("FLOE_NO_INTEROP=1: slice2cpp unavailable ({e}), skipping the cross-check");
            None
        }
        Err(e) => panic!("slice2cpp not runnable ({e}): install Debian package zeroc-ice-compilers (cargo xtask test does)"),
    }
}

fn files(name: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir(name))
        .expect("test dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ice"))
        .collect();
    v.sort();
    v
}

#[test]
fn slice2rs_rejects_every_invalid_file_with_the_expected_message() {
    let files = files("invalid");
    assert!(files.len() >= 80, "only {} invalid files", files.len());
    let mut problems = Vec::new();
    for f in &files {
        let (line, sub) = expectation(f);
        let (ok, stderr) = slice2rs(f);
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let at_line = format!("{name}:{line}:");
        if ok {
            problems.push(format!("{name}: accepted"));
        } else if !stderr
            .lines()
            .any(|l| l.contains(&at_line) && l.contains(&sub))
        {
            problems.push(format!(
                "{name}: wanted line {line} `{sub}', got:\n{stderr}"
            ));
        }
        if stderr.contains("panicked") {
            problems.push(format!("{name}: panic"));
        }
    }
    println!("{} invalid files checked", files.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn slice2cpp_also_rejects_every_invalid_file() {
    let files = files("invalid");
    let mut accepted = Vec::new();
    for f in &files {
        let Some((ok, _)) = slice2cpp(f) else { return };
        if ok {
            accepted.push(f.display().to_string());
        }
    }
    println!(
        "slice2cpp rejected {}/{} invalid files",
        files.len() - accepted.len(),
        files.len()
    );
    assert!(accepted.is_empty(), "slice2cpp accepted: {accepted:?}");
}

#[test]
fn both_compilers_accept_the_valid_files() {
    let files = files("valid");
    assert!(files.len() >= 20);
    for f in &files {
        let (ok, stderr) = slice2rs(f);
        assert!(ok, "slice2rs rejected {}:\n{stderr}", f.display());
        if let Some((ok, stderr)) = slice2cpp(f) {
            assert!(ok, "slice2cpp rejected {}:\n{stderr}", f.display());
        }
    }
    println!("{} valid files accepted by both", files.len());
}
