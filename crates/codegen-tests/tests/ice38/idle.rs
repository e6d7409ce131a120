//! Connection liveness with default settings on every side: an idle
//! connection between floe and Ice 3.7 or Ice 3.8 stays up, where Ice 3.7
//! and Ice 3.8 drop each other's; and a hung peer is still detected.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use floe::runtime::{Communicator, Error, Properties};
use floe_codegen_tests::interop38::PeerPrx;

use crate::floe_peers::FloeServer;
use crate::support::{pythons, script, Peer};

/// Longer than Ice 3.8's default idle timeout (60 s) and Ice 3.7's default
/// ACM timeout (60 s), as the test asks.
const IDLE: Duration = Duration::from_secs(75);

/// How one idle cell ended: the same connection after the idle period, or
/// another one (the first was closed, and the call reconnected).
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Same,
    Changed(String),
}

/// A floe client against `port`: whoami, idle, whoami.
async fn floe_client(port: u16) -> Outcome {
    let communicator = Communicator::new();
    let peer = PeerPrx::unchecked_cast(
        communicator
            .string_to_proxy(&format!("peer:tcp -h 127.0.0.1 -p {port}"))
            .unwrap(),
    );
    let before = peer.whoami().await.unwrap();
    let connection = peer.ice_get_cached_connection().expect("connected");
    tokio::time::sleep(IDLE).await;
    let ended = connection.end_error();
    let after = peer.whoami().await.unwrap();
    communicator.destroy().await;
    match ended {
        None if before == after => Outcome::Same,
        e => Outcome::Changed(format!("{e:?}")),
    }
}

/// A Python client (`peer.py idle`) against `port`.
async fn python_client(python: PathBuf, port: u16) -> Outcome {
    tokio::task::spawn_blocking(move || {
        let lines = Peer::spawn(
            "idle client",
            &python,
            &script("peer.py"),
            &[
                "idle".into(),
                format!("peer:tcp -h 127.0.0.1 -p {port}"),
                IDLE.as_secs().to_string(),
            ],
        )
        .finish();
        if lines.iter().any(|l| l == "IDLE same") && !lines.iter().any(|l| l.starts_with("CLOSED"))
        {
            Outcome::Same
        } else {
            Outcome::Changed(lines.join(" / "))
        }
    })
    .await
    .unwrap()
}

fn python_server(name: &str, python: &Path) -> (Peer, u16) {
    Peer::server(name, python, &script("peer.py"), &[])
}

/// Every pair at default settings, idle for 75 s, all at once: the floe
/// cells must keep their connection; the Ice 3.7 <-> Ice 3.8 cells are the
/// reference (Ice 3.8's idle check drops a silent 3.7 peer).
#[tokio::test(flavor = "multi_thread")]
async fn idle_connections_stay_up_at_defaults() {
    let Some((py38, py37)) = pythons("idle_connections_stay_up_at_defaults") else {
        return;
    };
    let (_s38, port38) = python_server("Ice 3.8 server", &py38);
    let (_s37, port37) = python_server("Ice 3.7 server", &py37);
    let floe = FloeServer::start().await;
    let started = Instant::now();
    let cells = [
        (
            "floe client -> Ice 3.8 server",
            tokio::spawn(floe_client(port38)),
        ),
        (
            "floe client -> Ice 3.7 server",
            tokio::spawn(floe_client(port37)),
        ),
        (
            "floe client -> floe server",
            tokio::spawn(floe_client(floe.port)),
        ),
        (
            "Ice 3.8 client -> floe server",
            tokio::spawn(python_client(py38.clone(), floe.port)),
        ),
        (
            "Ice 3.7 client -> floe server",
            tokio::spawn(python_client(py37.clone(), floe.port)),
        ),
        (
            "Ice 3.8 client -> Ice 3.8 server (reference)",
            tokio::spawn(python_client(py38.clone(), port38)),
        ),
        (
            "Ice 3.7 client -> Ice 3.8 server (reference)",
            tokio::spawn(python_client(py37.clone(), port38)),
        ),
        (
            "Ice 3.8 client -> Ice 3.7 server (reference)",
            tokio::spawn(python_client(py38.clone(), port37)),
        ),
        (
            "Ice 3.7 client -> Ice 3.7 server (reference)",
            tokio::spawn(python_client(py37.clone(), port37)),
        ),
    ];
    let mut outcomes = Vec::new();
    for (name, cell) in cells {
        let outcome = cell.await.expect("cell");
        println!("idle {}s, defaults: {name}: {outcome:?}", IDLE.as_secs());
        outcomes.push((name, outcome));
    }
    println!("all cells in {:.0?}", started.elapsed());
    for (name, outcome) in &outcomes {
        if name.starts_with("floe") || name.ends_with("floe server") {
            assert_eq!(*outcome, Outcome::Same, "{name}");
        }
    }
    // The reference: without heartbeats from the 3.7 side, Ice 3.8's idle
    // check aborts the connection after 60 s.
    for (name, outcome) in &outcomes {
        if name.contains("Ice 3.7") && name.contains("Ice 3.8") {
            assert_ne!(
                *outcome,
                Outcome::Same,
                "{name}: Ice kept it; the docs say otherwise"
            );
        }
    }
    floe.communicator.destroy().await;
}

