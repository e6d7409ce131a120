//! floe-storm with floe-runtime peers only (no Ice installation needed):
//! a floe publisher and floe subscribers through an in-process broker.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use floe::runtime::{servant_fn, Communicator, Dispatch, OperationMode, Proxy};
use floe::wire::{Decoder, Encoder, Identity, ProxyData};
use floe_storm::types::QosDict;
use floe_storm::{Server, StormConfig};

async fn start(dir: &std::path::Path) -> Server {
    let config = StormConfig {
        topic_manager_endpoints: "tcp -h 127.0.0.1 -p 0".into(),
        publish_endpoints: "tcp -h 127.0.0.1 -p 0".into(),
        data_dir: dir.to_path_buf(),
        ..StormConfig::default()
    };
    Server::start(config, Communicator::new()).await.unwrap()
}

/// Calls `op` and decodes a proxy result.
async fn proxy_call(
    comm: &Communicator,
    target: &Proxy,
    op: &str,
    mode: OperationMode,
    params: Bytes,
) -> Proxy {
    let reply = target
        .invoke(op, mode, params)
        .await
        .unwrap()
        .into_ok()
        .unwrap();
    let mut dec = Decoder::from_encapsulation(reply).unwrap();
    let data: Option<ProxyData> = dec.read().unwrap();
    comm.string_to_proxy(&data.unwrap().to_string()).unwrap()
}

