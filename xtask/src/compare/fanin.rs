//! The fan-in comparison of `cargo xtask compare` (`--fanin` runs it
//! alone; a full run includes it): 4 oneway publishers → 1 oneway
//! subscriber through floe-storm and through IceStorm 3.7 (icebox +
//! `libIceStormService`), each measured with two clients that speak only
//! the IceStorm contract, so each client sees both brokers alike:
//!
//! - **floe**: floe's own client (`fanin_client` of `benches/programs/`,
//!   see its `src/fanin.rs`);
//! - **ice-cpp**: an Ice for C++ 3.7 client (`benches/cpp/fanin_client.cpp`,
//!   C++11 mapping, IceStorm's C++ API: `getPublisher()->ice_oneway()`
//!   publishers, a servant subscribed with `subscribeAndGetPublisher`),
//!   the same command line, counts, timing and JSON line.
//!
//! Beside them, a raw TCP relay (`raw_fanin` of `benches/programs/`) as the machine's
//! bar: with its own raw client (`raw-relay`, the machine's ceiling), and
//! speaking just enough IceStorm for the brokers' clients (`ice-relay`, with
//! either client: the floor of any broker measured with that client), and
//! once more with a queue of its own in front of the subscriber
//! (`queued-relay`, floe client: its publishers never wait for the
//! subscriber, which the issue asks of a broker and the plain relay does
//! not do). A column is one broker with one client ([`COLUMNS`]).
//!
//! Every broker runs with its default settings (plus the larger
//! `Ice.MessageSizeMax` 1 MB events need), for the whole comparison, on free
//! loopback ports ([`broker`]). Each round runs every workload once per
//! column, in an order that rotates every round, as one client process. All
//! columns of a workload send the same events per publisher
//! ([`Options::events_per_publisher`], passed as `FANIN_EVENTS`); the
//! `fanin_bytes_10000` row bursts at least [`BURST_EVENTS`] per publisher
//! (more than 40,000 events in all) whatever the scale.
//!
//! Per (workload, client) row the report ([`report`]) gives the median
//! payload MB/s over the rounds per column, the events lost per column (all
//! rounds together) and floe-storm's ratios, and judges the targets per
//! client: ≥ 2× IceStorm at 10 KB, ≥ 1.3× at 100 KB and 1 MB; where that
//! speed is above 0.95× the relay's MB/s with the same client in the same
//! run (`ice-relay`; `raw-relay` when it was not measured), 0.95× the relay
//! is the bar instead. A row where floe-storm or IceStorm lost any event
//! fails (`LOST n`), and so does the run: every lost event is reported as
//! an error of the comparison.

mod broker;
mod doc;
mod latency;
mod replicated;
mod report;

use std::path::PathBuf;

use broker::Broker;
pub use doc::{document_section, replace_json_member, replace_section};
pub use replicated::{replicated_columns, REPLICATED_COLUMNS};
pub use report::{Report, Results};

use crate::{build_programs, install, on_path, release_dir, workspace_root, DynError};

/// Broker setting for both brokers: the 1 MB events need a larger
/// `Ice.MessageSizeMax` than the 1 MB default once framed. Nothing else is
/// changed from the defaults.
pub(crate) const MESSAGE_SIZE_MAX: &str = "Ice.MessageSizeMax=102400";

/// The program that publishes and subscribes for a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    /// floe's client, `fanin_client` (benches/programs/).
    Floe,
    /// The Ice for C++ client, `benches/cpp/fanin_client.cpp`.
    IceCpp,
    /// The raw relay's own client (`raw_fanin client`).
    Raw,
}

impl Client {
    /// The name in `--impls`, the report and `target/compare.json`.
    pub fn name(self) -> &'static str {
        match self {
            Client::Floe => "floe",
            Client::IceCpp => "ice-cpp",
            Client::Raw => "raw",
        }
    }
}

/// The clients a report has rows (and targets) for.
pub const ROW_CLIENTS: [Client; 2] = [Client::Floe, Client::IceCpp];

/// What sits between the publishers and the subscriber.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BrokerKind {
    /// `floe-storm` (crates/storm, release).
    FloeStorm,
    /// IceStorm 3.7 in icebox.
    IceStorm,
    /// `raw_fanin relay`: raw frames, its own client.
    RawRelay,
    /// `raw_fanin ice-relay`: the relay for IceStorm clients.
    IceRelay,
    /// `raw_fanin ice-relay-queued`: that relay with a queue and a writer
    /// thread in front of the subscriber.
    QueuedRelay,
    /// Three `floe-storm` replicas (`--replicated`).
    FloeStormReplicated,
    /// Three IceStorm 3.7 replicas in icebox (`--replicated`).
    IceStormReplicated,
}

