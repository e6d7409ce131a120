//! Replicated IceStorm 3.7.8 (Debian `zeroc-icebox`, `libzeroc-icestorm3.7`)
//! as the reference: N IceBox processes running the IceStorm service with
//! `IceStorm.NodeId` and `IceStorm.Nodes.<id>`, on 127.0.0.1, each with its
//! own LMDB directory and fixed ports; and [`Replicated`], what the
//! failover scenario asks of either broker.

use std::process::Command;
use std::time::Duration;

use super::cluster::{endpoints, fixed_port, Client, Cluster};
use super::Proc;

/// What the failover scenario does with a replicated broker.
pub trait Replicated {
    /// For reports: `floe-storm` or `IceStorm 3.7.8`.
    fn name(&self) -> &'static str;
    /// The number of replicas.
    fn size(&self) -> usize;
    /// The replicated topic manager proxy.
    fn tm_proxy(&self) -> String;
    /// Replica `id`'s node object (IceStorm's `Node` interface).
    fn node_proxy_of(&self, id: usize) -> String;
    /// The locator clients need (IceGrid), if any.
    fn locator(&self) -> Option<String> {
        None
    }
    /// With a locator: each replica's Publish adapter id, in replica order.
    fn publish_adapters(&self) -> Vec<String> {
        Vec::new()
    }
    /// Whether replica `id` runs.
    fn running(&self, id: usize) -> bool;
    /// `SIGKILL`s replica `id`.
    fn kill(&mut self, id: usize);
    /// (Re)starts replica `id`.
    fn start(&mut self, id: usize);
}

impl Replicated for Cluster {
    fn name(&self) -> &'static str {
        "floe-storm"
    }
    fn size(&self) -> usize {
        self.members.len()
    }
    fn tm_proxy(&self) -> String {
        Cluster::tm_proxy(self)
    }
    fn node_proxy_of(&self, id: usize) -> String {
        Cluster::node_proxy_of(self, id)
    }
    fn running(&self, id: usize) -> bool {
        self.members[id - 1].proc.is_some()
    }
    fn kill(&mut self, id: usize) {
        Cluster::kill(self, id)
    }
    fn start(&mut self, id: usize) {
        Cluster::start(self, id)
    }
}

/// The coordinator (leader) as the running replicas report it through
/// IceStorm's `Node::query`.
pub fn coordinator(brokers: &dyn Replicated, client: &Client) -> Option<usize> {
    use floe_storm::slice::ice_storm_election::{NodePrx, NodeState};
    for id in (1..=brokers.size()).filter(|id| brokers.running(*id)) {
        let node = NodePrx::unchecked_cast(
            client
                .comm
                .string_to_proxy(&brokers.node_proxy_of(id))
                .unwrap()
                .ice_invocation_timeout(Some(Duration::from_secs(5))),
        );
        if let Ok(q) = client.block_on(async { node.query().await }) {
            if q.state == NodeState::NodeStateNormal && q.coord > 0 {
                return usize::try_from(q.coord).ok();
            }
        }
    }
    None
}

/// One IceStorm replica's ports and process.
struct IceStormMember {
    tm: u16,
    publish: u16,
    node: u16,
    proc: Option<Proc>,
}

/// Replicated IceStorm in N IceBox processes.
pub struct IceStormCluster {
    dir: tempfile::TempDir,
    members: Vec<IceStormMember>,
    election_seconds: u32,
}

impl IceStormCluster {
    /// `n` replicas (none started); IceStorm's election timers
    /// (`IceStorm.Election.MasterTimeout`, `.ElectionTimeout`,
    /// `.ResponseTimeout`, 10 s by default) set to `election_seconds`.
    pub fn new(n: usize, election_seconds: u32) -> IceStormCluster {
        IceStormCluster {
            dir: tempfile::tempdir().unwrap(),
            members: (0..n)
                .map(|_| IceStormMember {
                    tm: fixed_port(),
                    publish: fixed_port(),
                    node: fixed_port(),
                    proc: None,
                })
                .collect(),
            election_seconds,
        }
    }

    fn endpoints(&self, port: impl Fn(&IceStormMember) -> u16) -> String {
        endpoints(self.members.iter().map(port))
    }

    /// Starts every replica (IceStorm serves only once all are up).
    pub fn start_all(&mut self) {
        for id in 1..=self.members.len() {
            self.start(id);
        }
    }
}

impl Replicated for IceStormCluster {
    fn name(&self) -> &'static str {
        "IceStorm 3.7.8"
    }

    fn size(&self) -> usize {
        self.members.len()
    }

    fn tm_proxy(&self) -> String {
        format!("IceStorm/TopicManager:{}", self.endpoints(|m| m.tm))
    }

    fn node_proxy_of(&self, id: usize) -> String {
        format!(
            "IceStorm/node{id}:tcp -h 127.0.0.1 -p {}",
            self.members[id - 1].node
        )
    }

    fn running(&self, id: usize) -> bool {
        self.members[id - 1].proc.is_some()
    }

    fn kill(&mut self, id: usize) {
        if let Some(mut p) = self.members[id - 1].proc.take() {
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
    }

    fn start(&mut self, id: usize) {
        let m = &self.members[id - 1];
        let db = self.dir.path().join(format!("db{id}"));
        std::fs::create_dir_all(&db).unwrap();
        let t = self.election_seconds;
        let mut config = format!(
            "IceBox.Service.IceStorm=IceStormService,37:createIceStorm\n\
             IceBox.InheritProperties=1\n\
             IceStorm.InstanceName=IceStorm\n\
             IceStorm.NodeId={id}\n\
             IceStorm.Node.Endpoints=tcp -h 127.0.0.1 -p {}\n\
             IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {}\n\
             IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p {}\n\
             IceStorm.ReplicatedTopicManagerEndpoints={}\n\
             IceStorm.ReplicatedPublishEndpoints={}\n\
             IceStorm.LMDB.Path={}\n\
             IceStorm.LMDB.MapSize=16\n\
             IceStorm.Election.MasterTimeout={t}\n\
             IceStorm.Election.ElectionTimeout={t}\n\
             IceStorm.Election.ResponseTimeout={t}\n\
             Ice.Default.Host=127.0.0.1\n",
            m.node,
            m.tm,
            m.publish,
            self.endpoints(|m| m.tm),
            self.endpoints(|m| m.publish),
            db.display(),
        );
        for n in 1..=self.members.len() {
            config.push_str(&format!("IceStorm.Nodes.{n}={}\n", self.node_proxy_of(n)));
        }
        let cfg = self.dir.path().join(format!("r{id}.cfg"));
        std::fs::write(&cfg, config).unwrap();
        let mut cmd = Command::new("icebox");
        cmd.arg(format!("--Ice.Config={}", cfg.display()));
        let p = Proc::spawn(&format!("icestorm {id}"), cmd);
        // IceBox prints nothing when a service starts: wait for the port.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", m.tm)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "IceStorm replica {id} did not start: {:?}",
                p.err.snapshot()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        self.members[id - 1].proc = Some(p);
    }
}
