//! Bench servers and clients as child processes: a free loopback port, a
//! server guard that always kills and reaps (bench servers, and the fan-in
//! brokers of [`super::fanin`]), and a client run with a time limit whose
//! JSON lines are parsed into [`Sample`]s.

use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

use crate::DynError;

/// How long a server may take to print `Bench ready` (or to listen).
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

/// A running server (a bench server or a fan-in broker); dropping it kills
/// and reaps the process.
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

    /// [`Server::start`] with `args` after the pair's own arguments, in
    /// which `{port}` stands for the free port chosen here (e.g. in
    /// `--Bench.Endpoints=tcp -h 127.0.0.1 -p {port}:ssl ...`). The
    /// server runs with its soft file-descriptor limit raised to the hard
    /// one (the `idle` workload holds thousands of connections).
    pub fn start_with(pair: &Pair, log: &Path, args: &[String]) -> Result<Server, DynError> {
        let port = free_port()?;
        let args: Vec<String> = args
            .iter()
            .map(|a| a.replace("{port}", &port.to_string()))
            .collect();
        let log_file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
        let child = with_fd_limit(&pair.server)
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

    /// Starts `cmd` (stdin and stdout closed, stderr to `log`), which
    /// is to listen on `port`, and waits until 127.0.0.1:`port` accepts
    /// connections. `what` names it in errors.
    pub fn listening(
        cmd: &mut Command,
        port: u16,
        what: &str,
        log: &Path,
    ) -> Result<Server, DynError> {
        let log_file = std::fs::File::create(log)
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("cannot start {what}: {e}"))?;
        let mut server = Server { child, port };
        let deadline = Instant::now() + READY_TIMEOUT;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("{what} exited ({status}; log: {})", log.display()).into());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{what} did not listen on port {port} within {}s (log: {})",
                    READY_TIMEOUT.as_secs(),
                    log.display()
                )
                .into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(server)
    }

    /// The server's process id (the shell that starts it `exec`s it).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// CPU time the process has used so far (user + system), in seconds.
    pub fn cpu_seconds(&self) -> Option<f64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).ok()?;
        // The fields after the parenthesised command name; utime and stime
        // are fields 14 and 15 of the whole line.
        let rest = &stat[stat.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
        Some(ticks as f64 / clock_ticks())
    }
}

/// Clock ticks per second (`getconf CLK_TCK`, 100 if unknown).
fn clock_ticks() -> f64 {
    static TICKS: OnceLock<f64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
            .unwrap_or(100.0)
    })
}

/// A port that was free a moment ago on 127.0.0.1.
pub fn free_port() -> Result<u16, DynError> {
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
    /// `mb_s` field (fan-in clients: payload MB/s received).
    pub mb_s: Option<f64>,
    /// `sent` field (fan-in clients: events published).
    pub sent: Option<u64>,
    /// `received` field (fan-in clients: events the subscriber got).
    pub received: Option<u64>,
    /// `lost` field (fan-in clients: sent − received).
    pub lost: Option<u64>,
    /// `calls_s` field (calls per second; the bench clients).
    pub calls_s: Option<f64>,
    /// 99th percentile µs per call, when given (`p99_us`).
    pub p99_us: Option<f64>,
}

/// Runs `pair`'s client against `port` for `workloads`, with `args` after
/// the pair's own arguments and `BENCH_SCALE` set to `scale`, killed after
/// `limit`. Returns the parsed lines.
pub fn run_client(
    pair: &Pair,
    port: u16,
    args: &[String],
    workloads: &[&str],
    scale: f64,
    limit: Duration,
) -> Result<Vec<Sample>, DynError> {
    let mut cmd = Command::new(&pair.client);
    cmd.arg(port.to_string())
        .args(&pair.extra_args)
        .args(args)
        .args(workloads)
        .env("BENCH_SCALE", scale.to_string());
    run_program(&mut cmd, &format!("{} client", pair.name), limit)
}

/// Runs a client program to its end (stdin closed), killed after `limit`;
/// an error if it cannot start, times out or exits non-zero (with its
/// stderr), else the result lines it printed. `what` names it in errors.
pub fn run_program(
    cmd: &mut Command,
    what: &str,
    limit: Duration,
) -> Result<Vec<Sample>, DynError> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {what} ({}): {e}", crate::describe(cmd)))?;
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
        return Err(format!("{what} timed out after {}s", limit.as_secs()).into());
    };
    if !status.success() {
        return Err(format!("{what} failed ({status}): {}", err.trim()).into());
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
        mb_s: number_field(line, "mb_s"),
        sent: count_field(line, "sent"),
        received: count_field(line, "received"),
        lost: count_field(line, "lost"),
        calls_s: number_field(line, "calls_s"),
        p99_us: number_field(line, "p99_us"),
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
    raw_field(line, key)?.parse().ok()
}

fn count_field(line: &str, key: &str) -> Option<u64> {
    raw_field(line, key)?.parse().ok()
}

/// The unquoted value of `key`, up to the next `,` or `}`.
fn raw_field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = after_key(line, key)?;
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// `Command` running `program` with the soft fd limit raised to the hard one.
pub fn with_fd_limit(program: &Path) -> Command {
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        r#"ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@""#,
    ])
    .arg(program);
    cmd
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
        assert_eq!((s.mb_s, s.sent, s.lost), (None, None, None));
        assert_eq!(s.calls_s, None);
        let s = parse_line(
            r#"{"impl":"ice-cpp","workload":"clients_4","calls":100000,"seconds":2.0,"us_per_call":20.000,"mbit_s":0.000,"calls_s":50000.0}"#,
        )
        .unwrap();
        assert_eq!(s.calls_s, Some(50000.0));
    }

    #[test]
    fn parses_a_fanin_client_line() {
        let s = parse_line(
            r#"{"impl":"icestorm","workload":"fanin_bytes_10000","calls":11990,"seconds":1.05,"us_per_call":87.8,"mbit_s":910.6,"mb_s":113.830,"sent":12000,"received":11990,"lost":10}"#,
        )
        .unwrap();
        assert_eq!(s.implementation, "icestorm");
        assert_eq!(s.workload, "fanin_bytes_10000");
        assert_eq!(s.mb_s, Some(113.83));
        assert_eq!(
            (s.sent, s.received, s.lost),
            (Some(12000), Some(11990), Some(10))
        );
    }

    #[test]
    fn ignores_other_lines() {
        assert!(parse_line("Bench ready").is_none());
        assert!(parse_line(r#"{"impl":"floe"}"#).is_none());
    }
}
