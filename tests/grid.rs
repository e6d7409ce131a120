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
//! - failover of a cached connection after SIGKILL of its replica;
//! - (floe client only) a well-known object that moves is found again
//!   after ObjectNotExist at its old place.
//!
//! The example binaries must be built (`cargo test` builds examples;
//! alone: `cargo build --example grid_server --example grid_client`).

mod grid {
    pub mod support;
}

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use floe::runtime::{Communicator, Properties};
use floe_testkit::{free_port, Peer, PYTHON, READY_TIMEOUT};
use grid::support::*;

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
    if floe_testkit::interop_disabled("icegrid") {
        return;
    }
    let reg = Registry::start();
    checks(&reg, Side::Python, Side::Python, "PyPy");
    checks(&reg, Side::Floe, Side::Python, "FloePy");
    checks(&reg, Side::Python, Side::Floe, "PyFloe");
    checks(&reg, Side::Floe, Side::Floe, "FloeFloe");

    moved_well_known_object(&reg);

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
    resolved_proxies_cost_nothing_more(reg, s);
}

/// A well-known object that moves: a floe client that cached its old
/// place gets ObjectNotExist there, forgets the locator's answer and
/// retries, as Ice does, reaching the new place with the same proxy.
fn moved_well_known_object(reg: &Registry) {
    // The Python server serves only `a`; floe's serves `a`, `t` and `m`.
    let old = start_server(Side::Python, reg, "Moved-1", "-");
    let new = start_server(Side::Floe, reg, "Moved-2", "-");
    // With its type: icegridadmin would ask the object, which is not there.
    reg.admin("object add \"t@Moved-1\" ::Bench::Throughput");
    let rt = runtime();
    let props = Properties::new();
    props.set("Ice.Default.Locator", &reg.locator());
    let communicator = Communicator::with_properties(props);
    let t = communicator.string_to_proxy("t").expect("proxy");
    let first = rt.block_on(t.ice_ping());
    assert!(
        matches!(first, Err(floe::runtime::Error::ObjectNotExist(_))),
        "{first:?}"
    );
    reg.admin("object remove t");
    reg.admin("object add \"t@Moved-2\" ::Bench::Throughput");
    rt.block_on(t.ice_ping()).expect("found at its new place");
    rt.block_on(communicator.destroy());
    reg.admin("object remove t");
    terminate(old);
    terminate(new);
}

/// Once resolved, an indirect proxy calls as a direct one does: the
/// figures are printed (`--nocapture`), and its calls go on when the
/// registry is gone, so they do not touch it.
fn resolved_proxies_cost_nothing_more(mut reg: Registry, server: Server) {
    let rt = runtime();
    let props = Properties::new();
    props.set("Ice.Default.Locator", &reg.locator());
    let communicator = Communicator::with_properties(props);
    let proxy =
        |s: &str| LatencyPrx::unchecked_cast(communicator.string_to_proxy(s).expect("proxy"));
    let indirect = proxy(&format!("a@{}", server.adapter_id));
    let direct = proxy(&format!("a:tcp -h 127.0.0.1 -p {}", server.port));
    let per_call = |prx: &LatencyPrx| {
        rt.block_on(async {
            let t = Instant::now();
            for _ in 0..500 {
                prx.o().await.expect("o()");
            }
            t.elapsed() / 500
        })
    };
    per_call(&indirect);
    per_call(&direct);
    let (mut i, mut d) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        i.push(per_call(&indirect));
        d.push(per_call(&direct));
    }
    i.sort();
    d.sort();
    println!(
        "per call (median of 5 x 500): indirect {:?}, direct {:?}",
        i[2], d[2]
    );
    reg.node.kill();
    // Panics if a call fails.
    per_call(&indirect);
    rt.block_on(communicator.destroy());
    terminate(server);
}