/// Short idle timeouts on both sides (2 s), so that hung peers show in
/// seconds: a floe client detects a stopped Ice 3.8 server, a floe server a
/// stopped Ice 3.8 client (both heartbeat, which arms the idle check), and a
/// floe client a stopped Ice 3.7 server while a call waits on it.
#[tokio::test(flavor = "multi_thread")]
async fn hung_peers_are_detected() {
    let Some((py38, py37)) = pythons("hung_peers_are_detected") else {
        return;
    };
    let fast = "--Ice.Connection.Server.IdleTimeout=2".to_owned();
    let props = || {
        let p = Properties::new();
        p.set("Ice.Connection.Client.IdleTimeout", "2");
        p.set("Ice.Connection.Server.IdleTimeout", "2");
        p
    };

    // floe client -> stopped Ice 3.8 server.
    let (server38, port38) = Peer::server("Ice 3.8 server", &py38, &script("peer.py"), &[fast]);
    let communicator = Communicator::with_properties(props());
    let peer = PeerPrx::unchecked_cast(
        communicator
            .string_to_proxy(&format!("peer:tcp -h 127.0.0.1 -p {port38}"))
            .unwrap(),
    );
    peer.whoami().await.unwrap();
    let connection = peer.ice_get_cached_connection().unwrap();
    // The server heartbeats every second: the check is armed.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(connection.is_active(), "a heartbeating server is kept");
    server38.signal("-STOP");
    let stopped = Instant::now();
    tokio::time::timeout(Duration::from_secs(10), connection.closed())
        .await
        .expect("the stopped server is detected");
    println!(
        "floe client: stopped Ice 3.8 server detected after {:.1?}",
        stopped.elapsed()
    );
    assert!(matches!(
        connection.end_error(),
        Some(Error::ConnectionAborted(_))
    ));
    server38.signal("-CONT");

    // floe server -> stopped Ice 3.8 client.
    let floe = FloeServer::with_properties(props()).await;
    let client = Peer::spawn(
        "Ice 3.8 client",
        &py38,
        &script("peer.py"),
        &[
            "idle".into(),
            format!("peer:tcp -h 127.0.0.1 -p {}", floe.port),
            "30".into(),
            "--Ice.Connection.Client.IdleTimeout=2".into(),
        ],
    );
    let caller = wait_for_caller(&floe).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(caller.is_active(), "a heartbeating client is kept");
    client.signal("-STOP");
    let stopped = Instant::now();
    tokio::time::timeout(Duration::from_secs(10), caller.closed())
        .await
        .expect("the stopped client is detected");
    println!(
        "floe server: stopped Ice 3.8 client detected after {:.1?}",
        stopped.elapsed()
    );
    assert!(matches!(
        caller.end_error(),
        Some(Error::ConnectionAborted(_))
    ));
    client.signal("-CONT");
    drop(client);

    // floe client -> stopped Ice 3.7 server (default ACM: it heartbeats
    // only while it dispatches) with a call waiting for its reply.
    let (server37, port37) = Peer::server("Ice 3.7 server", &py37, &script("peer.py"), &[]);
    let peer = PeerPrx::unchecked_cast(
        communicator
            .string_to_proxy(&format!("peer:tcp -h 127.0.0.1 -p {port37}"))
            .unwrap(),
    );
    peer.whoami().await.unwrap();
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.slow(60_000).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    server37.signal("-STOP");
    let stopped = Instant::now();
    let result = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call fails once the stopped server is detected")
        .unwrap();
    println!(
        "floe client: stopped Ice 3.7 server with a call pending detected after {:.1?}: {result:?}",
        stopped.elapsed()
    );
    assert!(
        matches!(result, Err(Error::ConnectionAborted(_))),
        "{result:?}"
    );
    server37.signal("-CONT");
    communicator.destroy().await;
    floe.communicator.destroy().await;
}

/// The server side of the first `whoami` call on `floe`.
async fn wait_for_caller(floe: &FloeServer) -> floe::runtime::Connection {
    for _ in 0..200 {
        if let Some(c) = floe
            .last_caller
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the client never called");
}
