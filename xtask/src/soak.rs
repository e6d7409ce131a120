//! `cargo xtask soak [--minutes N] [--clients C]` (not run by CI): builds
//! `floe-storm` and the `soak` program (benches/programs/) in release, starts the soak server and
//! floe-storm on free 127.0.0.1 ports, then the soak client with C tasks of
//! mixed operations for N minutes (see benches/programs/src/bin/soak/main.rs).
//!
//! Every 10 s the client prints its cumulative counts; at each such line the
//! VmRSS of the server, the broker and the client is read from
//! `/proc/PID/status`. At the end a table is printed and the verdict:
//! no operation error, no event missing or bad, and the RSS of the server
//! and of the broker grew less than 5% after the warm-up: the peak of the
//! last 20% of the run against the peak of the 20% that follows the
//! warm-up, the first third of the run (see [`peak_growth_percent`] and
//! [`Windows`]). Exits non-zero when it fails. Ctrl-C (or any failure)
//! stops every child.
//!
//! Why a third: glibc's malloc gives threads their own arenas, and a
//! process whose worker threads take turns allocating 500 KB buffers keeps
//! growing until each arena holds its share (the first 30-minute run rose
//! by 0.6 MB over 10 minutes and then stayed level; the same load with
//! `MALLOC_ARENA_MAX=1` was level after 10 seconds). That is the
//! allocator's warm-up, not a leak; a leak keeps raising the last
//! window's peak.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::{build_programs, release_dir, workspace_root, DynError};

/// Allowed RSS growth after the warm-up, in percent.
const MAX_GROWTH_PERCENT: f64 = 5.0;

/// The options of `cargo xtask soak`.
#[derive(clap::Args, Clone, Debug, PartialEq)]
#[command(
    about = "floe-storm and the soak server under mixed load for N minutes: RSS flat, \
             no error, no lost event; not run by CI",
    long_about = "Builds floe-storm and the soak program (benches/programs/) in release, \
                  starts the soak server and floe-storm on free 127.0.0.1 ports, then the \
                  soak client with C tasks of mixed operations for N minutes. RSS, calls/s \
                  and errors are printed every 10 s; fails on any error, lost event or RSS \
                  growth of 5% or more after the warm-up (the first third of the run). \
                  Not run by CI."
)]
pub struct Options {
    /// Run length in minutes (fractions allowed)
    #[arg(long, value_name = "N", default_value_t = 30.0, value_parser = positive_minutes)]
    pub minutes: f64,
    /// Client tasks (1 to 1000)
    #[arg(long, value_name = "C", default_value_t = 4, value_parser = client_count)]
    pub clients: usize,
}

/// A finite number of minutes above 0.
fn positive_minutes(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(m) if m.is_finite() && m > 0.0 => Ok(m),
        _ => Err(format!("not a positive number: `{s}`")),
    }
}

/// A count of client tasks in 1..=1000.
fn client_count(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(c) if (1..=1000).contains(&c) => Ok(c),
        _ => Err(format!("not a count in 1..=1000: `{s}`")),
    }
}

impl Options {
    /// The run length in whole seconds (at least 1).
    pub fn seconds(&self) -> u64 {
        ((self.minutes * 60.0).round() as u64).max(1)
    }
}

/// One `soak-stats`/`soak-final` line of the client.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Seconds since the client tasks started.
    pub t: f64,
    /// Calls so far.
    pub calls: u64,
    /// Failed calls and wrong results so far.
    pub errors: u64,
    /// Events published.
    pub published: u64,
    /// Events received by the subscriber.
    pub received: u64,
    /// Events not (yet) received.
    pub missing: u64,
    /// Events received twice, late or malformed.
    pub bad: u64,
}

/// Parses `soak-stats t=.. calls=.. ...` (or `soak-final`); `None` for
/// other lines. Returns whether it is the final line.
pub fn parse_stats(line: &str) -> Option<(bool, Stats)> {
    let mut words = line.split_whitespace();
    let last = match words.next()? {
        "soak-stats" => false,
        "soak-final" => true,
        _ => return None,
    };
    let mut s = Stats::default();
    for w in words {
        let (k, v) = w.split_once('=')?;
        match k {
            "t" => s.t = v.parse().ok()?,
            "calls" => s.calls = v.parse().ok()?,
            "errors" => s.errors = v.parse().ok()?,
            "published" => s.published = v.parse().ok()?,
            "received" => s.received = v.parse().ok()?,
            "missing" => s.missing = v.parse().ok()?,
            "bad" => s.bad = v.parse().ok()?,
            _ => {}
        }
    }
    Some((last, s))
}

