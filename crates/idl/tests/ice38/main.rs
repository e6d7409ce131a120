//! Ice 3.8 Slice against Ice 3.8's own compiler (the `ice38` test target,
//! which `cargo xtask test` runs once Ice 3.8 for Python is installed; see
//! `floe_testkit::ice38`):
//!
//! - `corpus`: Ice 3.8's own Slice files (the `slice` directory that
//!   `zeroc-ice` 3.8.3 installs: Ice, Glacier2, IceBox, IceGrid, IceStorm,
//!   DataStorm) compile without flags and generate Rust, and the fixtures in
//!   `tests/ice38/{valid,invalid}` get the same verdicts from slice2rs and
//!   from slice2py 3.8;
//! - `differential`: random Ice 3.8 programs, slice2rs against slice2py 3.8.

#[path = "../common/mod.rs"]
mod common;
mod corpus;
mod differential;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Python with Ice 3.8 for `test`, or `None` when the test does not
/// run now (deferred by xtask, skipped without the install outside CI; a
/// missing install fails it under CI=true).
fn python(test: &str) -> Option<PathBuf> {
    floe_testkit::ice38::python(test)
}

/// Ice 3.8's own Slice directory, as the installed `zeroc-ice` reports it
/// (`Ice.getSliceDir()`: `site-packages/slice`).
fn slice_dir(python: &Path) -> PathBuf {
    let out = Command::new(python)
        .args(["-c", "import Ice; print(Ice.getSliceDir())"])
        .output()
        .expect("run Ice 3.8's Python");
    assert!(out.status.success(), "{out:?}");
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(
        dir.join("Ice/Identity.ice").is_file(),
        "no Ice 3.8 Slice files in {}",
        dir.display()
    );
    dir
}
