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
//! ≥ 1.5× replicated IceStorm, nothing lost (the table is in `report.rs`;
//! the update latency beside it in `latency.rs`).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::super::process::{free_port, Server};
use super::{column, Binaries, BrokerKind, Client, Column, COLUMNS, MESSAGE_SIZE_MAX};
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
