//! Ice 3.8's connection settings on floe connections over 127.0.0.1:
//! `<Adapter>.MaxConnections`, `MaxDispatches`, `ConnectTimeout` and
//! `InactivityTimeout` (the idle timeout and its check are tested against
//! real Ice 3.8 peers in `crates/codegen-tests/tests/ice38`), and Ice's
//! socket buffer sizes `Ice.TCP.RcvSize` / `Ice.TCP.SndSize`.

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

/// The kernel buffers (receive, send) of this process's TCP sockets whose
/// local (`local: true`) or peer port is `port`.
#[cfg(target_os = "linux")]
fn socket_buffers(port: u16, local: bool) -> Vec<(usize, usize)> {
    use std::os::fd::{BorrowedFd, RawFd};
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let is_socket = std::fs::read_link(entry.path())
            .is_ok_and(|target| target.to_string_lossy().starts_with("socket:"));
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<RawFd>().ok())
        else {
            continue;
        };
        if !is_socket {
            continue;
        }
        // SAFETY: the fd is open (listed just now) and only borrowed while
        // the connections it may belong to are held by the test.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        let socket = socket2::SockRef::from(&fd);
        let addr = if local {
            socket.local_addr()
        } else {
            socket.peer_addr()
        };
        let Some(addr) = addr.ok().and_then(|a| a.as_socket()) else {
            continue;
        };
        if addr.port() == port && socket.r#type().ok() == Some(socket2::Type::STREAM) {
            found.push((
                socket.recv_buffer_size().unwrap(),
                socket.send_buffer_size().unwrap(),
            ));
        }
    }
    found
}

/// `Ice.TCP.RcvSize` and `Ice.TCP.SndSize` set the kernel buffers of the
/// sockets a communicator connects and an adapter accepts (Linux grants
/// twice the size asked, its bookkeeping share).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn ice_tcp_rcv_size_and_snd_size_set_the_socket_buffers() {
    let props = Properties::new();
    props.set("Ice.TCP.RcvSize", "49152");
    props.set("Ice.TCP.SndSize", "40960");
    let (server, proxy, _) = server(props, Duration::ZERO).await;
    let client_props = Properties::new();
    client_props.set("Ice.TCP.RcvSize", "57344");
    let client = Communicator::with_properties(client_props);
    let p = client_proxy(&client, &proxy);
    p.ice_ping().await.unwrap();
    let port = proxy.endpoints()[0].port;
    // The listening socket has the port too; the accepted one has both sizes.
    let accepted = socket_buffers(port, true);
    assert!(
        accepted.contains(&(2 * 49152, 2 * 40960)),
        "accepted: {accepted:?}"
    );
    let connected = socket_buffers(port, false);
    assert_eq!(connected.len(), 1, "{connected:?}");
    assert_eq!(connected[0].0, 2 * 57344, "connected: {connected:?}");
    client.destroy().await;
    server.destroy().await;
}
