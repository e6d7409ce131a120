//! Ice 3.8's connection settings on floe connections over 127.0.0.1:
//! `<Adapter>.MaxConnections`, `MaxDispatches`, `ConnectTimeout` and
//! `InactivityTimeout` (the idle timeout and its check are tested against
//! real Ice 3.8 peers in `crates/codegen-tests/tests/ice38`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use floe_runtime::{
    servant_fn, Communicator, Dispatch, Error, Identity, OperationMode, Properties, Proxy,
};

/// A server whose `hello` servant answers `o` after `delay`, counting the
/// dispatches that run at once (the peak in `peak`).
async fn server(props: Properties, delay: Duration) -> (Communicator, Proxy, Arc<AtomicUsize>) {
    let communicator = Communicator::with_properties(props);
    let adapter = communicator
        .create_object_adapter_with_endpoints("S", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let servant = {
        let peak = Arc::clone(&peak);
        servant_fn(move |current, _| {
            let (running, peak) = (Arc::clone(&running), Arc::clone(&peak));
            Dispatch::future(async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(delay).await;
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(current.empty_reply())
            })
        })
    };
    let proxy = adapter.add(Identity::from_name("hello"), servant).unwrap();
    adapter.activate();
    (communicator, proxy, peak)
}

fn client_proxy(client: &Communicator, server_proxy: &Proxy) -> Proxy {
    client.string_to_proxy(&server_proxy.to_string()).unwrap()
}

#[tokio::test]
async fn max_connections_closes_the_connections_beyond_it() {
    let props = Properties::new();
    props.set("S.MaxConnections", "2");
    let (server, proxy, _) = server(props, Duration::ZERO).await;
    let client = Communicator::new();
    let base = client_proxy(&client, &proxy);
    let a = base.ice_connection_id("a");
    let b = base.ice_connection_id("b");
    let c = base.ice_connection_id("c");
    a.ice_ping().await.unwrap();
    b.ice_ping().await.unwrap();
    match c.ice_ping().await {
        Err(Error::ConnectionLost(_)) => {}
        other => panic!("a third connection: {other:?}"),
    }
    // Room again once one closes.
    a.ice_get_cached_connection().unwrap().close().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    c.ice_ping().await.unwrap();
    client.destroy().await;
    server.destroy().await;
}

#[tokio::test]
async fn max_dispatches_stops_reading_at_the_limit() {
    for (props, limit) in [
        (vec![("Ice.Connection.Server.MaxDispatches", "2")], 2),
        (vec![("S.Connection.MaxDispatches", "3")], 3),
        (vec![], 10),
    ] {
        let p = Properties::new();
        for (k, v) in &props {
            p.set(k, v);
        }
        let (server, proxy, peak) = server(p, Duration::from_millis(200)).await;
        let client = Communicator::new();
        let proxy = client_proxy(&client, &proxy);
        let calls: Vec<_> = (0..10)
            .map(|_| {
                let p = proxy.clone();
                tokio::spawn(
                    async move { p.invoke("o", OperationMode::Normal, p.empty_params()).await },
                )
            })
            .collect();
        for call in calls {
            call.await.unwrap().unwrap();
        }
        assert_eq!(peak.load(Ordering::SeqCst), limit, "{props:?}");
        client.destroy().await;
        server.destroy().await;
    }
}

#[tokio::test]
async fn connect_timeout_bounds_a_server_that_never_validates() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    let keep = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            held.push(s);
        }
    });
    let props = Properties::new();
    props.set("Ice.Connection.Client.ConnectTimeout", "1");
    props.set("Ice.RetryIntervals", "-1");
    let client = Communicator::with_properties(props);
    let proxy = client
        .string_to_proxy(&format!("hello:tcp -h 127.0.0.1 -p {port}"))
        .unwrap();
    let start = Instant::now();
    match proxy.ice_ping().await {
        Err(Error::ConnectTimeout) => {}
        other => panic!("{other:?}"),
    }
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "{took:?}"
    );
    keep.abort();
    client.destroy().await;
}

#[tokio::test]
async fn an_inactive_connection_is_closed_gracefully() {
    let (server, proxy, _) = server(Properties::new(), Duration::ZERO).await;
    let props = Properties::new();
    props.set("Ice.Connection.Client.InactivityTimeout", "1");
    let client = Communicator::with_properties(props);
    let proxy = client_proxy(&client, &proxy);
    proxy.ice_ping().await.unwrap();
    let connection = proxy.ice_get_cached_connection().unwrap();
    let start = Instant::now();
    tokio::time::timeout(Duration::from_secs(5), connection.closed())
        .await
        .expect("closed after the inactivity timeout");
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(900), "{took:?}");
    // Graceful: the next call opens a new connection and succeeds.
    proxy.ice_ping().await.unwrap();
    client.destroy().await;
    server.destroy().await;
}
