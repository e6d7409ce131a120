//! IceMX metrics through the admin `Metrics` facet (`IceMX::MetricsAdmin`),
//! read by an Ice 3.7 Python client: a floe server's `Dispatch` and
//! `Connection` maps after the client's calls, side by side with an Ice
//! (C++ core) server given the same `IceMX.Metrics.*` properties; and a
//! floe client's `Invocation` map.

use std::process::Command;

use floe_runtime::{servant_fn, Communicator, Dispatch, Identity, OperationMode, Properties};
use floe_testkit::{free_port, require_python_ice, PYTHON};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/metrics_admin/mx.py");

/// The views of both servers (as the script's `PROPS`).
const VIEWS: [(&str, &str); 8] = [
    ("IceMX.Metrics.Debug.GroupBy", "id"),
    ("IceMX.Metrics.ByParent.GroupBy", "parent"),
    ("IceMX.Metrics.Off.Disabled", "1"),
    ("IceMX.Metrics.Retain.Map.Dispatch.GroupBy", "operation"),
    ("IceMX.Metrics.Retain.Map.Dispatch.RetainDetached", "2"),
    ("IceMX.Metrics.Retain.Map.Dispatch.Accept.parent", "^A$"),
    ("IceMX.Metrics.ByState.Map.Connection.GroupBy", "state"),
    ("IceMX.Metrics.ByState.Map.Connection.Accept.parent", "^A$"),
];

fn props(instance: &str) -> Properties {
    let p = Properties::new();
    p.set("Ice.Admin.Endpoints", "tcp -h 127.0.0.1");
    p.set("Ice.Admin.InstanceName", instance);
    for (k, v) in VIEWS {
        p.set(k, v);
    }
    p
}

fn python(args: &[&str]) -> String {
    let out = Command::new(PYTHON)
        .arg(SCRIPT)
        .args(args)
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "mx.py {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A floe communicator serving `echo` on adapter `A`; its admin proxy.
async fn floe_server() -> (Communicator, String, String) {
    let server = Communicator::with_properties(props("floe"));
    let port = free_port();
    let adapter = server
        .create_object_adapter_with_endpoints("A", &format!("tcp -h 127.0.0.1 -p {port}"))
        .await
        .unwrap();
    let echo = adapter
        .add(
            Identity::from_name("echo"),
            servant_fn(|current, params| {
                let s = match current
                    .params_decoder(params)
                    .and_then(|mut d| d.read_string())
                {
                    Ok(s) => s,
                    Err(e) => return Dispatch::ready::<bytes::Bytes>(Err(e.into())),
                };
                Dispatch::ready(Ok::<_, floe_runtime::DispatchError>(
                    current.encode_reply(|e| e.write_string(&s)),
                ))
            }),
        )
        .unwrap();
    adapter.activate();
    let admin = server.create_admin().await.unwrap().expect("admin enabled");
    (server, echo.to_string(), admin.to_string())
}

/// The lines of `dump` about the echo server (not the admin connection).
fn service_lines(dump: &str) -> Vec<String> {
    dump.lines()
        .filter(|l| {
            l.starts_with("Debug Dispatch")
                || l.starts_with("ByParent")
                || l.starts_with("Retain")
                || l.starts_with("ByState")
                || l.starts_with("failures")
                || l.starts_with("views")
                || l.starts_with("unknown")
        })
        .map(|l| l.split(" timestamp_ok").next().unwrap_or(l).to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_reads_server_metrics_like_ice() {
    require_python_ice();
    let (_server, echo, admin) = floe_server().await;
    let floe = tokio::task::spawn_blocking(move || python(&["client", &echo, &admin]))
        .await
        .unwrap();
    let port = free_port().to_string();
    let ice = tokio::task::spawn_blocking(move || python(&["reference", &port]))
        .await
        .unwrap();
    println!("---- floe server (IceMX via Ice 3.7 Python client) ----\n{floe}");
    println!("---- Ice 3.7 server (C++ core), same properties ----\n{ice}");
    let (f, i) = (service_lines(&floe), service_lines(&ice));
    println!("---- side by side (floe | Ice) ----");
    for k in 0..f.len().max(i.len()) {
        println!(
            "{:<100} | {}",
            f.get(k).map_or("", String::as_str),
            i.get(k).map_or("", String::as_str)
        );
    }
    assert!(floe.contains(
        "Debug Dispatch DispatchMetrics [echo [echo]] current=0 failures=0 replySize=39 size=78 total=3 userException=0"
    ));
    // RetainDetached=2 keeps both entries of the Retain view, however
    // often the echo entry detached (as Ice does).
    assert!(floe.contains("Retain Dispatch DispatchMetrics [echo] "));
    assert!(floe.contains("Retain Dispatch DispatchMetrics [ice_ping] "));
    // The client's connection went holding, active, closing (its
    // CloseConnection), closed: one entry per state, as Ice has them.
    assert!(floe.contains(
        "ByState Connection ConnectionMetrics [closed] current=0 failures=0 receivedBytes=0 sentBytes=0 total=1"
    ));
    assert_eq!(f, i, "floe and Ice report the same service metrics");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_reads_floe_client_invocations() {
    require_python_ice();
    let (_server, echo, _) = floe_server().await;
    let client_props = props("client");
    // Every connection of the client by state.
    client_props.set("IceMX.Metrics.ClientState.Map.Connection.GroupBy", "state");
    let client = Communicator::with_properties(client_props);
    let admin = client
        .create_admin()
        .await
        .unwrap()
        .expect("admin")
        .to_string();
    let prx = client.string_to_proxy(&echo).unwrap();
    for _ in 0..3 {
        prx.invoke(
            "echo",
            OperationMode::Normal,
            prx.encode_params(|e| e.write_string("hello")),
        )
        .await
        .unwrap();
    }
    // Closed gracefully by the client: its CloseConnection (14 bytes)
    // counts in `closing`, as an Ice 3.7 client's does.
    prx.ice_get_connection().await.unwrap().close().await;
    let by_state = {
        let admin = admin.clone();
        tokio::task::spawn_blocking(move || python(&["read", &admin, "ClientState"]))
            .await
            .unwrap()
    };
    println!("---- floe client's ClientState view ----\n{by_state}");
    assert!(by_state.contains(
        "ClientState Connection ConnectionMetrics [closing] current=0 failures=0 receivedBytes=0 sentBytes=14 total=1"
    ));
    assert!(by_state.contains(
        "ClientState Connection ConnectionMetrics [closed] current=0 failures=0 receivedBytes=0 sentBytes=0 total=1"
    ));
    let dump = tokio::task::spawn_blocking(move || python(&["read", &admin, "Debug"]))
        .await
        .unwrap();
    println!("---- floe client's Debug view ----\n{dump}");
    assert!(dump.contains(
        "Debug Invocation InvocationMetrics [echo -t -e 1.1 [echo]] current=0 failures=0 retry=0 total=3 userException=0"
    ));
    assert!(dump.contains("Debug Remote RemoteMetrics [tcp -h 127.0.0.1 -p"));
    assert!(dump.contains("replySize=39 size=78 total=3"));
    assert!(dump.contains("Debug ConnectionEstablishment Metrics [127.0.0.1:"));
}