impl BrokerKind {
    /// The kinds of the main table, in report order (the replicated ones
    /// have a table of their own, [`replicated`]).
    pub const ALL: [BrokerKind; 5] = [
        BrokerKind::FloeStorm,
        BrokerKind::IceStorm,
        BrokerKind::IceRelay,
        BrokerKind::QueuedRelay,
        BrokerKind::RawRelay,
    ];

    /// The name in column names and `target/compare.json`.
    pub fn name(self) -> &'static str {
        match self {
            BrokerKind::FloeStorm => "floe-storm",
            BrokerKind::IceStorm => "icestorm",
            BrokerKind::RawRelay => "raw-relay",
            BrokerKind::IceRelay => "ice-relay",
            BrokerKind::QueuedRelay => "queued-relay",
            BrokerKind::FloeStormReplicated => "floe-storm-x3",
            BrokerKind::IceStormReplicated => "icestorm-x3",
        }
    }

    /// The name in table headings.
    pub fn title(self) -> &'static str {
        match self {
            BrokerKind::FloeStorm => "floe-storm",
            BrokerKind::IceStorm => "IceStorm",
            BrokerKind::RawRelay => "raw relay",
            BrokerKind::IceRelay => "ice relay",
            BrokerKind::QueuedRelay => "queued relay",
            BrokerKind::FloeStormReplicated => "floe-storm ×3",
            BrokerKind::IceStormReplicated => "IceStorm ×3",
        }
    }
}

/// One column: a broker measured with a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    /// The name (the client's `impl` label and the results key).
    pub name: &'static str,
    /// The broker.
    pub broker: BrokerKind,
    /// The client.
    pub client: Client,
}

const fn column(name: &'static str, broker: BrokerKind, client: Client) -> Column {
    Column {
        name,
        broker,
        client,
    }
}

/// Every column, in the order of the first round.
pub const COLUMNS: [Column; 8] = [
    column("floe-storm", BrokerKind::FloeStorm, Client::Floe),
    column("icestorm", BrokerKind::IceStorm, Client::Floe),
    column("raw-relay", BrokerKind::RawRelay, Client::Raw),
    column("ice-relay", BrokerKind::IceRelay, Client::Floe),
    column("queued-relay", BrokerKind::QueuedRelay, Client::Floe),
    column("floe-storm/ice-cpp", BrokerKind::FloeStorm, Client::IceCpp),
    column("icestorm/ice-cpp", BrokerKind::IceStorm, Client::IceCpp),
    column("ice-relay/ice-cpp", BrokerKind::IceRelay, Client::IceCpp),
];

/// Every column, the replicated ones last.
pub fn all_columns() -> impl Iterator<Item = &'static Column> {
    COLUMNS.iter().chain(&REPLICATED_COLUMNS)
}

/// The column of `broker` in a row of `client`: the raw relay's (own
/// client) for every row, else the one with that client, if any.
pub fn column_of(broker: BrokerKind, client: Client) -> Option<&'static Column> {
    all_columns()
        .find(|c| c.broker == broker && (c.client == client || broker == BrokerKind::RawRelay))
}

/// The columns `selectors` pick (`--impls`): a column's name, a client's
/// (`floe`, `ice-cpp`, `raw`: its columns) or a broker's (`floe-storm`,
/// `icestorm`, `raw-relay`, `ice-relay`, `queued-relay`: its columns with
/// every client). An error names a selector that picks nothing.
pub fn select_columns(selectors: &[String]) -> Result<Vec<Column>, DynError> {
    let picks = |s: &str, c: &Column| c.name == s || c.client.name() == s || c.broker.name() == s;
    if let Some(bad) = selectors
        .iter()
        .find(|s| !all_columns().any(|c| picks(s, c)))
    {
        let names: Vec<&str> = all_columns().map(|c| c.name).collect();
        return Err(format!(
            "unknown fan-in column `{bad}` (columns: {}; or a client: floe, ice-cpp, raw)",
            names.join(", ")
        )
        .into());
    }
    // A client's name picks its replicated columns only when asked by name.
    let picks_replicated = |s: &str, c: &Column| c.name == s || c.broker.name() == s;
    Ok(COLUMNS
        .iter()
        .filter(|c| selectors.iter().any(|s| picks(s, c)))
        .chain(
            REPLICATED_COLUMNS
                .iter()
                .filter(|c| selectors.iter().any(|s| picks_replicated(s, c))),
        )
        .copied()
        .collect())
}

