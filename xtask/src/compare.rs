//! `cargo xtask compare`: floe side by side with Ice for C++ 3.7, Java
//! RMI, a raw TCP socket and tonic (gRPC), in one run on one machine.
//!
//! The flags are [`Args`] ([`options`]). Every pair (server + client,
//! [`process::Pair`]) is built in release ([`build`]): floe's and the raw
//! socket's programs are the floe-bench crate (`benches/programs/`), the
//! others are in `benches/cpp/`, `benches/java/` and `benches/tonic/`. One server per implementation listens on a free loopback
//! port for the whole run. Each round runs every workload once per
//! implementation, one client process per (workload, implementation), in
//! an order that rotates every round (floe, floe-ct, ..., ice-cpp, rmi,
//! raw, ..., then floe-ct, ..., ice-cpp, rmi, raw, ..., floe) so slow
//! drifts of a noisy machine hit every column alike. The medians over the rounds are compared
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
mod options;
mod process;
mod report;
mod transport;

use std::time::Duration;

use doc::{document, machine, rmi_comparison, runtime_comparison};
pub use options::Args;
use options::{Mode, Options};
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

/// glibc malloc settings every bench process runs with (unless
/// `--default-malloc`): fixed mmap and trim thresholds. With glibc's
/// dynamic ones, whether a freed 0.1–10 MB message returns its pages to the
/// kernel (to be faulted in again, zeroed, by the next message) depends on
/// the order of earlier allocations, not on the RPC stack being measured:
/// measured on the 1 MB CODAC rows, the servers took 350–500 page faults
/// per message one way and about 5 the other.
const MALLOC_TUNABLES: &str =
    "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864";

/// Runs the comparison `args` ask for.
pub fn run(args: Args) -> Result<(), DynError> {
    let opts = match args.mode()? {
        Mode::Grid(grid) => return grid::run(&grid),
        Mode::Compare(opts) => opts,
    };
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
    let rmi_note = rmi_comparison(&results);
    println!("{rmi_note}");
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
            &rmi_note,
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
pub fn idle_client(port: u16, connections: usize) -> Result<(), DynError> {
    idle::client(port, connections)
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
