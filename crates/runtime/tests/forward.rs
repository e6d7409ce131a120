//! `Proxy::invoke_encapsulation` and `Proxy::try_send_oneway_now`: a
//! received encapsulation sent on unchanged (as a broker forwards events),
//! small (copied into the frame) and large (sent beside it), twoway,
//! oneway and batch, arrives byte for byte.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use floe_runtime::{servant_fn, Communicator, Dispatch, Identity, OperationMode, Proxy};
use floe_wire::{Encapsulation, ENCODING_1_1};

type Seen = Arc<Mutex<Vec<(String, Encapsulation)>>>;

/// A server recording every request's operation and params; returns a
/// proxy to it in `client`.
async fn server(client: &Communicator) -> (Communicator, Proxy, Seen) {
    let server = Communicator::new();
    let adapter = server
        .create_object_adapter_with_endpoints("S", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let proxy = adapter
        .add(
            Identity::from_name("rec"),
            servant_fn(move |cur, params| {
                s.lock()
                    .unwrap()
                    .push((cur.operation.to_string(), params.clone()));
                Dispatch::ready(Ok(cur.encode_reply(|_| {})))
            }),
        )
        .unwrap();
    adapter.activate();
    let p = client.string_to_proxy(&proxy.to_string()).unwrap();
    (server, p, seen)
}

fn encaps(n: usize) -> Encapsulation {
    Encapsulation {
        encoding: ENCODING_1_1,
        data: Bytes::from((0..n).map(|i| (i % 251) as u8).collect::<Vec<u8>>()),
    }
}

async fn wait_for(seen: &Seen, n: usize) {
    for _ in 0..500 {
        if seen.lock().unwrap().len() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!(
        "only {} of {n} requests arrived",
        seen.lock().unwrap().len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_encapsulations_arrive_unchanged() {
    let client = Communicator::new();
    let (server, p, seen) = server(&client).await;
    let small = encaps(100);
    let large = encaps(100_000);
    let empty = Encapsulation::empty(ENCODING_1_1);
    for (i, e) in [&small, &large, &empty].into_iter().enumerate() {
        p.invoke_encapsulation(&format!("t{i}"), OperationMode::Normal, e, None)
            .await
            .unwrap();
    }
    let oneway = p.ice_oneway();
    // No connection cached yet on this proxy: not sent now.
    let fresh = client.string_to_proxy(&p.to_string()).unwrap().ice_oneway();
    assert!(fresh
        .try_send_oneway_now("x", OperationMode::Normal, &small, None, usize::MAX)
        .is_none());
    // Twoway proxies never send "now".
    assert!(p
        .try_send_oneway_now("x", OperationMode::Normal, &small, None, usize::MAX)
        .is_none());
    oneway
        .invoke_encapsulation("o0", OperationMode::Normal, &large, None)
        .await
        .unwrap();
    for (i, e) in [&small, &large].into_iter().enumerate() {
        oneway
            .try_send_oneway_now(&format!("n{i}"), OperationMode::Normal, e, None, usize::MAX)
            .expect("connection established")
            .unwrap();
    }
    let batch = p.ice_batch_oneway();
    batch
        .invoke_encapsulation("b0", OperationMode::Normal, &small, None)
        .await
        .unwrap();
    batch.ice_flush_batch_requests().await.unwrap();
    wait_for(&seen, 7).await;
    let got = seen.lock().unwrap().clone();
    let want = [
        ("t0", &small),
        ("t1", &large),
        ("t2", &empty),
        ("o0", &large),
        ("n0", &small),
        ("n1", &large),
        ("b0", &small),
    ];
    assert_eq!(got.len(), want.len());
    for ((op, e), (wop, we)) in got.iter().zip(want) {
        assert_eq!(op, wop);
        assert_eq!(e, we, "{op}");
    }
    client.destroy().await;
    server.destroy().await;
}
