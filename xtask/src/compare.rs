//! `cargo xtask compare`: floe side by side with Ice for C++ 3.7, a raw
//! TCP socket and tonic (gRPC), in one run on one machine.
//!
//! Every pair (server + client, [`process::Pair`]) is built in release
//! ([`build`]); one server per implementation listens on a free loopback
//! port for the whole run. Each round runs every workload once per
//! implementation, one client process per (workload, implementation), in
//! an order that rotates every round (floe, floe-ct, floe-poll, ice-cpp,
//! raw, ..., then floe-ct, floe-poll, ice-cpp, raw, ..., floe) so slow drifts of a noisy machine hit
//! every column alike. The medians over the rounds are compared
//! ([`report`]): a table per workload, the targets met or not, then
//! `target/compare.json` and (for full runs, or with `--write-doc`)
//! `docs/performance.md`.
//!
//! Clients take `BENCH_SCALE` (a factor on their call counts); `--quick`
//! sets it to 0.05 and runs a subset once, for smoke testing.
//!
//! Transport rows (`ssl_latency`, `ssl_byteseq_{send,recv}`, `ws_latency`:
//! [`transport`]) run floe's and Ice for C++'s clients over ssl and ws
//! against servers that listen on tcp, ssl and ws; concurrency rows
//! (`pipelined_N`, `clients_N`, N = 1, 4, 16, 64) are reported as calls/s.
//! Both are part of a full run; `--transports` and `--concurrency` select
//! them alone.
//!
//! The broker fan-in comparison (floe-storm vs IceStorm with floe's and
//! Ice for C++'s clients, [`fanin`]) is part of a full run; `--fanin` runs
//! it alone and updates only its member of `target/compare.json` and its
//! section of the doc. Events lost in it fail the run.

mod build;
mod doc;
mod fanin;
mod grid;
mod idle;
mod process;
mod report;
mod transport;

use std::time::Duration;

use doc::{document, machine, runtime_comparison};
use process::run_client;
use report::{Cell, Results, CONCURRENCY_COUNTS};

use crate::{workspace_root, DynError};

/// Every workload of the bench clients, in report order.
fn all_workloads() -> Vec<String> {
    let mut w: Vec<String> = [
        "latency",
        "oneway",
        "batch",
        "byteseq_send",
        "byteseq_recv",
        "fixed_send",
        "fixed_recv",
        "strdbl_send",
        "strdbl_recv",
    ]
    .map(String::from)
    .to_vec();
    for kind in ["bytes", "floats", "data"] {
        for way in ["oneway", "twoway"] {
            for size in [10_000, 100_000, 1_000_000, 10_000_000] {
                w.push(format!("codac_{kind}_{way}_{size}"));
            }
        }
    }
    w.extend(transport::WORKLOADS.iter().map(|s| s.to_string()));
    w.extend(concurrency_workloads());
    w.push(IDLE.to_string());
    w
}

/// The concurrency rows: `pipelined_N` and `clients_N`.
fn concurrency_workloads() -> Vec<String> {
    ["pipelined", "clients"]
        .iter()
        .flat_map(|kind| {
            CONCURRENCY_COUNTS
                .iter()
                .map(move |n| format!("{kind}_{n}"))
        })
        .collect()
}

/// The `--quick` subset.
const QUICK_WORKLOADS: &[&str] = &[
    "latency",
    "oneway",
    "batch",
    "byteseq_send",
    "byteseq_recv",
    "fixed_send",
    "strdbl_recv",
    "codac_data_twoway_100000",
    IDLE,
];

/// The workload measuring server memory per idle connection ([`idle`]);
/// run by xtask itself, not by the bench clients.
const IDLE: &str = "idle";

