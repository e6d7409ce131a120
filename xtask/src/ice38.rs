//! Ice 3.8 for Python, the Ice 3.8 peer of the interop tests: `zeroc-ice`
//! from PyPI in a virtual environment ([`floe_testkit::ice38::venv_dir`]).
//!
//! PyPI has only its source: the first install compiles Ice's C++ core
//! with Python's own compiler settings, one file at a time (25 minutes and
//! more on two cores at `-O3`), so it is compiled at `-O1` without debug
//! information (a test peer needs neither), runs in the background while
//! the Rust checks and tests run, and pip keeps the wheel in its cache for
//! the next machine that shares that cache. [`Install::wait`] then writes
//! the ready marker the tests look for.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use floe_testkit::ice38::{venv_dir, venv_python, READY_MARKER, VERSION};

use crate::DynError;

/// An install of Ice 3.8 for Python: already done, or running.
pub enum Install {
    /// The venv was ready before this run.
    Ready,
    /// pip runs in the background; its output goes to `log`.
    Running {
        child: Child,
        log: PathBuf,
        started: Instant,
    },
    /// No Python 3.12 or newer was found, or the venv could not be made.
    Unavailable(String),
}

/// Starts the install unless the venv is ready: makes the venv with the
/// first Python ≥ 3.12 found, then starts `pip install zeroc-ice==3.8.3`.
pub fn start() -> Install {
    let venv = venv_dir();
    if venv.join(READY_MARKER).is_file() {
        println!(
            "xtask: Ice {VERSION} for Python present in {}",
            venv.display()
        );
        return Install::Ready;
    }
    match begin(&venv) {
        Ok(install) => install,
        Err(e) => Install::Unavailable(e.to_string()),
    }
}

fn begin(venv: &Path) -> Result<Install, DynError> {
    if !venv_python().is_file() {
        let base = find_python()
            .ok_or("no Python 3.12 or newer found (python3.13, python3.12, or pyenv's versions)")?;
        std::fs::create_dir_all(venv)?;
        crate::run_checked(Command::new(&base).args(["-m", "venv"]).arg(venv))?;
    }
    let log = venv.join("pip-install.log");
    let out = std::fs::File::create(&log)?;
    let mut cmd = Command::new(venv_python());
    cmd.args([
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        &format!("zeroc-ice=={VERSION}"),
    ])
    // Appended after Python's own `-O3 -g`: the later flags win.
    .env("CFLAGS", "-O1 -g0")
    .stdin(Stdio::null())
    .stdout(out.try_clone()?)
    .stderr(out);
    println!(
        "xtask: installing Ice {VERSION} for Python in the background ({}, log {})",
        crate::describe(&cmd),
        log.display()
    );
    Ok(Install::Running {
        child: cmd.spawn()?,
        log,
        started: Instant::now(),
    })
}

impl Install {
    /// Waits for the install and marks the venv ready.
    ///
    /// # Errors
    ///
    /// pip failed, or Ice 3.8 for Python could not be installed at all.
    pub fn wait(self) -> Result<(), DynError> {
        match self {
            Install::Ready => Ok(()),
            Install::Unavailable(why) => Err(why.into()),
            Install::Running {
                child,
                log,
                started,
            } => {
                let what = format!("pip install zeroc-ice=={VERSION}");
                let took = crate::background::wait(child, &log, started, &what)?;
                crate::run_checked(
                    Command::new(venv_python())
                        .args(["-c", "import Ice; print('Ice', Ice.stringVersion())"]),
                )?;
                std::fs::write(venv_dir().join(READY_MARKER), format!("{took}\n"))?;
                println!("xtask: Ice {VERSION} for Python installed in {took} s");
                Ok(())
            }
        }
    }
}

/// A Python 3.12 or newer: the newest of pyenv's installed versions, else
/// `python3.13` or `python3.12` on `PATH` (pyenv's shims for versions
/// that are installed but not selected would refuse to run).
fn find_python() -> Option<PathBuf> {
    pyenv_python().or_else(|| {
        ["python3.13", "python3.12"]
            .into_iter()
            .find(|name| {
                Command::new(name)
                    .args(["-c", "import venv"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            })
            .map(PathBuf::from)
    })
}

fn pyenv_python() -> Option<PathBuf> {
    let root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")))?;
    let mut versions: Vec<(u32, u32, PathBuf)> = std::fs::read_dir(root.join("versions"))
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            let mut parts = name.split('.');
            let major: u32 = parts.next()?.parse().ok()?;
            let minor: u32 = parts.next()?.parse().ok()?;
            let python = e.path().join("bin").join("python3");
            (major == 3 && minor >= 12 && python.is_file()).then_some((major, minor, python))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, _, p)| p)
}
