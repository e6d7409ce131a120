//! Faults an unlucky operator meets, against real Ice 3.7 peers
//! (`tests/faults/slow_server.py`):
//!
//! - the server is killed (SIGKILL) while calls are in flight: they fail
//!   with `ConnectionLost` at once; only the idempotent one is retried,
//!   and it reaches the restarted server;
//! - the peer stops answering (a relay in the test black-holes the
//!   traffic, as a dead host or a broken route would): the invocation
//!   timeout fires, and without one, ACM closes the connection;
//! - a connection whose peer went silent (half-open) is reclaimed by the
//!   server's ACM: a graceful close, then a forced one after
//!   `Ice.Override.CloseTimeout`.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use floe_runtime::{Communicator, Error, Properties, Proxy};
use floe_testkit::*;
use floe_wire::protocol::OperationMode;
use floe_wire::Decoder;

/// Starts `slow_server.py` on `port` (0: any) as `incarnation`.
fn slow_server(port: u16, incarnation: u32) -> (Peer, u16) {
    require_python_ice();
    let mut cmd = Command::new(PYTHON);
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/faults/slow_server.py"))
        .arg(port.to_string())
        .arg(incarnation.to_string());
    let mut peer = Peer::spawn(&format!("slow_server #{incarnation}"), cmd);
    let port = peer
        .wait_ready("READY ", READY_TIMEOUT)
        .parse()
        .expect("READY <port>");
    (peer, port)
}

fn communicator(props: &[(&str, &str)]) -> Communicator {
    let p = Properties::new();
    for (k, v) in props {
        p.set(k, v);
    }
    Communicator::with_properties(p)
}

/// Calls `op(ms)`; the server's incarnation, or the error.
async fn call(proxy: &Proxy, op: &str, ms: i32) -> Result<i32, Error> {
    let mode = if op.starts_with("idem") {
        OperationMode::Idempotent
    } else {
        OperationMode::Normal
    };
    let params = proxy.encode_params(|e| e.write_i32(ms));
    let results = proxy.invoke(op, mode, params).await?.into_ok()?;
    let mut dec = Decoder::from_encapsulation(results)?;
    Ok(dec.read_i32()?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_fails_calls_at_once_and_only_idempotent_ones_are_retried() {
    if interop_disabled("faults: killed server") {
        return;
    }
    let (mut first, port) = slow_server(0, 1);
    // Retries wait long enough for the server to come back.
    let communicator = communicator(&[("Ice.RetryIntervals", "0 200 400 800 1600")]);
    let proxy = communicator
        .string_to_proxy(&format!("slow:{}", endpoint(port)))
        .unwrap();
    let normal = tokio::spawn({
        let proxy = proxy.clone();
        async move { (call(&proxy, "sleepMs", 30_000).await, Instant::now()) }
    });
    first.wait_ready("CALL sleepMs", READY_TIMEOUT);
    let idempotent = tokio::spawn({
        let proxy = proxy.clone();
        async move { call(&proxy, "idemSleepMs", 30_000).await }
    });
    first.wait_ready("CALL idemSleepMs", READY_TIMEOUT);

    let killed = Instant::now();
    first.kill();
    let (mut second, _) = slow_server(port, 2);

    let (result, failed_at) = normal.await.unwrap();
    assert!(
        matches!(result, Err(Error::ConnectionLost(_))),
        "{result:?}"
    );
    let seen_after = failed_at.duration_since(killed);
    assert!(
        seen_after < Duration::from_millis(500),
        "the loss was seen after {seen_after:?}"
    );
    // The idempotent call was retried, on the new server.
    assert_eq!(idempotent.await.unwrap().unwrap(), 2);
    second.wait_ready("CALL idemSleepMs", READY_TIMEOUT);
    // ...and the other was not (a call after it goes through, and the new
    // server saw no `sleepMs` before it).
    assert_eq!(call(&proxy, "idemSleepMs", 0).await.unwrap(), 2);
    second.wait_ready("CALL idemSleepMs", READY_TIMEOUT);
    assert!(!second.log().contains("CALL sleepMs"), "{}", second.log());
    communicator.destroy().await;
}

/// A TCP relay to `target` that forwards until `black_hole` is set, then
/// reads and drops everything, in both directions, keeping the
/// connections open.
fn relay(target: u16, black_hole: Arc<AtomicBool>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                continue;
            };
            let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            pump(client, server, black_hole.clone());
            pump(s2, c2, black_hole.clone());
        }
    });
    port
}