const USAGE: &str = "\
usage: cargo xtask compare [--quick] [--rounds N] [--workloads W[,W...]]
                           [--transports] [--concurrency]
                           [--impls I[,I...]] [--scale F] [--write-doc] [--no-build]
       cargo xtask compare --fanin [--rounds N] [--workloads W[,W...]] [--scale F]
                           [--impls C[,C...]] [--events N] [--floe-storm PATH]
                           [--replicated] [--write-doc] [--no-build]
       cargo xtask compare --grid|--glacier2 [--rounds N] [--scale F] [--no-build]

  --quick       a subset, 1 round, BENCH_SCALE=0.05 (smoke test)
  --rounds N    rounds of alternating runs (default 5; 1 with --quick)
  --workloads   only these workloads (names as printed by the clients)
  --transports  the ssl and ws rows (ssl_latency, ssl_byteseq_send,
                ssl_byteseq_recv, ws_latency; floe and ice-cpp columns), alone
                or added to --workloads/--concurrency
  --concurrency the concurrency rows (pipelined_N: N calls in flight on one
                connection; clients_N: N connections calling in a loop;
                N = 1, 4, 16, 64; calls/s), alone or added to the others
  --impls       only these columns: floe, floe-ct, floe-poll, floe-traced,
                ice-cpp, raw, raw-spin, raw-tokio, tonic
  --scale F     BENCH_SCALE for the clients (factor on their call counts)
  --write-doc   write docs/performance.md even for a partial run
  --no-build    use the binaries already built
  --default-malloc  run every server and client with glibc malloc's own
                dynamic mmap/trim thresholds (default: the fixed ones of
                MALLOC_TUNABLES, the same for every implementation)
  --fanin       only the broker fan-in comparison (floe-storm vs IceStorm 3.7
                and a raw TCP relay, 4 publishers -> 1 subscriber, with floe's
                and an Ice for C++ client; workloads fanin_{bytes,floats,data}_
                {10000,100000,1000000}); a full run includes it. Exits non-zero
                if any column lost events. With --fanin, --impls picks columns:
                floe-storm, icestorm, raw-relay, ice-relay, queued-relay,
                floe-storm/ice-cpp, icestorm/ice-cpp, ice-relay/ice-cpp, or a
                client (floe, ice-cpp, raw) or broker name for all of its columns
  --replicated  fan-in: three replicas of each broker (floe-storm-x3,
                icestorm-x3, with floe's and the Ice C++ client) beside a single
                floe-storm; targets: replicated floe-storm >= 0.9x single and
                >= 1.5x replicated IceStorm; then the subscribe/unsubscribe
                latency of every broker run. Workloads default to
                fanin_bytes_10000,fanin_bytes_100000. Not part of a full run;
                --impls may name the replicated columns instead
  --events N    fan-in: events per publisher for every workload (default: 10,000
                / 1,500 / 150 by size times --scale, and at least 12,000 for
                fanin_bytes_10000); also read from FANIN_EVENTS
  --floe-storm PATH  fan-in: measure this floe-storm binary (e.g. another
                version's) instead of building target/release/floe-storm
  --grid        IceGrid and Glacier2 with the real services: a resolved indirect
                proxy vs a direct one, and Glacier2-routed vs direct calls, floe
                and Ice for C++ (--glacier2: that section only); writes
                target/compare-grid.json";

/// glibc malloc settings every bench process runs with (unless
/// `--default-malloc`): fixed mmap and trim thresholds. With glibc's
/// dynamic ones, whether a freed 0.1–10 MB message returns its pages to the
/// kernel (to be faulted in again, zeroed, by the next message) depends on
/// the order of earlier allocations, not on the RPC stack being measured:
/// measured on the 1 MB CODAC rows, the servers took 350–500 page faults
/// per message one way and about 5 the other.
const MALLOC_TUNABLES: &str =
    "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864";

/// Command-line options.
#[derive(Debug)]
struct Options {
    quick: bool,
    rounds: usize,
    workloads: Vec<String>,
    impls: Option<Vec<String>>,
    scale: f64,
    write_doc: bool,
    build: bool,
    default_malloc: bool,
    /// Run the fan-in comparison (with these workloads).
    fanin: Option<Vec<String>>,
    /// The fan-in columns (`--impls` with `--fanin`; all otherwise).
    fanin_columns: Vec<fanin::Column>,
    /// Fan-in events per publisher (`--events`, `FANIN_EVENTS`).
    events: Option<u64>,
    /// The floe-storm binary the fan-in measures (`--floe-storm`).
    storm: Option<std::path::PathBuf>,
    /// Run the client/server comparison.
    pairs: bool,
}

impl Options {
    fn parse(args: &[String]) -> Result<Options, DynError> {
        let mut quick = false;
        let mut rounds = None;
        let mut workloads: Option<Vec<String>> = None;
        let mut impls: Option<Vec<String>> = None;
        let mut scale = None;
        let mut write_doc = false;
        let mut build = true;
        let mut default_malloc = false;
        let mut fanin_only = false;
        let mut replicated = false;
        let mut groups: Vec<String> = Vec::new();
        let mut storm = None;
        let mut events = match std::env::var("FANIN_EVENTS") {
            Ok(v) => Some(
                v.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or("FANIN_EVENTS needs a count ≥ 1")?,
            ),
            Err(_) => None,
        };
        let mut it = args.iter().peekable();
        // Values of a list flag: comma- or space-separated, up to the next flag.
        let list = |it: &mut std::iter::Peekable<std::slice::Iter<String>>| {
            let mut v = Vec::new();
            while let Some(a) = it.next_if(|a| !a.starts_with("--")) {
                v.extend(a.split(',').filter(|s| !s.is_empty()).map(String::from));
            }
            v
        };
        while let Some(a) = it.next() {
            match a.as_str() {
                "--quick" => quick = true,
                "--write-doc" => write_doc = true,
                "--no-build" => build = false,
                "--default-malloc" => default_malloc = true,
                "--fanin" => fanin_only = true,
                "--replicated" => {
                    fanin_only = true;
                    replicated = true;
                }
                "--transports" => groups.extend(transport::WORKLOADS.iter().map(|s| s.to_string())),
                "--concurrency" => groups.extend(concurrency_workloads()),
                "--rounds" => {
                    let n = it.next().and_then(|n| n.parse::<usize>().ok());
                    rounds = Some(n.filter(|n| *n > 0).ok_or("--rounds needs a count ≥ 1")?);
                }
                "--scale" => {
                    let f = it.next().and_then(|n| n.parse::<f64>().ok());
                    scale = Some(f.filter(|f| *f > 0.0).ok_or("--scale needs a factor > 0")?);
                }
                "--floe-storm" => {
                    let path = it.next().ok_or("--floe-storm needs a path")?;
                    storm = Some(std::path::PathBuf::from(path));
                }
                "--events" => {
                    let n = it.next().and_then(|n| n.parse::<u64>().ok());
                    events = Some(n.filter(|n| *n > 0).ok_or("--events needs a count ≥ 1")?);
                }
                "--workloads" => workloads = Some(list(&mut it)),
                "--impls" => impls = Some(list(&mut it)),
                "-h" | "--help" => return Err(USAGE.into()),
                other => return Err(format!("unknown option `{other}`\n\n{USAGE}").into()),
            }
        }
        if fanin_only {
            let known = fanin::all_workloads();
            let w = workloads.unwrap_or_else(|| {
                if replicated {
                    vec!["fanin_bytes_10000".into(), "fanin_bytes_100000".into()]
                } else {
                    known.clone()
                }
            });
            if let Some(bad) = w.iter().find(|w| !known.contains(w)) {
                return Err(format!("unknown fan-in workload `{bad}`").into());
            }
            let fanin_columns = match &impls {
                Some(sel) => fanin::select_columns(sel)?,
                None if replicated => fanin::replicated_columns(),
                None => fanin::COLUMNS.to_vec(),
            };
            return Ok(Options {
                quick,
                rounds: rounds.unwrap_or(if quick { 1 } else { 5 }),
                workloads: Vec::new(),
                impls: None,
                scale: scale.unwrap_or(if quick { 0.05 } else { 1.0 }),
                write_doc,
                build,
                fanin: Some(w),
                fanin_columns,
                events,
                storm,
                pairs: false,
                default_malloc,
            });
        }
        let known = all_workloads();
        if !groups.is_empty() {
            let mut w = workloads.unwrap_or_default();
            w.extend(groups);
            // In report order, each once.
            workloads = Some(known.iter().filter(|k| w.contains(k)).cloned().collect());
        }
        let workloads = match workloads {
            Some(w) => {
                if let Some(bad) = w.iter().find(|w| !known.contains(w)) {
                    return Err(format!("unknown workload `{bad}`").into());
                }
                w
            }
            None if quick => QUICK_WORKLOADS.iter().map(|s| s.to_string()).collect(),
            None => known.clone(),
        };
        // The doc describes the whole picture: only full runs rewrite it
        // unless asked.
        let full = !quick && workloads == known && impls.is_none();
        let write_doc = write_doc || full;
        Ok(Options {
            quick,
            rounds: rounds.unwrap_or(if quick { 1 } else { 5 }),
            workloads,
            impls,
            scale: scale.unwrap_or(if quick { 0.05 } else { 1.0 }),
            write_doc,
            build,
            default_malloc,
            fanin: full.then(fanin::all_workloads),
            fanin_columns: fanin::COLUMNS.to_vec(),
            events,
            storm,
            pairs: true,
        })
    }
}

/// Runs the comparison.
pub fn run(args: &[String]) -> Result<(), DynError> {
    if args.iter().any(|a| a == "--grid" || a == "--glacier2") {
        return grid::run(args);
    }
    let opts = Options::parse(args)?;
    if !opts.default_malloc {
        // Inherited by every server and client started below.
        std::env::set_var("GLIBC_TUNABLES", MALLOC_TUNABLES);
    }
    if !opts.pairs {
        return run_fanin_only(&opts);
    }
    let mut pairs = build::pairs(opts.build)?;
    if let Some(only) = &opts.impls {
        pairs.retain(|p| only.iter().any(|o| o == p.name));
    }
    if pairs.is_empty() {
        return Err("no implementation to run".into());
    }
    let names: Vec<&str> = pairs.iter().map(|p| p.name).collect();
    let logs = workspace_root().join("target/compare-logs");
    std::fs::create_dir_all(&logs)?;
    let log_of = |name: &str| logs.join(format!("{name}-server.log"));

    // One server per implementation for the whole run (with ssl and ws
    // endpoints when the run has transport rows); the guards kill them
    // however this function ends.
    let transports = transport::Setup::new(&opts.workloads)?;
    let mut servers = Vec::new();
    for p in &pairs {
        servers.push(transports.start(p, &log_of(p.name))?);
    }
    let limit = Duration::from_secs(if opts.quick { 120 } else { 600 });
    let mut results = Results::new();
    let mut idle_results = report::IdleResults::new();
    let mut failures = Vec::new();
    println!(
        "xtask: {} round(s) × {} workload(s) × [{}], BENCH_SCALE={}",
        opts.rounds,
        opts.workloads.len(),
        names.join(", "),
        opts.scale
    );
    for round in 0..opts.rounds {
        for w in &opts.workloads {
            for k in 0..pairs.len() {
                let i = (k + round) % pairs.len();
                let pair = &pairs[i];
                if !pair.supports(w) {
                    continue;
                }
                if w == IDLE {
                    let n = ((idle::CONNECTIONS as f64 * opts.scale) as usize)
                        .clamp(100, idle::CONNECTIONS);
                    match idle::measure(pair, n, &log_of(pair.name)) {
                        Ok(s) => {
                            println!(
                                "  round {}/{} {w:<28} {:<8} {:>9.0} B/conn   (RSS {} → {} KiB, {} connections)",
                                round + 1,
                                opts.rounds,
                                pair.name,
                                s.bytes_per_connection(),
                                s.before_kib,
                                s.after_kib,
                                s.connections
                            );
                            idle_results
                                .entry(pair.name.to_string())
                                .or_default()
                                .push(s.bytes_per_connection());
                        }
                        Err(e) => {
                            println!(
                                "  round {}/{} {w} {}: {e}",
                                round + 1,
                                opts.rounds,
                                pair.name
                            );
                            failures.push(format!("{w} / {}: {e}", pair.name));
                        }
                    }
                    continue;
                }
                if !servers[i].0.is_running() {
                    println!("xtask: {} server died; restarting", pair.name);
                    servers[i] = transports.start(pair, &log_of(pair.name))?;
                }
                let (args, client_w) = transports.client(w, servers[i].1.as_ref());
                let run = run_client(
                    pair,
                    servers[i].0.port,
                    &args,
                    &[client_w],
                    opts.scale,
                    limit,
                );
                match run {
                    Ok(samples) => {
                        for s in samples.iter().filter(|s| s.workload == client_w) {
                            if !pair.reports(&s.implementation) {
                                println!(
                                    "xtask: warning: {} client reports impl `{}`",
                                    pair.name, s.implementation
                                );
                            }
                            println!(
                                "  round {}/{} {w:<28} {:<8} {:>12.2} µs/call {:>10.1} Mbit/s",
                                round + 1,
                                opts.rounds,
                                pair.name,
                                s.us_per_call,
                                s.mbit_s
                            );
                            let cell: &mut Cell = results
                                .entry(w.clone())
                                .or_default()
                                .entry(pair.name.to_string())
                                .or_default();
                            cell.us.push(s.us_per_call);
                            cell.mbit.push(s.mbit_s);
                            cell.calls_s.extend(s.calls_s);
                            cell.calls = s.calls;
                        }
                    }
                    Err(e) => {
                        println!(
                            "  round {}/{} {w} {}: {e}",
                            round + 1,
                            opts.rounds,
                            pair.name
                        );
                        failures.push(format!("{w} / {}: {e}", pair.name));
                    }
                }
            }
        }
    }
    drop(servers);
    let fanin = match &opts.fanin {
        Some(w) => match fanin::run(&fanin_options(&opts, w)) {
            Ok(r) => {
                failures.extend(r.errors());
                Some(r)
            }
            Err(e) => {
                failures.push(format!("fan-in: {e}"));
                None
            }
        },
        None => None,
    };

    let targets = report::targets(&opts.workloads);
    let mut table = if results.is_empty() {
        String::new()
    } else {
        report::table(&results, &opts.workloads, &names)
    };
    let concurrency = report::concurrency_table(&results, &opts.workloads, &names);
    if !concurrency.is_empty() {
        table.push_str("\nConcurrency (calls/s, higher is better):\n\n");
        table.push_str(&concurrency);
    }
    let mut targets_table = report::targets_table(&results, &targets);
    if !idle_results.is_empty() {
        targets_table.push_str(&report::idle_target_rows(&idle_results, idle::TARGET_BYTES));
        if !table.is_empty() {
            table.push('\n');
        }
        table.push_str(&report::idle_table(&idle_results, &names));
    }
    println!("\n{table}\n{targets_table}");
    let runtime_note = runtime_comparison(&results);
    println!("{runtime_note}");
    if let Some(f) = &fanin {
        println!("\nFan-in (floe-storm vs IceStorm):\n\n{}", f.table);
    }
    let machine = machine();
    let settings = vec![
        ("rounds".to_string(), opts.rounds.to_string()),
        ("bench_scale".to_string(), opts.scale.to_string()),
        ("quick".to_string(), opts.quick.to_string()),
        ("impls".to_string(), names.join(",")),
        (
            "glibc_tunables".to_string(),
            if opts.default_malloc {
                "default".to_string()
            } else {
                MALLOC_TUNABLES.to_string()
            },
        ),
    ];
    let json_path = workspace_root().join("target/compare.json");
    let mut json = report::json(&results, &idle_results, &targets, &machine, &settings);
    if let Some(f) = &fanin {
        json = fanin::replace_json_member(&json, &f.json);
    }
    std::fs::write(&json_path, json)?;
    println!("xtask: wrote {}", json_path.display());
    if opts.write_doc {
        let mut doc = document(
            &opts,
            &machine,
            &targets_table,
            &table,
            &runtime_note,
            &failures,
        );
        if let Some(f) = &fanin {
            doc = fanin::replace_section(&doc, &fanin::document_section(f));
        }
        let path = workspace_root().join("docs/performance.md");
        std::fs::create_dir_all(workspace_root().join("docs"))?;
        std::fs::write(&path, doc)?;
        println!("xtask: wrote {}", path.display());
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} run(s) failed:\n  {}",
            failures.len(),
            failures.join("\n  ")
        )
        .into())
    }
}

