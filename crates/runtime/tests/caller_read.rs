//! A twoway caller that reads its own reply (the only caller waiting on a
//! client's TCP connection does), while the server also sends requests,
//! heartbeats and nested twoway callbacks on that connection, and while
//! calls time out and are abandoned: every reply reaches its caller and
//! every callback is dispatched, on both tokio runtimes, with one caller
//! and with several, with the lone caller polling the socket for its reply
//! first (`floe.CallerSpin`, the default on the multi-thread runtime) and
//! without.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use floe_runtime::{
    servant_fn, Communicator, Dispatch, DispatchError, Error, Identity, ObjectAdapter,
    OperationMode, Properties, Proxy,
};

/// The longest any single call may take before the test calls it hung.
const HUNG: Duration = Duration::from_secs(10);

/// How long `slow` takes to answer.
const SLOW_MS: u64 = 20;

/// A server whose `o` answers at once, whose `mixed` first sends the
/// caller a oneway callback, a heartbeat and a twoway callback through the
/// caller's own connection, whose `slow` answers after 20 ms, and whose
/// `abort` drops the connection.
async fn server() -> (Communicator, u16) {
    let communicator = Communicator::new();
    let adapter = communicator
        .create_object_adapter_with_endpoints("Server", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let servant = servant_fn(move |current, _| match current.operation.as_str() {
        "o" => Dispatch::ready(Ok(current.empty_reply())),
        "mixed" => {
            let conn = current.connection.clone().expect("a connection");
            Dispatch::future(async move {
                let back = conn.create_proxy(Identity::from_name("cb"));
                let oneway = back.ice_oneway();
                oneway
                    .invoke("ping", OperationMode::Normal, oneway.empty_params())
                    .await
                    .map_err(DispatchError::from)?;
                conn.heartbeat().map_err(DispatchError::from)?;
                back.invoke("ping", OperationMode::Normal, back.empty_params())
                    .await
                    .map_err(DispatchError::from)?;
                Ok(current.empty_reply())
            })
        }
        // Drops the connection instead of replying.
        "abort" => {
            if let Some(conn) = &current.connection {
                conn.abort();
            }
            Dispatch::future(std::future::pending::<Result<bytes::Bytes, DispatchError>>())
        }
        "slow" => Dispatch::future(async move {
            tokio::time::sleep(Duration::from_millis(SLOW_MS)).await;
            Ok(current.empty_reply())
        }),
        _ => Dispatch::error(DispatchError::operation_not_exist()),
    });
    adapter.add(Identity::from_name("s"), servant).unwrap();
    adapter.activate();
    let port = adapter.endpoints()[0].port;
    (communicator, port)
}

/// A client whose connection to the server dispatches `cb` (counted)
/// through its `Callbacks` adapter; `spin` sets `floe.CallerSpin`.
async fn client(
    port: u16,
    spin: Option<&str>,
) -> (Communicator, Proxy, ObjectAdapter, Arc<AtomicUsize>) {
    let props = Properties::new();
    if let Some(spin) = spin {
        props.set("floe.CallerSpin", spin);
    }
    let communicator = Communicator::with_properties(props);
    let callbacks = communicator
        .create_object_adapter_with_endpoints("Callbacks", "")
        .await
        .unwrap();
    let pings = Arc::new(AtomicUsize::new(0));
    let count = pings.clone();
    callbacks
        .add(
            Identity::from_name("cb"),
            servant_fn(move |current, _| {
                count.fetch_add(1, Ordering::SeqCst);
                Dispatch::ready(Ok(current.empty_reply()))
            }),
        )
        .unwrap();
    callbacks.activate();
    let p = communicator
        .string_to_proxy(&format!("s:tcp -h 127.0.0.1 -p {port}"))
        .unwrap();
    p.ice_get_connection()
        .await
        .unwrap()
        .set_adapter(Some(callbacks.clone()));
    (communicator, p, callbacks, pings)
}

/// One call, failed if it hangs.
async fn call(p: &Proxy, operation: &str) -> Result<(), Error> {
    let params = p.empty_params();
    let call = p.invoke(operation, OperationMode::Normal, params);
    match tokio::time::timeout(HUNG, call).await {
        Ok(reply) => reply.map(drop),
        Err(_) => panic!("`{operation}` hung"),
    }
}

/// `calls` calls from one caller, every fourth a `mixed`; the number of
/// `mixed` calls.
async fn calls_from_one(p: &Proxy, calls: usize) -> usize {
    let mut mixed = 0;
    for i in 0..calls {
        if i % 4 == 0 {
            call(p, "mixed").await.unwrap();
            mixed += 1;
        } else {
            call(p, "o").await.unwrap();
        }
    }
    mixed
}

async fn run(calls: usize, spin: Option<&str>) {
    let (server, port) = server().await;
    let (client, p, callbacks, pings) = client(port, spin).await;
    let mut mixed = calls_from_one(&p, calls).await;

    // Abandoned calls: their late replies arrive while the next caller
    // reads.
    let impatient = p.ice_invocation_timeout(Some(Duration::from_millis(5)));
    for _ in 0..3 {
        let e = call(&impatient, "slow").await.unwrap_err();
        assert!(matches!(e, Error::InvocationTimeout), "{e}");
        mixed += calls_from_one(&p, 8).await;
    }
    tokio::time::sleep(Duration::from_millis(2 * SLOW_MS)).await;
    mixed += calls_from_one(&p, 8).await;

    // Two calls in flight from one task, answered together: the one
    // reading for itself takes both replies, and must wake the other
    // although its waker is the same (`join!` may have polled the other
    // already this round).
    let soon = Duration::from_millis(500);
    for second in ["slow", "o"].into_iter().cycle().take(20) {
        // The bare calls (no timeout of their own: its timer would wake
        // the task).
        let invoke = |op| p.invoke(op, OperationMode::Normal, p.empty_params());
        let both = async { tokio::join!(invoke("slow"), invoke(second)) };
        let (a, b) = tokio::time::timeout(soon, both)
            .await
            .expect("a reply read by the other call of the task was not woken");
        a.unwrap();
        b.unwrap();
    }

    // The connection dropped while the caller waits: the call fails (the
    // caller read the end of the stream, or the task did), and the next
    // one connects again. Then the callback adapter is set on the new
    // connection.
    let e = call(&p, "abort").await.unwrap_err();
    assert!(matches!(e, Error::ConnectionLost(_)), "{e}");
    p.ice_get_connection()
        .await
        .unwrap()
        .set_adapter(Some(callbacks.clone()));
    mixed += calls_from_one(&p, 8).await;

    // Several callers at once: none of them reads for itself while
    // another waits too, and the lone one left does.
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let p = p.clone();
            tokio::spawn(async move { calls_from_one(&p, calls / 4).await })
        })
        .collect();
    for task in tasks {
        mixed += task.await.unwrap();
    }

    // Each `mixed` sent two callbacks, both dispatched before its reply
    // was sent (the twoway one) or sent before it (the oneway one).
    let deadline = tokio::time::Instant::now() + HUNG;
    while pings.load(Ordering::SeqCst) < 2 * mixed {
        assert!(tokio::time::Instant::now() < deadline, "callbacks lost");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(pings.load(Ordering::SeqCst), 2 * mixed);
    client.destroy().await;
    server.destroy().await;
}

