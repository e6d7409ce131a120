//! Ice 3.8 for Python (`zeroc-ice` 3.8.3 from PyPI), the Ice 3.8 peer of
//! the interop tests.
//!
//! `cargo xtask test` installs it into the virtual environment
//! [`venv_dir`] (`~/.cache/floe/ice-3.8.3/venv`) with a Python 3.12 or
//! newer, then writes the [`READY_MARKER`] file. The first install builds
//! Ice's C++ core from source (pip then keeps the wheel in its cache), so
//! xtask runs it in the background: the workspace tests run with
//! `FLOE_ICE38_DEFER=1`, under which the Ice 3.8 tests (the `ice38` test
//! targets) return at once, and xtask runs those targets afterwards, once
//! the install is done.

use std::path::PathBuf;

/// The version of `zeroc-ice` installed from PyPI.
pub const VERSION: &str = "3.8.3";

/// The file written in the virtual environment once the install is done.
pub const READY_MARKER: &str = ".floe-ready";

/// The virtual environment (`$FLOE_ICE38_VENV`, else
/// `$HOME/.cache/floe/ice-3.8.3/venv`).
pub fn venv_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("FLOE_ICE38_VENV") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
    home.join(".cache")
        .join("floe")
        .join(format!("ice-{VERSION}"))
        .join("venv")
}

/// The venv's interpreter, whether or not it is installed.
pub fn venv_python() -> PathBuf {
    venv_dir().join("bin").join("python")
}

/// The Python with Ice 3.8 for `test`, or `None` (after printing why) when
/// the test must not run now: `FLOE_NO_INTEROP=1`, `FLOE_ICE38_DEFER=1`
/// (xtask runs it later), or no install outside CI.
///
/// # Panics
///
/// Under `CI=true` when Ice 3.8 for Python is not installed.
pub fn python(test: &str) -> Option<PathBuf> {
    if crate::interop_disabled(test) {
        return None;
    }
    if std::env::var("FLOE_ICE38_DEFER").is_ok_and(|v| v == "1") {
        println!("{test}: deferred to xtask's Ice 3.8 pass (FLOE_ICE38_DEFER=1)");
        return None;
    }
    if let Some(p) = std::env::var_os("FLOE_ICE38_PYTHON") {
        return Some(PathBuf::from(p));
    }
    if venv_dir().join(READY_MARKER).is_file() {
        return Some(venv_python());
    }
    let why = format!(
        "Ice {VERSION} for Python is not installed in {} (cargo xtask test installs it)",
        venv_dir().display()
    );
    if crate::is_ci() {
        panic!("{test}: {why}");
    }
    println!("{test}: skipped: {why}");
    None
}
