//! The replicated fan-in (`cargo xtask compare --fanin --replicated`):
//! three floe-storm replicas (`IceStorm.NodeId`, `IceStorm.Nodes.<id>`,
//! Raft) and three IceStorm 3.7 replicas (icebox, IceStorm's own election),
//! each replica with its default settings plus `Ice.MessageSizeMax`; the
//! clients get a topic manager proxy with every replica's endpoints, and
//! the publisher proxies they get carry every replica's publish endpoints
//! (`IceStorm.Replicated*Endpoints`), so each publisher's connection goes
//! to the replica Ice's random endpoint selection picks, and each replica
//! delivers what it gets to the subscriber.
//!
//! Targets per client: replicated floe-storm ≥ 0.9× a single floe-storm and
//! ≥ 1.5× replicated IceStorm, nothing lost. Beside the fan-in, the update
//! latency: floe-bench's `storm_update_latency` (200 subscribes, then 200
//! unsubscribes, median and 99th percentile) against every broker started.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::super::process::{free_port, run_program, Server};
use super::super::report::fmt_opt;
use super::broker::{Broker, MESSAGE_SIZE_MAX};
use super::report::{cell, Cell, Results};
use super::{column, Binaries, BrokerKind, Client, Column, COLUMNS, ROW_CLIENTS};
use crate::DynError;

/// The replicated columns (`--replicated`; not part of a full run): three
/// replicas of each broker, the clients given every replica's endpoints.
pub const REPLICATED_COLUMNS: [Column; 4] = [
    column(
        "floe-storm-x3",
        BrokerKind::FloeStormReplicated,
        Client::Floe,
    ),
    column("icestorm-x3", BrokerKind::IceStormReplicated, Client::Floe),
    column(
        "floe-storm-x3/ice-cpp",
        BrokerKind::FloeStormReplicated,
        Client::IceCpp,
    ),
    column(
        "icestorm-x3/ice-cpp",
        BrokerKind::IceStormReplicated,
        Client::IceCpp,
    ),
];

/// What `--replicated` runs: the replicated columns beside single
/// floe-storm (the 0.9× target's base), with both clients.
pub fn replicated_columns() -> Vec<Column> {
    COLUMNS
        .iter()
        .filter(|c| c.broker == BrokerKind::FloeStorm)
        .chain(&REPLICATED_COLUMNS)
        .copied()
        .collect()
}

/// Replicas of a replicated broker.
pub const REPLICAS: usize = 3;

/// Targets: replicated floe-storm over single floe-storm, and over
/// replicated IceStorm, same client.
pub const TARGET_VS_SINGLE: f64 = 0.9;
pub const TARGET_VS_ICESTORM: f64 = 1.5;

/// How long replicated IceStorm may take to elect a coordinator and serve.
const ICESTORM_READY: Duration = Duration::from_secs(120);