/// `xtask __idle-client PORT N`: the connection holder of the `idle`
/// workload (see [`idle`]).
pub fn idle_client(args: &[String]) -> Result<(), DynError> {
    idle::client(args)
}

/// The fan-in options of a compare run.
fn fanin_options(opts: &Options, workloads: &[String]) -> fanin::Options {
    fanin::Options {
        rounds: opts.rounds,
        scale: opts.scale,
        build: opts.build,
        workloads: workloads.to_vec(),
        columns: opts.fanin_columns.clone(),
        events: opts.events,
        storm: opts.storm.clone(),
    }
}

/// `--fanin`: the fan-in comparison alone; updates its member of
/// `target/compare.json` and (with `--write-doc`) its section of
/// `docs/performance.md`, leaving the rest as the last full run wrote it.
fn run_fanin_only(opts: &Options) -> Result<(), DynError> {
    let workloads = opts.fanin.clone().unwrap_or_default();
    let report = fanin::run(&fanin_options(opts, &workloads))?;
    println!("\n{}", report.table);
    let json_path = workspace_root().join("target/compare.json");
    let old = std::fs::read_to_string(&json_path).unwrap_or_else(|_| "{\n}\n".into());
    std::fs::write(&json_path, fanin::replace_json_member(&old, &report.json))?;
    println!("xtask: wrote {}", json_path.display());
    if opts.write_doc {
        let path = workspace_root().join("docs/performance.md");
        let old = std::fs::read_to_string(&path).unwrap_or_else(|_| "# floe performance\n".into());
        let section = fanin::document_section(&report);
        std::fs::write(&path, fanin::replace_section(&old, &section))?;
        println!("xtask: wrote {}", path.display());
    }
    let errors = report.errors();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "fan-in: {} failed run(s) or column(s) that lost events:\n  {}",
            errors.len(),
            errors.join("\n  ")
        )
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn quick_defaults() {
        let o = Options::parse(&args("--quick")).unwrap();
        assert_eq!(o.rounds, 1);
        assert_eq!(o.scale, 0.05);
        assert!(!o.write_doc);
        assert_eq!(o.workloads.len(), QUICK_WORKLOADS.len());
    }

    #[test]
    fn full_run_writes_the_doc() {
        let o = Options::parse(&[]).unwrap();
        assert_eq!(o.rounds, 5);
        assert!(o.write_doc);
        assert_eq!(o.workloads.len(), 9 + 24 + 4 + 8 + 1);
        assert_eq!(o.fanin.as_ref().map(Vec::len), Some(9));
        assert!(o.pairs);
    }

    fn o_columns(a: &str) -> usize {
        Options::parse(&args(a)).unwrap().fanin_columns.len()
    }

    #[test]
    fn fanin_alone() {
        let o = Options::parse(&args("--fanin --rounds 3")).unwrap();
        assert!(!o.pairs);
        assert_eq!(o.rounds, 3);
        assert!(!o.write_doc);
        assert_eq!(o.fanin.as_ref().map(Vec::len), Some(9));
        let o = Options::parse(&args("--fanin --workloads fanin_bytes_10000")).unwrap();
        assert_eq!(o.fanin.unwrap(), ["fanin_bytes_10000"]);
        assert!(Options::parse(&args("--fanin --workloads latency")).is_err());
        assert_eq!(o_columns("--fanin"), fanin::COLUMNS.len());
        assert_eq!(o_columns("--fanin --impls ice-cpp"), 3);
        assert_eq!(o_columns("--fanin --impls floe-storm icestorm"), 4);
        let o = Options::parse(&args("--fanin --events 12000")).unwrap();
        assert_eq!(o.events, Some(12000));
        assert!(Options::parse(&args("--fanin --impls nope")).is_err());
        assert!(Options::parse(&args("--fanin --events 0")).is_err());
        // The replicated columns only when asked.
        let o = Options::parse(&args("--replicated")).unwrap();
        assert!(!o.pairs);
        assert_eq!(
            o.fanin.unwrap(),
            ["fanin_bytes_10000", "fanin_bytes_100000"]
        );
        let names: Vec<&str> = o.fanin_columns.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "floe-storm",
                "floe-storm/ice-cpp",
                "floe-storm-x3",
                "icestorm-x3",
                "floe-storm-x3/ice-cpp",
                "icestorm-x3/ice-cpp"
            ]
        );
        assert_eq!(
            o_columns("--fanin --impls floe-storm-x3,icestorm-x3/ice-cpp"),
            3
        );
        // A partial client/server run does not include the fan-in.
        assert!(Options::parse(&args("--workloads latency"))
            .unwrap()
            .fanin
            .is_none());
    }

    #[test]
    fn transport_and_concurrency_groups() {
        let o = Options::parse(&args("--transports --rounds 3")).unwrap();
        assert_eq!(
            o.workloads,
            [
                "ssl_latency",
                "ssl_byteseq_send",
                "ssl_byteseq_recv",
                "ws_latency"
            ]
        );
        assert!(!o.write_doc);
        let o = Options::parse(&args("--concurrency --workloads latency")).unwrap();
        assert_eq!(o.workloads.len(), 1 + 8);
        assert_eq!(o.workloads[0], "latency");
        assert!(o.workloads.contains(&"clients_64".to_string()));
        let o = Options::parse(&args("--transports --concurrency")).unwrap();
        assert_eq!(o.workloads.len(), 12);
    }

    #[test]
    fn workload_lists_take_commas_and_spaces() {
        let o = Options::parse(&args("--workloads latency,oneway batch --rounds 3")).unwrap();
        assert_eq!(o.workloads, ["latency", "oneway", "batch"]);
        assert_eq!(o.rounds, 3);
        assert!(!o.write_doc);
        assert!(Options::parse(&args("--workloads nope")).is_err());
        assert!(Options::parse(&args("--rounds 0")).is_err());
    }
}
