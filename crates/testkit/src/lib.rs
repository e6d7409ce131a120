//! Test support shared by floe's test suites (`publish = false`): the real
//! Ice peers, where they are installed, how to start them and read what they
//! report, and the fixtures several suites use.
//!
//! - [`interop_disabled`] / [`is_ci`] / [`optional_peer_missing`]:
//!   `FLOE_NO_INTEROP=1` skips tests with real peers; under `CI=true` a
//!   missing peer fails the test instead of skipping it.
//! - [`Peer`]: a peer process killed and reaped on drop ([`ChildGuard`]
//!   for a bare child whose pipes the test reads);
//!   [`free_port`] / [`endpoint`]: 127.0.0.1 only.
//! - [`PYTHON`]: Debian's Python with Ice 3.7; [`ice38`]: the Ice 3.8 for
//!   Python that `cargo xtask test` installs into a virtual environment.
//! - [`interop`]: the Interop suite's Python, C++, Node and Java peers;
//!   [`ClientReport`]: the `PASS`/`FAIL`/`SKIP`/`SUMMARY` lines their
//!   clients print; [`CppBuild`]: the stamped C++ peer build any suite uses.
//! - [`icegrid`]: a real `icegridnode`; [`tls_certs`]: test certificates;
//!   [`hostile`]: malformed frames and the reaction Ice shows; [`wiretap`]:
//!   a relay that records frame headers; [`node_packages`]: the npm
//!   packages of the Node and browser peers; [`prometheus`]: a real
//!   Prometheus scraping a test's endpoint.

pub mod cpp_build;
pub mod hostile;
pub mod ice38;
pub mod icegrid;
pub mod interop;
pub mod node_packages;
pub mod paths;
pub mod peer;
pub mod ports;
pub mod prometheus;
pub mod python;
pub mod report;
pub mod tls_certs;
pub mod tool;
pub mod wiretap;

pub use cpp_build::CppBuild;
pub use peer::{ChildGuard, Peer, READY_TIMEOUT};
pub use ports::{endpoint, free_port};
pub use python::{require_python_ice, PYTHON};
pub use report::{ClientReport, ReportLine};

/// True (after printing why) when `FLOE_NO_INTEROP=1` asks to skip tests
/// with real Ice peers.
pub fn interop_disabled(test: &str) -> bool {
    if std::env::var("FLOE_NO_INTEROP").is_ok_and(|v| v == "1") {
        println!("{test}: skipped (FLOE_NO_INTEROP=1)");
        return true;
    }
    false
}

/// Whether this run is CI's (`CI=true`, as `.ci/run` is run): missing
/// peers then fail tests instead of skipping them.
pub fn is_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// An optional peer is missing: prints why, or under CI fails the test,
/// since `cargo xtask test` installs every peer there.
///
/// # Panics
///
/// Under `CI=true`.
pub fn optional_peer_missing(peer: &str, why: &str) {
    if is_ci() {
        panic!("{peer} unavailable under CI=true: {why}");
    }
    println!("{peer} skipped: {why}");
}
