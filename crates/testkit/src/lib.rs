//! Test support shared by floe's test suites (`publish = false`): where the
//! real Ice peers are installed and whether a test may run them.
//!
//! - [`interop_disabled`] / [`is_ci`]: `FLOE_NO_INTEROP=1` skips tests
//!   with real peers; under `CI=true` a missing peer fails the test instead.
//! - [`ice38`]: the Ice 3.8 for Python peer that `cargo xtask test`
//!   installs into a virtual environment.

pub mod ice38;

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
