//! A floe server's IceMX views scraped by a real Prometheus: the server
//! (a `#[floe::interface]` servant) starts its endpoint from the property
//! `Floe.Prometheus.Endpoint`, real Ice 3.7 Python clients
//! (`tests/prometheus/clients.py`, each its own process and connection)
//! call it, Debian's `prometheus` scrapes it every second, and the series
//! read back through Prometheus's HTTP API must equal what the clients
//! did:
//!
//! - `icemx_dispatch_total{id="echo"}` = the clients' `echo` calls, and
//!   the parameters' bytes of those calls;
//! - `icemx_dispatch_total{id="ice_ping"}` = two per client, of which one
//!   failed: `icemx_dispatch_failures_total` and
//!   `icemx_dispatch_exceptions_total{exception="::Ice::ObjectNotExistException"}`;
//! - `icemx_connection_total{id="A"}` = one connection per client, none
//!   current once they closed, bytes received and sent;
//! - nothing current in the dispatch map.
//!
//! Skipped when the `prometheus` binary is absent (`cargo xtask test`
//! installs it; under `CI=true` it fails instead); `FLOE_NO_INTEROP=1`
//! skips it.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use floe::runtime::{Communicator, Current, DispatchError, Properties};
use floe::Identity;
use floe_testkit::prometheus::{self, http_get, now_secs, Prometheus, Sample};
use floe_testkit::{interop_disabled, require_python_ice, Peer, PYTHON};

/// Python client processes.
const CLIENTS: u32 = 3;
/// `echo` calls of each client.
const CALLS: u32 = 200;

#[floe::interface(module = "Prom")]
pub trait Svc {
    /// Returns `s`.
    async fn echo(&self, s: String) -> String;
}

struct Echo;

impl Svc for Echo {
    async fn echo(&self, s: String, _: &Current) -> Result<String, DispatchError> {
        Ok(s)
    }
}

/// The server's properties: a view that groups dispatches by operation
/// and connections by adapter, and the scrape endpoint on a free port.
fn server_properties() -> Properties {
    let props = Properties::new();
    props.set("IceMX.Metrics.ByOp.Map.Dispatch.GroupBy", "operation");
    props.set("IceMX.Metrics.ByOp.Map.Connection.GroupBy", "parent");
    props.set("Floe.Prometheus.Endpoint", "127.0.0.1:0");
    props
}

/// The value of the one series `selector` selects, from a scrape after
/// `after`.
fn one(prometheus: &Prometheus, selector: &str, after: f64) -> f64 {
    let samples: Vec<Sample> = prometheus.latest(selector, after);
    assert_eq!(samples.len(), 1, "{selector}: {samples:?}");
    samples[0].value
}

#[test]
fn prometheus_reads_a_floe_servers_icemx_views() {
    if interop_disabled("prometheus") || !prometheus::available() {
        return;
    }
    require_python_ice();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (server, proxy) = runtime.block_on(async {
        let server = Communicator::with_properties(server_properties());
        let adapter = server
            .create_object_adapter_with_endpoints("A", "tcp -h 127.0.0.1 -p 0")
            .await
            .unwrap();
        let proxy = adapter
            .add(Identity::from_name("svc"), SvcDispatcher::new(Echo))
            .unwrap();
        adapter.activate();
        (server, proxy.to_string())
    });
    let metrics = server.prometheus_addr().expect("the endpoint started");
    let (status, text) = http_get(metrics, "/metrics").unwrap();
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("# TYPE icemx_dispatch counter"), "{text}");
    let prometheus = Prometheus::start("floe-server", metrics);

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/prometheus/clients.py");
    let clients: Vec<Peer> = (0..CLIENTS)
        .map(|i| {
            let mut cmd = Command::new(PYTHON);
            cmd.arg(&script).arg(&proxy).arg(CALLS.to_string());
            Peer::spawn(&format!("client {i}"), cmd)
        })
        .collect();
    for client in clients {
        let (status, lines) = client.wait_exit(Duration::from_secs(120));
        assert!(status.is_some_and(|s| s.success()), "{status:?}: {lines:?}");
        assert_eq!(
            lines.last().map(String::as_str),
            Some(&*format!("done echo={CALLS}"))
        );
    }
    let run_end = now_secs();

    let calls = f64::from(CLIENTS * CALLS);
    let clients = f64::from(CLIENTS);
    let view = "view=\"ByOp\"";
    let echo = format!("{{{view},id=\"echo\"}}");
    let ping = format!("{{{view},id=\"ice_ping\"}}");
    let conn = format!("{{{view},id=\"A\"}}");
    assert_eq!(
        one(&prometheus, &format!("icemx_dispatch_total{echo}"), run_end),
        calls
    );
    assert_eq!(
        one(
            &prometheus,
            &format!("icemx_dispatch_current{echo}"),
            run_end
        ),
        0.0
    );
    assert_eq!(
        one(
            &prometheus,
            &format!("icemx_dispatch_failures_total{echo}"),
            run_end
        ),
        0.0
    );
    // `echo("hello")` to `svc`: Ice counts a dispatch's `size` from the
    // identity on (identity 5, facet 1, operation 5, mode 1, context 1,
    // the 12-byte encapsulation of the string), and its `replySize` from
    // the reply status on (1, and the reply's 12-byte encapsulation).
    let request = one(
        &prometheus,
        &format!("icemx_dispatch_request_bytes_total{echo}"),
        run_end,
    );
    assert_eq!(request, calls * 25.0);
    let reply = one(
        &prometheus,
        &format!("icemx_dispatch_reply_bytes_total{echo}"),
        run_end,
    );
    assert_eq!(reply, calls * 13.0);
    assert_eq!(
        one(&prometheus, &format!("icemx_dispatch_total{ping}"), run_end),
        2.0 * clients
    );
    assert_eq!(
        one(
            &prometheus,
            &format!("icemx_dispatch_failures_total{ping}"),
            run_end
        ),
        clients
    );
    let not_exist = format!(
        "icemx_dispatch_exceptions_total{{{view},id=\"ice_ping\",exception=\"::Ice::ObjectNotExistException\"}}"
    );
    assert_eq!(one(&prometheus, &not_exist, run_end), clients);
    assert_eq!(
        one(
            &prometheus,
            &format!("icemx_connection_total{conn}"),
            run_end
        ),
        clients
    );
    assert_eq!(
        one(
            &prometheus,
            &format!("icemx_connection_current{conn}"),
            run_end
        ),
        0.0
    );
    let received = one(
        &prometheus,
        &format!("icemx_connection_received_bytes_total{conn}"),
        run_end,
    );
    let sent = one(
        &prometheus,
        &format!("icemx_connection_sent_bytes_total{conn}"),
        run_end,
    );
    assert!(
        received > calls * 12.0 && sent > calls * 12.0,
        "{received} {sent}"
    );

    runtime.block_on(server.destroy());
    assert!(
        server.prometheus_addr().is_none(),
        "destroy stops the endpoint"
    );
}
