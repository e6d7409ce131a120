//! `cargo xtask compare --grid` / `--glacier2`: what IceGrid and Glacier2
//! cost per call, measured with the real Ice 3.7 services on loopback.
//!
//! - **IceGrid** (`--grid`): floe's `grid_server` registered with an
//!   `icegridregistry`; the bench clients (floe's and Ice for C++'s) call
//!   it through a direct proxy (`a:tcp -h 127.0.0.1 -p P`) and through an
//!   indirect one (`a@GridBench`, resolved once through the locator, then
//!   cached). Once resolved, an indirect proxy should cost nothing per
//!   call: the `indirect/direct` ratio should be 1 within noise.
//! - **Glacier2** (`--grid` and `--glacier2`): each client (floe's and Ice
//!   for C++'s) calls its own implementation's bench server directly and
//!   through one `glacier2router` (a session per client process, Ice's
//!   default router settings: buffered mode), for the latency and the
//!   500 KB byte-sequence workloads.
//!
//! Every round runs each (workload, column) once, in an order rotated
//! every round; the medians over the rounds are printed as tables and
//! written to `target/compare-grid.json`. Not part of CI.

mod services;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use super::build;
use super::process::{run_program, Server};
use super::report::{median, Cell};
use crate::{build_programs, release_dir, workspace_root, DynError};

/// A `--grid`/`--glacier2` run (from `cargo xtask compare`'s flags).
#[derive(Debug)]
pub struct Options {
    /// The IceGrid section too (`--grid`), not only Glacier2's.
    pub grid: bool,
    /// Alternating rounds.
    pub rounds: usize,
    /// `BENCH_SCALE` for the clients.
    pub scale: f64,
    /// Build the programs first.
    pub build: bool,
}

/// One column: a bench client against a port, with extra arguments.
struct Column {
    name: &'static str,
    client: PathBuf,
    port: u16,
    args: Vec<String>,
    /// The columns its time is compared with (ratio = this / that).
    compare_to: &'static [&'static str],
}

/// A table of the report: columns and the workloads they run.
struct Section {
    title: &'static str,
    workloads: &'static [&'static str],
    columns: Vec<Column>,
}

