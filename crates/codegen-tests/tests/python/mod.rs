//! The Python Ice peer the interop tests start.
#![allow(dead_code)]

use std::process::{Command, Stdio};

/// Debian's Python, which has the `Ice` module (`python3-zeroc-ice`);
/// [`Peer`] kills and reaps a peer process however the test ends.
#[allow(unused_imports)] // not every test binary starts a peer
pub use floe_testkit::{ChildGuard as Peer, PYTHON};

/// Whether the Python Ice peer is there. Panics with what to install if it
/// is not, unless `FLOE_NO_INTEROP` is set (then prints that the test is
/// skipped and returns false).
pub fn python_available() -> bool {
    let ok = Command::new(PYTHON)
        .args(["-c", "import Ice"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        if std::env::var_os("FLOE_NO_INTEROP").is_some() {
            println!("FLOE_NO_INTEROP set: Python Ice peer missing, test skipped");
            return false;
        }
        panic!("{PYTHON} with the Ice module is missing: install python3-zeroc-ice (cargo xtask test does)");
    }
    true
}