/// One row of the table: the client's counts and the RSS (kB) of the
/// server, the broker and the client.
#[derive(Clone, Debug)]
pub struct Row {
    /// The client's line.
    pub stats: Stats,
    /// VmRSS in kB: server, broker, client.
    pub rss_kb: [u64; 3],
}

/// RSS growth in percent of a process from the first row at or after
/// `warm_up_s` to the last row; `None` without such rows.
pub fn growth_percent(rows: &[Row], process: usize, warm_up_s: f64) -> Option<f64> {
    let base = rows.iter().find(|r| r.stats.t >= warm_up_s)?.rss_kb[process];
    let end = rows.last()?.rss_kb[process];
    percent(base, end)
}

/// The windows the verdict compares, for a run of `seconds`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Windows {
    /// The warm-up: the first third of the run.
    pub warm_up_s: f64,
    /// The length of the compared windows: 20% of the run.
    pub window_s: f64,
}

impl Windows {
    /// The windows of a run of `seconds`.
    pub fn for_run(seconds: f64) -> Windows {
        Windows {
            warm_up_s: seconds / 3.0,
            window_s: seconds * 0.2,
        }
    }
}

/// RSS growth in percent of a process from its peak in the window that
/// follows the warm-up (rows from `warm_up_s` to `warm_up_s + window_s`)
/// to its peak in the last `window_s` seconds of the run: single 10 s
/// samples of a small process move by a megabyte as large buffers are
/// freed and reused, peaks over windows of the same length do not, and a
/// leak still raises the last window's peak. The verdict uses this one.
pub fn peak_growth_percent(rows: &[Row], process: usize, w: Windows) -> Option<f64> {
    let end_t = rows.last()?.stats.t;
    let peak = |rows: &mut dyn Iterator<Item = &Row>| rows.map(|r| r.rss_kb[process]).max();
    let after_warm_up =
        |r: &&Row| r.stats.t >= w.warm_up_s && r.stats.t <= w.warm_up_s + w.window_s;
    let base = peak(&mut rows.iter().filter(after_warm_up))?;
    let end = peak(&mut rows.iter().filter(|r| r.stats.t >= end_t - w.window_s))?;
    percent(base, end)
}

fn percent(base: u64, end: u64) -> Option<f64> {
    (base != 0).then(|| (end as f64 - base as f64) * 100.0 / base as f64)
}

/// Set by the SIGINT handler.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// A child process; stopped (SIGTERM, then SIGKILL after 10 s) and reaped
/// on drop. It dies with xtask (`PR_SET_PDEATHSIG`) and is in a process
/// group of its own, so Ctrl-C reaches only xtask, which stops it.
struct Proc {
    name: &'static str,
    child: Child,
}

impl Proc {
    fn spawn(name: &'static str, cmd: &mut Command) -> Result<Proc, DynError> {
        use std::os::unix::process::CommandExt;
        // SAFETY: prctl is async-signal-safe; nothing else runs between
        // fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        cmd.process_group(0);
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        Ok(Proc { name, child })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM, then waits up to 10 s (SIGKILL after); the exit status.
    fn stop(&mut self) -> String {
        if let Ok(Some(status)) = self.child.try_wait() {
            return format!("had exited ({status})");
        }
        // SAFETY: signalling our own child, which is not reaped yet.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return format!("stopped ({status})");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        "killed after 10 s".to_string()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.stop();
    }
}

/// VmRSS of `pid` in kB (0 when unreadable).
fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// Reads `child`'s stdout lines on a thread.
fn lines(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    if let Some(out) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    rx
}

/// Waits for a line starting with `prefix`; an error on Ctrl-C, exit or
/// after 60 s.
fn expect_line(
    p: &mut Proc,
    rx: &mpsc::Receiver<String>,
    prefix: &str,
) -> Result<String, DynError> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Err("interrupted".into());
        }
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(l) if l.starts_with(prefix) => return Ok(l),
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let name = p.name;
    let how = p.stop();
    Err(format!("{name}: no `{prefix}` line ({how}; see target/soak/)").into())
}

fn free_port() -> Result<u16, DynError> {
    Ok(std::net::TcpListener::bind(("127.0.0.1", 0))?
        .local_addr()?
        .port())
}

