//! The command line of `cargo xtask compare` ([`Args`], parsed by clap)
//! and what it asks of a run ([`Options`]; `--grid`/`--glacier2` are
//! [`grid::Options`] instead).

use std::path::PathBuf;

use super::{all_workloads, concurrency_workloads, fanin, grid, transport, QUICK_WORKLOADS};
use crate::DynError;

/// `cargo xtask compare`'s flags.
#[derive(clap::Args, Debug, Default)]
#[command(
    about = "floe vs Ice for C++ 3.7, Java RMI, tonic and a raw socket on loopback, \
             medians of alternating rounds",
    long_about = "floe vs Ice for C++ 3.7, Java RMI, tonic (gRPC) and a raw TCP socket on \
                  127.0.0.1: every implementation's bench server runs for the whole \
                  comparison, and each round runs every workload once per implementation, \
                  in an order that rotates every round. Medians over the rounds, the \
                  ratios and the project's targets are printed and written to \
                  target/compare.json and (full runs, or --write-doc) docs/performance.md. \
                  A full run (no flag) also runs the floe-storm vs IceStorm fan-in \
                  comparison. Not run by CI.",
    after_long_help = "Columns (--impls): floe, floe-ct, floe-poll, floe-traced, ice-cpp, rmi, \
                       raw, raw-spin, raw-tokio, tonic.\n\
                       Fan-in columns (--fanin --impls): floe-storm, icestorm, raw-relay, \
                       ice-relay, queued-relay, floe-storm/ice-cpp, icestorm/ice-cpp, \
                       ice-relay/ice-cpp, or a client (floe, ice-cpp, raw) or broker name \
                       for all of its columns; floe-storm-x3, icestorm-x3, \
                       floe-storm-x3/ice-cpp, icestorm-x3/ice-cpp by name only \
                       (or --replicated).\n\n\
                       Examples:\n  \
                       cargo xtask compare --quick\n  \
                       cargo xtask compare --workloads latency,byteseq_send,byteseq_recv --rounds 3\n  \
                       cargo xtask compare --fanin --impls floe-storm icestorm --events 12000\n  \
                       cargo xtask compare --glacier2 --rounds 3"
)]
pub struct Args {
    /// A subset of the workloads, 1 round, BENCH_SCALE=0.05 (smoke test)
    #[arg(long)]
    pub quick: bool,
    /// Rounds of alternating runs [default: 5; 1 with --quick]
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    pub rounds: Option<usize>,
    /// Only these workloads (names as the clients print them), comma- or
    /// space-separated; with --fanin, fan-in workloads
    /// (fanin_{bytes,floats,data}_{10000,100000,1000000})
    #[arg(long, value_name = "W", num_args = 1.., value_delimiter = ',')]
    pub workloads: Option<Vec<String>>,
    /// The ssl and ws rows (ssl_latency, ssl_byteseq_send, ssl_byteseq_recv,
    /// ws_latency; floe and ice-cpp columns), alone or added to
    /// --workloads/--concurrency
    #[arg(long)]
    pub transports: bool,
    /// The concurrency rows (pipelined_N: N calls in flight on one
    /// connection; clients_N: N connections calling in a loop; N = 1, 4, 16,
    /// 64; calls/s), alone or added to the others
    #[arg(long)]
    pub concurrency: bool,
    /// Only these columns (see below), comma- or space-separated
    #[arg(long, value_name = "I", num_args = 1.., value_delimiter = ',')]
    pub impls: Option<Vec<String>>,
    /// BENCH_SCALE for the clients: a factor on their call counts
    /// [default: 1; 0.05 with --quick]
    #[arg(long, value_name = "F", value_parser = positive_factor)]
    pub scale: Option<f64>,
    /// Write docs/performance.md even for a partial run
    #[arg(long)]
    pub write_doc: bool,
    /// Use the binaries already built
    #[arg(long)]
    pub no_build: bool,
    /// Run every server and client with glibc malloc's own dynamic mmap/trim
    /// thresholds (default: the fixed ones of MALLOC_TUNABLES, the same for
    /// every implementation)
    #[arg(long)]
    pub default_malloc: bool,
    /// Only the broker fan-in comparison (floe-storm vs IceStorm 3.7 and a
    /// raw TCP relay, 4 publishers -> 1 subscriber, with floe's and an Ice
    /// for C++ client); exits non-zero if any column lost events
    #[arg(long)]
    pub fanin: bool,
    /// Fan-in: events per publisher for every workload (default: 10,000 /
    /// 1,500 / 150 by size times --scale, at least 12,000 for
    /// fanin_bytes_10000); also read from FANIN_EVENTS
    #[arg(long, value_name = "N", value_parser = at_least_one_event)]
    pub events: Option<u64>,
    /// Fan-in: measure this floe-storm binary (e.g. another version's)
    /// instead of building target/release/floe-storm
    #[arg(long, value_name = "PATH")]
    pub floe_storm: Option<PathBuf>,
    /// Fan-in (implies --fanin): three replicas of each broker
    /// (floe-storm-x3, icestorm-x3, with floe's and the Ice C++ client)
    /// beside a single floe-storm; targets: replicated floe-storm >= 0.9x
    /// single and >= 1.5x replicated IceStorm; then the
    /// subscribe/unsubscribe latency of every broker run. Workloads default
    /// to fanin_bytes_10000,fanin_bytes_100000. Not part of a full run;
    /// --impls may name the replicated columns instead
    #[arg(long)]
    pub replicated: bool,
    /// IceGrid and Glacier2 with the real services: a resolved indirect
    /// proxy vs a direct one, and Glacier2-routed vs direct calls, floe and
    /// Ice for C++; writes target/compare-grid.json (takes --rounds,
    /// --scale, --no-build)
    #[arg(long, conflicts_with_all = GRID_CONFLICTS)]
    pub grid: bool,
    /// The Glacier2 section of --grid alone
    #[arg(long, conflicts_with_all = GRID_CONFLICTS)]
    pub glacier2: bool,
}

