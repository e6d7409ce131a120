//! floe with Ice 3.8 peers (Ice 3.8.3 for Python, `zeroc-ice` from PyPI),
//! next to Ice 3.7 ones, in both directions:
//!
//! - Bench.ice's checks: an Ice 3.8 client against a floe server and a floe
//!   client against an Ice 3.8 server (the Ice 3.8 client against an Ice 3.8
//!   server first, as the reference);
//! - reply statuses above 7 (Ice 3.8's `InvalidData`, `Unauthorized`, any
//!   other value): each fails only its own call, never the connection nor a
//!   call in flight on it; an Ice 3.7 client gets what an Ice 3.8 server
//!   sends it;
//! - connection liveness: idle connections at default settings stay up
//!   between floe and 3.7 and 3.8 peers (`idle.rs`), and a hung peer is
//!   still detected.
//!
//! `cargo xtask test` installs Ice 3.8 for Python and runs this target once
//! the install is done (see `floe_testkit::ice38`).

mod bench_checks;
mod floe_peers;
mod idle;
mod support;

use std::time::Duration;

use floe::runtime::{Communicator, Error, ReplyStatus};
use floe_codegen_tests::interop38::PeerPrx;

use support::{pythons, script, Peer, Report};

#[tokio::test(flavor = "multi_thread")]
async fn bench_checks_both_ways() {
    let Some((py38, _)) = pythons("bench_checks_both_ways") else {
        return;
    };
    let bench = script("bench.py");
    // Reference: Ice 3.8 client -> Ice 3.8 server.
    let (_server38, port38) = Peer::server("Ice 3.8 bench server", &py38, &bench, &[]);
    let client = |port: u16| {
        let py38 = py38.clone();
        let bench = bench.clone();
        tokio::task::spawn_blocking(move || {
            let lines = Peer::spawn(
                "Ice 3.8 bench client",
                &py38,
                &bench,
                &["client".into(), port.to_string()],
            )
            .finish();
            Report::parse(&lines)
        })
    };
    let reference = client(port38).await.expect("client thread");
    reference.assert_all_passed("Ice 3.8 client -> Ice 3.8 server", bench_checks::COUNT);
    // Ice 3.8 client -> floe server.
    let server = floe_peers::FloeServer::start().await;
    let report = client(server.port).await.expect("client thread");
    report.assert_all_passed("Ice 3.8 client -> floe server", bench_checks::COUNT);
    // floe client -> Ice 3.8 server.
    let communicator = Communicator::new();
    let report = bench_checks::run(&communicator, port38).await;
    report.assert_all_passed("floe client -> Ice 3.8 server", bench_checks::COUNT);
    communicator.destroy().await;
    server.communicator.destroy().await;
}

/// Statuses above 7 from an Ice 3.8 server: only the failing call fails,
/// with the status and the message; a call in flight completes; the
/// connection stays.
#[tokio::test(flavor = "multi_thread")]
async fn reply_statuses_floe_client_to_ice38_server() {
    let Some((py38, _)) = pythons("reply_statuses_floe_client_to_ice38_server") else {
        return;
    };
    let (_server, port) = Peer::server("Ice 3.8 server", &py38, &script("peer.py"), &[]);
    let communicator = Communicator::new();
    let peer = PeerPrx::unchecked_cast(
        communicator
            .string_to_proxy(&format!("peer:tcp -h 127.0.0.1 -p {port}"))
            .unwrap(),
    );
    let before = peer.whoami().await.unwrap();
    let connection = peer.ice_get_cached_connection().expect("connected");
    for (status, message) in [(8, "invalid data"), (9, "no token"), (200, "custom")] {
        let in_flight = {
            let peer = peer.clone();
            tokio::spawn(async move { peer.slow(300).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        match peer.fail(status, message).await {
            Err(Error::DispatchException {
                status: s,
                message: m,
            }) => {
                assert_eq!(s, ReplyStatus::from_u8(status as u8));
                assert_eq!(m, message);
            }
            other => panic!("status {status}: {other:?}"),
        }
        assert_eq!(in_flight.await.unwrap().unwrap(), 300, "the call in flight");
    }
    assert_eq!(peer.whoami().await.unwrap(), before, "same connection");
    assert!(connection.is_active());
    assert!(connection.ptr_eq(&peer.ice_get_cached_connection().unwrap()));
    communicator.destroy().await;
}

/// A floe server answers statuses above 7 as an Ice 3.8 server does: the
/// Ice 3.8 client raises `DispatchException(status, message)`, the Ice 3.7
/// client `UnknownReplyStatusException`, and both keep the connection. The
/// same clients against an Ice 3.8 server first, as the reference.
#[tokio::test(flavor = "multi_thread")]
async fn reply_statuses_ice_clients_to_floe_server() {
    let Some((py38, py37)) = pythons("reply_statuses_ice_clients_to_floe_server") else {
        return;
    };
    let peer_py = script("peer.py");
    let (_server38, port38) = Peer::server("Ice 3.8 server", &py38, &peer_py, &[]);
    let server = floe_peers::FloeServer::start().await;
    for (who, python) in [("Ice 3.8", &py38), ("Ice 3.7", &py37)] {
        for (server_name, port) in [("Ice 3.8 server", port38), ("floe server", server.port)] {
            let (python, peer_py) = (python.clone(), peer_py.clone());
            let name = format!("{who} client -> {server_name}");
            let lines = tokio::task::spawn_blocking(move || {
                Peer::spawn(
                    "statuses client",
                    &python,
                    &peer_py,
                    &[
                        "statuses".into(),
                        format!("peer:tcp -h 127.0.0.1 -p {port}"),
                    ],
                )
                .finish()
            })
            .await
            .unwrap();
            Report::parse(&lines).assert_all_passed(&name, 7);
        }
    }
    server.communicator.destroy().await;
}
