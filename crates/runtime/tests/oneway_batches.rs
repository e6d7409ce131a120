//! `floe.OnewayBatchSize`: oneway requests that wait in a connection's
//! write queue leave as one BatchRequest. What goes on the wire (read by
//! a bare socket that parses every frame) and what a floe server
//! dispatches: every request, once, in order, with its parameters.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use floe_runtime::{
    servant_fn, Communicator, Dispatch, Identity, OperationMode, Properties, Proxy,
};
use floe_wire::protocol::{check, FrameCheck, Message, VALIDATE_CONNECTION};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The parameters of request `i`: its number, then bytes that depend on
/// it, `len` in all.
fn params(i: u32, len: usize) -> Vec<u8> {
    let mut v = i.to_le_bytes().to_vec();
    v.extend((4..len.max(4)).map(|k| (k as u32 * 31 + i) as u8));
    v
}

/// The size of request `i`'s parameters: mostly small, every 7th 10 KB,
/// every 50th larger than a 64 KB batch.
fn size(i: u32) -> usize {
    match i {
        i if i % 50 == 0 => 100_000,
        i if i % 7 == 0 => 10_000,
        i => 20 + (i as usize % 300),
    }
}

/// A client communicator with `props` and its oneway proxy to `target`.
fn oneway_client(target: &str, props: &[(&str, &str)]) -> (Communicator, Proxy) {
    let p = Properties::new();
    for (k, v) in props {
        p.set(k, v);
    }
    let c = Communicator::with_properties(p);
    let proxy = c.string_to_proxy(target).unwrap().ice_oneway();
    (c, proxy)
}

/// Sends requests `0..n` as `op<i>` oneways through `p`, back to back,
/// request `i` with `params(i, size(i))`.
async fn send(p: &Proxy, n: u32, size: fn(u32) -> usize) {
    for i in 0..n {
        let data = params(i, size(i));
        let encoded = p.encode_params(|e| e.write_raw(&data));
        p.invoke(&format!("op{i}"), OperationMode::Normal, encoded)
            .await
            .unwrap();
    }
}

/// What a bare peer read: per message, its type and the operations in it.
#[derive(Debug, Default)]
struct Wire {
    messages: Vec<(u8, usize, Vec<String>)>,
}

impl Wire {
    fn operations(&self) -> Vec<String> {
        self.messages
            .iter()
            .flat_map(|(_, _, ops)| ops.clone())
            .collect()
    }

    fn batches(&self) -> impl Iterator<Item = &(u8, usize, Vec<String>)> {
        self.messages.iter().filter(|(t, _, _)| *t == 1)
    }
}

/// A bare Ice server on a free port, with a small receive buffer:
/// validates the connection, waits 300 ms (so that the client's requests
/// queue up), then reads and
/// parses frames until `n` requests came, checking each one's parameters
/// (`params(i, size(i))` for `op<i>`).
async fn bare_server(n: usize, size: fn(u32) -> usize) -> (u16, tokio::task::JoinHandle<Wire>) {
    // A small receive buffer: the client's socket soon takes nothing
    // more, and its requests wait in its write queue, whatever the timing.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(8 * 1024).unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(16).unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        s.write_all(&VALIDATE_CONNECTION).await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut buf = BytesMut::new();
        let mut wire = Wire::default();
        let mut requests = 0;
        while requests < n {
            let len = match check(&buf, 0).unwrap() {
                FrameCheck::Complete { len } => len,
                FrameCheck::Incomplete { .. } => {
                    assert!(s.read_buf(&mut buf).await.unwrap() > 0, "closed early");
                    continue;
                }
            };
            let frame: Bytes = buf.split_to(len).freeze();
            let mut ops = Vec::new();
            let mut take = |r: floe_wire::protocol::Request| {
                let i: u32 = r.operation[2..].parse().unwrap();
                assert_eq!(r.request_id, 0);
                assert_eq!(&r.params.data[..], &params(i, size(i))[..], "op{i}");
                ops.push(r.operation.to_string());
            };
            let kind = frame[8];
            match Message::parse(frame).unwrap().1 {
                Message::Request(r) => take(r),
                Message::BatchRequest(b) => {
                    for r in b.iter() {
                        take(r.unwrap());
                    }
                }
                other => panic!("unexpected {other:?}"),
            }
            requests += ops.len();
            wire.messages.push((kind, len, ops));
        }
        wire
    });
    (port, task)
}

