//! floe with a real IceGrid (Ice 3.7 `icegridnode` with a collocated
//! registry, `IceGrid.Registry.DynamicRegistration=1`), started on
//! 127.0.0.1 in a temporary directory and stopped by the test.
//!
//! The same checks run with four pairs of peers, the Python Ice pair
//! first as the reference: servers (Python `tests/grid/grid_peer.py
//! server`, or floe's `examples/grid_server.rs`) register two adapters
//! in one replica group; clients (Python `grid_peer.py client`, or floe
//! in this process and `examples/grid_client.rs`) check
//! - dynamic registration (`icegridadmin adapter list`);
//! - an indirect proxy `a@<adapter>`, a replica group `a@<group>` spread
//!   over both replicas (Random selection), a well-known `a` (added with
//!   `icegridadmin object add`);
//! - `NotRegisteredException` for an unknown adapter, quickly;
//! - dead endpoints skipped (a direct proxy whose first endpoint refuses);
//! - unregistration on SIGTERM (exit 0, gone from the registry), and a
//!   cached locator answer refreshed when that server comes back on
//!   another port;
//! - failover of a cached connection after SIGKILL of its replica.
//!
//! The example binaries must be built (`cargo test` builds examples;
//! alone: `cargo build --example grid_server --example grid_client`).

#[path = "../crates/runtime/tests/interop/harness.rs"]
mod harness;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use floe::runtime::{Communicator, EndpointSelection, Properties};
use harness::{free_port, Peer, PYTHON, READY_TIMEOUT};

floe::slice!("benches/Bench.ice");

use bench::LatencyPrx;

/// An `icegridnode` with a collocated registry in a temporary directory.
struct Registry {
    _node: Peer,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Registry {
    fn start() -> Registry {
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
            _node: node,
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
                    reg._node.log()
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            communicator.destroy().await;
        });
        reg
    }

    fn locator(&self) -> String {
        format!("IceGrid/Locator:tcp -h 127.0.0.1 -p {}", self.port)
    }

    /// Runs `icegridadmin -e command`; its stdout.
    fn admin(&self, command: &str) -> String {
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

    fn adapters(&self) -> BTreeSet<String> {
        self.admin("adapter list")
            .lines()
            .map(|l| l.trim().to_string())
            .collect()
    }
}

