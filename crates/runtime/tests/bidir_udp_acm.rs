//! Bidirectional callbacks, UDP datagrams, ACM heartbeats and idle close,
//! and the CloseConnection retry rule.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use floe_runtime::{
    servant_fn, Communicator, Dispatch, DispatchError, Identity, OperationMode, Properties,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const VALIDATE: [u8; 14] = [
    0x49, 0x63, 0x65, 0x50, 0x01, 0x00, 0x01, 0x00, 0x03, 0x00, 0x0e, 0x00, 0x00, 0x00,
];

#[tokio::test]
async fn server_calls_back_over_the_client_connection() {
    // Server: `register(identity)` calls `ping` back on the caller's connection.
    let server = Communicator::new();
    let sa = server
        .create_object_adapter_with_endpoints("S", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let proxy = sa
        .add(
            Identity::from_name("srv"),
            servant_fn(|cur, params| {
                Dispatch::future(async move {
                    let mut d = floe_wire::Decoder::from_encapsulation(params)?;
                    let name = d.read_string()?;
                    let conn = cur
                        .connection
                        .clone()
                        .ok_or_else(|| DispatchError::unknown("no connection"))?;
                    let cb = cur
                        .adapter
                        .create_proxy(Identity::from_name(name))
                        .ice_fixed(&conn);
                    let r = cb
                        .invoke("ping", OperationMode::Normal, cb.empty_params())
                        .await?
                        .into_ok()?;
                    let n = floe_wire::Decoder::from_encapsulation(r)?.read_i32()?;
                    Ok(cur.encode_reply(|e| e.write_i32(n + 1)))
                })
            }),
        )
        .unwrap();
    sa.activate();

    // Client: an adapter without endpoints, attached to the connection.
    let client = Communicator::new();
    let ca = client
        .create_object_adapter_with_endpoints("C", "")
        .await
        .unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    ca.add(
        Identity::from_name("cb"),
        servant_fn(move |cur, _| {
            let n = h.fetch_add(1, Ordering::SeqCst) as i32;
            Dispatch::ready(Ok(cur.encode_reply(|e| e.write_i32(40 + n))))
        }),
    )
    .unwrap();
    ca.activate();
    let p = client.string_to_proxy(&proxy.to_string()).unwrap();
    let conn = p.ice_get_connection().await.unwrap();
    conn.set_adapter(Some(ca.clone()));
    let params = p.encode_params(|e| e.write_string("cb"));
    let r = p
        .invoke("register", OperationMode::Normal, params)
        .await
        .unwrap()
        .into_ok()
        .unwrap();
    assert_eq!(
        floe_wire::Decoder::from_encapsulation(r)
            .unwrap()
            .read_i32()
            .unwrap(),
        41
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    client.destroy().await;
    server.destroy().await;
}

#[tokio::test]
async fn datagrams_are_dispatched() {
    let server = Communicator::new();
    let sa = server
        .create_object_adapter_with_endpoints("U", "udp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let proxy = sa
        .add(
            Identity::from_name("u"),
            servant_fn(move |cur, _| {
                h.fetch_add(1, Ordering::SeqCst);
                Dispatch::ready(Ok(cur.empty_reply()))
            }),
        )
        .unwrap();
    sa.activate();
    let client = Communicator::new();
    let p = client.string_to_proxy(&proxy.to_string()).unwrap();
    assert!(proxy.to_string().contains("udp -h 127.0.0.1"));
    let d = p.ice_datagram();
    for _ in 0..3 {
        d.invoke("o", OperationMode::Normal, p.empty_params())
            .await
            .unwrap();
    }
    let bd = p.ice_batch_datagram();
    for _ in 0..4 {
        bd.invoke("o", OperationMode::Normal, p.empty_params())
            .await
            .unwrap();
    }
    bd.ice_flush_batch_requests().await.unwrap();
    for _ in 0..50 {
        if hits.load(Ordering::SeqCst) == 7 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(hits.load(Ordering::SeqCst), 7);
    client.destroy().await;
    server.destroy().await;
}

/// A servant that panics on a datagram takes down neither the adapter's
/// UDP receive loop nor later datagrams (the same dispatch rules as on a
/// connection: the panic is status 7, which has nowhere to go). Before the
/// rules moved to the adapter, the first panic ended the receive loop.
#[tokio::test]
async fn a_panicking_datagram_servant_does_not_stop_the_receive_loop() {
    let server = Communicator::new();
    let sa = server
        .create_object_adapter_with_endpoints("U", "udp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let proxy = sa
        .add(
            Identity::from_name("u"),
            servant_fn(move |cur, _| {
                if cur.operation == "boom" {
                    panic!("boom on a datagram");
                }
                h.fetch_add(1, Ordering::SeqCst);
                Dispatch::ready(Ok(cur.empty_reply()))
            }),
        )
        .unwrap();
    sa.activate();
    let client = Communicator::new();
    let d = client
        .string_to_proxy(&proxy.to_string())
        .unwrap()
        .ice_datagram();
    let params = d.empty_params();
    d.invoke("boom", OperationMode::Normal, params.clone())
        .await
        .unwrap();
    for _ in 0..50 {
        d.invoke("o", OperationMode::Normal, params.clone())
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        if hits.load(Ordering::SeqCst) > 0 {
            break;
        }
    }
    assert!(
        hits.load(Ordering::SeqCst) > 0,
        "no datagram dispatched after the panic"
    );
    client.destroy().await;
    server.destroy().await;
}

/// A fake server: validates, then returns the stream.
async fn fake_accept(listener: &TcpListener) -> TcpStream {
    let (mut s, _) = listener.accept().await.unwrap();
    s.write_all(&VALIDATE).await.unwrap();
    s
}

async fn read_frame(s: &mut TcpStream) -> Vec<u8> {
    let mut head = [0u8; 14];
    s.read_exact(&mut head).await.unwrap();
    let size = i32::from_le_bytes([head[10], head[11], head[12], head[13]]) as usize;
    let mut frame = head.to_vec();
    frame.resize(size, 0);
    s.read_exact(&mut frame[14..]).await.unwrap();
    frame
}

#[tokio::test]
async fn acm_heartbeats_and_idle_close() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let props = Properties::new();
    props.set("Ice.ACM.Client.Timeout", "1");
    props.set("Ice.ACM.Client.Heartbeat", "3");
    props.set("Ice.ACM.Client.Close", "0");
    let c = Communicator::with_properties(props);
    let p = c
        .string_to_proxy(&format!("x -o:tcp -h 127.0.0.1 -p {port}"))
        .unwrap();
    let call = tokio::spawn(async move {
        p.invoke("o", OperationMode::Normal, p.empty_params())
            .await
            .unwrap();
        p
    });
    let mut s = fake_accept(&listener).await;
    let req = read_frame(&mut s).await;
    assert_eq!(req[8], 0, "a request");
    let _p = call.await.unwrap();
    // Heartbeat=Always with Timeout=1: one ValidateConnection every 0.5 s.
    let start = tokio::time::Instant::now();
    let mut beats = 0;
    while start.elapsed() < Duration::from_millis(1600) {
        let f = tokio::time::timeout(Duration::from_secs(2), read_frame(&mut s))
            .await
            .unwrap();
        assert_eq!(f, VALIDATE);
        beats += 1;
    }
    assert!(beats >= 2, "{beats} heartbeats");
    drop(s);
    c.destroy().await;

    // Close=OnIdle: the idle client closes gracefully with CloseConnection.
    let props = Properties::new();
    props.set("Ice.ACM.Client.Timeout", "1");
    props.set("Ice.ACM.Client.Close", "1");
    let c = Communicator::with_properties(props);
    let p = c
        .string_to_proxy(&format!("x -o:tcp -h 127.0.0.1 -p {port}"))
        .unwrap();
    let call = tokio::spawn(async move {
        p.invoke("o", OperationMode::Normal, p.empty_params())
            .await
            .unwrap();
        p
    });
    let mut s = fake_accept(&listener).await;
    read_frame(&mut s).await;
    let _p = call.await.unwrap();
    let f = tokio::time::timeout(Duration::from_secs(4), read_frame(&mut s))
        .await
        .unwrap();
    assert_eq!(f[8], 4, "CloseConnection");
    assert_eq!(f[9], 1, "with compression byte 1");
    drop(s);
    c.destroy().await;
}

#[tokio::test]
async fn close_connection_is_retried_even_for_normal_requests() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        // First connection: read the request, answer with CloseConnection.
        let mut s = fake_accept(&listener).await;
        read_frame(&mut s).await;
        let mut close = VALIDATE;
        close[8] = 4;
        close[9] = 1;
        s.write_all(&close).await.unwrap();
        drop(s);
        // Second connection: answer properly.
        let mut s = fake_accept(&listener).await;
        let req = read_frame(&mut s).await;
        let mut reply = vec![0x49, 0x63, 0x65, 0x50, 1, 0, 1, 0, 2, 0, 25, 0, 0, 0];
        reply.extend_from_slice(&req[14..18]);
        reply.extend_from_slice(&[0, 6, 0, 0, 0, 1, 1]);
        s.write_all(&reply).await.unwrap();
        s
    });
    let props = Properties::new();
    props.set("Ice.RetryIntervals", "-1"); // no ordinary retries
    let c = Communicator::with_properties(props);
    let p = c
        .string_to_proxy(&format!("x:tcp -h 127.0.0.1 -p {port}"))
        .unwrap();
    p.invoke("o", OperationMode::Normal, p.empty_params())
        .await
        .unwrap();
    drop(server.await.unwrap());
    c.destroy().await;
}
