//! Differential test against the real slice2cpp (Ice 3.7): random small
//! Slice programs (deterministic seed) must be accepted or rejected by
//! slice2rs exactly when slice2cpp accepts or rejects them.

mod common;

use std::process::Command;

use common::random_slice::{Generator, Style};

#[test]
fn slice2rs_agrees_with_slice2cpp_on_random_programs() {
    if Command::new("slice2cpp").arg("-v").output().is_err() {
        if common::no_interop() {
            println!("FLOE_NO_INTEROP=1: slice2cpp unavailable, skipping");
            return;
        }
        panic!("slice2cpp not runnable: install Debian package zeroc-ice-compilers (cargo xtask test does)");
    }
    let tmp = common::TempDir::new("diff");
    let out_dir = tmp.0.join("out");
    std::fs::create_dir_all(&out_dir).expect("mkdir");
    // FLOE_DIFF_SEED / FLOE_DIFF_CASES explore beyond the fixed default.
    let seed = std::env::var("FLOE_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_F10E_1D1C_E001u64);
    let cases: usize = std::env::var("FLOE_DIFF_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150);
    let mut generator = Generator::new(seed, Style::Ice37);
    let (mut accepted, mut mismatches) = (0, Vec::new());
    for i in 0..cases {
        let text = generator.program();
        let file = tmp.0.join(format!("g{i}.ice"));
        std::fs::write(&file, &text).expect("write");
        let ours = floe_idl::compile(&file, &floe_idl::Options::default());
        let theirs = Command::new("slice2cpp")
            .arg("--output-dir")
            .arg(&out_dir)
            .arg(&file)
            .output()
            .expect("run slice2cpp");
        if theirs.status.success() {
            accepted += 1;
        }
        if ours.is_ok() != theirs.status.success() {
            let ours_text = match &ours {
                Ok(_) => "accepted".to_owned(),
                Err(f) => f.rendered(),
            };
            mismatches.push(format!(
                "--- case {i}\n{text}slice2rs: {ours_text}\nslice2cpp: {}",
                String::from_utf8_lossy(&theirs.stderr)
            ));
        }
    }
    println!(
        "{cases} random programs, slice2cpp accepted {accepted}, {} disagreements",
        mismatches.len()
    );
    assert!(
        accepted > 10,
        "generator produces too few valid programs ({accepted})"
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
