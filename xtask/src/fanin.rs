//! The fan-in comparison of `cargo xtask compare` (`--fanin` runs it
//! alone; a full run includes it): floe-storm and IceStorm 3.7 (icebox +
//! `libIceStormService`) side by side, the same client both ways, and a
//! raw TCP relay (`benches/raw/relay.rs`) twice: with its own raw client
//! (`raw-relay`, the machine's ceiling) and speaking just enough IceStorm
//! for the brokers' client (`ice-relay`, the floor of any broker measured
//! with that client), and that relay once more with a queue of its own in
//! front of the subscriber (`queued-relay`: its publishers never wait for
//! the subscriber, which the issue asks of a broker and the plain relay
//! does not do).
//!
//! Both brokers run for the whole comparison on free loopback ports. Each
//! round runs every fan-in workload once per broker, in an order that
//! alternates every round, as one `fanin_client` process
//! (`examples/fanin_client.rs`: 4 oneway publishers → 1 oneway subscriber,
//! see `examples/fanin_common/mod.rs`). Per (workload, broker) the report
//! gives the median payload MB/s over the rounds, the messages lost (all
//! rounds together) and the ratio floe-storm/IceStorm of the medians;
//! targets: ≥ 2× IceStorm at 10 KB, ≥ 1.3× at 100 KB and 1 MB, 0 lost.
//! Where that speed is above 0.95× the relay's MB/s with the same client
//! in the same run (`ice-relay`; `raw-relay` when it was not measured),
//! 0.95× the relay is the bar instead (as the guide makes the raw socket
//! the bar for latency, and issue 7 asks 0.95× raw for throughput).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::{cargo, install, on_path, run_checked, workspace_root, DynError};

/// The columns: the two brokers and the raw relay, with its own client and
/// with the brokers' client (plain and queued).
pub const BROKERS: [&str; 5] = ["floe-storm", "icestorm", RAW, ICE_RELAY, QUEUED_RELAY];

/// The raw relay's column (its own raw client).
pub const RAW: &str = "raw-relay";

/// The raw relay's column with the brokers' client (`raw_fanin ice-relay`).
pub const ICE_RELAY: &str = "ice-relay";

/// The relay with the brokers' client and an unbounded queue in front of
/// the subscriber, written by a thread of its own (`raw_fanin
/// ice-relay-queued`): publishers never wait for the subscriber.
pub const QUEUED_RELAY: &str = "queued-relay";

/// The share of the relay's MB/s that counts as reaching it.
pub const RAW_SHARE: f64 = 0.95;

/// Every fan-in workload, in report order (as `fanin_client` names them).
pub fn all_workloads() -> Vec<String> {
    let mut w = Vec::new();
    for kind in ["bytes", "floats", "data"] {
        for size in [10_000, 100_000, 1_000_000] {
            w.push(format!("fanin_{kind}_{size}"));
        }
    }
    w
}

/// How the fan-in comparison runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Rounds of alternating runs.
    pub rounds: usize,
    /// `BENCH_SCALE` for the client (factor on message counts).
    pub scale: f64,
    /// Build the client and floe-storm first.
    pub build: bool,
    /// The workloads to run.
    pub workloads: Vec<String>,
}

/// One broker's samples for one workload.
#[derive(Clone, Debug, Default)]
pub struct Cell {
    /// Payload MB/s (10⁶ bytes) received, one per round.
    pub mb_s: Vec<f64>,
    /// Messages lost, one per round.
    pub lost: Vec<u64>,
    /// Broker CPU time (user + system) per GB of payload received, in
    /// seconds, one per round: how much machine the broker needs, which a
    /// loaded machine disturbs less than wall-clock speed.
    pub cpu_s_per_gb: Vec<f64>,
    /// Messages sent per round (the last seen).
    pub sent: u64,
}

impl Cell {
    /// Median MB/s.
    pub fn median(&self) -> Option<f64> {
        crate::compare::median(&self.mb_s)
    }
    /// Median broker CPU seconds per GB.
    pub fn median_cpu(&self) -> Option<f64> {
        crate::compare::median(&self.cpu_s_per_gb)
    }
    /// Messages lost over all rounds.
    pub fn lost_total(&self) -> u64 {
        self.lost.iter().sum()
    }
}

/// workload → broker → cell.
pub type Results = BTreeMap<String, BTreeMap<String, Cell>>;

/// What a fan-in comparison produced.
pub struct Report {
    /// Markdown: the results and targets table.
    pub table: String,
    /// The `"fanin": {...}` member of `target/compare.json`, on one line.
    pub json: String,
    /// Runs that failed.
    pub failures: Vec<String>,
    /// The options it ran with.
    pub options: Options,
    /// `/proc/loadavg` before and after the run.
    pub load: (String, String),
}

