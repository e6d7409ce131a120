//! The Node peer: `node_client.js` on Ice for JavaScript 3.7 from npm
//! ([`crate::node_packages`]), with Interop.ice compiled by slice2js.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::{interop_dir, CLIENT_TIMEOUT};
use crate::node_packages;
use crate::optional_peer_missing;
use crate::paths::target_dir;
use crate::report::ClientReport;
use crate::tool::run_tool;

/// Runs node_client.js against `endpoint`, or returns None after printing why when
/// node, npm or the npm registry is unavailable (the Node peer is optional, except
/// under `CI=true`, where that fails the test).
pub fn run_node_client(endpoint: &str, extra: &[&str]) -> Option<ClientReport> {
    let dir = match node_peer() {
        Ok(dir) => dir,
        Err(why) => {
            optional_peer_missing("node client", why);
            return None;
        }
    };
    let mut cmd = Command::new("node");
    cmd.arg(interop_dir().join("node_client.js"))
        .arg(dir)
        .arg(endpoint)
        .args(extra);
    Some(ClientReport::run("node_client", cmd, CLIENT_TIMEOUT))
}

/// Installs the npm packages ([`node_packages::MANIFEST`]: `ice`, `ws`,
/// `playwright-core`) under `target/interop-node/` and compiles
/// Interop.ice there with slice2js (once per stamp). Returns the directory.
pub fn node_peer() -> Result<&'static Path, &'static str> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(build_node_peer)
        .as_ref()
        .map(|p| p.as_path())
        .map_err(|e| e.as_str())
}

fn build_node_peer() -> Result<PathBuf, String> {
    let dir = target_dir().join("interop-node");
    run_tool(Command::new("node").arg("--version"))
        .map_err(|e| format!("node unavailable: {e}"))?;
    node_packages::install(&dir).map_err(|e| format!("{e} (registry unavailable?)"))?;
    let ice = interop_dir().join("Interop.ice");
    let text = std::fs::read(&ice).map_err(|e| format!("read Interop.ice: {e}"))?;
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    let stamp = format!("{:016x}", hasher.finish());
    let stamp_file = dir.join("stamp");
    if std::fs::read_to_string(&stamp_file).is_ok_and(|s| s.trim() == stamp)
        && dir.join("Interop.js").exists()
    {
        return Ok(dir);
    }
    let work = dir.join(format!("gen-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| format!("create {}: {e}", work.display()))?;
    run_tool(
        Command::new("slice2js")
            .arg(format!("-I{}", interop_dir().display()))
            .arg("--output-dir")
            .arg(&work)
            .arg(&ice),
    )
    .map_err(|e| format!("slice2js unavailable or failed: {e}"))?;
    std::fs::rename(work.join("Interop.js"), dir.join("Interop.js"))
        .map_err(|e| format!("install Interop.js: {e}"))?;
    let _ = std::fs::remove_dir_all(&work);
    std::fs::write(&stamp_file, &stamp).map_err(|e| format!("write stamp: {e}"))?;
    Ok(dir)
}
