//! Project tasks, run as `cargo xtask <task>` (an alias in `.cargo/config.toml`).
//!
//! - `test`: installs the real Ice peers the interop tests need (only what is
//!   missing), then runs `cargo fmt --check`, `cargo clippy -D warnings`,
//!   `cargo doc` with `RUSTDOCFLAGS=-D warnings` and `cargo test` over the
//!   whole workspace. This is what CI runs.
//! - `compare`: floe vs Ice for C++, Java RMI, tonic and a raw TCP socket,
//!   same run (see [`compare`]), and floe-storm vs IceStorm fan-in with
//!   floe's and Ice for C++'s clients; writes `target/compare.json` and
//!   `docs/performance.md`; not part of CI.
//! - `fuzz`: runs the cargo-fuzz targets of `fuzz/` on nightly (see
//!   [`fuzz`]); not part of CI.
//! - `soak`: a long mixed-load run against the soak server and floe-storm
//!   that checks RSS stays flat and nothing fails (see [`soak`]); not part
//!   of CI.
//! - `demo`: runs `examples/demo.rs` if it exists; otherwise a floe-wire
//!   request is sent to a real Ice server, which decodes it and answers.
//!
//! The command line is parsed with clap ([`Cli`]); `cargo xtask <task>
//! --help` describes each task. Application code: errors are boxed and
//! printed by `main`.

mod background;
mod compare;
mod demo;
mod fuzz;
mod ice38;
mod install;
mod msrv;
mod soak;
mod test;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// The error type of every task: anything printable.
type DynError = Box<dyn std::error::Error>;

/// `cargo xtask <task>`.
#[derive(Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "floe's project tasks",
    after_help = "`cargo xtask <task> --help` describes a task and its flags."
)]
struct Cli {
    #[command(subcommand)]
    task: Option<Task>,
}

/// The tasks.
#[derive(Subcommand)]
enum Task {
    /// Install missing Ice peers (Debian packages; npm/Maven optional), then
    /// the MSRV check, cargo fmt --check, cargo clippy -D warnings, cargo doc
    /// (-D warnings) and cargo test --workspace: what CI runs
    Test,
    Compare(compare::Args),
    Fuzz(fuzz::Options),
    Soak(soak::Options),
    /// Run examples/demo.rs (release), or send a floe-encoded request to a
    /// real Ice server and print both sides
    Demo,
    /// The connection holder of compare's `idle` workload: opens N
    /// validated connections to 127.0.0.1:PORT and holds them until stdin
    /// closes
    #[command(name = "__idle-client", hide = true)]
    IdleClient {
        /// The bench server's port
        port: u16,
        /// Connections to open
        connections: usize,
    },
}

fn main() -> ExitCode {
    let Some(task) = Cli::parse().task else {
        // `cargo xtask` alone: the list of tasks.
        let _ = Cli::command().print_help();
        return ExitCode::SUCCESS;
    };
    let result = match task {
        Task::Test => test::run(),
        Task::Demo => demo::run(),
        Task::Fuzz(opts) => fuzz::run(opts),
        Task::Soak(opts) => soak::run(opts),
        Task::Compare(args) => compare::run(args),
        Task::IdleClient { port, connections } => compare::idle_client(port, connections),
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

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::{Cli, Task};

    fn parse(s: &str) -> Result<Option<Task>, clap::Error> {
        Cli::try_parse_from(std::iter::once("xtask").chain(s.split_whitespace())).map(|c| c.task)
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_task_parses() {
        assert!(parse("").unwrap().is_none());
        assert!(matches!(parse("test"), Ok(Some(Task::Test))));
        assert!(matches!(parse("demo"), Ok(Some(Task::Demo))));
        assert!(matches!(
            parse("compare --quick"),
            Ok(Some(Task::Compare(_)))
        ));
        assert!(matches!(
            parse("fuzz --target frame --target slice --seconds 5"),
            Ok(Some(Task::Fuzz(_)))
        ));
        assert!(parse("fuzz --target nope").is_err());
        assert!(matches!(
            parse("soak --minutes 0.5"),
            Ok(Some(Task::Soak(_)))
        ));
        assert!(matches!(
            parse("__idle-client 4061 100"),
            Ok(Some(Task::IdleClient {
                port: 4061,
                connections: 100
            }))
        ));
        assert!(parse("test --bogus").is_err());
        assert!(parse("nope").is_err());
    }
}