/// The speed target for a workload: 2× at 10 KB, 1.3× above.
pub fn target_ratio(workload: &str) -> f64 {
    if workload.ends_with("_10000") {
        2.0
    } else {
        1.3
    }
}

/// floe-storm's median over IceStorm's, if both were measured.
pub fn ratio(results: &Results, workload: &str) -> Option<f64> {
    let row = results.get(workload)?;
    Some(row.get("floe-storm")?.median()? / row.get("icestorm")?.median()?)
}

/// How a workload's speed target was judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// floe-storm reached the target ratio over IceStorm, 0 lost.
    Met,
    /// The target ratio was above [`RAW_SHARE`] of the relay's MB/s (see
    /// [`floor`]), and floe-storm reached that share, 0 lost.
    MetRawBar,
    /// Neither (or messages were lost).
    NotMet,
}

/// floe-storm's median over the raw relay's, if both were measured.
pub fn raw_ratio(results: &Results, workload: &str) -> Option<f64> {
    let row = results.get(workload)?;
    Some(row.get("floe-storm")?.median()? / row.get(RAW)?.median()?)
}

/// The relay column a workload's bar comes from: [`ICE_RELAY`], measured
/// with the brokers' own client (on a 2-core machine the client's CPU is in
/// every column's figure), or [`RAW`] when it was not measured.
pub fn floor(results: &Results, workload: &str) -> Option<(&'static str, f64)> {
    let row = results.get(workload)?;
    [ICE_RELAY, RAW]
        .into_iter()
        .find_map(|b| Some((b, row.get(b)?.median()?)))
}

/// floe-storm's median over the relay's with the same client, if both were
/// measured.
pub fn floor_ratio(results: &Results, workload: &str) -> Option<f64> {
    column_ratio(results, workload, ICE_RELAY)
}

/// floe-storm's median over column `b`'s, if both were measured.
pub fn column_ratio(results: &Results, workload: &str, b: &str) -> Option<f64> {
    let row = results.get(workload)?;
    Some(row.get("floe-storm")?.median()? / row.get(b)?.median()?)
}

/// Whether the workload's targets hold: speed (over IceStorm, or the
/// relay's bar where the target is above it, see [`floor`]) and 0 lost
/// (floe-storm).
pub fn met(results: &Results, workload: &str) -> Option<Verdict> {
    let row = results.get(workload)?;
    let floe = row.get("floe-storm")?;
    let (speed, ice) = (floe.median()?, row.get("icestorm")?.median()?);
    let want = target_ratio(workload) * ice;
    let raw_bar = floor(results, workload).map(|(_, r)| RAW_SHARE * r);
    Some(if floe.lost_total() > 0 {
        Verdict::NotMet
    } else if speed >= want {
        Verdict::Met
    } else if raw_bar.is_some_and(|bar| bar < want && speed >= bar) {
        Verdict::MetRawBar
    } else {
        Verdict::NotMet
    })
}