fn pump(mut from: TcpStream, mut to: TcpStream, black_hole: Arc<AtomicBool>) {
    thread::spawn(move || {
        let mut buf = [0u8; 16384];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => {
                    let _ = to.shutdown(Shutdown::Write);
                    return;
                }
                Ok(n) if !black_hole.load(Ordering::SeqCst) => {
                    if to.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
            }
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_peer_fires_the_invocation_timeout_and_acm() {
    if interop_disabled("faults: black hole") {
        return;
    }
    let (_server, port) = slow_server(0, 1);
    let black_hole = Arc::new(AtomicBool::new(false));
    let relay = relay(port, black_hole.clone());
    // ACM: a connection with a pending call and no traffic for 1 s is
    // closed (Close=2, CloseOnInvocation); no heartbeats; no retries, so
    // that the errors show.
    let communicator = communicator(&[
        ("Ice.ACM.Client.Timeout", "1"),
        ("Ice.ACM.Client.Heartbeat", "0"),
        ("Ice.ACM.Client.Close", "2"),
        ("Ice.RetryIntervals", "-1"),
    ]);
    let proxy = communicator
        .string_to_proxy(&format!("slow:{}", endpoint(relay)))
        .unwrap();
    assert_eq!(call(&proxy, "sleepMs", 0).await.unwrap(), 1);
    black_hole.store(true, Ordering::SeqCst);

    let timed = proxy.ice_invocation_timeout(Some(Duration::from_millis(300)));
    let started = Instant::now();
    let result = call(&timed, "sleepMs", 0).await;
    let took = started.elapsed();
    assert!(
        matches!(result, Err(Error::InvocationTimeout)),
        "{result:?}"
    );
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_millis(1500),
        "invocation timeout after {took:?}"
    );

    let started = Instant::now();
    let result = call(&proxy, "sleepMs", 0).await;
    let took = started.elapsed();
    assert!(
        matches!(result, Err(Error::ConnectionTimeout)),
        "{result:?}"
    );
    assert!(took < Duration::from_secs(3), "ACM closed after {took:?}");
    communicator.destroy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_open_connection_is_reclaimed_by_the_server() {
    let communicator = communicator(&[
        ("Ice.ACM.Server.Timeout", "1"),
        ("Ice.ACM.Server.Close", "1"),
        ("Ice.Override.CloseTimeout", "500"),
    ]);
    let adapter = communicator
        .create_object_adapter_with_endpoints("Faults", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    adapter.activate();
    let port = adapter.endpoints()[0].port;
    // A client that went away without a FIN: connected, then silent; it
    // never answers the server's CloseConnection.
    let outcome = tokio::task::spawn_blocking(move || {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut validate = [0u8; 14];
        s.read_exact(&mut validate).unwrap();
        assert_eq!(validate[8], 3, "ValidateConnection");
        let started = Instant::now();
        let mut close = [0u8; 14];
        s.read_exact(&mut close).unwrap();
        let closing = started.elapsed();
        let mut rest = Vec::new();
        let end = s.read_to_end(&mut rest).map(|_| started.elapsed());
        (close[8], closing, end, rest.len())
    })
    .await
    .unwrap();
    let (message_type, closing, end, extra) = outcome;
    assert_eq!(message_type, 4, "CloseConnection");
    assert!(
        closing >= Duration::from_millis(900) && closing < Duration::from_millis(2500),
        "idle close after {closing:?}"
    );
    let end = end.expect("the server closes the socket");
    assert_eq!(extra, 0);
    assert!(
        end - closing < Duration::from_millis(1500),
        "forced close {:?} after the graceful one",
        end - closing
    );
    communicator.destroy().await;
}