/// On the current-thread runtime callers spin only when
/// `floe.CallerSpin` is set.
#[tokio::test]
async fn current_thread() {
    run(400, Some("50")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_thread() {
    run(400, None).await;
}

#[tokio::test]
async fn current_thread_without_spinning() {
    run(400, Some("0")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_thread_without_spinning() {
    run(400, Some("0")).await;
}

/// A caller dropped while it polls for its reply (a window of a second,
/// a timeout of 5 ms) puts the socket back as it found it: a caller after
/// it that does not spin (a caller on another connection spins meanwhile,
/// and one caller of a process spins at a time) is woken by readiness for
/// its reply.
#[tokio::test]
async fn a_caller_dropped_while_spinning_leaves_the_socket_as_it_was() {
    let (server2, port2) = server().await;
    let (server, port) = server().await;
    let (client, p, _callbacks, _pings) = client(port, Some("1000000")).await;
    let other = client
        .string_to_proxy(&format!("s:tcp -h 127.0.0.1 -p {port2}"))
        .unwrap();
    calls_from_one(&p, 8).await;
    for _ in 0..8 {
        call(&other, "o").await.unwrap();
    }
    let impatient = p.ice_invocation_timeout(Some(Duration::from_millis(5)));
    for _ in 0..3 {
        let e = call(&impatient, "slow").await.unwrap_err();
        assert!(matches!(e, Error::InvocationTimeout), "{e}");
        let spinner = {
            let other = other.clone();
            tokio::spawn(async move { call(&other, "slow").await })
        };
        tokio::time::sleep(Duration::from_millis(2)).await;
        assert!(!spinner.is_finished(), "the other caller still waits");
        call(&p, "o").await.unwrap();
        spinner.await.unwrap().unwrap();
        calls_from_one(&p, 8).await;
    }
    client.destroy().await;
    server.destroy().await;
    server2.destroy().await;
}