/// What the bare server read, once every request came.
async fn received(server: tokio::task::JoinHandle<Wire>) -> Wire {
    tokio::time::timeout(Duration::from_secs(30), server)
        .await
        .expect("every request arrives")
        .unwrap()
}

fn target(port: u16) -> String {
    format!("peer -o:tcp -h 127.0.0.1 -p {port}")
}

fn expected(n: u32) -> Vec<String> {
    (0..n).map(|i| format!("op{i}")).collect()
}

/// With `floe.OnewayBatchSize=64`, a burst of oneways to a peer that
/// reads late leaves as BatchRequests of at most 64 KB (a request larger
/// than that goes alone), every request once and in order.
#[tokio::test]
async fn queued_oneways_leave_as_batch_requests_within_the_size() {
    const N: u32 = 2_000;
    let (port, server) = bare_server(N as usize, size).await;
    let (c, p) = oneway_client(&target(port), &[("floe.OnewayBatchSize", "64")]);
    send(&p, N, size).await;
    let wire = received(server).await;
    assert_eq!(wire.operations(), expected(N));
    let batches = wire.batches().count();
    let batched: usize = wire.batches().map(|(_, _, ops)| ops.len()).sum();
    println!(
        "{} messages, {batches} batches holding {batched} of {N} requests",
        wire.messages.len()
    );
    assert!(batches > 0 && batched > N as usize / 2, "{wire:?}");
    for (kind, len, ops) in &wire.messages {
        if *kind == 1 {
            assert!(*len <= 64 * 1024 && ops.len() > 1, "{len} {ops:?}");
        }
    }
    c.destroy().await;
}

/// Without the property (the default), the same burst is one Request
/// message per oneway, as Ice sends them.
#[tokio::test]
async fn without_the_property_each_oneway_is_its_own_message() {
    const N: u32 = 500;
    let (port, server) = bare_server(N as usize, size).await;
    let (c, p) = oneway_client(&target(port), &[]);
    send(&p, N, size).await;
    let wire = received(server).await;
    assert_eq!(wire.operations(), expected(N));
    assert_eq!(wire.batches().count(), 0);
    c.destroy().await;
}

/// A batch never exceeds the sender's `Ice.MessageSizeMax` (here 16 KB,
/// below the 64 KB asked for), which Ice applies to batches too.
#[tokio::test]
async fn batches_stay_within_the_message_size_max() {
    const N: u32 = 300;
    let small = |_| 1_000;
    let (port, server) = bare_server(N as usize, small).await;
    let props = [("floe.OnewayBatchSize", "64"), ("Ice.MessageSizeMax", "16")];
    let (c, p) = oneway_client(&target(port), &props);
    send(&p, N, small).await;
    let wire = received(server).await;
    assert_eq!(wire.operations(), expected(N));
    assert!(wire.batches().count() > 0, "{wire:?}");
    assert!(wire.messages.iter().all(|(_, len, _)| *len <= 16 * 1024));
    c.destroy().await;
}

/// A floe server dispatches the batches: every request once, in order,
/// with its parameters, and a twoway call after the burst is answered
/// after all of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_floe_server_dispatches_every_batched_oneway_in_order() {
    const N: u32 = 3_000;
    let server = Communicator::new();
    let adapter = server
        .create_object_adapter_with_endpoints("S", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let proxy = adapter
        .add(
            Identity::from_name("peer"),
            servant_fn(move |cur, encaps| {
                let op = cur.operation.to_string();
                if let Some(i) = op.strip_prefix("op").and_then(|i| i.parse::<u32>().ok()) {
                    assert_eq!(&encaps.data[..], &params(i, size(i))[..], "{op}");
                }
                record.lock().unwrap().push(op);
                Dispatch::ready(Ok(cur.empty_reply()))
            }),
        )
        .unwrap();
    adapter.activate();
    let (c, p) = oneway_client(&proxy.to_string(), &[("floe.OnewayBatchSize", "64")]);
    send(&p, N, size).await;
    p.ice_twoway()
        .invoke("last", OperationMode::Normal, p.empty_params())
        .await
        .unwrap();
    let mut want = expected(N);
    want.push("last".into());
    assert_eq!(*seen.lock().unwrap(), want);
    c.destroy().await;
    server.destroy().await;
}
