//! The fan-in brokers as child processes ([`Server`]s that are killed and
//! reaped however the comparison ends), each with its default settings on
//! free loopback ports (three processes for a replicated broker,
//! [`super::replicated`]), and one client run through a broker.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::super::process::{free_port, run_program, Server};
use super::{Binaries, BrokerKind, Client, Column, MESSAGE_SIZE_MAX};
use crate::{workspace_root, DynError};

/// How long one client run (one workload through one broker) may take.
const CLIENT_LIMIT: Duration = Duration::from_secs(300);

/// A running broker.
pub struct Broker {
    /// Its processes (one, or one per replica).
    servers: Vec<Server>,
    /// The topic manager proxy the clients get (every replica's endpoints).
    topic_manager: String,
    kind: BrokerKind,
    /// Its data directory, kept for the broker's lifetime.
    _dir: PathBuf,
}

/// What one fan-in client run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Payload MB/s (10⁶ bytes) received.
    pub mb_s: f64,
    /// Events published in the timed phase (all publishers).
    pub sent: u64,
    /// Of those, events the subscriber received.
    pub received: u64,
    /// sent − received.
    pub lost: u64,
}

/// A fresh, empty directory under `target/fanin/`.
pub fn fresh_dir(name: &str) -> Result<PathBuf, DynError> {
    let dir = workspace_root().join("target/fanin").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

impl Broker {
    /// Starts a broker of `kind` on free ports, its stderr in
    /// `logs/<name>.log`.
    pub fn start(kind: BrokerKind, bins: &Binaries, logs: &Path) -> Result<Broker, DynError> {
        let name = kind.name();
        let dir = fresh_dir(name)?;
        if matches!(
            kind,
            BrokerKind::FloeStormReplicated | BrokerKind::IceStormReplicated
        ) {
            let (servers, topic_manager) = super::replicated::start(kind, bins, logs, &dir)?;
            return Ok(Broker {
                servers,
                topic_manager,
                kind,
                _dir: dir,
            });
        }
        let log = logs.join(format!("{name}.log"));
        let port = free_port()?;
        let mut cmd = match kind {
            BrokerKind::FloeStorm => {
                let mut cmd = Command::new(&bins.storm);
                cmd.arg(format!(
                    "--IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {port}"
                ))
                .arg(format!(
                    "--IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p {}",
                    free_port()?
                ))
                .arg(format!("--{MESSAGE_SIZE_MAX}"))
                .arg("--data-dir")
                .arg(dir.join("db"));
                cmd
            }
            BrokerKind::IceStorm => icebox(&dir, port)?,
            _ => {
                let mode = match kind {
                    BrokerKind::RawRelay => "relay",
                    BrokerKind::IceRelay => "ice-relay",
                    _ => "ice-relay-queued",
                };
                let mut cmd = Command::new(&bins.raw);
                cmd.args([mode, &port.to_string()]);
                cmd
            }
        };
        let server = Server::listening(&mut cmd, port, name, &log)?;
        Ok(Broker {
            servers: vec![server],
            topic_manager: format!("IceStorm/TopicManager:tcp -h 127.0.0.1 -p {port}"),
            kind,
            _dir: dir,
        })
    }

    /// Whether every process is still running.
    pub fn is_running(&mut self) -> bool {
        self.servers.iter_mut().all(Server::is_running)
    }

    /// The broker's CPU time so far (user + system, every replica), in
    /// seconds.
    pub fn cpu_seconds(&self) -> Option<f64> {
        self.servers.iter().map(Server::cpu_seconds).sum()
    }

    /// The topic manager proxy clients use.
    pub fn topic_manager(&self) -> &str {
        &self.topic_manager
    }

    /// Runs `column`'s client (`program`) once through this broker for
    /// `workload`, `events` per publisher (`FANIN_EVENTS`).
    pub fn run_client(
        &self,
        program: &Path,
        column: &Column,
        workload: &str,
        scale: f64,
        events: u64,
    ) -> Result<Outcome, DynError> {
        let mut cmd = Command::new(program);
        match column.client {
            Client::Floe | Client::IceCpp => {
                cmd.arg(&self.topic_manager);
            }
            Client::Raw => {
                cmd.args(["client", &self.servers[0].port.to_string()]);
            }
        }
        cmd.args([column.name, workload])
            .env("BENCH_SCALE", scale.to_string())
            .env("FANIN_EVENTS", events.to_string());
        debug_assert!(self.kind == column.broker);
        let what = format!("{} client", column.name);
        let samples = run_program(&mut cmd, &what, CLIENT_LIMIT)?;
        samples
            .iter()
            .filter(|s| s.workload == workload)
            .find_map(|s| {
                Some(Outcome {
                    mb_s: s.mb_s?,
                    sent: s.sent?,
                    received: s.received?,
                    lost: s.lost?,
                })
            })
            .ok_or_else(|| format!("{what} printed no fan-in result for {workload}").into())
    }
}

/// IceStorm 3.7 in icebox with its TopicManager on `port` (its data and
/// configuration in `dir`).
fn icebox(dir: &Path, port: u16) -> Result<Command, DynError> {
    let db = dir.join("db");
    std::fs::create_dir_all(&db)?;
    let service = dir.join("config.service");
    std::fs::write(
        &service,
        format!(
            "IceStorm.InstanceName=IceStorm\n\
             IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {port}\n\
             IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p {}\n\
             IceStorm.LMDB.Path={}\n\
             {MESSAGE_SIZE_MAX}\n",
            free_port()?,
            db.display()
        ),
    )?;
    let mut cmd = Command::new("icebox");
    cmd.arg(format!(
        "--IceBox.Service.IceStorm=IceStormService,37:createIceStorm --Ice.Config={}",
        service.display()
    ))
    .arg(format!("--{MESSAGE_SIZE_MAX}"));
    Ok(cmd)
}
