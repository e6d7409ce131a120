//! Ice 3.7 for Python from Debian (`python3-zeroc-ice`), the Python peer of
//! the suites. The `python3` on `PATH` may be another interpreter without
//! Ice: the peers run with [`PYTHON`].

use std::process::Command;
use std::sync::OnceLock;

/// The Python interpreter that has the Debian `Ice` module.
pub const PYTHON: &str = "/usr/bin/python3";

/// Fails the test with a clear message unless [`PYTHON`] can import Ice
/// (checked once per test process).
///
/// # Panics
///
/// When [`PYTHON`] cannot run or cannot import Ice.
pub fn require_python_ice() {
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    let result = CHECKED.get_or_init(|| {
        let out = Command::new(PYTHON)
            .args(["-c", "import Ice; print(Ice.stringVersion())"])
            .output()
            .map_err(|e| format!("cannot run {PYTHON}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{PYTHON} cannot import Ice ({}); install python3-zeroc-ice \
                 (or set FLOE_NO_INTEROP=1 to skip interop tests)",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
