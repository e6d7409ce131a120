//! What the IceGrid tests share: a real `icegridnode` with a collocated
//! registry in a temporary directory, the Bench servers (Python
//! `grid_peer.py` or floe's `grid_server` example) and clients (Python, or
//! floe in the test's process) and their reports.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use floe::runtime::{Communicator, EndpointSelection, Properties};

use floe_testkit::{Peer, PYTHON, READY_TIMEOUT};

floe::slice!("benches/Bench.ice");

// Each test binary uses a part.
#[allow(unused_imports)]
pub use bench::{Latency, LatencyDispatcher, LatencyPrx};

/// The registry of the tests (floe-testkit's `IceGridNode`).
pub use floe_testkit::icegrid::IceGridNode as Registry;

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
