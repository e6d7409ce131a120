//! [`Peer`]: a spawned peer process whose guard kills and reaps it on drop
//! (also when the test panics), with its stdout lines on a channel and
//! everything it printed kept for diagnostics.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long a server may take to print its ready line.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// A spawned peer process. Dropping it kills the process and waits for it,
/// so no peer outlives its test, even when the test panics.
pub struct Peer {
    name: String,
    child: Option<Child>,
    /// Held open for peers that serve until their stdin closes.
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    pub(crate) log: Arc<Mutex<Vec<String>>>,
}

impl Peer {
    /// Spawns `cmd` with stdin closed and stdout/stderr piped; `name`
    /// labels diagnostics.
    ///
    /// # Panics
    ///
    /// When the process cannot be started.
    pub fn spawn(name: &str, cmd: Command) -> Peer {
        Peer::start(name, cmd, Stdio::null())
    }

    /// Spawns `cmd` as [`Peer::spawn`] does, but with a pipe on its stdin
    /// that stays open until [`Peer::wait_output`], [`Peer::kill`] or the
    /// drop: for peers that serve until their stdin closes.
    ///
    /// # Panics
    ///
    /// When the process cannot be started.
    pub fn spawn_with_stdin(name: &str, cmd: Command) -> Peer {
        Peer::start(name, cmd, Stdio::piped())
    }

    fn start(name: &str, mut cmd: Command, stdin: Stdio) -> Peer {
        cmd.stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: cannot start {cmd:?}: {e}"));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, lines) = mpsc::channel();
        // Invariant: both pipes were requested above, so take() returns Some.
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let out_log = Arc::clone(&log);
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                out_log
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(line.clone());
                // A closed receiver only means nobody waits for lines any more;
                // keep draining so the peer never blocks on a full pipe.
                let _ = tx.send(line);
            }
        });
        let err_log = Arc::clone(&log);
        thread::spawn(move || {
            let mut reader = BufReader::new(stderr);
            let mut buf = Vec::new();
            let _ = reader.read_to_end(&mut buf);
            let text = String::from_utf8_lossy(&buf);
            let mut log = err_log.lock().unwrap_or_else(|p| p.into_inner());
            log.extend(text.lines().map(|l| format!("[stderr] {l}")));
        });
        let stdin = child.stdin.take();
        Peer {
            name: name.to_owned(),
            child: Some(child),
            stdin,
            lines,
            log,
        }
    }

    /// The peer's label.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Everything the peer printed so far (stderr lines prefixed `[stderr]`).
    pub fn log(&self) -> String {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .join("\n")
    }

    /// Waits for a stdout line starting with `prefix` and returns the rest of it
    /// (trimmed).
    ///
    /// # Panics
    ///
    /// With the peer's output, if it exits or `timeout` passes first.
    pub fn wait_ready(&mut self, prefix: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix(prefix) {
                        return rest.trim().to_owned();
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "{}: no `{prefix}` line within {timeout:?}; output:\n{}",
                        self.name,
                        self.log()
                    )
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.as_mut().and_then(|c| c.wait().ok());
                    thread::sleep(Duration::from_millis(50)); // let the stderr reader finish
                    panic!(
                        "{}: exited ({status:?}) before `{prefix}`; output:\n{}",
                        self.name,
                        self.log()
                    )
                }
            }
        }
    }

    /// Waits until the peer closes stdout and exits, up to `timeout` (then
    /// kills it). Returns its exit status (None if it had to be killed) and
    /// its stdout lines (the last one says so when it timed out).
    pub fn wait_exit(mut self, timeout: Duration) -> (Option<ExitStatus>, Vec<String>) {
        let deadline = Instant::now() + timeout;
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => lines.push(line),
                Err(RecvTimeoutError::Timeout) => {
                    lines.push(format!(
                        "<{}: timed out after {timeout:?}, killed>",
                        self.name
                    ));
                    return (None, lines);
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        let status = loop {
            let child = self.child.as_mut().expect("child present until drop");
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
                _ => break None,
            }
        };
        (status, lines)
    }

    /// Closes the peer's stdin, waits until it exits (killing it after
    /// `timeout`) and returns everything it printed, stdout and stderr,
    /// with a last line saying so when it was killed.
    pub fn wait_output(mut self, timeout: Duration) -> String {
        self.stdin.take();
        let deadline = Instant::now() + timeout;
        let mut timed_out = false;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(_) => {}
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    timed_out = true;
                    break;
                }
            }
        }
        if let Some(child) = self.child.as_mut() {
            if timed_out {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
        thread::sleep(Duration::from_millis(20)); // let the stderr reader finish
        let mut out = self.log();
        if timed_out {
            out.push_str(&format!("\n<{}: killed after {timeout:?}>", self.name));
        }
        out
    }

    /// The process id, while the process has not been killed by [`Peer::kill`].
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the process now (idempotent).
    pub fn kill(&mut self) {
        self.stdin.take();
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A bare child process killed and reaped on drop, for tests that read
/// its pipes themselves (a [`Peer`] reads them on its own threads).
pub struct ChildGuard(pub Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
