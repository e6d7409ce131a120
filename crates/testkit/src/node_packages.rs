//! The npm packages of the Node and browser peers, listed once in the
//! `package.json` of the Interop suite's peers (`crates/testkit/interop/`:
//! Ice for JavaScript, `ws`, `playwright-core`) and installed together by one `npm install` in a
//! directory (`target/interop-node/`): npm removes from `node_modules`
//! whatever the directory's package.json does not list, so every install
//! there goes through this list.
//!
//! Used by `cargo xtask test` (xtask/src/install.rs), the interop harness
//! (the Node client, [`crate::interop::node_peer`]) and tests/browser.rs (the page and its driver).

use std::path::Path;
use std::process::Command;

/// The package.json installed in the directory.
pub const MANIFEST: &str = include_str!("../interop/package.json");

/// The names of the packages `MANIFEST` depends on.
pub fn package_names() -> Vec<&'static str> {
    let Some(start) = MANIFEST.find("\"dependencies\"") else {
        return Vec::new();
    };
    let block = &MANIFEST[start..];
    let block = &block[..block.find('}').unwrap_or(block.len())];
    block
        .lines()
        .skip(1)
        .filter_map(|line| line.trim().strip_prefix('"')?.split('"').next())
        .collect()
}

/// Whether `dir` holds `MANIFEST` and every package it lists.
pub fn installed(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("package.json")).is_ok_and(|m| m == MANIFEST)
        && package_names().iter().all(|name| {
            dir.join("node_modules")
                .join(name)
                .join("package.json")
                .is_file()
        })
}

/// Installs the packages into `dir` unless they are there. Returns whether
/// it ran npm; fails with npm's output when npm is missing or fails.
pub fn install(dir: &Path) -> Result<bool, String> {
    if installed(dir) {
        return Ok(false);
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    std::fs::write(dir.join("package.json"), MANIFEST)
        .map_err(|e| format!("write {}/package.json: {e}", dir.display()))?;
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(dir)
        .output()
        .map_err(|e| format!("npm not runnable: {e}"))?;
    if !out.status.success() || !installed(dir) {
        return Err(format!(
            "npm install {} in {} failed ({}): {}{}",
            package_names().join(" "),
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(true)
}