/// Every fan-in workload, in report order (as the clients name them).
pub fn all_workloads() -> Vec<String> {
    let mut w = Vec::new();
    for kind in ["bytes", "floats", "data"] {
        for size in [10_000, 100_000, 1_000_000] {
            w.push(format!("fanin_{kind}_{size}"));
        }
    }
    w
}

/// Payload bytes of one event of `workload` (its last `_` field).
pub fn message_size(workload: &str) -> u64 {
    workload
        .rsplit('_')
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Events per publisher before the scale, as every client's default
/// (`messages_per_publisher` of `benches/programs/src/fanin.rs`): about
/// 400–600 MB per run in all.
pub fn default_events(workload: &str) -> u64 {
    match message_size(workload) {
        s if s <= 10_000 => 10_000,
        s if s <= 100_000 => 1_500,
        _ => 150,
    }
}

/// The burst row: `fanin_bytes_10000` sends at least this many events per
/// publisher whatever the scale (4 × 12,000 = 48,000: more than the 40,000
/// of 10 KB a user saw floe-storm drop 44% of with Ice C++ clients).
pub const BURST_EVENTS: (&str, u64) = ("fanin_bytes_10000", 12_000);

/// How the fan-in comparison runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Rounds of alternating runs.
    pub rounds: usize,
    /// `BENCH_SCALE`: a factor on the events per publisher.
    pub scale: f64,
    /// Build the clients and floe-storm first.
    pub build: bool,
    /// The workloads to run.
    pub workloads: Vec<String>,
    /// The columns to run.
    pub columns: Vec<Column>,
    /// Events per publisher for every workload instead of the scaled
    /// defaults (`--events`, or `FANIN_EVENTS` in xtask's environment).
    pub events: Option<u64>,
    /// The floe-storm binary to measure instead of building
    /// `target/release/floe-storm` (`--floe-storm`).
    pub storm: Option<PathBuf>,
}

impl Options {
    /// Events each publisher sends in `workload`: [`Options::events`], or
    /// the clients' default times the scale (rounded, at least 1), at
    /// least [`BURST_EVENTS`] for its workload.
    pub fn events_per_publisher(&self, workload: &str) -> u64 {
        if let Some(n) = self.events {
            return n;
        }
        let scaled = ((default_events(workload) as f64 * self.scale).round() as u64).max(1);
        match BURST_EVENTS {
            (w, min) if w == workload => scaled.max(min),
            _ => scaled,
        }
    }
}

/// The programs a fan-in comparison runs.
pub struct Binaries {
    /// `fanin_client` (benches/programs/).
    pub floe: PathBuf,
    /// `benches/cpp/fanin_client.cpp`, if it was built.
    pub cpp: Option<PathBuf>,
    /// floe-storm.
    pub storm: PathBuf,
    /// `raw_fanin` (benches/programs/: relays and raw client).
    pub raw: PathBuf,
    /// `storm_update_latency` (benches/programs/).
    pub latency: PathBuf,
}

impl Binaries {
    /// The program of `client`.
    fn client(&self, client: Client) -> Option<&PathBuf> {
        match client {
            Client::Floe => Some(&self.floe),
            Client::IceCpp => self.cpp.as_ref(),
            Client::Raw => Some(&self.raw),
        }
    }
}

