//! What a connection's end does to the dispatches it started: they run to
//! completion, as in Ice, where a dispatch in progress is not cancelled when
//! its connection closes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use floe_runtime::{servant_fn, Communicator, Dispatch, Identity, OperationMode};

/// A client sends oneway requests whose dispatches take a while, then
/// destroys its communicator at once: the CloseConnection it sends arrives
/// while the dispatches are still pending. Every one of them still runs.
#[tokio::test]
async fn oneway_dispatches_in_progress_finish_after_the_peer_closes() {
    let server = Communicator::new();
    let adapter = server
        .create_object_adapter_with_endpoints("Close", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let done = Arc::new(AtomicUsize::new(0));
    let d = done.clone();
    let proxy = adapter
        .add(
            Identity::from_name("slow"),
            servant_fn(move |current, _| {
                let d = d.clone();
                Dispatch::future(async move {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    d.fetch_add(1, Ordering::SeqCst);
                    Ok(current.empty_reply())
                })
            }),
        )
        .unwrap();
    adapter.activate();

    let client = Communicator::new();
    let slow = client
        .string_to_proxy(&proxy.to_string())
        .unwrap()
        .ice_oneway();
    let n = 20;
    for _ in 0..n {
        slow.invoke("work", OperationMode::Normal, slow.encode_params(|_| {}))
            .await
            .unwrap();
    }
    client.destroy().await;
    assert!(
        done.load(Ordering::SeqCst) < n,
        "the dispatches were still running when the client closed"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while done.load(Ordering::SeqCst) < n && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(done.load(Ordering::SeqCst), n);
    server.destroy().await;
}