/// The flags `--grid` and `--glacier2` do not take.
const GRID_CONFLICTS: [&str; 11] = [
    "quick",
    "workloads",
    "transports",
    "concurrency",
    "impls",
    "write_doc",
    "default_malloc",
    "fanin",
    "events",
    "floe_storm",
    "replicated",
];

/// A count of at least 1.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("`{s}` is not a count ≥ 1")),
    }
}

/// A count of events of at least 1.
fn at_least_one_event(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("`{s}` is not a count ≥ 1")),
    }
}

/// A finite factor above 0.
fn positive_factor(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() && f > 0.0 => Ok(f),
        _ => Err(format!("`{s}` is not a factor > 0")),
    }
}

/// What a compare run does.
pub enum Mode {
    /// The client/server comparison and/or the fan-in.
    Compare(Options),
    /// `--grid`/`--glacier2`.
    Grid(grid::Options),
}

impl Args {
    /// What these flags ask for; an error names an unknown workload or
    /// fan-in column, or a bad `FANIN_EVENTS`.
    pub fn mode(self) -> Result<Mode, DynError> {
        if self.grid || self.glacier2 {
            return Ok(Mode::Grid(grid::Options {
                grid: self.grid,
                rounds: self.rounds.unwrap_or(5),
                scale: self.scale.unwrap_or(1.0),
                build: !self.no_build,
            }));
        }
        Options::new(self).map(Mode::Compare)
    }
}

/// A compare run, as its flags ask.
#[derive(Debug)]
pub struct Options {
    /// `--quick`.
    pub quick: bool,
    /// Rounds of alternating runs.
    pub rounds: usize,
    /// The client/server workloads, in report order.
    pub workloads: Vec<String>,
    /// The columns to run (`--impls`); all when `None`.
    pub impls: Option<Vec<String>>,
    /// `BENCH_SCALE`.
    pub scale: f64,
    /// Write `docs/performance.md`.
    pub write_doc: bool,
    /// Build the programs first.
    pub build: bool,
    /// `--default-malloc`.
    pub default_malloc: bool,
    /// Run the fan-in comparison (with these workloads).
    pub fanin: Option<Vec<String>>,
    /// The fan-in columns (`--impls` with `--fanin`; all otherwise).
    pub fanin_columns: Vec<fanin::Column>,
    /// Fan-in events per publisher (`--events`, `FANIN_EVENTS`).
    pub events: Option<u64>,
    /// The floe-storm binary the fan-in measures (`--floe-storm`).
    pub storm: Option<PathBuf>,
    /// Run the client/server comparison.
    pub pairs: bool,
}

