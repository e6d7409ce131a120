//! Helpers shared by the integration tests: locating the system Slice
//! files and slice2cpp, and throwaway output directories.

#![allow(dead_code)]

pub mod random_slice;

use std::path::{Path, PathBuf};

/// Where Debian's zeroc-ice-slice package puts the Ice Slice files.
pub const SYSTEM_SLICE: &str = "/usr/share/ice/slice";

/// True if the run asked to skip tests that need real Ice tools.
pub fn no_interop() -> bool {
    std::env::var("FLOE_NO_INTEROP").is_ok_and(|v| v == "1")
}

/// Returns the system Slice directory, or `None` (after printing why) when
/// FLOE_NO_INTEROP=1 and it is missing. Panics with a clear message if it is
/// missing otherwise.
pub fn system_slice_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(SYSTEM_SLICE);
    if dir.is_dir() {
        return Some(dir);
    }
    if no_interop() {
        println!("FLOE_NO_INTEROP=1: {SYSTEM_SLICE} missing, skipping");
        return None;
    }
    panic!(
        "{SYSTEM_SLICE} not found: install Debian package zeroc-ice-slice (cargo xtask test does)"
    );
}

/// Compiles each file alone with `opts` (panicking with the diagnostics
/// if one is rejected) and generates its Rust; returns the number of
/// main-file definitions and of bytes of Rust.
pub fn compile_each(files: &[PathBuf], opts: &floe_idl::Options) -> (usize, usize) {
    let (mut definitions, mut generated) = (0, 0);
    for f in files {
        let out = match floe_idl::compile(f, opts) {
            Ok(out) => out,
            Err(fail) => panic!("{} rejected:\n{}", f.display(), fail.rendered()),
        };
        definitions += out.model.main_definitions().count();
        let code = floe_idl::codegen::generate(&out.model, &Default::default())
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        generated += code.len();
    }
    (definitions, generated)
}

/// Every `.ice` file under `dir`, sorted.
pub fn ice_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "ice") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// Creates a fresh directory under the system temp dir.
    pub fn new(tag: &str) -> TempDir {
        static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("floe-idl-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