/// Runs the comparison.
pub fn run(opts: &Options) -> Result<(), DynError> {
    let root = workspace_root();
    if opts.build {
        build_programs(
            &["bench_server", "bench_client"],
            &["-p", "floe", "--example", "grid_server"],
        )?;
    }
    let cpp = build::cpp_pair(opts.build)?;
    let floe_pair = build::floe_pair();
    let floe_client = floe_pair.client.clone();
    let logs = root.join("target/compare-logs");
    std::fs::create_dir_all(&logs)?;
    let dir = services::run_dir(&logs)?;

    // The services and servers, killed when dropped.
    let registry = services::Registry::start(&dir, &logs.join("grid-registry.log"))?;
    let (_grid, grid_port) = services::grid_server(
        &release_dir().join("examples/grid_server"),
        &registry,
        &logs.join("grid-server.log"),
    )?;
    let (_router, router) = services::router(&logs.join("grid-glacier2router.log"))?;
    let floe_server = Server::start(&floe_pair, &logs.join("grid-floe-server.log"))?;
    let cpp_server = Server::start(&cpp, &logs.join("grid-ice-cpp-server.log"))?;

    let indirect = vec![
        format!("--Ice.Default.Locator={}", registry.locator()),
        format!("--Bench.AdapterId={}", services::ADAPTER_ID),
    ];
    let routed = vec![format!("--Bench.Glacier2Router={router}")];
    let column = |name, client: &PathBuf, port, args: &[String], compare_to| Column {
        name,
        client: client.clone(),
        port,
        args: args.to_vec(),
        compare_to,
    };
    let mut sections = Vec::new();
    if opts.grid {
        sections.push(Section {
            title: "IceGrid: a resolved indirect proxy vs a direct one (floe's grid_server)",
            workloads: &["latency"],
            columns: vec![
                column("floe direct", &floe_client, grid_port, &[], &[]),
                column(
                    "floe indirect",
                    &floe_client,
                    grid_port,
                    &indirect,
                    &["floe direct"],
                ),
                column("ice-cpp direct", &cpp.client, grid_port, &[], &[]),
                column(
                    "ice-cpp indirect",
                    &cpp.client,
                    grid_port,
                    &indirect,
                    &["ice-cpp direct"],
                ),
            ],
        });
    }
    sections.push(Section {
        title:
            "Glacier2: routed through one glacier2router vs direct (each client to its own server)",
        workloads: &["latency", "byteseq_send", "byteseq_recv"],
        columns: vec![
            column("floe direct", &floe_client, floe_server.port, &[], &[]),
            column(
                "floe routed",
                &floe_client,
                floe_server.port,
                &routed,
                &["floe direct", "ice-cpp routed"],
            ),
            column("ice-cpp direct", &cpp.client, cpp_server.port, &[], &[]),
            column(
                "ice-cpp routed",
                &cpp.client,
                cpp_server.port,
                &routed,
                &["ice-cpp direct"],
            ),
        ],
    });

    let results = measure(&sections, opts)?;
    let mut report = String::new();
    for (i, s) in sections.iter().enumerate() {
        let _ = writeln!(report, "\n{}\n\n{}", s.title, table(s, &results[i]));
    }
    println!("{report}");
    let json_path = root.join("target/compare-grid.json");
    std::fs::write(&json_path, json(&sections, &results, opts))?;
    println!("xtask: wrote {}", json_path.display());
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Per section: workload → column → cell.
type SectionResults = BTreeMap<String, BTreeMap<String, Cell>>;

/// Runs the rounds; any failed run fails the comparison.
fn measure(sections: &[Section], opts: &Options) -> Result<Vec<SectionResults>, DynError> {
    let limit = Duration::from_secs(600);
    let mut results: Vec<SectionResults> = sections.iter().map(|_| BTreeMap::new()).collect();
    println!(
        "xtask: grid: {} round(s), BENCH_SCALE={}",
        opts.rounds, opts.scale
    );
    for round in 0..opts.rounds {
        for (si, s) in sections.iter().enumerate() {
            for w in s.workloads {
                for k in 0..s.columns.len() {
                    let c = &s.columns[(k + round) % s.columns.len()];
                    let mut cmd = Command::new(&c.client);
                    cmd.arg(c.port.to_string())
                        .arg(w)
                        .args(&c.args)
                        .env("BENCH_SCALE", opts.scale.to_string());
                    let samples = run_program(&mut cmd, c.name, limit)?;
                    let sample = samples
                        .iter()
                        .find(|x| x.workload == *w)
                        .ok_or_else(|| format!("{}: no result for {w}", c.name))?;
                    println!(
                        "  round {}/{} {w:<14} {:<17} {:>10.2} µs/call {:>9.1} Mbit/s",
                        round + 1,
                        opts.rounds,
                        c.name,
                        sample.us_per_call,
                        sample.mbit_s
                    );
                    let cell = results[si]
                        .entry(w.to_string())
                        .or_default()
                        .entry(c.name.to_string())
                        .or_default();
                    cell.us.push(sample.us_per_call);
                    cell.mbit.push(sample.mbit_s);
                    cell.calls = sample.calls;
                }
            }
        }
    }
    Ok(results)
}

/// Median time of `a` over median time of `b` for workload `w`.
fn ratio(r: &SectionResults, w: &str, a: &str, b: &str) -> Option<f64> {
    let row = r.get(w)?;
    Some(row.get(a)?.median_us()? / row.get(b)?.median_us()?)
}

/// The markdown table of one section.
fn table(s: &Section, r: &SectionResults) -> String {
    let mut t = String::from(
        "| workload | column | median µs/call | median Mbit/s | min–max µs/call | rounds | time ratio |\n\
         |---|---|---:|---:|---:|---:|---|\n",
    );
    for w in s.workloads {
        for (i, c) in s.columns.iter().enumerate() {
            let Some(cell) = r.get(*w).and_then(|row| row.get(c.name)) else {
                continue;
            };
            let min = cell.us.iter().copied().fold(f64::INFINITY, f64::min);
            let max = cell.us.iter().copied().fold(0.0, f64::max);
            let ratios: Vec<String> = c
                .compare_to
                .iter()
                .filter_map(|b| ratio(r, w, c.name, b).map(|x| format!("{x:.2} × {b}")))
                .collect();
            let _ = writeln!(
                t,
                "| {} | {} | {:.2} | {} | {min:.1}–{max:.1} | {} | {} |",
                if i == 0 { *w } else { "" },
                c.name,
                cell.median_us().unwrap_or(0.0),
                cell.median_mbit()
                    .filter(|m| *m > 0.0)
                    .map_or(String::new(), |m| format!("{m:.1}")),
                cell.us.len(),
                ratios.join("; "),
            );
        }
    }
    t
}

/// `target/compare-grid.json`: the settings, the machine and every cell.
fn json(sections: &[Section], results: &[SectionResults], opts: &Options) -> String {
    let nums = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut cells = Vec::new();
    for (s, r) in sections.iter().zip(results) {
        for (w, row) in r {
            for (c, cell) in row {
                cells.push(format!(
                    "    {{\"section\":{:?},\"workload\":{w:?},\"column\":{c:?},\"median_us\":{:.3},\"median_mbit\":{:.3},\"us\":[{}],\"mbit\":[{}]}}",
                    s.title,
                    cell.median_us().unwrap_or(0.0),
                    median(&cell.mbit).unwrap_or(0.0),
                    nums(&cell.us),
                    nums(&cell.mbit),
                ));
            }
        }
    }
    let machine: Vec<String> = super::doc::machine()
        .into_iter()
        .map(|(k, v)| format!("{k:?}:{v:?}"))
        .collect();
    format!(
        "{{\n  \"rounds\": {},\n  \"bench_scale\": {},\n  \"machine\": {{{}}},\n  \"cells\": [\n{}\n  ]\n}}\n",
        opts.rounds,
        opts.scale,
        machine.join(","),
        cells.join(",\n")
    )
}