fn log_file(dir: &Path, name: &str) -> Result<std::fs::File, DynError> {
    let path = dir.join(name);
    std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// Runs `cargo xtask soak`.
pub fn run(opts: Options) -> Result<(), DynError> {
    build_programs(&["soak"], &["-p", "floe-storm", "--bin", "floe-storm"])?;
    let root = workspace_root();
    let release = release_dir();
    let dir: PathBuf = root.join("target/soak");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t);
    }

    let soak = release.join("soak");
    let port = free_port()?;
    let mut server = Proc::spawn(
        "soak server",
        Command::new(&soak)
            .args(["server", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file(&dir, "server.log")?),
    )?;
    let server_out = lines(&mut server.child);
    expect_line(&mut server, &server_out, "Soak ready")?;

    let mut broker = Proc::spawn(
        "floe-storm",
        Command::new(release.join("floe-storm"))
            .arg(format!(
                "--IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {}",
                free_port()?
            ))
            .arg(format!(
                "--IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p {}",
                free_port()?
            ))
            .arg("--data-dir")
            .arg(dir.join("storm-db"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file(&dir, "floe-storm.log")?),
    )?;
    let broker_out = lines(&mut broker.child);
    let ready = expect_line(&mut broker, &broker_out, "floe-storm ready")?;
    let tm = ready
        .split_once("TopicManager=")
        .and_then(|(_, rest)| rest.split(" Publish=").next())
        .ok_or_else(|| format!("floe-storm: no TopicManager in `{ready}`"))?
        .trim()
        .to_string();

    let seconds = opts.seconds();
    println!(
        "soak: {} client tasks for {seconds} s; server pid {}, floe-storm pid {}; logs in {}",
        opts.clients,
        server.pid(),
        broker.pid(),
        dir.display()
    );
    let mut client = Proc::spawn(
        "soak client",
        Command::new(&soak)
            .args(["client", &port.to_string(), &tm])
            .args([opts.clients.to_string(), seconds.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit()),
    )?;
    let client_out = lines(&mut client.child);
    let pids = [server.pid(), broker.pid(), client.pid()];
    let sample = |stats: Stats| Row {
        stats,
        rss_kb: pids.map(rss_kb),
    };
    let mut rows = vec![sample(Stats::default())];
    print_header();
    print_row(&rows[0], None);
    let mut finished = false;
    let limit = Instant::now() + Duration::from_secs(seconds + 120);
    while Instant::now() < limit {
        if INTERRUPTED.load(Ordering::SeqCst) {
            break;
        }
        match client_out.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => {
                if let Some((last, stats)) = parse_stats(&line) {
                    let row = sample(stats);
                    print_row(&row, rows.last());
                    rows.push(row);
                    if last {
                        finished = true;
                        break;
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let client_end = client.stop();
    let server_end = server.stop();
    let broker_end = broker.stop();
    println!("\nclient {client_end}; server {server_end}; floe-storm {broker_end}");
    if INTERRUPTED.load(Ordering::SeqCst) {
        return Err("interrupted (children stopped)".into());
    }
    if !finished {
        return Err("the soak client ended without its final line".into());
    }
    verdict(&rows, Windows::for_run(seconds as f64))
}

fn print_header() {
    println!(
        "{:>7} {:>12} {:>9} {:>7} {:>10} {:>10} {:>8} {:>12} {:>12} {:>12}",
        "t (s)",
        "calls",
        "calls/s",
        "errors",
        "published",
        "received",
        "missing",
        "server RSS",
        "storm RSS",
        "client RSS"
    );
}

fn print_row(r: &Row, prev: Option<&Row>) {
    let rate = prev
        .filter(|p| r.stats.t > p.stats.t)
        .map(|p| {
            (r.stats.calls - p.stats.calls.min(r.stats.calls)) as f64 / (r.stats.t - p.stats.t)
        })
        .unwrap_or(0.0);
    let mb = |kb: u64| format!("{:.1} MB", kb as f64 / 1024.0);
    println!(
        "{:>7.1} {:>12} {:>9.0} {:>7} {:>10} {:>10} {:>8} {:>12} {:>12} {:>12}",
        r.stats.t,
        r.stats.calls,
        rate,
        r.stats.errors,
        r.stats.published,
        r.stats.received,
        r.stats.missing,
        mb(r.rss_kb[0]),
        mb(r.rss_kb[1]),
        mb(r.rss_kb[2])
    );
}

/// Prints the verdict; an error when it fails.
fn verdict(rows: &[Row], w: Windows) -> Result<(), DynError> {
    let Some(last) = rows.last() else {
        return Err("no samples".into());
    };
    let s = &last.stats;
    let mut failures = Vec::new();
    if s.errors != 0 {
        failures.push(format!("{} errors", s.errors));
    }
    if s.missing != 0 || s.bad != 0 || s.received != s.published {
        failures.push(format!(
            "events: {} published, {} received, {} missing, {} bad",
            s.published, s.received, s.missing, s.bad
        ));
    }
    println!(
        "\n{} calls in {:.0} s ({:.0} calls/s), {} errors; events {} published, {} received, {} missing",
        s.calls,
        s.t,
        s.calls as f64 / s.t.max(1e-9),
        s.errors,
        s.published,
        s.received,
        s.missing
    );
    for (i, name) in ["server", "floe-storm", "client"].iter().enumerate() {
        let show = |g: Option<f64>| g.map_or("n/a".to_string(), |g| format!("{g:+.1}%"));
        let g = peak_growth_percent(rows, i, w);
        let shown = show(g);
        println!(
            "RSS growth of {name}: peak of the last {:.0} s vs peak of the {:.0} s after the \
             {:.0} s warm-up {shown} (sample at {:.0} s to the last sample: {})",
            w.window_s,
            w.window_s,
            w.warm_up_s,
            w.warm_up_s,
            show(growth_percent(rows, i, w.warm_up_s))
        );
        // The client's RSS is shown; the verdict is on the server and broker.
        if i < 2 && g.is_none_or(|g| g >= MAX_GROWTH_PERCENT) {
            failures.push(format!("{name} RSS growth {shown}"));
        }
    }
    if failures.is_empty() {
        println!("verdict: PASS");
        Ok(())
    } else {
        Err(format!("verdict: FAIL ({})", failures.join("; ")).into())
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// `cargo xtask soak` alone, as the tests parse it.
    #[derive(Parser)]
    struct Soak {
        #[command(flatten)]
        options: Options,
    }

    fn parse(s: &str) -> Result<Options, clap::Error> {
        let argv = std::iter::once("soak").chain(s.split_whitespace());
        Soak::try_parse_from(argv).map(|s| s.options)
    }

    #[test]
    fn options() {
        assert_eq!(
            parse("").unwrap(),
            Options {
                minutes: 30.0,
                clients: 4
            }
        );
        let o = parse("--minutes 2 --clients=8").unwrap();
        assert_eq!((o.minutes, o.clients, o.seconds()), (2.0, 8, 120));
        assert_eq!(parse("--minutes=0.5").unwrap().seconds(), 30);
        assert!(parse("--minutes 0").is_err());
        assert!(parse("--minutes").is_err());
        assert!(parse("--clients 0").is_err());
        assert!(parse("--clients 1001").is_err());
        assert!(parse("--bogus").is_err());
    }

    #[test]
    fn stats_lines() {
        let (last, s) = parse_stats(
            "soak-final t=120.3 calls=1000 errors=0 published=50 received=50 missing=0 bad=0",
        )
        .unwrap();
        assert!(last);
        assert_eq!(
            (s.t, s.calls, s.published, s.received),
            (120.3, 1000, 50, 50)
        );
        let (last, s) = parse_stats("soak-stats t=10.0 calls=7 errors=1").unwrap();
        assert!(!last);
        assert_eq!(s.errors, 1);
        assert!(parse_stats("Soak ready").is_none());
        assert!(parse_stats("soak-stats calls=x").is_none());
    }

    #[test]
    fn growth_from_the_end_of_the_warm_up() {
        let row = |t: f64, kb: u64| Row {
            stats: Stats {
                t,
                ..Stats::default()
            },
            rss_kb: [kb, kb * 2, 0],
        };
        let rows = [row(0.0, 10), row(10.0, 100), row(20.0, 103), row(30.0, 104)];
        assert_eq!(growth_percent(&rows, 0, 5.0), Some(4.0));
        assert_eq!(growth_percent(&rows, 1, 5.0), Some(4.0));
        assert_eq!(growth_percent(&rows, 2, 5.0), None);
        assert_eq!(growth_percent(&rows, 0, 40.0), None);
        // Peaks: after the warm-up (10 <= t <= 15) 100 kB, last 5 s 104 kB;
        // the warm-up's 10 kB is not the base.
        let w = Windows {
            warm_up_s: 10.0,
            window_s: 5.0,
        };
        assert_eq!(peak_growth_percent(&rows, 0, w), Some(4.0));
        let noisy = [row(0.0, 100), row(10.0, 90), row(20.0, 100), row(30.0, 90)];
        assert_eq!(peak_growth_percent(&noisy, 0, w), Some(0.0));
        // A run of 30 minutes: warm-up 10 min, windows of 6 min.
        assert_eq!(
            Windows::for_run(1800.0),
            Windows {
                warm_up_s: 600.0,
                window_s: 360.0
            }
        );
    }
}
