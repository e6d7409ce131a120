//! `<Adapter>.MaxDispatchBytes` (`floe.MaxDispatchBytes`): a connection
//! whose pending dispatches hold that many parameter bytes stops reading
//! until some finish, whatever `MaxDispatches` allows.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use floe_runtime::{servant_fn, Communicator, Dispatch, Identity, OperationMode, Properties};
use tokio::sync::Semaphore;

/// Oneway requests sent; each carries [`PARAMS`] bytes.
const REQUESTS: usize = 40;
const PARAMS: usize = 20_000;

/// Sends [`REQUESTS`] oneway requests to a servant whose dispatches wait
/// for a gate; returns how many dispatches had started once the server
/// stopped taking more, and checks that every one runs once the gate opens.
async fn started_while_gated(server_props: Properties) -> usize {
    let server = Communicator::with_properties(server_props);
    let adapter = server
        .create_object_adapter_with_endpoints("Gated", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let started = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(Semaphore::new(0));
    let (s, d, g) = (started.clone(), done.clone(), gate.clone());
    let proxy = adapter
        .add(
            Identity::from_name("gated"),
            servant_fn(move |current, _| {
                s.fetch_add(1, Ordering::SeqCst);
                let (d, g) = (d.clone(), g.clone());
                Dispatch::future(async move {
                    g.acquire().await.unwrap().forget();
                    d.fetch_add(1, Ordering::SeqCst);
                    Ok(current.empty_reply())
                })
            }),
        )
        .unwrap();
    adapter.activate();

    let client = Communicator::new();
    let gated = client
        .string_to_proxy(&proxy.to_string())
        .unwrap()
        .ice_oneway();
    let payload = vec![7u8; PARAMS];
    for _ in 0..REQUESTS {
        // A oneway send completes once written (or queued): the client's
        // socket buffers take all of them even when the server stops reading.
        gated
            .invoke(
                "work",
                OperationMode::Normal,
                gated.encode_params(|e| e.write_byte_seq(&payload)),
            )
            .await
            .unwrap();
    }
    // Let the server read whatever it is going to read.
    let mut seen = 0;
    let mut stable_since = Instant::now();
    while stable_since.elapsed() < Duration::from_millis(300) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = started.load(Ordering::SeqCst);
        if now != seen {
            (seen, stable_since) = (now, Instant::now());
        }
    }
    println!("{seen} of {REQUESTS} dispatches started");
    gate.add_permits(REQUESTS);
    let deadline = Instant::now() + Duration::from_secs(10);
    while done.load(Ordering::SeqCst) < REQUESTS && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(done.load(Ordering::SeqCst), REQUESTS, "every request runs");
    client.destroy().await;
    server.destroy().await;
    seen
}

/// With `Gated.MaxDispatchBytes=65536`, the server holds at most about
/// that much in pending dispatches (a read's worth of frames more: it
/// checks before each read), instead of all 40 requests (800 KB).
#[tokio::test]
async fn pending_dispatch_bytes_stop_the_reads() {
    let props = Properties::new();
    props.set("Gated.MaxDispatchBytes", "65536");
    let started = started_while_gated(props).await;
    assert!(
        (1..=10).contains(&started),
        "{started} dispatches started with a 64 KiB bound on 20 KB requests"
    );
}

/// Without the property (the default: no byte bound), all 40 start, within
/// `MaxDispatches` (100).
#[tokio::test]
async fn no_byte_bound_by_default() {
    let started = started_while_gated(Properties::new()).await;
    assert_eq!(started, REQUESTS);
}

/// `floe.MaxDispatchBytes` sets the bound for every adapter.
#[tokio::test]
async fn communicator_wide_bound() {
    let props = Properties::new();
    props.set("floe.MaxDispatchBytes", "65536");
    let started = started_while_gated(props).await;
    assert!((1..=10).contains(&started), "{started} started");
}
