//! floe-storm as a separate broker process, for the examples that publish
//! through it (`codac`, `demo`) and the `storm_pubsub` test: the
//! `floe-storm` binary of `crates/storm`, started on free 127.0.0.1 ports
//! with a temporary database, stopped with SIGTERM (or killed) when dropped.
//!
//! The binary is `$FLOE_STORM` if set, else `floe-storm` next to this
//! program in cargo's target directory (`cargo build -p floe-storm`), which
//! is built on first use if missing.

#![allow(dead_code)] // each program uses its own part of it

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Any failure to find, start or stop the broker.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A running `floe-storm` child process.
pub struct StormProcess {
    child: Option<Child>,
    /// The TopicManager proxy it printed, as text.
    pub topic_manager: String,
    /// Its database directory, removed with it.
    _data: tempfile::TempDir,
}

impl StormProcess {
    /// Starts floe-storm with `properties` (`--Name=value`) added to its
    /// command line, and waits until it accepts connections.
    ///
    /// # Errors
    ///
    /// No binary, or it exited (or printed nothing) within 30 s.
    pub fn start(properties: &[&str]) -> Result<StormProcess, BoxError> {
        let binary = binary()?;
        let data = tempfile::tempdir()?;
        // Its log (statistics at shutdown, warnings) goes to a file there.
        let log_path = data.path().join("floe-storm.log");
        let log = std::fs::File::create(&log_path)?;
        let mut child = Command::new(&binary)
            .args([
                "--IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p 0",
                "--IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p 0",
            ])
            .args(properties)
            .arg("--data-dir")
            .arg(data.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        // Read the ready line on a thread, so that a silent broker times out.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let ready = lines
                .by_ref()
                .map_while(Result::ok)
                .find(|l| l.starts_with("floe-storm ready "));
            let _ = tx.send(ready);
            // Keep draining, so that the broker never blocks on stdout.
            lines.for_each(drop);
        });
        let mut process = StormProcess {
            child: Some(child),
            topic_manager: String::new(),
            _data: data,
        };
        let line = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(Some(line)) => line,
            _ => {
                let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                return Err(format!("{} did not start:\n{log}", binary.display()).into());
            }
        };
        process.topic_manager = line
            .split_once("TopicManager=")
            .and_then(|(_, rest)| rest.split(" Publish=").next())
            .ok_or_else(|| format!("unexpected ready line {line:?}"))?
            .to_owned();
        Ok(process)
    }

    /// The broker's process id.
    pub fn id(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Stops the broker gracefully (SIGTERM: it logs each topic's
    /// statistics and exits 0), killing it after 10 s.
    ///
    /// # Errors
    ///
    /// It did not exit with status 0.
    pub fn stop(mut self) -> Result<(), BoxError> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = child.try_wait()? {
                return if status.success() {
                    Ok(())
                } else {
                    Err(format!("floe-storm exited with {status}").into())
                };
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err("floe-storm ignored SIGTERM; killed".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for StormProcess {
    /// However the program ends (an error, a panic, Ctrl-C handled by the
    /// caller), the broker does not outlive it.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The floe-storm binary: `$FLOE_STORM`, or cargo's, built if missing.
///
/// # Errors
///
/// `$FLOE_STORM` does not exist, or building it failed.
pub fn binary() -> Result<PathBuf, BoxError> {
    if let Some(path) = std::env::var_os("FLOE_STORM") {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!("FLOE_STORM={} is not a file", path.display()).into())
        };
    }
    // target/<profile>/examples/<name> or target/<profile>/deps/<test>
    let exe = std::env::current_exe()?;
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("no target directory")?;
    let path = profile_dir.join("floe-storm");
    if !path.is_file() {
        build(profile_dir)?;
    }
    Ok(path)
}

/// `cargo build -p floe-storm`, in the profile of `profile_dir`.
fn build(profile_dir: &Path) -> Result<(), BoxError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "-p", "floe-storm", "--bin", "floe-storm"]);
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    if let Some(target) = profile_dir.parent() {
        cmd.arg("--target-dir").arg(target);
    }
    eprintln!("building floe-storm: {cmd:?}");
    let status = cmd.status()?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed: {status}").into())
    }
}
