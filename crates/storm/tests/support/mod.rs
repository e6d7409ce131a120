//! Process helpers shared by the broker tests that run real Ice peers
//! (`lossless.rs`, `restart.rs`, `replicated.rs`): child processes with
//! their output collected line by line, the `floe-storm` binary, free
//! ports, log fields; replicated floe-storm in [`cluster`].

#![allow(dead_code)]

pub mod cluster;
pub mod failover;
pub mod grid;
pub mod icestorm_ha;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub const PYTHON: &str = "/usr/bin/python3";

/// Whether the real peers are there; panics with a clear message if not
/// (unless `FLOE_NO_INTEROP=1`, then returns false).
pub fn peers_available() -> bool {
    let python = Command::new(PYTHON)
        .args(["-c", "import Ice, IceStorm"])
        .output()
        .is_ok_and(|o| o.status.success());
    let admin = Command::new("icestormadmin")
        .arg("--version")
        .output()
        .is_ok();
    if python && admin {
        return true;
    }
    if std::env::var("FLOE_NO_INTEROP").as_deref() == Ok("1") {
        println!("FLOE_NO_INTEROP=1: real Ice peers missing, skipping");
        return false;
    }
    panic!(
        "real Ice peers missing (python3 Ice module: {python}, icestormadmin: {admin}); \
         install python3-zeroc-ice zeroc-ice-utils zeroc-icebox libzeroc-icestorm3.7, \
         or set FLOE_NO_INTEROP=1"
    );
}

/// The TopicManager port in floe-storm's ready line
/// (`floe-storm ready TopicManager=... -p PORT ...`).
pub fn topic_manager_port(ready_line: &str) -> u16 {
    ready_line
        .split("TopicManager=")
        .nth(1)
        .and_then(|s| s.split(" -p ").nth(1))
        .and_then(|s| s.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {ready_line}"))
}

pub fn floe_storm_binary() -> PathBuf {
    std::env::var_os("FLOE_STORM_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_floe-storm")))
}

/// `floe-storm` with `args` (`--Name=value` properties) on free
/// loopback ports, its data in `data_dir`, logging at info level: the
/// process and its TopicManager port, once it is ready.
pub fn start_floe_storm(args: &[&str], data_dir: &std::path::Path) -> (Proc, u16) {
    let mut cmd = Command::new(floe_storm_binary());
    cmd.args([
        "--IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p 0",
        "--IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p 0",
    ])
    .args(args)
    .arg("--data-dir")
    .arg(data_dir)
    .env("RUST_LOG", "info")
    .env("NO_COLOR", "1");
    let proc = Proc::spawn("floe-storm", cmd);
    let line = proc.expect_line("floe-storm ready ", Duration::from_secs(60));
    let port = topic_manager_port(&line);
    (proc, port)
}

/// The lines read so far, and whether the pipe has ended.
pub type LinesState = Mutex<(Vec<String>, bool)>;

/// Lines a child wrote to one of its pipes, as they come.
#[derive(Clone, Default)]
pub struct Lines(Arc<(LinesState, Condvar)>);

impl Lines {
    /// Reads `pipe` to its end on a thread.
    pub fn collect(pipe: impl Read + Send + 'static) -> Lines {
        let lines = Lines::default();
        let l = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                let (m, c) = &*l.0;
                m.lock().unwrap().0.push(line);
                c.notify_all();
            }
            let (m, c) = &*l.0;
            m.lock().unwrap().1 = true;
            c.notify_all();
        });
        lines
    }

    /// Waits until a line satisfies `pred` (`None` at the end of the pipe
    /// or after `timeout`).
    pub fn wait_for(&self, timeout: Duration, pred: impl Fn(&str) -> bool) -> Option<String> {
        let deadline = Instant::now() + timeout;
        let (m, c) = &*self.0;
        let mut g = m.lock().unwrap();
        loop {
            if let Some(l) = g.0.iter().find(|l| pred(l)) {
                return Some(l.clone());
            }
            let now = Instant::now();
            if g.1 || now >= deadline {
                return None;
            }
            g = c.wait_timeout(g, deadline - now).unwrap().0;
        }
    }

    /// Waits for the end of the pipe (at most `timeout`); every line.
    pub fn wait_end(&self, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let (m, c) = &*self.0;
        let mut g = m.lock().unwrap();
        while !g.1 && Instant::now() < deadline {
            g = c
                .wait_timeout(g, deadline.saturating_duration_since(Instant::now()))
                .unwrap()
                .0;
        }
        g.0.clone()
    }

    pub fn snapshot(&self) -> Vec<String> {
        self.0 .0.lock().unwrap().0.clone()
    }
}

/// A child process with its output collected; killed and reaped on drop.
pub struct Proc {
    pub name: String,
    pub child: std::process::Child,
    pub stdin: Option<ChildStdin>,
    pub out: Lines,
    pub err: Lines,
}

impl Proc {
    /// Polls `ready` every `every` until it holds; panics after `timeout`
    /// with `what` and the process's stderr so far.
    pub fn wait_until(
        &self,
        timeout: Duration,
        every: Duration,
        what: &str,
        mut ready: impl FnMut() -> bool,
    ) {
        let deadline = Instant::now() + timeout;
        while !ready() {
            assert!(
                Instant::now() < deadline,
                "{what}: {:?}",
                self.err.snapshot()
            );
            std::thread::sleep(every);
        }
    }

    pub fn spawn(name: &str, mut cmd: Command) -> Proc {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{name} does not start: {e}"));
        let out = Lines::collect(child.stdout.take().unwrap());
        let err = Lines::collect(child.stderr.take().unwrap());
        Proc {
            name: name.to_owned(),
            stdin: child.stdin.take(),
            child,
            out,
            err,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The first stdout line starting with `prefix`; panics after `timeout`.
    pub fn expect_line(&self, prefix: &str, timeout: Duration) -> String {
        self.out
            .wait_for(timeout, |l| l.starts_with(prefix))
            .unwrap_or_else(|| {
                panic!(
                    "{}: no {prefix:?} line in {timeout:?}\nstdout: {:?}\nstderr: {:?}",
                    self.name,
                    self.out.snapshot(),
                    self.err.snapshot()
                )
            })
    }

    /// Waits for the process to exit; panics after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "{} still running after {timeout:?}\nstderr: {:?}",
                self.name,
                self.err.snapshot()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `/proc/<pid>/status` field `key` (kB).
    pub fn status_kb(&self, key: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in /proc/{}/status", self.pid()))
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Removes terminal colour sequences (`ESC [ … m`).
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `key=value` words of a log line.
pub fn fields(line: &str) -> BTreeMap<String, String> {
    strip_ansi(line)
        .split_whitespace()
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.trim_matches('"').to_owned()))
        .collect()
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
