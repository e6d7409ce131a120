//! The fan-in client: `cargo run --release -p floe-bench --bin fanin_client --
//! TOPIC_MANAGER IMPL [WORKLOAD...]`. Runs the fan-in workloads
//! (`fanin_{bytes,floats,data}_{10000,100000,1000000}`, all when none is
//! named; see [`floe_bench::fanin`]) through the IceStorm-compatible
//! broker whose TopicManager proxy is `TOPIC_MANAGER` (e.g.
//! `IceStorm/TopicManager:tcp -h 127.0.0.1 -p 10000`) and prints one JSON
//! object per line, labelled `IMPL`:
//! `{"impl":..,"workload":..,"calls":..,"seconds":..,"us_per_call":..,"mbit_s":..,"mb_s":..,"sent":..,"received":..,"lost":..}`.
//!
//! `BENCH_SCALE` (default 1) multiplies the message counts;
//! `FANIN_EVENTS`, when set, is the count per publisher instead (no
//! scaling: a run can burst any number of events);
//! `FANIN_DRAIN_MS` (default 3000) is how long the subscriber waits for
//! more messages before counting the rest as lost. Messages carry no
//! sequence number: the order of arrival is not checked.

use std::time::Duration;

use floe_bench::fanin::{self, json_line, messages_per_publisher, Workload, PUBLISHERS};
use floe_bench::{bench_scale, build_runtime, scaled};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(tm), Some(label)) = (args.first(), args.get(1)) else {
        eprintln!("usage: fanin_client TOPIC_MANAGER IMPL [WORKLOAD...]");
        std::process::exit(2)
    };
    let names: Vec<String> = if args.len() > 2 {
        args[2..].to_vec()
    } else {
        fanin::workloads()
    };
    let mut workloads = Vec::new();
    for n in &names {
        match Workload::parse(n) {
            Some(w) => workloads.push(w),
            None => {
                eprintln!("fanin_client: unknown workload `{n}`");
                std::process::exit(2)
            }
        }
    }
    let scale = bench_scale();
    let events = std::env::var("FANIN_EVENTS").ok().map(|s| {
        s.trim()
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .unwrap_or_else(|| {
                eprintln!("fanin_client: FANIN_EVENTS must be a count ≥ 1, not `{s}`");
                std::process::exit(2)
            })
    });
    let drain = std::env::var("FANIN_DRAIN_MS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(Duration::from_secs(3), Duration::from_millis);
    let rt = build_runtime(false);
    let tm = tm.clone();
    let label = label.clone();
    // Spawned: the workload runs on the runtime's workers, not on the
    // thread blocked in `block_on`.
    let res = rt.block_on(async move {
        tokio::spawn(async move {
            for w in workloads {
                let n = events.unwrap_or_else(|| scaled(messages_per_publisher(w.size), scale));
                let r = fanin::run(&tm, w, PUBLISHERS, n, drain).await?;
                println!("{}", json_line(&label, w, &r));
            }
            Ok::<_, fanin::BoxError>(())
        })
        .await
    });
    match res {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            eprintln!("fanin_client: {e}");
            std::process::exit(1)
        }
        Err(e) => {
            eprintln!("fanin_client: {e}");
            std::process::exit(1)
        }
    }
}