/// Builds what the columns need; the Ice C++ client's failure is returned
/// beside the binaries (its columns are left out), not as an error.
fn build(opts: &Options) -> Result<(Binaries, Option<String>), DynError> {
    let bin = release_dir();
    if opts.build {
        let storm: &[&str] = match opts.storm {
            None => &["-p", "floe-storm", "--bin", "floe-storm"],
            Some(_) => &[],
        };
        build_programs(
            &["fanin_client", "raw_fanin", "storm_update_latency"],
            storm,
        )?;
        if std::env::var_os("FLOE_NO_INTEROP").is_some_and(|v| v == "1") {
            println!("xtask: FLOE_NO_INTEROP=1, not installing Ice packages");
        } else {
            install::debian_packages()?;
        }
    }
    if !on_path("icebox") {
        return Err("`icebox` not found (Debian package zeroc-icebox)".into());
    }
    let wants_cpp = opts.columns.iter().any(|c| c.client == Client::IceCpp);
    let (cpp, cpp_error) = match wants_cpp.then(|| super::build::cpp_fanin_client(opts.build)) {
        Some(Ok(bin)) => (Some(bin), None),
        Some(Err(e)) => (None, Some(format!("Ice C++ fan-in client: {e}"))),
        None => (None, None),
    };
    let bins = Binaries {
        floe: bin.join("fanin_client"),
        cpp,
        storm: opts.storm.clone().unwrap_or_else(|| bin.join("floe-storm")),
        raw: bin.join("raw_fanin"),
        latency: bin.join("storm_update_latency"),
    };
    for bin in [&bins.floe, &bins.storm, &bins.raw] {
        if !bin.is_file() {
            return Err(format!("not built: {}", bin.display()).into());
        }
    }
    Ok((bins, cpp_error))
}

