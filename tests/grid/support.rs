//! What the IceGrid tests share: a real `icegridnode` with a collocated
//! registry in a temporary directory, the Bench servers (Python
//! `grid_peer.py` or floe's `grid_server` example) and clients (Python, or
//! floe in the test's process) and their reports.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use floe::runtime::{Communicator, EndpointSelection, Properties};

use crate::harness::{free_port, Peer, PYTHON, READY_TIMEOUT};

floe::slice!("benches/Bench.ice");

pub use bench::LatencyPrx;

/// An `icegridnode` with a collocated registry in a temporary directory.
pub struct Registry {
    pub node: Peer,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Registry {
    pub fn start() -> Registry {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let d = dir.path();
        for sub in ["registry", "node"] {
            std::fs::create_dir(d.join(sub)).expect("mkdir");
        }
        let config = format!(
            "IceGrid.InstanceName=IceGrid\n\
             IceGrid.Registry.Client.Endpoints=tcp -h 127.0.0.1 -p {port}\n\
             IceGrid.Registry.Server.Endpoints=tcp -h 127.0.0.1\n\
             IceGrid.Registry.Internal.Endpoints=tcp -h 127.0.0.1\n\
             IceGrid.Registry.LMDB.Path={}\n\
             IceGrid.Registry.DynamicRegistration=1\n\
             IceGrid.Registry.AdminPermissionsVerifier=IceGrid/NullPermissionsVerifier\n\
             IceGrid.Node.CollocateRegistry=1\n\
             IceGrid.Node.Name=node1\n\
             IceGrid.Node.Endpoints=tcp -h 127.0.0.1\n\
             IceGrid.Node.Data={}\n\
             Ice.Default.Locator=IceGrid/Locator:tcp -h 127.0.0.1 -p {port}\n",
            d.join("registry").display(),
            d.join("node").display(),
        );
        let cfg = d.join("grid.cfg");
        std::fs::write(&cfg, config).expect("write config");
        let mut cmd = Command::new("icegridnode");
        cmd.arg(format!("--Ice.Config={}", cfg.display()));
        let node = Peer::spawn("icegridnode", cmd);
        let reg = Registry {
            node,
            port,
            _dir: dir,
        };
        // The node prints its ready line only at exit when its stdout is a
        // pipe: wait until the locator answers instead.
        let deadline = Instant::now() + READY_TIMEOUT;
        runtime().block_on(async {
            let communicator = Communicator::new();
            let locator = communicator
                .string_to_proxy(&reg.locator())
                .expect("locator");
            while let Err(e) = locator.ice_ping().await {
                assert!(
                    Instant::now() < deadline,
                    "registry not up: {e}; {}",
                    reg.node.log()
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            communicator.destroy().await;
        });
        reg
    }

    pub fn locator(&self) -> String {
        format!("IceGrid/Locator:tcp -h 127.0.0.1 -p {}", self.port)
    }

    /// Runs `icegridadmin -e command`; its stdout.
    pub fn admin(&self, command: &str) -> String {
        let out = Command::new("icegridadmin")
            .arg(format!("--Ice.Default.Locator={}", self.locator()))
            .args(["-u", "test", "-p", "test", "-e", command])
            .output()
            .expect("icegridadmin runs");
        assert!(
            out.status.success(),
            "icegridadmin -e {command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn adapters(&self) -> BTreeSet<String> {
        self.admin("adapter list")
            .lines()
            .map(|l| l.trim().to_string())
            .collect()
    }
}

/// The directory of the example binaries of this build.
pub fn examples_dir() -> PathBuf {
    // target/<profile>/deps/grid-<hash> → target/<profile>/examples
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target dir")
        .join("examples");
    for bin in ["grid_server", "grid_client"] {
        assert!(
            dir.join(bin).is_file(),
            "{} missing: run `cargo build --example grid_server --example grid_client`",
            dir.join(bin).display()
        );
    }
    dir
}

pub fn peer_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/grid/grid_peer.py")
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Side {
    Python,
    Floe,
}

/// A running Bench server registered as `adapter_id`.
pub struct Server {
    pub peer: Peer,
    pub port: u16,
    pub adapter_id: String,
}

pub fn start_server(side: Side, reg: &Registry, adapter_id: &str, group: &str) -> Server {
    let mut cmd = match side {
        Side::Python => {
            let mut c = Command::new(PYTHON);
            c.arg(peer_script()).arg("server");
            c
        }
        Side::Floe => Command::new(examples_dir().join("grid_server")),
    };
    cmd.args([&reg.locator(), adapter_id, group]);
    let mut peer = Peer::spawn(&format!("{side:?} server {adapter_id}"), cmd);
    let port = peer
        .wait_ready("READY ", READY_TIMEOUT)
        .parse()
        .expect("port");
    Server {
        peer,
        port,
        adapter_id: adapter_id.to_string(),
    }
}

/// Sends SIGTERM; the exit status must be 0.
pub fn terminate(server: Server) {
    let pid = server.peer.pid().expect("running");
    let ok = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill runs")
        .success();
    assert!(ok, "kill -TERM {pid}");
    let (status, lines) = server.peer.wait_exit(Duration::from_secs(10));
    assert!(
        status.is_some_and(|s| s.success()),
        "{} on SIGTERM: {status:?} {lines:?}",
        server.adapter_id
    );
}

/// What a client reports: the servers' ports, or the Ice type id of the
/// error.
pub type Calls = Result<Vec<u16>, String>;

/// `count` calls of `o()` on `proxy`, each from a new communicator.
pub fn calls(side: Side, reg: &Registry, proxy: &str, count: usize, ordered: bool) -> Calls {
    match side {
        Side::Python => {
            let mut cmd = Command::new(PYTHON);
            cmd.arg(peer_script())
                .args(["client", &reg.locator(), proxy, &count.to_string()]);
            if ordered {
                cmd.arg("--Ice.Default.EndpointSelection=Ordered");
            }
            let out = cmd.output().expect("python client runs");
            parse_report(&String::from_utf8_lossy(&out.stdout))
        }
        Side::Floe => runtime().block_on(async {
            let mut ports = Vec::new();
            for _ in 0..count {
                let props = Properties::new();
                props.set("Ice.Default.Locator", &reg.locator());
                let communicator = Communicator::with_properties(props);
                let r = async {
                    let mut p = communicator.string_to_proxy(proxy)?;
                    if ordered {
                        p = p.ice_endpoint_selection(EndpointSelection::Ordered);
                    }
                    call(&LatencyPrx::unchecked_cast(p)).await
                }
                .await;
                communicator.destroy().await;
                ports.push(r.map_err(|e| e.ice_name().to_string())?);
            }
            Ok(ports)
        }),
    }
}

pub fn parse_report(out: &str) -> Calls {
    let line = out.lines().last().unwrap_or_default();
    match line.split_once(' ') {
        Some(("ok", ports)) => Ok(ports
            .split_whitespace()
            .map(|p| p.parse().expect("port"))
            .collect()),
        Some(("error", e)) => Err(e.to_string()),
        _ => panic!("bad client report: {out}"),
    }
}

/// `o()`, then the port of the server that answered.
pub async fn call(prx: &LatencyPrx) -> floe::runtime::Result<u16> {
    prx.o().await?;
    let conn = prx.ice_get_connection().await?;
    Ok(conn.info().remote.map_or(0, |a| a.port()))
}

/// A multi-thread runtime: its connection tasks keep running (and answer
/// the servers' graceful closes) while the test thread blocks in
/// `block_on` closures that stop or start servers.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}
