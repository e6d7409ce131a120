//! floe servers activated by a real IceGrid node: an application
//! descriptor deployed with `icegridadmin application add` puts two
//! `grid_server` processes (floe's example, started by `icegridnode` with
//! only `--Ice.Config=FILE`) in a round-robin replica group, and a third
//! with `Ice.Admin.Enabled=0`. Python Ice servers deployed the same way
//! run the checks first, as the reference:
//! - `icegridadmin server start` activates them (they register their
//!   adapters and, with admin enabled, their `Process` proxy, or the
//!   activation would time out);
//! - Python and floe clients resolving `a@<group>` with Ordered selection
//!   alternate between the two replicas (round-robin);
//! - `icegridadmin server stop` stops them quickly (`Process::shutdown`,
//!   or SIGTERM when admin is disabled), and `server signal` too;
//! - their output lands in the files the descriptor names (`Ice.StdOut`,
//!   `Ice.StdErr`, appended across restarts; `server show ID stdout`,
//!   `server stdout ID MESSAGE`), their log lines carry the server id
//!   (`Ice.ProgramName`, which the node sets);
//! - the admin facets: `Properties` (`server property`, `server
//!   properties`, and `application update --no-restart` changing a
//!   property of the running process) and `Logger` (`server show ID log`,
//!   and `--follow` seeing a new message as it is logged), and `Metrics`
//!   (`IceMX::MetricsAdmin` through `IceGrid::Admin::getServerAdmin`: the
//!   dispatches of the calls above, counted per operation).

mod grid {
    pub mod node_admin;
    pub mod support;
}

use std::path::Path;
use std::time::{Duration, Instant};

use floe_testkit::PYTHON;
use grid::node_admin;
use grid::support::*;

/// One server of the descriptor: `exe` and its options; its output goes
/// to `<out>/<id>.out` and `.err`, with network traces on.
fn server_xml(id: &str, side: Side, group: &str, admin: bool, out: &Path) -> String {
    let (exe, options) = match side {
        Side::Floe => (
            examples_dir().join("grid_server").display().to_string(),
            String::new(),
        ),
        Side::Python => (
            PYTHON.to_string(),
            format!(
                "<option>{}</option><option>server</option>",
                peer_script().display()
            ),
        ),
    };
    let group = if group.is_empty() {
        String::new()
    } else {
        format!(" replica-group=\"{group}\"")
    };
    let admin_off = if admin {
        ""
    } else {
        "<property name=\"Ice.Admin.Enabled\" value=\"0\"/>"
    };
    let output = format!(
        "<property name=\"Ice.StdOut\" value=\"{}\"/>\
         <property name=\"Ice.StdErr\" value=\"{}\"/>\
         <property name=\"Ice.Trace.Network\" value=\"1\"/>\
         <property name=\"IceMX.Metrics.ByOperation.GroupBy\" value=\"operation\"/>{}",
        out.join(format!("{id}.out")).display(),
        out.join(format!("{id}.err")).display(),
        // Changed at run time through the Properties facet.
        if admin {
            "<property name=\"Test.Setting\" value=\"{setting}\"/>"
        } else {
            ""
        },
    );
    format!(
        "<server id=\"{id}\" exe=\"{exe}\" activation=\"manual\">{options}{admin_off}{output}\
         <adapter name=\"BenchAdapter\" endpoints=\"tcp -h 127.0.0.1\"{group}/></server>"
    )
}

/// Whether `icegridadmin server state` says `state`.
fn state_is(reg: &Registry, id: &str, state: &str) -> bool {
    reg.admin(&format!("server state {id}")).starts_with(state)
}

/// Waits up to 10 s for the state; the time it took.
fn wait_state(reg: &Registry, id: &str, state: &str) -> Duration {
    let t = Instant::now();
    while !state_is(reg, id, state) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{id}: not {state}: {}",
            reg.admin(&format!("server state {id}"))
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    t.elapsed()
}

/// Deploys and checks the servers of `side`.
fn node_checks(reg: &Registry, side: Side, tag: &str) {
    let group = format!("{tag}RR");
    let ids = [format!("{tag}1"), format!("{tag}2"), format!("{tag}3")];
    let dir = node_admin::output_dir();
    let out = dir.path();
    let xml = format!(
        "<icegrid><application name=\"{tag}App\">\
         <replica-group id=\"{group}\"><load-balancing type=\"round-robin\"/></replica-group>\
         <node name=\"node1\">{}{}{}</node></application></icegrid>",
        server_xml(&ids[0], side, &group, true, out),
        server_xml(&ids[1], side, &group, true, out),
        server_xml(&ids[2], side, "", false, out),
    );
    let file = out.join("app.xml");
    std::fs::write(&file, xml.replace("{setting}", "first")).expect("descriptor");
    reg.admin(&format!("application add \"{}\"", file.display()));

    for id in &ids {
        reg.admin(&format!("server start {id}"));
        assert!(state_is(reg, id, "active"), "{id} not active after start");
    }

    // Round-robin through the deployed replica group, both clients.
    for client in [Side::Python, Side::Floe] {
        let ports = calls(client, reg, &format!("a@{group}"), 4, true)
            .unwrap_or_else(|e| panic!("{side:?} servers, {client:?} client: {e}"));
        assert_ne!(ports[0], ports[1], "{side:?}/{client:?}: {ports:?}");
        assert_eq!(ports[0], ports[2], "{side:?}/{client:?}: {ports:?}");
        assert_eq!(ports[1], ports[3], "{side:?}/{client:?}: {ports:?}");
    }
    let own = format!("a@{}.BenchAdapter", ids[2]);
    assert!(calls(Side::Floe, reg, &own, 1, false).is_ok(), "{own}");

    // The Metrics facet, read through the registry: the replicas
    // dispatched the 8 calls of the two clients between them.
    let dispatched: u64 = ids[..2]
        .iter()
        .map(|id| node_admin::dispatched(reg, id, "o"))
        .sum();
    assert_eq!(dispatched, 8, "{side:?} servers: `o` dispatches");

    // Output files, log prefix, Properties and Logger facets.
    for (i, id) in ids.iter().enumerate() {
        node_admin::output_checks(reg, id, out, 1, i < 2);
    }
    node_admin::facet_checks(reg, &ids[0], &file, &xml);

    // Stopped by the node: Process::shutdown, then signals.
    let t = Instant::now();
    reg.admin(&format!("server stop {}", ids[0]));
    wait_state(reg, &ids[0], "inactive");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "stop took {:?}",
        t.elapsed()
    );
    let ports = calls(Side::Floe, reg, &format!("a@{group}"), 2, true).expect("survivor");
    assert_eq!(ports[0], ports[1], "only the second replica is left");
    reg.admin(&format!("server stop {}", ids[2]));
    wait_state(reg, &ids[2], "inactive");
    reg.admin(&format!("server signal {} SIGTERM", ids[1]));
    wait_state(reg, &ids[1], "inactive");
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "stops took {:?}",
        t.elapsed()
    );

    // Restarted, a server appends to its output files.
    reg.admin(&format!("server start {}", ids[0]));
    node_admin::output_checks(reg, &ids[0], out, 2, true);
    reg.admin(&format!("server stop {}", ids[0]));
    wait_state(reg, &ids[0], "inactive");
    reg.admin(&format!("application remove {tag}App"));
}

#[test]
fn icegrid_node_activates_and_stops_floe_servers() {
    if floe_testkit::interop_disabled("icegrid node") {
        return;
    }
    let reg = Registry::start();
    node_checks(&reg, Side::Python, "Py");
    node_checks(&reg, Side::Floe, "Floe");
}
