//! `cargo xtask fuzz`: runs the cargo-fuzz targets of `fuzz/` (a crate of
//! its own, outside the workspace, so CI never builds it) on nightly, each
//! for a fixed time, from the committed seeds (`fuzz/seeds/<target>/`,
//! recorded from real Ice peers by `fuzz/capture/capture.py`) and a working
//! corpus that grows between runs (`fuzz/corpus/<target>/`, not committed).
//!
//! Prints, per target, the executions, the coverage (libFuzzer's `cov`
//! edges and `ft` features) and the corpus size at the end; fails if any
//! target crashed (the input is left in `fuzz/artifacts/<target>/`).

use std::process::{Command, Stdio};

use crate::{describe, workspace_root, DynError};

/// The targets, in `fuzz/Cargo.toml` order.
pub const TARGETS: [&str; 7] = [
    "frame",
    "message",
    "decode",
    "bzip2",
    "proxy_string",
    "connection",
    "slice",
];

/// `cargo xtask fuzz`'s flags.
#[derive(clap::Args, Debug)]
#[command(
    about = "Run the cargo-fuzz targets of fuzz/ (nightly) from fuzz/seeds; not run by CI",
    long_about = "Runs the cargo-fuzz targets of fuzz/ on nightly, each for a fixed time, \
                  from the committed seeds (fuzz/seeds/<target>/) and a working corpus that \
                  grows between runs (fuzz/corpus/<target>/). Prints the executions, \
                  coverage and corpus size per target; fails if any target crashed (the \
                  input is left in fuzz/artifacts/<target>/). Not run by CI."
)]
pub struct Options {
    /// Run this target (repeatable) [default: all]
    #[arg(long = "target", value_name = "T", value_parser = clap::builder::PossibleValuesParser::new(TARGETS))]
    targets: Vec<String>,
    /// Seconds per target
    #[arg(long, value_name = "N", default_value_t = 60)]
    seconds: u64,
    /// First re-record the seeds from a Python Ice client and server
    #[arg(long)]
    capture: bool,
}

/// What libFuzzer reported at the end of one run.
#[derive(Debug, Default)]
struct Stats {
    runs: String,
    cov: String,
    ft: String,
    corpus: String,
    crashed: bool,
}

/// Runs the task.
pub fn run(mut opts: Options) -> Result<(), DynError> {
    if opts.targets.is_empty() {
        opts.targets = TARGETS.iter().map(|t| t.to_string()).collect();
    }
    let fuzz_dir = workspace_root().join("fuzz");
    if opts.capture {
        capture(&fuzz_dir)?;
    }
    ensure_cargo_fuzz()?;
    // Built once up front, so that a failed build is not taken for a crash.
    crate::run_checked(
        Command::new("cargo")
            .current_dir(&fuzz_dir)
            .args(["+nightly", "fuzz", "build", "-O"]),
    )
    .map_err(|e| format!("the fuzz targets do not build: {e}"))?;
    let mut results = Vec::new();
    for target in &opts.targets {
        let stats = run_target(&fuzz_dir, target, opts.seconds)?;
        results.push((target.clone(), stats));
    }
    println!(
        "\n{:<13} {:>12} {:>7} {:>8} {:>7}  result",
        "target", "executions", "cov", "ft", "corpus"
    );
    let mut crashed = Vec::new();
    for (t, s) in &results {
        println!(
            "{t:<13} {:>12} {:>7} {:>8} {:>7}  {}",
            s.runs,
            s.cov,
            s.ft,
            s.corpus,
            if s.crashed { "CRASH" } else { "ok" }
        );
        if s.crashed {
            crashed.push(t.as_str());
        }
    }
    if crashed.is_empty() {
        Ok(())
    } else {
        Err(format!("crashes in {} (see fuzz/artifacts/)", crashed.join(", ")).into())
    }
}

/// Re-records the seeds from a Python Ice client and server.
fn capture(fuzz_dir: &std::path::Path) -> Result<(), DynError> {
    let seeds = fuzz_dir.join("seeds");
    if seeds.is_dir() {
        std::fs::remove_dir_all(&seeds)?;
    }
    let mut cmd = Command::new("/usr/bin/python3");
    cmd.arg(fuzz_dir.join("capture/capture.py")).arg(fuzz_dir);
    crate::run_checked(&mut cmd)
}

/// `cargo +nightly fuzz` must work; installs cargo-fuzz if it is missing.
fn ensure_cargo_fuzz() -> Result<(), DynError> {
    let ok = Command::new("cargo")
        .args(["+nightly", "fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        crate::run_checked(Command::new("cargo").args(["install", "cargo-fuzz"]))?;
    }
    Ok(())
}

/// One target for `seconds`; libFuzzer's last status line is parsed.
fn run_target(fuzz_dir: &std::path::Path, target: &str, seconds: u64) -> Result<Stats, DynError> {
    let corpus = fuzz_dir.join("corpus").join(target);
    std::fs::create_dir_all(&corpus)?;
    let mut cmd = Command::new("cargo");
    cmd.current_dir(fuzz_dir)
        .args(["+nightly", "fuzz", "run", "-O", target])
        .arg(&corpus)
        .arg(fuzz_dir.join("seeds").join(target))
        .arg("--")
        .arg(format!("-max_total_time={seconds}"))
        .arg("-rss_limit_mb=1024")
        .stderr(Stdio::piped());
    println!("$ {}", describe(&cmd));
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
    let log = String::from_utf8_lossy(&out.stderr);
    let mut stats = Stats {
        crashed: !out.status.success(),
        ..Stats::default()
    };
    for line in log.lines() {
        if let Some(rest) = line.strip_prefix("Done ") {
            stats.runs = rest.split_whitespace().next().unwrap_or("").to_string();
        }
        if line.contains(" cov: ") {
            stats.cov = field(line, "cov:");
            stats.ft = field(line, "ft:");
            stats.corpus = field(line, "corp:");
        }
    }
    if stats.crashed {
        eprintln!("{log}");
    }
    Ok(stats)
}

/// The word after `key` in a libFuzzer status line.
fn field(line: &str, key: &str) -> String {
    line.split_whitespace()
        .skip_while(|w| *w != key)
        .nth(1)
        .unwrap_or("")
        .to_string()
}
