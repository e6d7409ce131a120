//! `cargo xtask test`: install missing peers, then format check, clippy and
//! the whole test suite (dev profile only, to fit a 2-core CI).

use crate::{cargo, install, run_checked, DynError};

/// Command-line tools that library users do not build (`slice2rs`): the
/// checks and tests build them too, with one feature set for both, so
/// nothing is compiled twice.
const CLI_FEATURES: &str = "floe-idl/cli";

/// Runs every step; all three checks run even if an earlier one failed, and
/// the task fails if any did.
pub fn run() -> Result<(), DynError> {
    if std::env::var_os("FLOE_NO_INTEROP").is_some_and(|v| v == "1") {
        println!("xtask: FLOE_NO_INTEROP=1, not installing Ice peers");
    } else {
        install::debian_packages()?;
        install::node_ice();
        install::maven_ice();
    }

    let steps: [(&str, &[&str]); 3] = [
        ("fmt", &["fmt", "--all", "--", "--check"]),
        (
            "clippy",
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--features",
                CLI_FEATURES,
                "--",
                "-D",
                "warnings",
            ],
        ),
        ("test", &["test", "--workspace", "--features", CLI_FEATURES]),
    ];
    let mut failed = Vec::new();
    for (name, args) in steps {
        if let Err(e) = run_checked(cargo().args(args)) {
            eprintln!("xtask: {e}");
            failed.push(name);
        }
    }
    if failed.is_empty() {
        println!("xtask: fmt, clippy and tests passed");
        Ok(())
    } else {
        Err(format!("failed steps: {}", failed.join(", ")).into())
    }
}
