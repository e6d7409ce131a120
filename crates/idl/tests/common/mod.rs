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

/// Whether this run is CI's (`CI=true`, as `.ci/run` is run).
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The Ice 3.8.3 for Python virtualenv that `cargo xtask test` installs:
/// `$FLOE_ICE38_VENV`, else `~/.cache/floe/ice-3.8.3/venv`.
pub fn ice38_venv() -> PathBuf {
    if let Some(v) = std::env::var_os("FLOE_ICE38_VENV") {
        return PathBuf::from(v);
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
    home.join(".cache/floe/ice-3.8.3/venv")
}

/// Ice 3.8's own Slice files: `$FLOE_ICE38_SLICE` (a directory holding
/// `Ice/Identity.ice`, such as the `dist/lib/slice` of the `zeroc-ice`
/// 3.8.3 sdist), else the `slice` package that `zeroc-ice` installs in
/// [`ice38_venv`] (`lib/python3.*/site-packages/slice`). When neither is
/// there, the test fails under CI=true (`cargo xtask test` installs the
/// venv) and is skipped loudly otherwise (FLOE_NO_INTEROP=1 or not).
pub fn ice38_slice_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("FLOE_ICE38_SLICE") {
        Some(d) => Some(PathBuf::from(d)),
        None => std::fs::read_dir(ice38_venv().join("lib"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().join("site-packages/slice"))
            .find(|p| p.join("Ice/Identity.ice").is_file()),
    };
    if let Some(dir) = dir.filter(|d| d.join("Ice/Identity.ice").is_file()) {
        return Some(dir);
    }
    ice38_missing(&format!(
        "Ice 3.8 Slice files not found (FLOE_ICE38_SLICE, or the zeroc-ice 3.8.3 venv at {})",
        ice38_venv().display()
    ))
}

/// Ice 3.8's `slice2py` from [`ice38_venv`]; when it is not installed, the
/// test fails under CI=true and is skipped loudly otherwise.
pub fn ice38_slice2py() -> Option<PathBuf> {
    let exe = ice38_venv().join("bin/slice2py");
    if exe.is_file() {
        return Some(exe);
    }
    ice38_missing(&format!(
        "Ice 3.8's slice2py not found at {}",
        exe.display()
    ))
}

/// Something of Ice 3.8 is missing: fails under CI=true (`cargo xtask
/// test` installs it there), prints that the test is skipped otherwise.
fn ice38_missing<T>(why: &str) -> Option<T> {
    if under_ci() {
        panic!("{why}: cargo xtask test installs it under CI=true");
    }
    println!("SKIPPED: {why}");
    eprintln!("SKIPPED: {why}");
    None
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
