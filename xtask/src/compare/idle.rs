//! The `idle` workload: server memory per idle client connection.
//!
//! For each implementation a fresh bench server is started (ACM off, so
//! nothing closes the connections), its `VmRSS` is read from
//! `/proc/PID/status`, then a helper process (this xtask binary, run as
//! `xtask __idle-client PORT N`) opens `N` TCP connections and reads the
//! server's 14-byte ValidateConnection message on each, so every connection
//! is validated and then idle, as an Ice client leaves it. Once the helper
//! says all are open and the server's RSS has settled, the RSS is read
//! again; the difference divided by `N` is the server's resident memory per
//! idle connection (user space: buffers, tasks, tables; the kernel's socket
//! memory is not in `VmRSS`).
//!
//! Both processes need more than `N` file descriptors: they are started
//! through `sh -c 'ulimit -n <hard limit>; exec ...'`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use floe_wire::protocol::header::VALIDATE_CONNECTION;

use super::process::{Pair, Server};
use crate::DynError;

/// Connections opened per measurement.
pub const CONNECTIONS: usize = 10_000;

/// The bound on server RSS per idle connection, in bytes.
pub const TARGET_BYTES: f64 = 8.0 * 1024.0;

/// Server properties for the measurement: ACM off on both sides.
const SERVER_ARGS: &[&str] = &["--Ice.ACM.Timeout=0"];

/// One measurement: server RSS before and after, and the connection count.
#[derive(Clone, Copy, Debug)]
pub struct IdleSample {
    /// Server `VmRSS` before the connections, in KiB.
    pub before_kib: u64,
    /// Server `VmRSS` with every connection open and idle, in KiB.
    pub after_kib: u64,
    /// Connections opened.
    pub connections: usize,
}

impl IdleSample {
    /// RSS growth per connection, in bytes.
    pub fn bytes_per_connection(&self) -> f64 {
        (self.after_kib.saturating_sub(self.before_kib) * 1024) as f64
            / self.connections.max(1) as f64
    }
}

/// The `VmRSS` of process `pid`, in KiB.
fn rss_kib(pid: u32) -> Result<u64, DynError> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| format!("no VmRSS in /proc/{pid}/status").into())
}

/// Waits until the RSS of `pid` stops moving (two reads 200 ms apart within
/// 1%), at most `limit`; returns the last read.
fn settled_rss(pid: u32, limit: Duration) -> Result<u64, DynError> {
    let deadline = Instant::now() + limit;
    let mut last = rss_kib(pid)?;
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let now = rss_kib(pid)?;
        if now.abs_diff(last) * 100 <= last || Instant::now() >= deadline {
            return Ok(now);
        }
        last = now;
    }
}

/// Kills and reaps the helper however the measurement ends.
struct Helper(Child);

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Measures `pair`'s server with `connections` idle connections.
pub fn measure(pair: &Pair, connections: usize, log: &Path) -> Result<IdleSample, DynError> {
    let args: Vec<String> = SERVER_ARGS.iter().map(|s| s.to_string()).collect();
    let server = Server::start_with(pair, log, &args)?;
    let pid = server.pid();
    let before_kib = settled_rss(pid, Duration::from_secs(3))?;
    let exe = std::env::current_exe()?;
    let child = super::process::with_fd_limit(&exe)
        .args(["__idle-client", &server.port.to_string()])
        .arg(connections.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the idle client: {e}"))?;
    let mut helper = Helper(child);
    // Invariant: stdout was set to piped above.
    let stdout = helper.0.stdout.take().expect("piped stdout");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    if !line.starts_with("connected") {
        let mut err = String::new();
        if let Some(mut e) = helper.0.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        return Err(format!("idle client failed: {}", err.trim()).into());
    }
    let after_kib = settled_rss(pid, Duration::from_secs(10))?;
    // Closing stdin ends the helper; the guard reaps it.
    drop(helper.0.stdin.take());
    drop(helper);
    drop(server);
    Ok(IdleSample {
        before_kib,
        after_kib,
        connections,
    })
}

/// `xtask __idle-client PORT N`: opens `N` connections to
/// `127.0.0.1:PORT`, reads the ValidateConnection message on each, prints
/// `connected N` and holds them until stdin closes.
pub fn client(port: u16, n: usize) -> Result<(), DynError> {
    let mut conns = Vec::with_capacity(n);
    for i in 0..n {
        let mut s = TcpStream::connect(("127.0.0.1", port))
            .map_err(|e| format!("connection {i}: connect: {e}"))?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut validate = [0u8; VALIDATE_CONNECTION.len()];
        s.read_exact(&mut validate)
            .map_err(|e| format!("connection {i}: no ValidateConnection: {e}"))?;
        if validate != VALIDATE_CONNECTION {
            return Err(format!("connection {i}: unexpected first message {validate:02x?}").into());
        }
        conns.push(s);
    }
    println!("connected {n}");
    std::io::stdout().flush()?;
    // Hold the connections until the parent closes stdin.
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    drop(conns);
    Ok(())
}
