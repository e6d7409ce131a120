//! Replicated floe-storm for the tests: N `floe-storm` processes on
//! 127.0.0.1, each with its own store and fixed ports (so that a replica
//! restarts where it was), started, killed (`SIGKILL`), stopped and
//! continued (`SIGSTOP`/`SIGCONT`) by the test; and a floe client of the
//! generated IceStorm and replica proxies, blocking, for the test's
//! calls.

use std::process::Command;
use std::time::{Duration, Instant};

use floe::runtime::{Communicator, Error, Proxy};
use floe_storm::slice::floe_storm::{ReplicaPrx, ReplicaStatus};
use floe_storm::slice::ice_storm::{TopicManagerPrx, TopicPrx};
use floe_storm::types::{ProxyData, QosDict};

use super::{floe_storm_binary, Proc};

/// How long a replica may take to print its ready line.
const READY: Duration = Duration::from_secs(30);

/// A free port below Linux's ephemeral range (32768-60999), so that no
/// outgoing connection takes it between now and the replica's (re)start:
/// from a per-process starting point, each port checked free.
pub fn fixed_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    const LOW: u32 = 20000;
    const SPAN: u32 = 12000;
    let _ = NEXT.compare_exchange(
        0,
        LOW + (std::process::id().wrapping_mul(7919) % SPAN),
        Ordering::SeqCst,
        Ordering::SeqCst,
    );
    loop {
        let p = NEXT.fetch_add(1, Ordering::SeqCst);
        let port = u16::try_from(LOW + (p - LOW) % SPAN).unwrap_or(20000);
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// `tcp -h 127.0.0.1 -p P:...` for `ports`.
pub fn endpoints(ports: impl Iterator<Item = u16>) -> String {
    ports
        .map(|p| format!("tcp -h 127.0.0.1 -p {p}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// One replica's ports and process.
pub struct Member {
    pub tm: u16,
    pub publish: u16,
    pub node: u16,
    pub proc: Option<Proc>,
}

/// N replicas of one replicated floe-storm (`IceStorm` instance).
pub struct Cluster {
    pub dir: tempfile::TempDir,
    pub members: Vec<Member>,
    props: Vec<String>,
}

impl Cluster {
    /// `n` replicas (none started) with `props` (`Name=value`) besides the
    /// replication settings.
    pub fn new(n: usize, props: &[&str]) -> Cluster {
        let members = (0..n)
            .map(|_| Member {
                tm: fixed_port(),
                publish: fixed_port(),
                node: fixed_port(),
                proc: None,
            })
            .collect();
        Cluster {
            dir: tempfile::tempdir().unwrap(),
            members,
            props: props.iter().map(|p| p.to_string()).collect(),
        }
    }

    fn member(&self, id: usize) -> &Member {
        &self.members[id - 1]
    }

    /// `tcp -h 127.0.0.1 -p P:...` for every replica's `port`.
    fn endpoints(&self, port: impl Fn(&Member) -> u16) -> String {
        endpoints(self.members.iter().map(port))
    }

    /// Every replica's TopicManager endpoints.
    pub fn tm_endpoints(&self) -> String {
        self.endpoints(|m| m.tm)
    }

    /// The replicated topic manager proxy.
    pub fn tm_proxy(&self) -> String {
        format!("IceStorm/TopicManager:{}", self.tm_endpoints())
    }

    /// Replica `id`'s own topic manager.
    pub fn tm_proxy_of(&self, id: usize) -> String {
        format!(
            "IceStorm/TopicManager:tcp -h 127.0.0.1 -p {}",
            self.member(id).tm
        )
    }

    /// Replica `id`'s node object.
    pub fn node_proxy_of(&self, id: usize) -> String {
        format!(
            "IceStorm/node{id}:tcp -h 127.0.0.1 -p {}",
            self.member(id).node
        )
    }

    /// The command line of replica `id`.
    pub fn command(&self, id: usize) -> Command {
        let m = self.member(id);
        let mut cmd = Command::new(floe_storm_binary());
        cmd.env("RUST_LOG", "info,openraft=warn")
            .env("NO_COLOR", "1")
            .arg(format!("--IceStorm.NodeId={id}"))
            .arg(format!(
                "--IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {}",
                m.tm
            ))
            .arg(format!(
                "--IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p {}",
                m.publish
            ))
            .arg(format!(
                "--IceStorm.Node.Endpoints=tcp -h 127.0.0.1 -p {}",
                m.node
            ))
            .arg(format!(
                "--IceStorm.ReplicatedTopicManagerEndpoints={}",
                self.tm_endpoints()
            ))
            .arg(format!(
                "--IceStorm.ReplicatedPublishEndpoints={}",
                self.endpoints(|m| m.publish)
            ))
            .arg(format!(
                "--data-dir={}",
                self.dir.path().join(format!("db{id}")).display()
            ));
        for n in 1..=self.members.len() {
            cmd.arg(format!("--IceStorm.Nodes.{n}={}", self.node_proxy_of(n)));
        }
        for p in &self.props {
            cmd.arg(format!("--{p}"));
        }
        cmd
    }

    /// Starts replica `id` and waits for its ready line.
    pub fn start(&mut self, id: usize) {
        let p = Proc::spawn(&format!("replica {id}"), self.command(id));
        p.expect_line("floe-storm ready", READY);
        self.members[id - 1].proc = Some(p);
    }

    /// Starts every replica.
    pub fn start_all(&mut self) {
        for id in 1..=self.members.len() {
            self.start(id);
        }
    }

    /// `SIGKILL`s replica `id` and reaps it.
    pub fn kill(&mut self, id: usize) {
        if let Some(mut p) = self.members[id - 1].proc.take() {
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
    }

    /// Sends `signal` (`STOP`, `CONT`, `TERM`) to replica `id`.
    pub fn signal(&self, id: usize, signal: &str) {
        let pid = self.member(id).proc.as_ref().expect("running").pid();
        let ok = Command::new("kill")
            .args([format!("-{signal}"), pid.to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill -{signal} {pid}");
    }

    /// Replica `id`'s log lines so far.
    pub fn log(&self, id: usize) -> Vec<String> {
        self.member(id)
            .proc
            .as_ref()
            .map(|p| p.err.snapshot())
            .unwrap_or_default()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // A stopped replica must be continued to die of SIGKILL promptly.
        for m in &self.members {
            if let Some(p) = &m.proc {
                let _ = Command::new("kill")
                    .args(["-CONT", &p.pid().to_string()])
                    .status();
            }
        }
    }
}

/// A blocking floe client for the test's calls.
pub struct Client {
    rt: tokio::runtime::Runtime,
    pub comm: Communicator,
}

impl Default for Client {
    fn default() -> Self {
        Self::new()
    }
}

impl Client {
    pub fn new() -> Client {
        Self::with_locator(None)
    }

    /// A client that resolves indirect proxies with `locator`.
    pub fn with_locator(locator: Option<&str>) -> Client {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let properties = floe::runtime::Properties::new();
        if let Some(l) = locator {
            properties.set("Ice.Default.Locator", l);
        }
        let comm = rt.block_on(async { Communicator::with_properties(properties) });
        Client { rt, comm }
    }

    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    fn proxy(&self, text: &str) -> Proxy {
        self.comm
            .string_to_proxy(text)
            .unwrap()
            .ice_invocation_timeout(Some(Duration::from_secs(20)))
    }

    pub fn manager(&self, text: &str) -> TopicManagerPrx {
        TopicManagerPrx::unchecked_cast(self.proxy(text))
    }

    pub fn replica(&self, text: &str) -> ReplicaPrx {
        ReplicaPrx::unchecked_cast(self.proxy(text))
    }

    pub fn topic(&self, data: Option<ProxyData>) -> TopicPrx {
        TopicPrx::unchecked_cast(
            Proxy::from_data(&self.comm, data.expect("a topic proxy"))
                .ice_invocation_timeout(Some(Duration::from_secs(20))),
        )
    }

    /// `create(name)` on `tm`.
    pub fn create(&self, tm: &str, name: &str) -> Result<TopicPrx, Error> {
        let m = self.manager(tm);
        let t = self.block_on(async { m.create(name).await })?;
        Ok(self.topic(t))
    }

    /// `retrieve(name)` on `tm`.
    pub fn retrieve(&self, tm: &str, name: &str) -> Result<TopicPrx, Error> {
        let m = self.manager(tm);
        let t = self.block_on(async { m.retrieve(name).await })?;
        Ok(self.topic(t))
    }

    /// The topic names `tm` knows.
    pub fn topics(&self, tm: &str) -> Vec<String> {
        let m = self.manager(tm);
        self.block_on(async { m.retrieve_all().await })
            .unwrap()
            .into_keys()
            .collect()
    }

    /// Subscribes `subscriber` (a proxy text) to `topic`.
    pub fn subscribe(
        &self,
        topic: &TopicPrx,
        qos: &[(&str, &str)],
        subscriber: &str,
    ) -> Result<(), Error> {
        let qos: QosDict = qos
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let sub = Some(self.comm.string_to_proxy(subscriber).unwrap().to_data());
        self.block_on(async { topic.subscribe_and_get_publisher(&qos, &sub).await })
            .map(|_| ())
    }

    /// The identities `topic` lists as subscribers, as text.
    pub fn subscribers(&self, topic: &TopicPrx) -> Vec<String> {
        self.block_on(async { topic.get_subscribers().await })
            .unwrap()
            .iter()
            .map(|id| id.to_string())
            .collect()
    }

    /// Replica status from its node object.
    pub fn status(&self, node: &str) -> Result<ReplicaStatus, Error> {
        let r = self.replica(node);
        self.block_on(async { r.status().await })
    }

    /// Polls `check` until it returns true (panics after `timeout`).
    pub fn eventually(&self, timeout: Duration, what: &str, mut check: impl FnMut() -> bool) {
        let deadline = Instant::now() + timeout;
        while !check() {
            assert!(Instant::now() < deadline, "not within {timeout:?}: {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The id of the replica that leads, asking every running one.
pub fn leader(cluster: &Cluster, client: &Client) -> Option<usize> {
    (1..=cluster.members.len())
        .filter(|id| cluster.members[id - 1].proc.is_some())
        .find(|id| {
            client
                .status(&cluster.node_proxy_of(*id))
                .is_ok_and(|s| s.role == "leader")
        })
}

/// Waits until every running replica is a voter (leader or follower) and has
/// applied the leader's last log entry: a cluster that has finished forming.
pub fn settled(cluster: &Cluster, client: &Client, timeout: Duration) {
    client.eventually(timeout, "every replica a caught-up voter", || {
        let statuses: Vec<_> = (1..=cluster.members.len())
            .filter(|id| cluster.members[id - 1].proc.is_some())
            .map(|id| client.status(&cluster.node_proxy_of(id)))
            .collect();
        let Some(last) = statuses
            .iter()
            .flatten()
            .find(|s| s.role == "leader")
            .map(|s| s.last_log_index)
        else {
            return false;
        };
        statuses.iter().all(|s| {
            s.as_ref()
                .is_ok_and(|s| (s.role == "leader" || s.role == "follower") && s.applied == last)
        })
    });
}
