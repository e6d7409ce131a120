//! Peers of the Ice 3.8 tests: Python scripts run by Ice 3.8 or Ice 3.7 for
//! Python, and floe servers of generated dispatchers.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

/// Ice 3.7 for Python, from Debian's python3-zeroc-ice.
pub const PYTHON37: &str = "/usr/bin/python3";

/// The Python interpreters of a test: Ice 3.8's (None when the test must not
/// run now, see `floe_testkit::ice38::python`) and Ice 3.7's.
pub fn pythons(test: &str) -> Option<(PathBuf, PathBuf)> {
    let py38 = floe_testkit::ice38::python(test)?;
    Some((py38, PathBuf::from(PYTHON37)))
}

/// A script in `tests/ice38/`.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("ice38")
        .join(name)
}

/// A Python peer process: killed and reaped when dropped; its stdout lines
/// arrive on a channel.
pub struct Peer {
    pub name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Peer {
    /// Runs `python script args...`.
    pub fn spawn(name: &str, python: &Path, script: &Path, args: &[String]) -> Peer {
        let mut child = Command::new(python)
            .arg(script)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: cannot start {}: {e}", python.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                println!("  | {line}");
                let _ = tx.send(line);
            }
        });
        Peer {
            name: name.to_owned(),
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    /// A server script: waits for its `READY <port>` line.
    pub fn server(name: &str, python: &Path, script: &Path, args: &[String]) -> (Peer, u16) {
        let mut all = vec!["server".to_owned()];
        all.extend_from_slice(args);
        let peer = Peer::spawn(name, python, script, &all);
        let line = peer
            .next_line(Duration::from_secs(60))
            .unwrap_or_else(|| panic!("{name}: no READY line"));
        let port = line
            .strip_prefix("READY ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name}: printed {line:?} instead of READY <port>"));
        (peer, port)
    }

    /// The next stdout line, if one comes within `timeout`.
    pub fn next_line(&self, timeout: Duration) -> Option<String> {
        self.lines.recv_timeout(timeout).ok()
    }

    /// Every line until the process exits (for clients).
    pub fn finish(mut self) -> Vec<String> {
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait for the peer");
        let lines: Vec<String> = self.lines.try_iter().collect();
        assert!(
            status.success(),
            "{} exited with {status}: {lines:?}",
            self.name
        );
        lines
    }

    /// Stops (SIGSTOP) or resumes (SIGCONT) the process: a hung peer.
    pub fn signal(&self, signal: &str) {
        let ok = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill {signal} {}", self.name);
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `PASS name` / `FAIL name: why` lines of a client, and whether it reached
/// `SUMMARY`.
#[derive(Debug, Default)]
pub struct Report {
    pub passed: Vec<String>,
    pub failed: Vec<String>,
    pub complete: bool,
}

impl Report {
    pub fn parse(lines: &[String]) -> Report {
        let mut r = Report::default();
        for l in lines {
            if let Some(name) = l.strip_prefix("PASS ") {
                r.passed.push(name.to_owned());
            } else if let Some(f) = l.strip_prefix("FAIL ") {
                r.failed.push(f.to_owned());
            } else if l == "SUMMARY" {
                r.complete = true;
            }
        }
        r
    }

    /// Every check passed, and there were `n`.
    pub fn assert_all_passed(&self, who: &str, n: usize) {
        assert!(self.complete, "{who}: no SUMMARY");
        assert!(self.failed.is_empty(), "{who}: failed {:?}", self.failed);
        assert_eq!(self.passed.len(), n, "{who}: passed {:?}", self.passed);
        println!("{who}: {} of {n} checks passed", self.passed.len());
    }
}
