//! Every Slice file shipped with Ice 3.7 (/usr/share/ice/slice) compiles
//! cleanly, through the library and through `slice2rs --validate`.

mod common;

use std::process::Command;
use std::time::Instant;

#[test]
fn every_system_slice_file_validates() {
    let Some(dir) = common::system_slice_dir() else {
        return;
    };
    let files = common::ice_files(&dir);
    assert!(
        files.len() >= 60,
        "expected the full Ice 3.7 Slice set, found {}",
        files.len()
    );
    let opts = floe_idl::Options {
        include_dirs: vec![dir.clone()],
        ..Default::default()
    };
    let start = Instant::now();
    let mut definitions = 0;
    for f in &files {
        match floe_idl::compile(f, &opts) {
            Ok(out) => definitions += out.model.main_definitions().count(),
            Err(fail) => panic!("{} rejected:\n{}", f.display(), fail.rendered()),
        }
    }
    let elapsed = start.elapsed();
    println!(
        "library: {} files, {} main-file definitions, {:?} total ({:?} per file)",
        files.len(),
        definitions,
        elapsed,
        elapsed / files.len() as u32
    );
    assert!(definitions > 300, "too few definitions: {definitions}");
}

#[test]
fn slice2rs_validate_accepts_all_system_files() {
    let Some(dir) = common::system_slice_dir() else {
        return;
    };
    let files = common::ice_files(&dir);
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_slice2rs"))
        .arg("--validate")
        .arg(format!("-I{}", dir.display()))
        .args(&files)
        .output()
        .expect("run slice2rs");
    println!(
        "slice2rs --validate on {} files: {:?}",
        files.len(),
        start.elapsed()
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "slice2rs failed:\n{stderr}");
    assert!(!stderr.contains("error:"), "{stderr}");
}
