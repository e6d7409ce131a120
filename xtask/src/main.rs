//! Project tasks, run as `cargo xtask <task>` (an alias in `.cargo/config.toml`).
//!
//! - `test`: installs the real Ice peers the interop tests need (only what is
//!   missing), then runs `cargo fmt --check`, `cargo clippy -D warnings`,
//!   `cargo doc` with `RUSTDOCFLAGS=-D warnings` and `cargo test` over the
//!   whole workspace. This is what CI runs.
//! - `compare`: floe vs Ice for C++ vs a raw TCP socket, same run (see
//!   [`compare`]), and floe-storm vs IceStorm fan-in with floe's and Ice for
//!   C++'s clients; writes `target/compare.json` and `docs/performance.md`.
//! - `fuzz`: runs the cargo-fuzz targets of `fuzz/` on nightly (see
//!   [`fuzz`]); not part of CI.
//! - `soak`: a long mixed-load run against the soak server and floe-storm
//!   that checks RSS stays flat and nothing fails (see [`soak`]); not part
//!   of CI.
//! - `demo`: runs `examples/demo.rs` if it exists; otherwise a floe-wire
//!   request is sent to a real Ice server, which decodes it and answers.
//!
//! Application code: errors are boxed and printed by `main`.

mod compare;
mod demo;
mod fuzz;
mod ice38;
mod install;
mod msrv;
mod soak;
mod test;

use std::process::ExitCode;

/// The error type of every task: anything printable.
type DynError = Box<dyn std::error::Error>;

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  test   install missing Ice peers (Debian packages; npm/Maven optional),
         then cargo fmt --check, cargo clippy -D warnings, cargo doc (-D warnings),
         cargo test --workspace
  compare [--quick] [--rounds N] [--workloads W,...] [--impls I,...]
         floe vs Ice C++ 3.7 vs raw TCP on loopback, medians of alternating
         rounds; writes target/compare.json and docs/performance.md
         (--fanin: floe-storm vs IceStorm 3.7 fan-in only, floe and Ice C++
         clients; fails if any event is lost; --grid/--glacier2: indirect
         vs direct proxies and Glacier2-routed calls with the real services)
  fuzz [--target T]... [--seconds N] [--capture]
         run the cargo-fuzz targets of fuzz/ (nightly), N seconds each
         (default 60), from fuzz/seeds; --capture first re-records the
         seeds from a Python Ice client and server; not run by CI
  soak [--minutes N] [--clients C]
         floe-storm and the soak server (release) under C clients of mixed
         operations for N minutes (default 30, 4); RSS, calls/s and errors
         every 10 s; fails on any error, lost event or RSS growth >= 5%
         after the warm-up; not run by CI
  demo   run examples/demo.rs (release), or send a floe-encoded request to a
         real Ice server and print both sides";

fn main() -> ExitCode {
    let task = std::env::args().nth(1);
    let result = match task.as_deref() {
        Some("test") => test::run(),
        Some("demo") => demo::run(),
        Some("fuzz") => fuzz::run(&std::env::args().skip(2).collect::<Vec<_>>()),
        Some("soak") => soak::run(&std::env::args().skip(2).collect::<Vec<_>>()),
        Some("compare") => compare::run(&std::env::args().skip(2).collect::<Vec<_>>()),
        // Helper process of `compare`'s `idle` workload.
        Some("__idle-client") => {
            compare::idle_client(&std::env::args().skip(2).collect::<Vec<_>>())
        }
        Some("-h" | "--help" | "help") | None => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("unknown task `{other}`\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (the parent of this crate's directory).
fn workspace_root() -> std::path::PathBuf {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // Invariant: xtask/ is a direct child of the workspace root.
    manifest
        .parent()
        .expect("xtask lives inside the workspace")
        .to_path_buf()
}

/// Where `cargo build --release` puts the workspace's programs.
fn release_dir() -> std::path::PathBuf {
    workspace_root().join("target/release")
}

/// Builds programs in release with one `cargo build`: `bins` of the
/// floe-bench crate (the benchmark programs, `benches/programs/`), and
/// what `more` selects (e.g. `-p floe-storm --bin floe-storm`).
fn build_programs(bins: &[&str], more: &[&str]) -> Result<(), DynError> {
    let mut cmd = cargo();
    cmd.args(["build", "--release", "-p", "floe-bench"]);
    for bin in bins {
        cmd.args(["--bin", bin]);
    }
    run_checked(cmd.args(more))
}

/// The `cargo` that started us (so rustup toolchain overrides carry over).
fn cargo() -> std::process::Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.current_dir(workspace_root());
    cmd
}

/// Runs `cmd`, echoing it first; an error if it cannot start or exits non-zero.
fn run_checked(cmd: &mut std::process::Command) -> Result<(), DynError> {
    println!("$ {}", describe(cmd));
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run `{}`: {e}", describe(cmd)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", describe(cmd)).into())
    }
}

/// `program arg arg ...` for messages.
fn describe(cmd: &std::process::Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Whether `program` is found on `PATH`.
fn on_path(program: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| dir.join(program).is_file())
}
