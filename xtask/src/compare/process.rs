//! Bench servers and clients as child processes: a free loopback port, a
//! server guard that always kills and reaps, and a client run with a time
//! limit whose JSON lines are parsed into [`Sample`]s.

use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::DynError;

/// How long a server may take to print `Bench ready`.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// One implementation's server/client pair and its extra arguments.
#[derive(Clone, Debug)]
pub struct Pair {
    /// Column name: `floe`, `floe-ct`, `floe-poll`, `ice-cpp`, `raw`,
    /// `raw-spin`, `raw-tokio`, `tonic`.
    pub name: &'static str,
    /// Server binary.
    pub server: PathBuf,
    /// Client binary.
    pub client: PathBuf,
    /// Arguments after `PORT` for both server and client.
    pub extra_args: Vec<String>,
    /// Which workloads this pair runs; `None` for all.
    pub workloads: Option<fn(&str) -> bool>,
}

impl Pair {
    /// Whether this pair has an equivalent of `workload`.
    pub fn supports(&self, workload: &str) -> bool {
        self.workloads.is_none_or(|runs| runs(workload))
    }

    /// Whether a client of this pair reports itself as `implementation`
    /// (`floe-ct` and `floe-poll` run floe's client, `raw-spin` and
    /// `raw-tokio` raw's).
    pub fn reports(&self, implementation: &str) -> bool {
        self.name == implementation
            || self
                .name
                .strip_prefix(implementation)
                .is_some_and(|variant| variant.starts_with('-'))
    }
}

/// A running bench server; dropping it kills and reaps the process.
pub struct Server {
    child: Child,
    /// The loopback port it listens on.
    pub port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `pair`'s server on a free port, its stderr appended to `log`,
    /// and waits for `Bench ready`.
    pub fn start(pair: &Pair, log: &Path) -> Result<Server, DynError> {
        Server::start_with(pair, log, &[])
    }

    /// [`Server::start`] with `args` after the pair's own arguments. The
    /// server runs with its soft file-descriptor limit raised to the hard
    /// one (the `idle` workload holds thousands of connections).
    pub fn start_with(pair: &Pair, log: &Path, args: &[String]) -> Result<Server, DynError> {
        let port = free_port()?;
        let log_file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
        let child = super::idle::with_fd_limit(&pair.server)
            .arg(port.to_string())
            .args(&pair.extra_args)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", pair.server.display()))?;
        let mut server = Server { child, port };
        // Invariant: stdout was set to piped above.
        let stdout = server.child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        // Reads lines until `Bench ready`, then keeps draining so a chatty
        // server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let mut sent = false;
            loop {
                line.clear();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) if !sent && line.contains("Bench ready") => {
                        let _ = tx.send(());
                        sent = true;
                    }
                    Ok(_) => {}
                }
            }
        });
        match rx.recv_timeout(READY_TIMEOUT) {
            Ok(()) => Ok(server),
            Err(_) => Err(format!(
                "{} server did not print `Bench ready` within {}s (log: {})",
                pair.name,
                READY_TIMEOUT.as_secs(),
                log.display()
            )
            .into()),
        }
    }

    /// The server's process id (the shell that starts it `exec`s it).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

/// A port that was free a moment ago on 127.0.0.1.
fn free_port() -> Result<u16, DynError> {
    let l = TcpListener::bind(("127.0.0.1", 0))?;
    Ok(l.local_addr()?.port())
}

/// One JSON result line of a bench client.
#[derive(Clone, Debug)]
pub struct Sample {
    /// `impl` field.
    pub implementation: String,
    /// `workload` field.
    pub workload: String,
    /// `calls` field.
    pub calls: f64,
    /// `us_per_call` field.
    pub us_per_call: f64,
    /// `mbit_s` field.
    pub mbit_s: f64,
}

/// Runs `pair`'s client against `port` for `workloads`, with `BENCH_SCALE`
/// set to `scale`, killed after `limit`. Returns the parsed lines.
pub fn run_client(
    pair: &Pair,
    port: u16,
    workloads: &[&str],
    scale: f64,
    limit: Duration,
) -> Result<Vec<Sample>, DynError> {
    let mut child = Command::new(&pair.client)
        .arg(port.to_string())
        .args(&pair.extra_args)
        .args(workloads)
        .env("BENCH_SCALE", scale.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", pair.client.display()))?;
    // Invariant: both were set to piped above.
    let out = drain(child.stdout.take().expect("piped stdout"));
    let err = drain(child.stderr.take().expect("piped stderr"));
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait()? {
            Some(status) => break Some(status),
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    let Some(status) = status else {
        return Err(format!("{} client timed out after {}s", pair.name, limit.as_secs()).into());
    };
    if !status.success() {
        return Err(format!("{} client failed ({status}): {}", pair.name, err.trim()).into());
    }
    Ok(out.lines().filter_map(parse_line).collect())
}

/// Reads a pipe to its end on a thread.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = pipe.read_to_string(&mut s);
        s
    })
}

/// Parses one flat JSON object line; `None` for anything else.
pub fn parse_line(line: &str) -> Option<Sample> {
    let line = line.trim();
    if !line.starts_with('{') {
        return None;
    }
    Some(Sample {
        implementation: string_field(line, "impl")?,
        workload: string_field(line, "workload")?,
        calls: number_field(line, "calls")?,
        us_per_call: number_field(line, "us_per_call")?,
        mbit_s: number_field(line, "mbit_s").unwrap_or(0.0),
    })
}

/// The text after `"key":` (spaces skipped).
fn after_key<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!("\"{key}\"");
    let at = line.find(&pat)? + pat.len();
    let rest = line[at..].trim_start().strip_prefix(':')?;
    Some(rest.trim_start())
}

fn string_field(line: &str, key: &str) -> Option<String> {
    let rest = after_key(line, key)?.strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_string())
}

fn number_field(line: &str, key: &str) -> Option<f64> {
    let rest = after_key(line, key)?;
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end].trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_client_line() {
        let s = parse_line(
            r#"{"impl":"floe","workload":"latency","calls":100000,"seconds":5.1,"us_per_call":51.000,"mbit_s":0.000}"#,
        )
        .unwrap();
        assert_eq!(s.implementation, "floe");
        assert_eq!(s.workload, "latency");
        assert_eq!(s.calls, 100000.0);
        assert_eq!(s.us_per_call, 51.0);
        assert_eq!(s.mbit_s, 0.0);
    }

    #[test]
    fn ignores_other_lines() {
        assert!(parse_line("Bench ready").is_none());
        assert!(parse_line(r#"{"impl":"floe"}"#).is_none());
    }
}