/// A running broker; dropping it kills and reaps the process.
struct Broker {
    child: Child,
    /// The client program for this broker and its arguments before the
    /// label and the workload (the TopicManager proxy, stringified, for
    /// `fanin_client`; `client PORT` for `raw_fanin`).
    client: (PathBuf, Vec<String>),
    _dir: PathBuf,
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> Result<u16, DynError> {
    let l = TcpListener::bind(("127.0.0.1", 0))?;
    Ok(l.local_addr()?.port())
}

/// A fresh, empty directory under `target/fanin/`.
fn fresh_dir(name: &str) -> Result<PathBuf, DynError> {
    let dir = workspace_root().join("target/fanin").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Waits until `port` accepts connections.
fn wait_listening(port: u16, what: &str, child: &mut Child) -> Result<(), DynError> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("{what} exited ({status})").into());
        }
        if Instant::now() > deadline {
            return Err(format!("{what} did not listen on port {port} within 30s").into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Broker settings shared by both: the 1 MB messages need a larger
/// `Ice.MessageSizeMax` than the 1 MB default once framed.
const MESSAGE_SIZE_MAX: &str = "Ice.MessageSizeMax=102400";

/// floe-storm's per-subscriber queue, raised from its default bound (10,000
/// events, 64 MiB) to what IceStorm runs with by default (no bound:
/// `IceStorm.Send.QueueSizeMax=-1`). The publishers here outrun the
/// subscriber, which decodes every message: with the default bound
/// floe-storm drops the events past it for the subscriber, as configured,
/// while IceStorm reads its publishers too slowly to build a backlog.
const FLOE_STORM_QUEUE: [&str; 2] = [
    "--IceStorm.Send.QueueSizeMax=1000000",
    "--IceStorm.Send.QueueBytesMax=4294967296",
];

impl Broker {
    /// floe-storm's binary on two free ports.
    fn floe_storm(bins: &Binaries, logs: &Path) -> Result<Broker, DynError> {
        let bin = &bins.storm;
        let dir = fresh_dir("floe-storm")?;
        let (tm, publish) = (free_port()?, free_port()?);
        let log = std::fs::File::create(logs.join("floe-storm.log"))?;
        let mut child = Command::new(bin)
            .arg(format!(
                "--IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {tm}"
            ))
            .arg(format!(
                "--IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p {publish}"
            ))
            .arg(format!("--{MESSAGE_SIZE_MAX}"))
            .args(FLOE_STORM_QUEUE)
            .arg("--data-dir")
            .arg(dir.join("db"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        let ready = wait_listening(tm, "floe-storm", &mut child);
        let broker = Broker {
            child,
            client: bins.fanin_client(tm),
            _dir: dir,
        };
        ready.map(|()| broker)
    }

    /// IceStorm 3.7 in icebox on two free ports.
    fn icestorm(bins: &Binaries, logs: &Path) -> Result<Broker, DynError> {
        let dir = fresh_dir("icestorm")?;
        let (tm, publish) = (free_port()?, free_port()?);
        let db = dir.join("db");
        std::fs::create_dir_all(&db)?;
        let service = dir.join("config.service");
        std::fs::write(
            &service,
            format!(
                "IceStorm.InstanceName=IceStorm\n\
                 IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {tm}\n\
                 IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p {publish}\n\
                 IceStorm.LMDB.Path={}\n\
                 {MESSAGE_SIZE_MAX}\n",
                db.display()
            ),
        )?;
        let log = std::fs::File::create(logs.join("icestorm.log"))?;
        let mut child = Command::new("icebox")
            .arg(format!(
                "--IceBox.Service.IceStorm=IceStormService,37:createIceStorm --Ice.Config={}",
                service.display()
            ))
            .arg(format!("--{MESSAGE_SIZE_MAX}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start icebox: {e}"))?;
        let ready = wait_listening(tm, "icebox (IceStorm)", &mut child);
        let broker = Broker {
            child,
            client: bins.fanin_client(tm),
            _dir: dir,
        };
        ready.map(|()| broker)
    }

    /// The raw relay for column `name` ([`RAW`]: `raw_fanin relay`;
    /// [`ICE_RELAY`]: `raw_fanin ice-relay`; [`QUEUED_RELAY`]: `raw_fanin
    /// ice-relay-queued`) on a free port.
    fn raw_relay(bins: &Binaries, logs: &Path, name: &'static str) -> Result<Broker, DynError> {
        let (mode, ice) = match name {
            RAW => ("relay", false),
            ICE_RELAY => ("ice-relay", true),
            _ => ("ice-relay-queued", true),
        };
        let dir = fresh_dir(name)?;
        let port = free_port()?;
        let log = std::fs::File::create(logs.join(format!("{name}.log")))?;
        let mut child = Command::new(&bins.raw)
            .args([mode, &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bins.raw.display()))?;
        let ready = wait_listening(port, name, &mut child);
        let client = if ice {
            bins.fanin_client(port)
        } else {
            (bins.raw.clone(), vec!["client".into(), port.to_string()])
        };
        let broker = Broker {
            child,
            client,
            _dir: dir,
        };
        ready.map(|()| broker)
    }

    /// Starts column `i` of [`BROKERS`].
    fn start(i: usize, bins: &Binaries, logs: &Path) -> Result<Broker, DynError> {
        match i {
            0 => Broker::floe_storm(bins, logs),
            1 => Broker::icestorm(bins, logs),
            2 => Broker::raw_relay(bins, logs, RAW),
            3 => Broker::raw_relay(bins, logs, ICE_RELAY),
            _ => Broker::raw_relay(bins, logs, QUEUED_RELAY),
        }
    }

    fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// CPU time the broker process has used (user + system), in clock ticks.
    fn cpu_ticks(&self) -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        // Fields after the parenthesised command name; utime and stime are
        // fields 14 and 15 of the whole line.
        let rest = &stat[stat.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
    }
}

/// Clock ticks per second (`getconf CLK_TCK`, 100 if unknown).
fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// The first line of `/proc/loadavg` (three load averages).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Payload bytes of one message of `workload` (its last `_` field).
fn message_size(workload: &str) -> u64 {
    workload
        .rsplit('_')
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// One result line of `fanin_client`.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// `workload`.
    pub workload: String,
    /// `mb_s`.
    pub mb_s: f64,
    /// `sent`.
    pub sent: u64,
    /// `received`.
    pub received: u64,
    /// `lost`.
    pub lost: u64,
}

/// Parses one `fanin_client` line; `None` for anything else.
pub fn parse_line(line: &str) -> Option<Sample> {
    let line = line.trim();
    if !line.starts_with('{') {
        return None;
    }
    let field = |key: &str| {
        let pat = format!("\"{key}\":");
        let at = line.find(&pat)? + pat.len();
        let rest = &line[at..];
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        Some(rest[..end].trim().trim_matches('"').to_string())
    };
    Some(Sample {
        workload: field("workload")?,
        mb_s: field("mb_s")?.parse().ok()?,
        sent: field("sent")?.parse().ok()?,
        received: field("received")?.parse().ok()?,
        lost: field("lost")?.parse().ok()?,
    })
}

/// Runs the broker's client once for `workload`.
fn run_client(
    broker: &Broker,
    label: &str,
    workload: &str,
    scale: f64,
) -> Result<Sample, DynError> {
    let (client, args) = &broker.client;
    let mut child = Command::new(client)
        .args(args)
        .arg(label)
        .arg(workload)
        .env("BENCH_SCALE", scale.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", client.display()))?;
    // Invariant: both were set to piped above.
    let out = child.stdout.take().expect("piped stdout");
    let err = child.stderr.take().expect("piped stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let lines: Vec<String> = BufReader::new(out).lines().map_while(Result::ok).collect();
        let _ = tx.send(lines);
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(err), &mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        match child.try_wait()? {
            Some(s) => break Some(s),
            None if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let lines = rx.recv_timeout(Duration::from_secs(5)).unwrap_or_default();
    let err = err.join().unwrap_or_default();
    match status {
        None => Err(format!("{label} client timed out").into()),
        Some(s) if !s.success() => {
            Err(format!("{label} client failed ({s}): {}", err.trim()).into())
        }
        Some(_) => lines
            .iter()
            .filter_map(|l| parse_line(l))
            .find(|s| s.workload == workload)
            .ok_or_else(|| format!("{label} client printed no result for {workload}").into()),
    }
}

/// The programs a fan-in comparison runs.
struct Binaries {
    /// `examples/fanin_client.rs`.
    client: PathBuf,
    /// floe-storm.
    storm: PathBuf,
    /// `benches/raw/relay.rs` (relay and client).
    raw: PathBuf,
}

impl Binaries {
    /// `fanin_client` and its TopicManager argument for a broker on `port`.
    fn fanin_client(&self, port: u16) -> (PathBuf, Vec<String>) {
        (
            self.client.clone(),
            vec![format!("IceStorm/TopicManager:tcp -h 127.0.0.1 -p {port}")],
        )
    }
}

/// Builds what is needed.
fn build(build: bool) -> Result<Binaries, DynError> {
    let root = workspace_root();
    if build {
        run_checked(cargo().args([
            "build",
            "--release",
            "-p",
            "floe",
            "--example",
            "fanin_client",
            "--example",
            "raw_fanin",
        ]))?;
        run_checked(cargo().args([
            "build",
            "--release",
            "-p",
            "floe-storm",
            "--bin",
            "floe-storm",
        ]))?;
        if std::env::var_os("FLOE_NO_INTEROP").is_some_and(|v| v == "1") {
            println!("xtask: FLOE_NO_INTEROP=1, not installing Ice packages");
        } else {
            install::debian_packages()?;
        }
    }
    if !on_path("icebox") {
        return Err("`icebox` not found (Debian package zeroc-icebox)".into());
    }
    let bins = Binaries {
        client: root.join("target/release/examples/fanin_client"),
        storm: root.join("target/release/floe-storm"),
        raw: root.join("target/release/examples/raw_fanin"),
    };
    for bin in [&bins.client, &bins.storm, &bins.raw] {
        if !bin.is_file() {
            return Err(format!("not built: {}", bin.display()).into());
        }
    }
    Ok(bins)
}

/// Runs the fan-in comparison.
pub fn run(opts: &Options) -> Result<Report, DynError> {
    let bins = build(opts.build)?;
    let logs = workspace_root().join("target/compare-logs");
    std::fs::create_dir_all(&logs)?;
    let mut brokers = Vec::new();
    for i in 0..BROKERS.len() {
        brokers.push(Broker::start(i, &bins, &logs)?);
    }
    println!(
        "xtask: fan-in: {} round(s) × {} workload(s) × [{}], BENCH_SCALE={}",
        opts.rounds,
        opts.workloads.len(),
        BROKERS.join(", "),
        opts.scale
    );
    let mut results = Results::new();
    let mut failures = Vec::new();
    let ticks = clock_ticks();
    let load_before = load_average();
    for round in 0..opts.rounds {
        for w in &opts.workloads {
            for k in 0..BROKERS.len() {
                let i = (k + round) % BROKERS.len();
                let name = BROKERS[i];
                if !brokers[i].is_running() {
                    println!("xtask: {name} died; restarting");
                    brokers[i] = Broker::start(i, &bins, &logs)?;
                }
                let cpu_before = brokers[i].cpu_ticks();
                let run = run_client(&brokers[i], name, w, opts.scale);
                let cpu = cpu_before
                    .zip(brokers[i].cpu_ticks())
                    .map(|(a, b)| b.saturating_sub(a) as f64 / ticks);
                match run {
                    Ok(s) => {
                        let gb = (s.received * message_size(w)) as f64 / 1e9;
                        let cpu_per_gb = cpu.filter(|_| gb > 0.0).map(|c| c / gb);
                        println!(
                            "  round {}/{} {w:<24} {name:<12} {:>9.1} MB/s  lost {}  broker CPU {} s/GB",
                            round + 1,
                            opts.rounds,
                            s.mb_s,
                            s.lost,
                            fmt_opt(cpu_per_gb, 2)
                        );
                        let cell = results
                            .entry(w.clone())
                            .or_default()
                            .entry(name.to_string())
                            .or_default();
                        cell.mb_s.push(s.mb_s);
                        cell.lost.push(s.lost);
                        cell.cpu_s_per_gb.extend(cpu_per_gb);
                        cell.sent = s.sent;
                    }
                    Err(e) => {
                        println!("  round {}/{} {w} {name}: {e}", round + 1, opts.rounds);
                        failures.push(format!("fan-in {w} / {name}: {e}"));
                    }
                }
            }
        }
    }
    drop(brokers);
    let table = table(&results, &opts.workloads);
    let json = json(&results, &opts.workloads, opts);
    Ok(Report {
        table,
        json,
        failures,
        options: opts.clone(),
        load: (load_before, load_average()),
    })
}

fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "—".to_string(), |x| format!("{x:.digits$}"))
}

/// The Markdown table: one row per workload.
pub fn table(results: &Results, workloads: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| workload | floe-storm MB/s | IceStorm MB/s | raw relay MB/s | ice relay MB/s | queued relay MB/s | ratio | target | floe-storm / raw | floe-storm / ice relay | floe-storm / queued relay | floe-storm lost | IceStorm lost | met | floe-storm CPU s/GB | IceStorm CPU s/GB | raw relay CPU s/GB | ice relay CPU s/GB | queued relay CPU s/GB | rounds |"
    );
    let _ = writeln!(
        s,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"
    );
    for w in workloads {
        let Some(row) = results.get(w) else { continue };
        let cell = |b: &str| row.get(b);
        let med = |b: &str| cell(b).and_then(Cell::median);
        let lost = |b: &str| cell(b).map_or("—".to_string(), |c| c.lost_total().to_string());
        let rounds = cell("floe-storm").map_or(0, |c| c.mb_s.len());
        let cpu = |b: &str| fmt_opt(cell(b).and_then(Cell::median_cpu), 2);
        let _ = writeln!(
            s,
            "| {w} | {} | {} | {} | {} | {} | {} | ≥ {:.1}× | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {rounds} |",
            fmt_opt(med("floe-storm"), 1),
            fmt_opt(med("icestorm"), 1),
            fmt_opt(med(RAW), 1),
            fmt_opt(med(ICE_RELAY), 1),
            fmt_opt(med(QUEUED_RELAY), 1),
            fmt_opt(ratio(results, w), 2),
            target_ratio(w),
            fmt_opt(raw_ratio(results, w), 2),
            fmt_opt(floor_ratio(results, w), 2),
            fmt_opt(column_ratio(results, w, QUEUED_RELAY), 2),
            lost("floe-storm"),
            lost("icestorm"),
            match met(results, w) {
                Some(Verdict::Met) => "met",
                Some(Verdict::MetRawBar) => "met (relay bar)",
                Some(Verdict::NotMet) => "**not met**",
                None => "not measured",
            },
            cpu("floe-storm"),
            cpu("icestorm"),
            cpu(RAW),
            cpu(ICE_RELAY),
            cpu(QUEUED_RELAY),
        );
    }
    s
}

/// The `"fanin": {...}` member of `target/compare.json`, on one line.
pub fn json(results: &Results, workloads: &[String], opts: &Options) -> String {
    let nums = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let num = |v: Option<f64>| v.map_or_else(|| "null".into(), |x| format!("{x:.3}"));
    let mut s = format!(
        "\"fanin\": {{\"rounds\": {}, \"bench_scale\": {}, \"publishers\": 4, \"subscribers\": 1, \"results\": {{",
        opts.rounds, opts.scale
    );
    let mut first = true;
    for w in workloads {
        let Some(row) = results.get(w) else { continue };
        let _ = write!(s, "{}\"{w}\": {{", if first { "" } else { ", " });
        first = false;
        for (i, b) in BROKERS.iter().enumerate() {
            if let Some(c) = row.get(*b) {
                let lost: Vec<String> = c.lost.iter().map(u64::to_string).collect();
                let _ = write!(
                    s,
                    "\"{b}\": {{\"sent\": {}, \"median_mb_s\": {}, \"mb_s\": [{}], \"lost\": [{}], \"median_cpu_s_per_gb\": {}, \"cpu_s_per_gb\": [{}]}}, ",
                    c.sent,
                    num(c.median()),
                    nums(&c.mb_s),
                    lost.join(", "),
                    num(c.median_cpu()),
                    nums(&c.cpu_s_per_gb)
                );
            } else if i == 0 {
                let _ = write!(s, "\"{b}\": null, ");
            }
        }
        let _ = write!(
            s,
            "\"ratio\": {}, \"target_ratio\": {}, \"raw_ratio\": {}, \"ice_relay_ratio\": {}, \"queued_relay_ratio\": {}, \"met\": {}}}",
            num(ratio(results, w)),
            target_ratio(w),
            num(raw_ratio(results, w)),
            num(floor_ratio(results, w)),
            num(column_ratio(results, w, QUEUED_RELAY)),
            match met(results, w) {
                Some(Verdict::Met) => "true",
                Some(Verdict::MetRawBar) => "\"relay bar\"",
                Some(Verdict::NotMet) => "false",
                None => "null",
            }
        );
    }
    s.push_str("}}");
    s
}

/// The `## Fan-in` section of `docs/performance.md`.
pub fn document_section(report: &Report) -> String {
    let o = &report.options;
    let mut d = String::new();
    let _ = writeln!(
        d,
        "{SECTION_HEADING}\n\n\
         4 publishers → 1 subscriber through the broker, CODAC messages of \
         `benches/Bench.ice` (`Messages::publish{{Bytes,Floats,Data}}OneWay`), on 127.0.0.1: \
         **floe-storm** (`crates/storm`, release) and **IceStorm** 3.7 (`icebox` with \
         `libIceStormService`, Debian package). The client is the same floe program both ways \
         (`examples/fanin_client.rs`): each publisher has its own communicator and connection \
         and publishes with a oneway proxy (as IceStorm publishers do); the publishers share \
         one tokio runtime and the subscriber has its own (as a separate process would); the \
         subscriber is a oneway proxy (IceStorm's recommendation for throughput; twoway delivery is limited \
         to 5 requests in flight per subscriber by both brokers) and decodes every message. \
         Both brokers run with their default settings (floe-storm: one thread, tokio's \
         current-thread runtime, `floe.Threads=1`) plus `Ice.MessageSizeMax=102400`; \
         floe-storm's per-subscriber queue is raised from its default bound (10,000 events, \
         64 MiB, past which it drops events for a subscriber that does not keep up) to \
         10⁶ events and 4 GiB, as IceStorm's send queue is unbounded by default: the \
         publishers outrun the decoding subscriber, and with the default bound floe-storm \
         drops what does not fit. MB/s \
         is payload received (10⁶ bytes) from the first timed publish to the last message \
         received; lost = sent − received once nothing arrived for 3 s (all rounds \
         together). **raw relay** (`benches/raw/relay.rs`) is the machine's bar: a relay \
         process with one blocking thread per publisher that reads frames of the sizes \
         the Ice publishers send and writes every whole frame a read completed, unchanged, \
         to the subscriber's socket in one `write` (two copies of every byte, no queue, no \
         decoding), with a raw client (4 publisher threads, 1 subscriber thread counting \
         frames) and the same message counts, warm-up and timing. **ice relay** is the same \
         relay (`raw_fanin ice-relay`) measured with the brokers' own client: it answers the \
         client's few setup calls itself (`create`, `subscribeAndGetPublisher`, \
         `getPublisher`, `ice_ping`, `destroy`) and hands out a publisher proxy with the \
         subscriber's identity, so the publishers' oneway requests are copied to the \
         subscriber byte for byte, as raw frames are. The client shares the 2 cores with the \
         broker, so its CPU is in every column's figure: the ice relay is the most any \
         broker can deliver to this client here. Its publishers wait in `write` whenever the \
         subscriber is behind, which a broker must not make them do; **queued relay** \
         (`raw_fanin ice-relay-queued`) is the ice relay with an unbounded queue in front of \
         the subscriber instead: each publisher's thread hands the buffers of whole frames it \
         read (not copied) to the subscriber's own writer thread, which writes up to 64 of \
         them per vectored `write`, so publishers never wait for the subscriber and what it \
         has not taken yet is held in memory, as in a broker. Each cell is the median \
         over {} alternating round(s), `BENCH_SCALE={}`; ratio = floe-storm / IceStorm. \
         Targets: ≥ 2× IceStorm at 10 KB, ≥ 1.3× at 100 KB and 1 MB, 0 lost; where that \
         speed is above {RAW_SHARE}× the ice relay's in the same run, {RAW_SHARE}× the ice relay \
         is the bar instead (\"met (relay bar)\"), as the raw socket is the bar for latency. \
         CPU s/GB is the broker process's CPU time (user + system) per GB \
         of payload received (median): the machine is shared, and under load the wall-clock \
         speed measures scheduling as much as the broker. Load average (1, 5, 15 min) at \
         the start: {}; at the end: {}.\n",
        o.rounds, o.scale, report.load.0, report.load.1
    );
    d.push_str(&report.table);
    if !report.failures.is_empty() {
        d.push_str("\nFailed runs:\n\n");
        for f in &report.failures {
            let _ = writeln!(d, "- {}", f.replace('\n', " "));
        }
    }
    d.push('\n');
    d
}

/// The heading of the fan-in section in `docs/performance.md`.
pub const SECTION_HEADING: &str = "## Fan-in through the broker (floe-storm vs IceStorm)";

/// `doc` with its fan-in section replaced by `section` (or inserted before
/// the hand-written notes, or appended).
pub fn replace_section(doc: &str, section: &str) -> String {
    if let Some(start) = doc.find(SECTION_HEADING) {
        let after = start + SECTION_HEADING.len();
        let end = [doc[after..].find("\n## "), doc[after..].find("\n---\n")]
            .into_iter()
            .flatten()
            .min()
            .map_or(doc.len(), |e| after + e + 1);
        return format!("{}{section}{}", &doc[..start], &doc[end..]);
    }
    match doc.find("\n---\n") {
        Some(at) => format!("{}{section}{}", &doc[..at + 1], &doc[at + 1..]),
        None => format!("{doc}\n{section}"),
    }
}

/// `json` (a `target/compare.json`) with its `"fanin"` member replaced by
/// `member` (one line), or added as the last member.
pub fn replace_json_member(json: &str, member: &str) -> String {
    let mut lines: Vec<String> = json
        .lines()
        .filter(|l| !l.trim_start().starts_with("\"fanin\":"))
        .map(String::from)
        .collect();
    // The closing brace of the top-level object, and the member before it.
    let Some(close) = lines.iter().rposition(|l| l.trim() == "}") else {
        return format!("{{\n  {member}\n}}\n");
    };
    if close > 0 {
        let prev = &mut lines[close - 1];
        let trimmed = prev.trim_end().trim_end_matches(',').to_string();
        if trimmed.trim() != "{" {
            *prev = format!("{trimmed},");
        }
    }
    lines.insert(close, format!("  {member}"));
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_client_line() {
        let s = parse_line(
            r#"{"impl":"icestorm","workload":"fanin_bytes_10000","calls":12000,"seconds":1.05,"us_per_call":87.8,"mbit_s":910.6,"mb_s":113.830,"sent":12000,"received":11990,"lost":10}"#,
        )
        .unwrap();
        assert_eq!(s.workload, "fanin_bytes_10000");
        assert_eq!(s.mb_s, 113.83);
        assert_eq!((s.sent, s.lost), (12000, 10));
        assert!(parse_line("noise").is_none());
    }

    #[test]
    fn ratios_and_targets() {
        fn put(r: &mut Results, w: &str, b: &str, mb: f64, lost: u64) {
            let c = r
                .entry(w.to_string())
                .or_default()
                .entry(b.to_string())
                .or_default();
            c.mb_s.push(mb);
            c.lost.push(lost);
        }
        let mut r = Results::new();
        put(&mut r, "fanin_bytes_10000", "floe-storm", 1000.0, 0);
        put(&mut r, "fanin_bytes_10000", "icestorm", 480.0, 0);
        put(&mut r, "fanin_bytes_100000", "floe-storm", 1300.0, 1);
        put(&mut r, "fanin_bytes_100000", "icestorm", 1000.0, 0);
        assert_eq!(met(&r, "fanin_bytes_10000"), Some(Verdict::Met));
        // Fast enough, but a message was lost.
        assert_eq!(met(&r, "fanin_bytes_100000"), Some(Verdict::NotMet));
        assert_eq!(met(&r, "fanin_bytes_1000000"), None);
        // 1.2× IceStorm: below 1.3×; the raw relay's bar (0.95 × 2,500 =
        // 2,375; no ice relay measured) is below 1.3× IceStorm (2,600) and
        // reached.
        put(&mut r, "fanin_bytes_1000000", "floe-storm", 2400.0, 0);
        put(&mut r, "fanin_bytes_1000000", "icestorm", 2000.0, 0);
        assert_eq!(met(&r, "fanin_bytes_1000000"), Some(Verdict::NotMet));
        put(&mut r, "fanin_bytes_1000000", RAW, 2500.0, 0);
        assert_eq!(met(&r, "fanin_bytes_1000000"), Some(Verdict::MetRawBar));
        assert!((raw_ratio(&r, "fanin_bytes_1000000").unwrap() - 0.96).abs() < 1e-9);
        // A raw relay far above the target does not lower it.
        put(&mut r, "fanin_floats_1000000", "floe-storm", 2400.0, 0);
        put(&mut r, "fanin_floats_1000000", "icestorm", 2000.0, 0);
        put(&mut r, "fanin_floats_1000000", RAW, 4000.0, 0);
        assert_eq!(met(&r, "fanin_floats_1000000"), Some(Verdict::NotMet));
        // The relay with the brokers' client, when measured, sets the bar
        // instead of the raw relay: 0.95 × 2,500 = 2,375 is reached.
        put(&mut r, "fanin_floats_1000000", ICE_RELAY, 2500.0, 0);
        assert_eq!(met(&r, "fanin_floats_1000000"), Some(Verdict::MetRawBar));
        assert!((floor_ratio(&r, "fanin_floats_1000000").unwrap() - 0.96).abs() < 1e-9);
        // ... and a faster one raises it.
        put(&mut r, "fanin_data_1000000", "floe-storm", 2400.0, 0);
        put(&mut r, "fanin_data_1000000", "icestorm", 2000.0, 0);
        put(&mut r, "fanin_data_1000000", RAW, 2500.0, 0);
        put(&mut r, "fanin_data_1000000", ICE_RELAY, 2600.0, 0);
        assert_eq!(met(&r, "fanin_data_1000000"), Some(Verdict::NotMet));
        // The queued relay is reported beside, and sets no bar.
        put(&mut r, "fanin_data_1000000", QUEUED_RELAY, 2000.0, 0);
        assert_eq!(met(&r, "fanin_data_1000000"), Some(Verdict::NotMet));
        let t = table(&r, &all_workloads());
        assert!(
            t.contains("| fanin_bytes_1000000 | 2400.0 | 2000.0 | 2500.0 | — | — | 1.20 |"),
            "{t}"
        );
        assert!(
            t.contains("| fanin_data_1000000 | 2400.0 | 2000.0 | 2500.0 | 2600.0 | 2000.0 | 1.20 | ≥ 1.3× | 0.96 | 0.92 | 1.20 |"),
            "{t}"
        );
        assert!(t.contains("met (relay bar)"), "{t}");
        let opts = Options {
            rounds: 1,
            scale: 1.0,
            build: false,
            workloads: all_workloads(),
        };
        let j = json(&r, &all_workloads(), &opts);
        assert_eq!(j.matches('{').count(), j.matches('}').count());
        assert!(!j.contains('\n'));
    }

    #[test]
    fn json_member_is_replaced_or_added() {
        let base = "{\n  \"machine\": {},\n  \"targets\": [\n  ]\n}\n";
        let one = replace_json_member(base, "\"fanin\": {\"a\": 1}");
        assert_eq!(
            one,
            "{\n  \"machine\": {},\n  \"targets\": [\n  ],\n  \"fanin\": {\"a\": 1}\n}\n"
        );
        let two = replace_json_member(&one, "\"fanin\": {\"a\": 2}");
        assert_eq!(two, one.replace("\"a\": 1", "\"a\": 2"));
    }

    #[test]
    fn doc_section_is_replaced_or_inserted() {
        let doc = "# t\n\n## Results\n\nx\n\n---\n\nnotes\n";
        let s1 = format!("{SECTION_HEADING}\n\none\n\n");
        let d1 = replace_section(doc, &s1);
        assert!(d1.contains("x\n\n## Fan-in"), "{d1}");
        assert!(d1.ends_with("one\n\n---\n\nnotes\n"), "{d1}");
        let s2 = format!("{SECTION_HEADING}\n\ntwo\n\n");
        let d2 = replace_section(&d1, &s2);
        assert_eq!(d2, d1.replace("one", "two"));
    }
}