impl Options {
    fn new(args: Args) -> Result<Options, DynError> {
        let events = match args.events {
            Some(n) => Some(n),
            None => match std::env::var("FANIN_EVENTS") {
                Ok(v) => Some(at_least_one_event(&v).map_err(|e| format!("FANIN_EVENTS: {e}"))?),
                Err(_) => None,
            },
        };
        let quick = args.quick;
        let rounds = args.rounds.unwrap_or(if quick { 1 } else { 5 });
        let scale = args.scale.unwrap_or(if quick { 0.05 } else { 1.0 });
        let build = !args.no_build;
        // `a,,b` and a trailing comma name nothing.
        let nonempty =
            |v: Vec<String>| -> Vec<String> { v.into_iter().filter(|s| !s.is_empty()).collect() };
        let mut workloads = args.workloads.map(nonempty);
        let impls = args.impls.map(nonempty);
        if args.fanin || args.replicated {
            let known = fanin::all_workloads();
            let w = workloads.unwrap_or_else(|| {
                if args.replicated {
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
                None if args.replicated => fanin::replicated_columns(),
                None => fanin::COLUMNS.to_vec(),
            };
            return Ok(Options {
                quick,
                rounds,
                workloads: Vec::new(),
                impls: None,
                scale,
                write_doc: args.write_doc,
                build,
                default_malloc: args.default_malloc,
                fanin: Some(w),
                fanin_columns,
                events,
                storm: args.floe_storm,
                pairs: false,
            });
        }
        let known = all_workloads();
        let mut groups = Vec::new();
        if args.transports {
            groups.extend(transport::WORKLOADS.iter().map(|s| s.to_string()));
        }
        if args.concurrency {
            groups.extend(concurrency_workloads());
        }
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
        Ok(Options {
            quick,
            rounds,
            workloads,
            impls,
            scale,
            write_doc: args.write_doc || full,
            build,
            default_malloc: args.default_malloc,
            fanin: full.then(fanin::all_workloads),
            fanin_columns: fanin::COLUMNS.to_vec(),
            events,
            storm: args.floe_storm,
            pairs: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// `cargo xtask compare` alone, as the tests parse it.
    #[derive(Parser)]
    struct Compare {
        #[command(flatten)]
        args: Args,
    }

    fn mode(s: &str) -> Result<Mode, DynError> {
        let argv = std::iter::once("compare").chain(s.split_whitespace());
        Compare::try_parse_from(argv)?.args.mode()
    }

    fn parse(s: &str) -> Result<Options, DynError> {
        match mode(s)? {
            Mode::Compare(o) => Ok(o),
            Mode::Grid(_) => Err("a grid run".into()),
        }
    }

    fn grid(s: &str) -> Result<grid::Options, DynError> {
        match mode(s)? {
            Mode::Grid(o) => Ok(o),
            Mode::Compare(_) => Err("not a grid run".into()),
        }
    }

    #[test]
    fn quick_defaults() {
        let o = parse("--quick").unwrap();
        assert_eq!(o.rounds, 1);
        assert_eq!(o.scale, 0.05);
        assert!(!o.write_doc);
        assert_eq!(o.workloads.len(), QUICK_WORKLOADS.len());
    }

    #[test]
    fn full_run_writes_the_doc() {
        let o = parse("").unwrap();
        assert_eq!(o.rounds, 5);
        assert!(o.write_doc);
        assert_eq!(o.workloads.len(), 9 + 24 + 4 + 8 + 1);
        assert_eq!(o.fanin.as_ref().map(Vec::len), Some(9));
        assert!(o.pairs);
    }

    fn o_columns(a: &str) -> usize {
        parse(a).unwrap().fanin_columns.len()
    }

    #[test]
    fn fanin_alone() {
        let o = parse("--fanin --rounds 3").unwrap();
        assert!(!o.pairs);
        assert_eq!(o.rounds, 3);
        assert!(!o.write_doc);
        assert_eq!(o.fanin.as_ref().map(Vec::len), Some(9));
        let o = parse("--fanin --workloads fanin_bytes_10000").unwrap();
        assert_eq!(o.fanin.unwrap(), ["fanin_bytes_10000"]);
        assert!(parse("--fanin --workloads latency").is_err());
        assert_eq!(o_columns("--fanin"), fanin::COLUMNS.len());
        assert_eq!(o_columns("--fanin --impls ice-cpp"), 3);
        assert_eq!(o_columns("--fanin --impls floe-storm icestorm"), 4);
        let o = parse("--fanin --events 12000").unwrap();
        assert_eq!(o.events, Some(12000));
        assert!(parse("--fanin --impls nope").is_err());
        assert!(parse("--fanin --events 0").is_err());
        // The replicated columns only when asked.
        let o = parse("--replicated").unwrap();
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
        assert!(parse("--workloads latency").unwrap().fanin.is_none());
    }

    #[test]
    fn transport_and_concurrency_groups() {
        let o = parse("--transports --rounds 3").unwrap();
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
        let o = parse("--concurrency --workloads latency").unwrap();
        assert_eq!(o.workloads.len(), 1 + 8);
        assert_eq!(o.workloads[0], "latency");
        assert!(o.workloads.contains(&"clients_64".to_string()));
        let o = parse("--transports --concurrency").unwrap();
        assert_eq!(o.workloads.len(), 12);
    }

    #[test]
    fn workload_lists_take_commas_and_spaces() {
        let o = parse("--workloads latency,oneway batch --rounds 3").unwrap();
        assert_eq!(o.workloads, ["latency", "oneway", "batch"]);
        assert_eq!(o.rounds, 3);
        assert!(!o.write_doc);
        let o = parse("--workloads latency, --impls floe,rmi").unwrap();
        assert_eq!(o.workloads, ["latency"]);
        assert_eq!(o.impls.unwrap(), ["floe", "rmi"]);
        assert!(parse("--workloads nope").is_err());
        assert!(parse("--rounds 0").is_err());
        assert!(parse("--scale 0").is_err());
        assert!(parse("--bogus").is_err());
    }

    #[test]
    fn grid_takes_rounds_scale_and_no_build_only() {
        let o = grid("--grid --rounds 3 --scale 0.5").unwrap();
        assert!(o.grid);
        assert_eq!((o.rounds, o.scale, o.build), (3, 0.5, true));
        let o = grid("--glacier2 --no-build").unwrap();
        assert!(!o.grid && !o.build);
        assert_eq!((o.rounds, o.scale), (5, 1.0));
        assert!(grid("--grid --rounds 0").is_err());
        assert!(grid("--grid --quick").is_err());
        assert!(grid("--glacier2 --workloads latency").is_err());
    }
}