/// `tcp -h 127.0.0.1 -p P:...` for `ports`.
fn endpoints(ports: &[u16]) -> String {
    ports
        .iter()
        .map(|p| format!("tcp -h 127.0.0.1 -p {p}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Starts the replicas of `kind` (data and logs in `dir` and `logs`);
/// their processes and the replicated topic manager proxy.
pub fn start(
    kind: BrokerKind,
    bins: &Binaries,
    logs: &Path,
    dir: &Path,
) -> Result<(Vec<Server>, String), DynError> {
    let mut ports = Vec::new();
    for _ in 0..REPLICAS {
        ports.push((free_port()?, free_port()?, free_port()?));
    }
    let tm: Vec<u16> = ports.iter().map(|p| p.0).collect();
    let publish: Vec<u16> = ports.iter().map(|p| p.1).collect();
    let nodes: Vec<String> = ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            format!(
                "IceStorm.Nodes.{}=IceStorm/node{}:tcp -h 127.0.0.1 -p {}",
                i + 1,
                i + 1,
                p.2
            )
        })
        .collect();
    let properties = |id: usize| -> Vec<String> {
        let (t, p, n) = ports[id - 1];
        let mut v = vec![
            format!("IceStorm.NodeId={id}"),
            format!("IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {t}"),
            format!("IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p {p}"),
            format!("IceStorm.Node.Endpoints=tcp -h 127.0.0.1 -p {n}"),
            format!(
                "IceStorm.ReplicatedTopicManagerEndpoints={}",
                endpoints(&tm)
            ),
            format!(
                "IceStorm.ReplicatedPublishEndpoints={}",
                endpoints(&publish)
            ),
            MESSAGE_SIZE_MAX.to_string(),
        ];
        v.extend(nodes.iter().cloned());
        v
    };
    let mut servers = Vec::new();
    for id in 1..=REPLICAS {
        let name = format!("{}-{id}", kind.name());
        let log = logs.join(format!("{name}.log"));
        let data = dir.join(format!("db{id}"));
        std::fs::create_dir_all(&data)?;
        let mut cmd = match kind {
            BrokerKind::FloeStormReplicated => {
                let mut cmd = Command::new(&bins.storm);
                cmd.args(properties(id).iter().map(|p| format!("--{p}")))
                    .arg("--data-dir")
                    .arg(&data);
                cmd
            }
            _ => {
                let mut config = properties(id).join("\n");
                config.push_str(&format!(
                    "\nIceStorm.InstanceName=IceStorm\nIceStorm.LMDB.Path={}\n",
                    data.display()
                ));
                let service = dir.join(format!("config{id}.service"));
                std::fs::write(&service, config)?;
                let mut cmd = Command::new("icebox");
                cmd.arg(format!(
                    "--IceBox.Service.IceStorm=IceStormService,37:createIceStorm --Ice.Config={}",
                    service.display()
                ))
                .arg(format!("--{MESSAGE_SIZE_MAX}"));
                cmd
            }
        };
        servers.push(Server::listening(&mut cmd, ports[id - 1].0, &name, &log)?);
    }
    let proxy = format!("IceStorm/TopicManager:{}", endpoints(&tm));
    if kind == BrokerKind::IceStormReplicated {
        wait_for_icestorm(&proxy)?;
    }
    Ok((servers, proxy))
}

/// Waits until replicated IceStorm answers `retrieveAll` (it answers nothing
/// until its replicas have elected a coordinator).
fn wait_for_icestorm(proxy: &str) -> Result<(), DynError> {
    let deadline = Instant::now() + ICESTORM_READY;
    loop {
        let ok = Command::new("icestormadmin")
            .arg(format!("--IceStormAdmin.TopicManager.Default={proxy}"))
            .arg("--Ice.Default.InvocationTimeout=3000")
            .args(["-e", "topics"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "replicated IceStorm did not serve within {}s",
                ICESTORM_READY.as_secs()
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn med(results: &Results, w: &str, client: Client, b: BrokerKind) -> Option<f64> {
    cell(results, w, client, b).and_then(Cell::median)
}

/// The replicated rows: per (workload, client) with replicated floe-storm
/// measured, the three brokers' MB/s, the two ratios and whether the
/// targets were met. `None` when no replicated column was measured.
pub fn table(results: &Results, workloads: &[String]) -> Option<String> {
    let mut s = String::new();
    for w in workloads {
        for client in ROW_CLIENTS {
            let Some(x3) = cell(results, w, client, BrokerKind::FloeStormReplicated) else {
                continue;
            };
            if s.is_empty() {
                let _ = writeln!(
                    s,
                    "\n| workload | client | floe-storm ×3 MB/s | floe-storm MB/s | IceStorm ×3 MB/s | ×3 / floe-storm | ×3 / IceStorm ×3 | lost ×3 / IceStorm ×3 | met (≥ {TARGET_VS_SINGLE}×, ≥ {TARGET_VS_ICESTORM}×) |\n|---|---|---:|---:|---:|---:|---:|---:|---|"
                );
            }
            let single = med(results, w, client, BrokerKind::FloeStorm);
            let ice = cell(results, w, client, BrokerKind::IceStormReplicated);
            let speed = x3.median();
            let r1 = speed.zip(single).map(|(a, b)| a / b);
            let r2 = speed.zip(ice.and_then(Cell::median)).map(|(a, b)| a / b);
            let lost = x3.lost_total() + ice.map_or(0, Cell::lost_total);
            let met = if lost > 0 {
                format!("**LOST {lost}**")
            } else {
                match (r1, r2) {
                    (Some(a), Some(b)) if a >= TARGET_VS_SINGLE && b >= TARGET_VS_ICESTORM => {
                        "met".into()
                    }
                    (Some(_), Some(_)) => "**not met**".into(),
                    _ => "not measured".into(),
                }
            };
            let _ = writeln!(
                s,
                "| {w} | {} | {} | {} | {} | {} | {} | {} / {} | {met} |",
                client.name(),
                fmt_opt(speed, 1),
                fmt_opt(single, 1),
                fmt_opt(ice.and_then(Cell::median), 1),
                fmt_opt(r1, 2),
                fmt_opt(r2, 2),
                x3.lost_total(),
                ice.map_or("—".into(), |c| c.lost_total().to_string()),
            );
        }
    }
    (!s.is_empty()).then_some(s)
}

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
