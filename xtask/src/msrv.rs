//! The MSRV check of `cargo xtask test`: the publishable crates build with
//! the `rust-version` the workspace declares.
//!
//! The toolchain is installed with rustup (`--profile minimal`) when it is
//! missing, and the check is `cargo check --locked` of the library crates
//! and `floe-storm`, in `target/msrv` (its own directory: a second
//! compiler's artefacts never mix with the main build's). Checking, not
//! building, keeps it to a few minutes on CI's two cores.

use std::process::Command;

use crate::{on_path, run_checked, workspace_root, DynError};

/// The crates published to crates.io (`publish = false` ones excluded).
pub const PUBLISHED: &[&str] = &[
    "floe-wire",
    "floe-runtime",
    "floe-idl",
    "floe-derive",
    "floe",
    "floe-storm",
];

/// The workspace's `rust-version` (from `[workspace.package]`).
pub fn declared() -> Result<String, DynError> {
    let manifest = std::fs::read_to_string(workspace_root().join("Cargo.toml"))?;
    manifest
        .lines()
        .filter_map(|l| l.trim().strip_prefix("rust-version"))
        .filter_map(|rest| rest.trim().strip_prefix('='))
        .map(|v| v.trim().trim_matches('"').to_string())
        .find(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| "no rust-version in the workspace Cargo.toml".into())
}

/// Installs the declared toolchain if needed and checks the published
/// crates with it.
pub fn check() -> Result<(), DynError> {
    let version = declared()?;
    if !on_path("rustup") {
        return Err(
            format!("rustup not found: cannot check the MSRV ({version}); install rustup").into(),
        );
    }
    run_checked(Command::new("rustup").args([
        "toolchain",
        "install",
        &version,
        "--profile",
        "minimal",
    ]))?;
    let mut cmd = Command::new("rustup");
    cmd.current_dir(workspace_root())
        .args(["run", &version, "cargo", "check", "--locked"])
        .env("CARGO_TARGET_DIR", workspace_root().join("target/msrv"))
        .env_remove("RUSTC")
        .env_remove("RUSTDOC")
        .env_remove("CARGO");
    for krate in PUBLISHED {
        cmd.args(["-p", krate]);
    }
    run_checked(&mut cmd)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_workspace_declares_a_rust_version() {
        let v = super::declared().unwrap();
        assert!(v.split('.').count() >= 2, "{v}");
    }
}
