//! The update latency beside the fan-in: floe-bench's
//! `storm_update_latency` (200 subscribes, then 200 unsubscribes, median
//! and 99th percentile) against every broker started.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::super::process::run_program;
use super::super::report::fmt_opt;
use super::broker::Broker;
use super::BrokerKind;

/// Runs the update latency client against each of `brokers` that is a
/// floe-storm or an IceStorm, single or replicated: the table (failed runs
/// added to `failures`).
pub fn latency(
    brokers: &[(BrokerKind, &Broker)],
    program: &Path,
    failures: &mut Vec<String>,
) -> String {
    let mut s = String::from(
        "\n| broker | subscribe median µs | subscribe p99 µs | unsubscribe median µs | unsubscribe p99 µs |\n|---|---:|---:|---:|---:|\n",
    );
    let order = [
        BrokerKind::FloeStorm,
        BrokerKind::FloeStormReplicated,
        BrokerKind::IceStorm,
        BrokerKind::IceStormReplicated,
    ];
    for kind in order {
        let Some((_, broker)) = brokers.iter().find(|(k, _)| *k == kind) else {
            continue;
        };
        let mut cmd = Command::new(program);
        cmd.args([broker.topic_manager(), kind.name(), "200"]);
        let out = run_program(&mut cmd, "update latency client", Duration::from_secs(300));
        let lines = match out {
            Ok(samples) => samples,
            Err(e) => {
                failures.push(format!("update latency / {}: {e}", kind.name()));
                continue;
            }
        };
        let get = |w: &str| lines.iter().find(|l| l.workload == w);
        let cells: Vec<String> = ["subscribe", "unsubscribe"]
            .iter()
            .flat_map(|w| {
                let l = get(w);
                [
                    fmt_opt(l.map(|l| l.us_per_call), 0),
                    fmt_opt(l.and_then(|l| l.p99_us), 0),
                ]
            })
            .collect();
        let _ = writeln!(s, "| {} | {} |", kind.title(), cells.join(" | "));
    }
    s
}