/// The directory of the example binaries of this build.
fn examples_dir() -> PathBuf {
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

fn peer_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/grid/grid_peer.py")
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Side {
    Python,
    Floe,
}

/// A running Bench server registered as `adapter_id`.
struct Server {
    peer: Peer,
    port: u16,
    adapter_id: String,
}

fn start_server(side: Side, reg: &Registry, adapter_id: &str, group: &str) -> Server {
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
fn terminate(server: Server) {
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
type Calls = Result<Vec<u16>, String>;

/// `count` calls of `o()` on `proxy`, each from a new communicator.
fn calls(side: Side, reg: &Registry, proxy: &str, count: usize, ordered: bool) -> Calls {
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

fn parse_report(out: &str) -> Calls {
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
async fn call(prx: &LatencyPrx) -> floe::runtime::Result<u16> {
    prx.o().await?;
    let conn = prx.ice_get_connection().await?;
    Ok(conn.info().remote.map_or(0, |a| a.port()))
}

/// A multi-thread runtime: its connection tasks keep running (and answer
/// the servers' graceful closes) while the test thread blocks in
/// `block_on` closures that stop or start servers.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// Calls `o()` on `proxy`, runs `between` with the port that answered,
/// then calls again on the same proxy: the port of the second answer.
fn call_twice(side: Side, reg: &Registry, proxy: &str, between: impl FnOnce(u16)) -> (u16, Calls) {
    match side {
        Side::Python => {
            let go = tempfile::NamedTempFile::new().expect("temp file");
            let go_path = go.path().to_path_buf();
            drop(go);
            let mut cmd = Command::new(PYTHON);
            cmd.arg(peer_script()).args([
                "failover",
                &reg.locator(),
                proxy,
                &go_path.display().to_string(),
            ]);
            let mut peer = Peer::spawn("python failover client", cmd);
            let first: u16 = peer
                .wait_ready("port ", READY_TIMEOUT)
                .parse()
                .expect("port");
            between(first);
            std::fs::write(&go_path, b"go").expect("go file");
            let (_, lines) = peer.wait_exit(Duration::from_secs(20));
            let _ = std::fs::remove_file(&go_path);
            (first, parse_report(&lines.join("\n")))
        }
        Side::Floe => {
            // A multi-thread runtime: its workers keep running the
            // connection tasks between the two `block_on`s.
            let rt = runtime();
            let props = Properties::new();
            props.set("Ice.Default.Locator", &reg.locator());
            let communicator = Communicator::with_properties(props);
            let prx =
                LatencyPrx::unchecked_cast(communicator.string_to_proxy(proxy).expect("proxy"));
            let first = rt.block_on(call(&prx)).expect("first call");
            between(first);
            let second = rt.block_on(call(&prx)).map(|p| vec![p]);
            rt.block_on(communicator.destroy());
            (first, second.map_err(|e| e.ice_name().to_string()))
        }
    }
}

/// Every check, with servers of `servers` and clients of `clients`;
/// `tag` keeps the adapter ids of the runs apart.
fn checks(reg: &Registry, servers: Side, clients: Side, tag: &str) {
    let (id1, id2, group) = (
        format!("{tag}-1"),
        format!("{tag}-2"),
        format!("{tag}Group"),
    );
    let s1 = start_server(servers, reg, &id1, &group);
    let s2 = start_server(servers, reg, &id2, &group);
    let ctx = format!("{servers:?} servers, {clients:?} client");

    // Dynamic registration.
    let adapters = reg.adapters();
    for id in [&id1, &id2, &group] {
        assert!(adapters.contains(id), "{ctx}: {id} not in {adapters:?}");
    }

    // An adapter; a replica group, spread over both replicas.
    assert_eq!(
        calls(clients, reg, &format!("a@{id1}"), 1, false),
        Ok(vec![s1.port]),
        "{ctx}"
    );
    let ports = calls(clients, reg, &format!("a@{group}"), 12, false).expect("group calls");
    let seen: BTreeSet<u16> = ports.iter().copied().collect();
    assert_eq!(
        seen,
        BTreeSet::from([s1.port, s2.port]),
        "{ctx}: spread {ports:?}"
    );

    // A well-known object, registered with the group's proxy.
    reg.admin(&format!("object add \"a@{group}\""));
    let ports = calls(clients, reg, "a", 2, false).expect("well-known calls");
    assert!(
        ports.iter().all(|p| [s1.port, s2.port].contains(p)),
        "{ctx}: {ports:?}"
    );
    reg.admin("object remove a");

    // An unknown adapter: NotRegistered, quickly.
    let t = Instant::now();
    assert_eq!(
        calls(clients, reg, "a@NoSuchAdapter", 1, false),
        Err("::Ice::NotRegisteredException".to_string()),
        "{ctx}"
    );
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "{ctx}: {:?}",
        t.elapsed()
    );

    // Dead endpoints skipped.
    let dead = free_port();
    let direct = format!(
        "a:tcp -h 127.0.0.1 -p {dead}:tcp -h 127.0.0.1 -p {}",
        s1.port
    );
    assert_eq!(
        calls(clients, reg, &direct, 1, true),
        Ok(vec![s1.port]),
        "{ctx}"
    );

    // SIGTERM unregisters; the client's cached answer for the adapter is
    // refreshed when it comes back on another port.
    let mut restarted = None;
    let (first, second) = call_twice(clients, reg, &format!("a@{id1}"), |_| {
        terminate(s1);
        assert!(
            !reg.adapters().contains(&id1),
            "{ctx}: {id1} still registered"
        );
        assert_eq!(
            calls(clients, reg, &format!("a@{id1}"), 1, false),
            Err("::Ice::NotRegisteredException".to_string()),
            "{ctx}"
        );
        restarted = Some(start_server(servers, reg, &id1, &group));
    });
    let s1 = restarted.expect("restarted");
    assert_ne!(first, s1.port);
    assert_eq!(second, Ok(vec![s1.port]), "{ctx}: refreshed after restart");

    // Failover of a cached connection after SIGKILL of its replica.
    let mut servers_left = vec![s1, s2];
    let (first, second) = call_twice(clients, reg, &format!("a@{group}"), |port| {
        let i = servers_left
            .iter()
            .position(|s| s.port == port)
            .expect("a replica answered");
        servers_left.remove(i).peer.kill();
        std::thread::sleep(Duration::from_millis(200));
    });
    let survivor = &servers_left[0];
    assert_ne!(first, survivor.port);
    assert_eq!(second, Ok(vec![survivor.port]), "{ctx}: failover");
}

#[test]
fn icegrid_registration_resolution_and_failover() {
    if harness::interop_disabled("icegrid") {
        return;
    }
    let reg = Registry::start();
    checks(&reg, Side::Python, Side::Python, "PyPy");
    checks(&reg, Side::Floe, Side::Python, "FloePy");
    checks(&reg, Side::Python, Side::Floe, "PyFloe");
    checks(&reg, Side::Floe, Side::Floe, "FloeFloe");

    // The example client, as a user runs it.
    let s = start_server(Side::Floe, &reg, "Example", "-");
    let client = |proxy: &str| {
        let out = Command::new(examples_dir().join("grid_client"))
            .args([&reg.locator(), proxy])
            .output()
            .expect("grid_client runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
        )
    };
    assert_eq!(client("a@Example"), (true, "ok".to_string()));
    let (ok, out) = client("a@Nowhere");
    assert!(!ok && out.contains("Nowhere"), "{out}");
    terminate(s);
}
