//! Differential test against Ice 3.8's Slice compiler (what slice2py 3.8
//! runs): random small programs in Ice 3.8's style
//! (`module M::N`, `:` for inheritance, names only 3.8 allows) must be
//! accepted or rejected by slice2rs, with its default `Dialect::Auto`,
//! exactly when slice2py 3.8 accepts or rejects them.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::common;
use super::common::random_slice::{Generator, Style};

/// Compiles each file given on the command line with Ice 3.8's compiler in
/// one Python process (IcePy.compileSlice, what slice2py runs), printing
/// `0` or `1` per file.
const DRIVER: &str = r#"
import sys, IcePy
out = sys.argv[1]
for f in sys.argv[2:]:
    status = IcePy.compileSlice(["slice2py", "--output-dir", out, f])
    print(status, flush=True)
"#;

#[test]
fn slice2rs_agrees_with_slice2py_38_on_random_programs() {
    let Some(python) = super::python("slice2rs_agrees_with_slice2py_38_on_random_programs") else {
        return;
    };
    let tmp = common::TempDir::new("diff38");
    let out_dir = tmp.0.join("out");
    std::fs::create_dir_all(&out_dir).expect("mkdir");
    // FLOE_DIFF_SEED / FLOE_DIFF_CASES explore beyond the fixed default.
    let seed = std::env::var("FLOE_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_F10E_1D1C_E038u64);
    let cases: usize = std::env::var("FLOE_DIFF_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500);
    let mut generator = Generator::new(seed, Style::Ice38);
    let mut programs = Vec::new();
    for i in 0..cases {
        let text = generator.program();
        let file = tmp.0.join(format!("g{i}.ice"));
        std::fs::write(&file, &text).expect("write");
        programs.push((file, text));
    }
    let (verdicts, crashes) = ice38_verdicts(&python, &out_dir, &programs);
    let (mut accepted, mut known, mut mismatches) = (0, 0, Vec::new());
    for ((file, text), theirs_ok) in programs.iter().zip(verdicts) {
        accepted += usize::from(theirs_ok);
        let ours = floe_idl::compile(file, &floe_idl::Options::default());
        if ours.is_ok() == theirs_ok {
            continue;
        }
        let ours_text = match &ours {
            Ok(_) => "accepted".to_owned(),
            Err(f) if known_difference(f) => {
                known += 1;
                continue;
            }
            Err(f) => f.rendered(),
        };
        let theirs_text = if theirs_ok { "accepted" } else { "rejected" };
        mismatches.push(format!(
            "--- {}\n{text}slice2rs: {ours_text}\nslice2py 3.8: {theirs_text}",
            file.display()
        ));
    }
    println!(
        "{cases} random Ice 3.8 programs, slice2py 3.8 accepted {accepted} (crashed on {crashes}), \
         {} disagreements, {known} known differences",
        mismatches.len()
    );
    assert!(
        accepted > 10,
        "generator produces too few valid programs ({accepted})"
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// The one known difference: Ice 3.8 accepts an interface declared under
/// two spellings that differ only in case (`interface a; interface A {}`;
/// Ice 3.7 says "`A' has changed meaning"); slice2rs rejects it in 3.8
/// files too, since both would be the one Rust type `APrx`.
fn known_difference(fail: &floe_idl::Failure) -> bool {
    let text = fail.rendered();
    let mut errors = text.lines().filter(|l| l.contains("error:")).peekable();
    errors.peek().is_some()
        && errors.all(|l| {
            l.contains("differs only in capitalization from interface")
                && l.contains(": error: interface `")
        })
}

/// Ice 3.8's verdict on each program (true: accepted), and how many made
/// it crash. slice2py 3.8.3 crashes (SIGSEGV) on some programs that it has
/// already reported errors in (a struct with an undefined member type used
/// as an optional class member): those count as rejected, and the driver
/// goes on with the next program.
fn ice38_verdicts(
    python: &Path,
    out_dir: &Path,
    programs: &[(PathBuf, String)],
) -> (Vec<bool>, usize) {
    let (mut verdicts, mut crashes) = (Vec::new(), 0);
    while verdicts.len() < programs.len() {
        let rest = &programs[verdicts.len()..];
        let run = Command::new(python)
            .arg("-c")
            .arg(DRIVER)
            .arg(out_dir)
            .args(rest.iter().map(|(f, _)| f))
            .output()
            .expect("run Ice 3.8's compiler");
        let stdout = String::from_utf8_lossy(&run.stdout);
        verdicts.extend(stdout.lines().map(|l| l.trim() == "0"));
        if verdicts.len() < programs.len() {
            let stderr = String::from_utf8_lossy(&run.stderr);
            let (file, text) = &programs[verdicts.len()];
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            assert!(
                run.status.code().is_none() && stderr.contains(&format!("{name}:")),
                "Ice 3.8's compiler stopped ({}) at {} without reporting an error:\n{text}",
                run.status,
                file.display()
            );
            verdicts.push(false);
            crashes += 1;
        }
    }
    (verdicts, crashes)
}