/// Creates topic `name` on `server`'s TopicManager; its proxy.
async fn create_topic(comm: &Communicator, server: &Server, name: &str) -> Proxy {
    let tm = comm.string_to_proxy(&server.topic_manager_proxy()).unwrap();
    proxy_call(
        comm,
        &tm,
        "create",
        OperationMode::Normal,
        tm.encode_params(|e| e.write_string(name)),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floe_publisher_to_floe_subscribers() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let comm = Communicator::new();
    let topic = create_topic(&comm, &server, "perf").await;

    let adapter = comm
        .create_object_adapter_with_endpoints("Sub", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let counts: Vec<Arc<AtomicU64>> = (0..3).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let order_ok = Arc::new(Mutex::new(true));
    for (i, mode) in ["ordered", "twoway", "oneway"].iter().enumerate() {
        let count = counts[i].clone();
        let ordered = *mode == "ordered";
        let order_ok = order_ok.clone();
        let servant = servant_fn(move |current, params| {
            let n = count.fetch_add(1, Ordering::SeqCst);
            if ordered {
                let seq = u64::from_le_bytes(params.data[..8].try_into().unwrap_or([0; 8]));
                if seq != n {
                    *order_ok.lock().unwrap() = false;
                }
            }
            Dispatch::ready(Ok(current.empty_reply()))
        });
        let mut prx = adapter
            .add(Identity::from_name(format!("sub-{mode}")), servant)
            .unwrap();
        if *mode == "oneway" {
            prx = prx.ice_oneway();
        }
        let mut qos = QosDict::new();
        if ordered {
            qos.insert("reliability".into(), "ordered".into());
        }
        let data: ProxyData = prx.to_string().parse().unwrap();
        let params = topic.encode_params(|e| {
            e.write(&qos);
            e.write(&data);
        });
        proxy_call(
            &comm,
            &topic,
            "subscribeAndGetPublisher",
            OperationMode::Normal,
            params,
        )
        .await;
    }
    adapter.activate();
    let publisher = proxy_call(
        &comm,
        &topic,
        "getPublisher",
        OperationMode::Nonmutating,
        topic.empty_params(),
    )
    .await
    .ice_oneway();

    let n: u64 = std::env::var("STORM_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000);
    let start = Instant::now();
    for seq in 0..n {
        let mut enc = Encoder::new();
        let m = enc.start_encapsulation(floe::wire::ENCODING_1_1);
        enc.write_raw(&seq.to_le_bytes());
        enc.write_raw(&[0u8; 56]);
        enc.end_encapsulation(m);
        publisher
            .invoke("tick", OperationMode::Normal, enc.finish())
            .await
            .unwrap();
    }
    println!(
        "published in {:?}; events_in {}",
        start.elapsed(),
        server
            .broker()
            .topic("perf")
            .unwrap()
            .counters()
            .events_in
            .load(Ordering::Relaxed)
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut done: [Option<Duration>; 3] = [None; 3];
    while done.iter().any(Option::is_none) && Instant::now() < deadline {
        for (i, c) in counts.iter().enumerate() {
            if done[i].is_none() && c.load(Ordering::SeqCst) >= n {
                done[i] = Some(start.elapsed());
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    println!("ordered / twoway / oneway done after {done:?}");
    let elapsed = start.elapsed();
    let got: Vec<u64> = counts.iter().map(|c| c.load(Ordering::SeqCst)).collect();
    println!(
        "{n} events x 3 subscribers in {elapsed:?} ({:.0} deliveries/s, debug build)",
        (3 * n) as f64 / elapsed.as_secs_f64()
    );
    assert_eq!(got, [n, n, n]);
    assert!(
        *order_ok.lock().unwrap(),
        "ordered subscriber saw events out of order"
    );
    let c = server.broker().topic("perf").unwrap();
    assert_eq!(c.counters().dropped.load(Ordering::Relaxed), 0);
    comm.destroy().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribers_keep_receiving_after_a_broker_restart() {
    let dir = tempfile::tempdir().unwrap();
    let comm = Communicator::new();
    let adapter = comm
        .create_object_adapter_with_endpoints("Sub", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let got = Arc::new(Mutex::new(Vec::<String>::new()));
    let g = got.clone();
    let sub = adapter
        .add(
            Identity::new("s", "cat"),
            servant_fn(move |current, _| {
                g.lock().unwrap().push(current.operation.to_string());
                Dispatch::ready(Ok(current.empty_reply()))
            }),
        )
        .unwrap();
    adapter.activate();
    let sub: ProxyData = sub.to_string().parse().unwrap();

    // First run: create, subscribe (ordered), publish one event.
    let publish = |server: &Server, op: &'static str| {
        let tm = comm.string_to_proxy(&server.topic_manager_proxy()).unwrap();
        let comm = comm.clone();
        async move {
            let topic = proxy_call(
                &comm,
                &tm,
                "retrieve",
                OperationMode::Nonmutating,
                tm.encode_params(|e| e.write_string("t")),
            )
            .await;
            let publisher = proxy_call(
                &comm,
                &topic,
                "getPublisher",
                OperationMode::Nonmutating,
                topic.empty_params(),
            )
            .await;
            publisher
                .invoke(op, OperationMode::Normal, publisher.empty_params())
                .await
                .unwrap();
        }
    };
    let server = start(dir.path()).await;
    let tm = comm.string_to_proxy(&server.topic_manager_proxy()).unwrap();
    let topic = proxy_call(
        &comm,
        &tm,
        "create",
        OperationMode::Normal,
        tm.encode_params(|e| e.write_string("t")),
    )
    .await;
    let mut qos = QosDict::new();
    qos.insert("reliability".into(), "ordered".into());
    let params = topic.encode_params(|e| {
        e.write(&qos);
        e.write(&sub);
    });
    proxy_call(
        &comm,
        &topic,
        "subscribeAndGetPublisher",
        OperationMode::Normal,
        params,
    )
    .await;
    publish(&server, "before").await;
    // Delivered before the shutdown (which does not wait for queued
    // deliveries): what is tested is the subscription surviving it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while got.lock().unwrap().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    server.shutdown().await;

    // Second run on the same data: the subscription is back and delivers.
    let server = start(dir.path()).await;
    publish(&server, "after").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while got.lock().unwrap().len() < 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(*got.lock().unwrap(), ["before", "after"]);
    comm.destroy().await;
    server.shutdown().await;
}

/// A oneway subscriber that accepts the broker's connection and never reads
/// from it: its socket fills, then the broker's write queue for it, then its
/// queue reaches its byte budget (`floe.Storm.Send.QueueBytesMax`, 4 MiB
/// here). From then on the publisher is held back (nothing is dropped)
/// until `IceStorm.Send.Timeout` (2 s) passes without progress; then the
/// subscriber is removed, visibly, and the publisher goes on. The broker's
/// memory for the subscriber stays bounded throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_stops_reading_costs_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let config = StormConfig {
        topic_manager_endpoints: "tcp -h 127.0.0.1 -p 0".into(),
        publish_endpoints: "tcp -h 127.0.0.1 -p 0".into(),
        data_dir: dir.path().to_path_buf(),
        queue_bytes_max: 4 << 20,
        send_timeout: Some(Duration::from_secs(2)),
        ..StormConfig::default()
    };
    let server = Server::start(config, Communicator::new()).await.unwrap();
    let comm = Communicator::new();
    let topic = create_topic(&comm, &server, "stuck").await;

    // The subscriber: validates the connection, then never reads.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        tokio::io::AsyncWriteExt::write_all(
            &mut socket,
            &floe::wire::protocol::VALIDATE_CONNECTION,
        )
        .await
        .unwrap();
        tokio::time::sleep(Duration::from_secs(60)).await;
        drop(socket);
    });
    let data: ProxyData = format!("stuck -o:tcp -h 127.0.0.1 -p {port}")
        .parse()
        .unwrap();
    let params = topic.encode_params(|e| {
        e.write(&QosDict::new());
        e.write(&data);
    });
    proxy_call(
        &comm,
        &topic,
        "subscribeAndGetPublisher",
        OperationMode::Normal,
        params,
    )
    .await;
    // The topic's publisher: it outlives the subscriber.
    let publisher = proxy_call(
        &comm,
        &topic,
        "getPublisher",
        OperationMode::Idempotent,
        topic.encode_params(|_| {}),
    )
    .await
    .ice_oneway();

    let n = 2_000u64;
    let payload = vec![7u8; 32 * 1024];
    let started = Instant::now();
    for _ in 0..n {
        let mut enc = Encoder::new();
        let m = enc.start_encapsulation(floe::wire::ENCODING_1_1);
        enc.write_raw(&payload);
        enc.end_encapsulation(m);
        publisher
            .invoke("tick", OperationMode::Normal, enc.finish())
            .await
            .unwrap();
    }
    publisher.ice_twoway().ice_ping().await.unwrap();
    let published = started.elapsed();
    let stuck = server.broker().topic("stuck").unwrap();
    let counters = stuck.counters();
    let deadline = Instant::now() + Duration::from_secs(10);
    while counters.events_in.load(Ordering::Relaxed) < n && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The `ice_ping` is an event too.
    assert_eq!(counters.events_in.load(Ordering::Relaxed), n + 1);
    // Held back until the timeout removed the subscriber.
    assert!(
        published >= Duration::from_secs(2),
        "published in {published:?}"
    );
    assert_eq!(counters.removed.load(Ordering::Relaxed), 1);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !stuck.subscriber_ids().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(stuck.subscriber_ids().is_empty(), "removed from the topic");
    // What it had not taken was counted when it was removed, and events
    // published after that went nowhere: nothing is delivered to a
    // subscriber that is gone, and nothing was dropped before.
    let dropped = counters.dropped.load(Ordering::Relaxed);
    let out = counters.events_out.load(Ordering::Relaxed);
    assert!(dropped + out <= n + 1, "dropped {dropped}, out {out}");
    held.abort();
    comm.destroy().await;
    server.shutdown().await;
}