/// The first three fields of `/proc/loadavg` (the load averages).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Runs the fan-in comparison. Runs that fail and events lost are in the
/// report ([`Report::errors`]), not errors of this function.
pub fn run(opts: &Options) -> Result<Report, DynError> {
    let (bins, cpp_error) = build(opts)?;
    let mut failures = Vec::new();
    let mut columns = opts.columns.clone();
    if let Some(e) = cpp_error {
        println!("xtask: no ice-cpp fan-in columns: {e}");
        failures.push(format!("fan-in: {e}"));
        columns.retain(|c| c.client != Client::IceCpp);
    }
    if columns.is_empty() {
        return Err("no fan-in column to run".into());
    }
    let logs = workspace_root().join("target/compare-logs");
    std::fs::create_dir_all(&logs)?;
    // One broker per kind the columns use, for the whole run.
    let mut kinds: Vec<BrokerKind> = Vec::new();
    for c in &columns {
        if !kinds.contains(&c.broker) {
            kinds.push(c.broker);
        }
    }
    let mut brokers = Vec::new();
    for k in &kinds {
        brokers.push(Broker::start(*k, &bins, &logs)?);
    }
    let names: Vec<&str> = columns.iter().map(|c| c.name).collect();
    println!(
        "xtask: fan-in: {} round(s) × {} workload(s) × [{}], BENCH_SCALE={}",
        opts.rounds,
        opts.workloads.len(),
        names.join(", "),
        opts.scale
    );
    let mut results = Results::new();
    let load_before = load_average();
    for round in 0..opts.rounds {
        for w in &opts.workloads {
            let events = opts.events_per_publisher(w);
            for k in 0..columns.len() {
                let col = columns[(k + round) % columns.len()];
                // Invariant: `kinds` holds every column's broker.
                let b = kinds.iter().position(|k| *k == col.broker).expect("broker");
                if !brokers[b].is_running() {
                    println!("xtask: {} died; restarting", col.broker.name());
                    brokers[b] = Broker::start(col.broker, &bins, &logs)?;
                }
                let Some(program) = bins.client(col.client) else {
                    continue;
                };
                let cpu_before = brokers[b].cpu_seconds();
                let run = brokers[b].run_client(program, &col, w, opts.scale, events);
                let cpu = cpu_before
                    .zip(brokers[b].cpu_seconds())
                    .map(|(a, b)| (b - a).max(0.0));
                match run {
                    Ok(s) => {
                        let gb = (s.received * message_size(w)) as f64 / 1e9;
                        let cpu_per_gb = cpu.filter(|_| gb > 0.0).map(|c| c / gb);
                        println!(
                            "  round {}/{} {w:<20} {:<18} {:>9.1} MB/s  sent {:>6}  lost {:>6}  broker CPU {} s/GB",
                            round + 1,
                            opts.rounds,
                            col.name,
                            s.mb_s,
                            s.sent,
                            s.lost,
                            super::report::fmt_opt(cpu_per_gb, 2)
                        );
                        let cell = results
                            .entry(w.clone())
                            .or_default()
                            .entry(col.name.to_string())
                            .or_default();
                        cell.mb_s.push(s.mb_s);
                        cell.lost.push(s.lost);
                        cell.cpu_s_per_gb.extend(cpu_per_gb);
                        cell.sent = s.sent;
                    }
                    Err(e) => {
                        println!(
                            "  round {}/{} {w} {}: {e}",
                            round + 1,
                            opts.rounds,
                            col.name
                        );
                        failures.push(format!("fan-in {w} / {}: {e}", col.name));
                    }
                }
            }
        }
    }
    let latency = if columns.iter().any(|c| REPLICATED_COLUMNS.contains(c)) {
        let running: Vec<(BrokerKind, &Broker)> = kinds.iter().copied().zip(&brokers).collect();
        Some(latency::latency(&running, &bins.latency, &mut failures))
    } else {
        None
    };
    drop(brokers);
    let mut report = Report::new(
        results,
        failures,
        opts.clone(),
        (load_before, load_average()),
    );
    if let Some(l) = latency {
        report.table.push_str(&l);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(scale: f64, events: Option<u64>) -> Options {
        Options {
            rounds: 1,
            scale,
            build: false,
            workloads: all_workloads(),
            columns: COLUMNS.to_vec(),
            events,
            storm: None,
        }
    }

    #[test]
    fn events_per_publisher_scale_with_a_burst_floor() {
        let o = opts(0.2, None);
        assert_eq!(o.events_per_publisher("fanin_bytes_10000"), 12_000);
        assert_eq!(o.events_per_publisher("fanin_floats_10000"), 2_000);
        assert_eq!(o.events_per_publisher("fanin_bytes_100000"), 300);
        assert_eq!(o.events_per_publisher("fanin_data_1000000"), 30);
        assert_eq!(
            opts(0.001, None).events_per_publisher("fanin_data_1000000"),
            1
        );
        let o = opts(2.0, None);
        assert_eq!(o.events_per_publisher("fanin_bytes_10000"), 20_000);
        // More than 40,000 events in all at any scale.
        assert!(4 * opts(0.05, None).events_per_publisher("fanin_bytes_10000") > 40_000);
        // An explicit count wins everywhere.
        let o = opts(0.2, Some(7));
        assert_eq!(o.events_per_publisher("fanin_bytes_10000"), 7);
        assert_eq!(o.events_per_publisher("fanin_data_1000000"), 7);
    }

    #[test]
    fn columns_are_selected_by_name_client_or_broker() {
        let names = |s: &str| -> Vec<&str> {
            let sel: Vec<String> = s.split(',').map(String::from).collect();
            select_columns(&sel)
                .unwrap()
                .iter()
                .map(|c| c.name)
                .collect()
        };
        assert_eq!(
            names("ice-cpp"),
            [
                "floe-storm/ice-cpp",
                "icestorm/ice-cpp",
                "ice-relay/ice-cpp"
            ]
        );
        assert_eq!(
            names("floe-storm,icestorm"),
            [
                "floe-storm",
                "icestorm",
                "floe-storm/ice-cpp",
                "icestorm/ice-cpp"
            ]
        );
        assert_eq!(
            names("raw-relay,ice-relay/ice-cpp"),
            ["raw-relay", "ice-relay/ice-cpp"]
        );
        assert!(select_columns(&["nope".to_string()]).is_err());
    }

    #[test]
    fn every_row_finds_its_columns() {
        for client in ROW_CLIENTS {
            let fs = column_of(BrokerKind::FloeStorm, client).unwrap();
            assert_eq!((fs.broker, fs.client), (BrokerKind::FloeStorm, client));
            assert_eq!(
                column_of(BrokerKind::IceStorm, client).unwrap().client,
                client
            );
            assert_eq!(
                column_of(BrokerKind::IceRelay, client).unwrap().client,
                client
            );
            // The raw relay has its own client, in every row.
            assert_eq!(
                column_of(BrokerKind::RawRelay, client).unwrap().name,
                "raw-relay"
            );
        }
        assert!(column_of(BrokerKind::QueuedRelay, Client::IceCpp).is_none());
        let mut names: Vec<&str> = all_columns().map(|c| c.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), COLUMNS.len() + REPLICATED_COLUMNS.len());
        // Replicated brokers are found by their client's rows too.
        assert_eq!(
            column_of(BrokerKind::IceStormReplicated, Client::IceCpp)
                .unwrap()
                .name,
            "icestorm-x3/ice-cpp"
        );
        assert_eq!(message_size("fanin_data_1000000"), 1_000_000);
        assert_eq!(all_workloads().len(), 9);
    }
}
