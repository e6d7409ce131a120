//! Where the workspace and its build output are, for peers built or
//! installed once per checkout (`target/interop-cpp/`, `target/interop-node/`,
//! ...).

use std::path::{Path, PathBuf};

/// The workspace root (the directory of the root `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    // crates/testkit -> workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

/// The cargo target directory (`CARGO_TARGET_DIR` or `<workspace>/target`).
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => workspace_root().join("target"),
    }
}
