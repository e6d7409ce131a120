//! floe client ↔ floe server over loopback: twoway, oneway, batch, facets,
//! contexts, not-exist replies, compression, built-ins, timeouts, shutdown.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use floe_runtime::{
    servant_fn, Communicator, Context, Current, Dispatch, DispatchError, Encapsulation, Error,
    Identity, ObjectAdapter, OperationMode, Properties, Proxy, Response, Servant,
};

/// A test servant: `o()` counts, `echo(bytes)` returns its params, `ctx`
/// returns the context value of key `k`, `sleep(int ms)` waits, `fail`
/// raises status 7.
struct Echo {
    calls: AtomicUsize,
    seen: Mutex<Vec<String>>,
    /// `pattern` calls whose parameters were not [`pattern`]'s bytes.
    bad: AtomicUsize,
}

impl Echo {
    fn new() -> Arc<Echo> {
        Arc::new(Echo {
            calls: AtomicUsize::new(0),
            seen: Mutex::new(Vec::new()),
            bad: AtomicUsize::new(0),
        })
    }
}

impl Servant for Echo {
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.seen
            .lock()
            .unwrap()
            .push(format!("{}:{}", current.facet, current.operation));
        match current.operation.as_str() {
            "o" => Dispatch::ready(Ok(current.empty_reply())),
            "pattern" => {
                if params.data != pattern(params.data.len()) {
                    self.bad.fetch_add(1, Ordering::SeqCst);
                }
                Dispatch::ready(Ok(current.empty_reply()))
            }
            "echo" => {
                let data = params.data.clone();
                Dispatch::ready(Ok(current.encode_reply(|e| e.write_raw(&data))))
            }
            "ctx" => {
                let v = current.ctx.get("k").cloned().unwrap_or_default();
                Dispatch::ready(Ok(current.encode_reply(|e| e.write_string(&v))))
            }
            "sleep" => Dispatch::future(async move {
                let mut d = floe_wire::Decoder::from_encapsulation(params)?;
                let ms = d.read_i32()?;
                tokio::time::sleep(Duration::from_millis(ms as u64)).await;
                Ok(current.encode_reply(|e| e.write_i32(ms)))
            }),
            "fail" => Dispatch::error(DispatchError::unknown("boom")),
            "idem" => Dispatch::ready(
                current
                    .check_mode(OperationMode::Idempotent)
                    .map(|_| current.empty_reply()),
            ),
            "forward" => {
                // Re-send the received parameters unchanged.
                let bytes = floe_runtime::encapsulation_bytes(&params);
                Dispatch::ready(Ok(bytes))
            }
            "panic" => panic!("servant bug"),
            "panic_async" => Dispatch::future::<Bytes>(async move { panic!("async servant bug") }),
            "user" => Dispatch::error(DispatchError::EncodedUserException(
                current.encode_reply(|e| e.write_u8(0x20)),
            )),
            _ => Dispatch::error(DispatchError::operation_not_exist()),
        }
    }

    fn ice_id(&self) -> &str {
        "::Test::Echo"
    }

    fn ice_ids(&self) -> &[&str] {
        &["::Ice::Object", "::Test::Echo"]
    }
}

struct Server {
    communicator: Communicator,
    adapter: ObjectAdapter,
    servant: Arc<Echo>,
    proxy: Proxy,
}

async fn server(props: Properties) -> Server {
    let communicator = Communicator::with_properties(props);
    let adapter = communicator
        .create_object_adapter_with_endpoints("Test", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let servant = Echo::new();
    let proxy = adapter
        .add(Identity::from_name("echo"), servant.clone())
        .unwrap();
    adapter
        .add_facet(Identity::from_name("echo"), "f1", servant.clone())
        .unwrap();
    adapter.activate();
    Server {
        communicator,
        adapter,
        servant,
        proxy,
    }
}

/// A client communicator's proxy to the server's `echo`.
fn client_proxy(s: &Server, props: Properties) -> (Communicator, Proxy) {
    let c = Communicator::with_properties(props);
    let p = c.string_to_proxy(&s.proxy.to_string()).unwrap();
    (c, p)
}

fn bytes_params(p: &Proxy, data: &[u8]) -> Bytes {
    p.encode_params(|e| e.write_raw(data))
}

/// One `echo` call through `p`, checking the reply.
async fn echo(p: &Proxy, data: &[u8]) {
    let r = p
        .invoke("echo", OperationMode::Normal, bytes_params(p, data))
        .await
        .unwrap()
        .into_ok()
        .unwrap();
    assert_eq!(&r.data[..], data);
}

/// `tasks` spawned tasks each make `calls` `echo` calls through `p` at
/// once, checking every reply.
async fn echo_from_tasks(p: &Proxy, tasks: usize, calls: usize) {
    let mut running = Vec::new();
    for i in 0..tasks {
        let p = p.clone();
        running.push(tokio::spawn(async move {
            for j in 0..calls {
                echo(&p, format!("{i}-{j}").as_bytes()).await;
            }
        }));
    }
    for t in running {
        t.await.unwrap();
    }
}

#[tokio::test]
async fn twoway_oneway_and_builtins() {
    let s = server(Properties::new()).await;
    let (c, p) = client_proxy(&s, Properties::new());
    p.invoke("o", OperationMode::Normal, p.empty_params())
        .await
        .unwrap();
    let r = p
        .invoke("echo", OperationMode::Normal, bytes_params(&p, b"abc"))
        .await
        .unwrap();
    assert_eq!(
        r,
        Response::Ok(Encapsulation {
            encoding: floe_wire::ENCODING_1_1,
            data: Bytes::from_static(b"abc"),
        })
    );
    // A 1 MB-ish payload goes through the vectored path.
    let big = vec![7u8; 600_000];
    let r = p
        .invoke("echo", OperationMode::Normal, bytes_params(&p, &big))
        .await
        .unwrap()
        .into_ok()
        .unwrap();
    assert_eq!(r.data.len(), big.len());
    p.ice_ping().await.unwrap();
    assert!(p.ice_is_a("::Test::Echo").await.unwrap());
    assert!(!p.ice_is_a("::Test::Other").await.unwrap());
    assert_eq!(p.ice_id().await.unwrap(), "::Test::Echo");
    assert_eq!(
        p.ice_ids().await.unwrap(),
        vec!["::Ice::Object", "::Test::Echo"]
    );
    let before = s.servant.calls.load(Ordering::SeqCst);
    let ow = p.ice_oneway();
    for _ in 0..10 {
        ow.invoke("o", OperationMode::Normal, p.empty_params())
            .await
            .unwrap();
    }
    p.invoke("o", OperationMode::Normal, p.empty_params())
        .await
        .unwrap();
    assert_eq!(s.servant.calls.load(Ordering::SeqCst), before + 11);
    assert!(matches!(ow.ice_id().await, Err(Error::TwowayOnly)));
    ow.ice_ping().await.unwrap(); // no results: allowed oneway
    c.destroy().await;
    s.communicator.destroy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_multi_thread() {
    let s = server(Properties::new()).await;
    let (c, p) = client_proxy(&s, Properties::new());
    echo_from_tasks(&p, 8, 200).await;
    // Async dispatches overlap: 4 sleeps of 200 ms take well under 800 ms.
    let start = std::time::Instant::now();
    let mut sleeps = Vec::new();
    for _ in 0..4 {
        let p = p.clone();
        sleeps.push(tokio::spawn(async move {
            let params = p.encode_params(|e| e.write_i32(200));
            p.invoke("sleep", OperationMode::Normal, params)
                .await
                .unwrap()
        }));
    }
    for t in sleeps {
        t.await.unwrap();
    }
    assert!(
        start.elapsed() < Duration::from_millis(700),
        "{:?}",
        start.elapsed()
    );
    c.destroy().await;
    s.communicator.destroy().await;
}

#[tokio::test]
async fn not_exist_replies_and_failures() {
    let s = server(Properties::new()).await;
    let (c, p) = client_proxy(&s, Properties::new());
    let missing = p.ice_identity(Identity::new("ego", "cat"));
    match missing.ice_ping().await {
        Err(Error::ObjectNotExist(f)) => {
            assert_eq!(f.identity, Identity::new("ego", "cat"));
            assert_eq!(f.operation, "ice_ping");
        }
        other => panic!("{other:?}"),
    }
    match p
        .ice_facet("nope")
        .invoke("o", OperationMode::Normal, p.empty_params())
        .await
    {
        Err(Error::FacetNotExist(f)) => assert_eq!(f.facet, "nope"),
        other => panic!("{other:?}"),
    }
    match p
        .invoke("nosuch", OperationMode::Normal, p.empty_params())
        .await
    {
        Err(Error::OperationNotExist(f)) => assert_eq!(f.operation, "nosuch"),
        other => panic!("{other:?}"),
    }
    // Status 7 for a Normal op: not retried.
    let before = s.servant.calls.load(Ordering::SeqCst);
    assert!(matches!(
        p.invoke("fail", OperationMode::Normal, p.empty_params()).await,
        Err(Error::UnknownException(t)) if t == "boom"
    ));
    assert_eq!(s.servant.calls.load(Ordering::SeqCst), before + 1);
    // Idempotent: retried once (§7.2).
    assert!(p
        .invoke("fail", OperationMode::Idempotent, p.empty_params())
        .await
        .is_err());
    assert_eq!(s.servant.calls.load(Ordering::SeqCst), before + 3);
    // Panicking servants give status 7; the connection survives.
    assert!(matches!(
        p.invoke("panic", OperationMode::Normal, p.empty_params()).await,
        Err(Error::UnknownException(t)) if t.contains("servant bug")
    ));
    assert!(matches!(
        p.invoke("panic_async", OperationMode::Normal, p.empty_params()).await,
        Err(Error::UnknownException(t)) if t.contains("async servant bug")
    ));
    p.ice_ping().await.unwrap();
    // Mode checks (§2.2): idempotent op sent as Normal is status 5.
    p.invoke("idem", OperationMode::Idempotent, p.empty_params())
        .await
        .unwrap();
    p.invoke("idem", OperationMode::Nonmutating, p.empty_params())
        .await
        .unwrap();
    assert!(matches!(
        p.invoke("idem", OperationMode::Normal, p.empty_params()).await,
        Err(Error::UnknownLocalException(t)) if t.contains("unexpected operation mode")
    ));
    let fwd = p
        .invoke("forward", OperationMode::Normal, bytes_params(&p, b"xyz"))
        .await
        .unwrap()
        .into_ok()
        .unwrap();
    assert_eq!(&fwd.data[..], b"xyz");
    // User exception: status 1.
    let r = p
        .invoke("user", OperationMode::Normal, p.empty_params())
        .await
        .unwrap();
    assert!(matches!(r, Response::UserException(e) if e.data[..] == [0x20]));
    // Bad params encoding: status 5.
    let bad = Bytes::from_static(&[6, 0, 0, 0, 1, 2]);
    assert!(matches!(
        p.invoke("o", OperationMode::Normal, bad).await,
        Err(Error::UnknownLocalException(t)) if t.contains("UnsupportedEncoding")
    ));
    c.destroy().await;
    s.communicator.destroy().await;
}

#[tokio::test]
async fn facets_and_contexts() {
    let s = server(Properties::new()).await;
    let (c, p) = client_proxy(&s, Properties::new());
    let f1 = p.ice_facet("f1");
    f1.invoke("o", OperationMode::Normal, p.empty_params())
        .await
        .unwrap();
    assert!(s.servant.seen.lock().unwrap().contains(&"f1:o".to_string()));
    let mut ctx = Context::new();
    ctx.insert("k".into(), "v".into());
    let r = p
        .ice_context(ctx.clone())
        .invoke("ctx", OperationMode::Normal, p.empty_params())
        .await
        .unwrap()
        .into_ok()
        .unwrap();
    assert_eq!(&r.data[..], b"\x01v");
    ctx.insert("k".into(), "explicit".into());
    let r = p
        .invoke_with_context("ctx", OperationMode::Normal, p.empty_params(), Some(&ctx))
        .await
        .unwrap()
        .into_ok()
        .unwrap();
    assert_eq!(&r.data[..], b"\x08explicit");
    c.destroy().await;
    s.communicator.destroy().await;
}

#[tokio::test]
async fn batch_oneway_and_auto_flush() {
    let s = server(Properties::new()).await;
    let props = Properties::new();
    props.set("Ice.BatchAutoFlushSize", "1"); // 1 KB
    let (c, p) = client_proxy(&s, props);
    let batch = p.ice_batch_oneway();
    let before = s.servant.calls.load(Ordering::SeqCst);
    for _ in 0..5 {
        batch
            .invoke("o", OperationMode::Normal, p.empty_params())
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        s.servant.calls.load(Ordering::SeqCst),
        before,
        "sent before flush"
    );
    batch.ice_flush_batch_requests().await.unwrap();
    p.ice_ping().await.unwrap();
    assert_eq!(s.servant.calls.load(Ordering::SeqCst), before + 5);
    // 400-byte requests with a 1 KB limit: the third one triggers a flush of
    // the first two and stays queued.
    let payload = vec![1u8; 400];
    for _ in 0..3 {
        batch
            .invoke("echo", OperationMode::Normal, bytes_params(&p, &payload))
            .await
            .unwrap();
    }
    p.ice_ping().await.unwrap();
    assert_eq!(s.servant.calls.load(Ordering::SeqCst), before + 7);
    c.flush_batch_requests().await.unwrap();
    p.ice_ping().await.unwrap();
    assert_eq!(s.servant.calls.load(Ordering::SeqCst), before + 8);
    c.destroy().await;
    s.communicator.destroy().await;
}

#[tokio::test]
async fn reply_over_the_client_limit_is_a_memory_limit_error() {
    let s = server(Properties::new()).await;
    let props = Properties::new();
    props.set("Ice.MessageSizeMax", "1");
    let (c, p) = client_proxy(&s, props);
    let err = p
        .invoke(
            "echo",
            OperationMode::Normal,
            bytes_params(&p, &[1u8; 2000]),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Protocol(floe_wire::Error::MemoryLimit { .. })),
        "{err:?}"
    );
    c.destroy().await;
    s.communicator.destroy().await;
}

/// Parameters an Ice frame cannot hold (its size is an `i32`) are refused
/// with `MemoryLimitException` before anything is sent, and the
/// connection goes on. The 2 GiB payload is zeroed memory never touched
/// (nothing reads it); the test is skipped if the system refuses it.
#[tokio::test]
async fn parameters_over_2_gib_are_a_memory_limit_error() {
    const LEN: usize = 1 << 31;
    let layout = std::alloc::Layout::array::<u8>(LEN).unwrap();
    // SAFETY: a non-zero size; checked for null below.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        eprintln!("skipped: no 2 GiB of address space");
        return;
    }
    // SAFETY: `ptr` is a live, zero-initialised allocation of LEN bytes,
    // freed only after the last use of `huge` below.
    let huge = unsafe { std::slice::from_raw_parts(ptr, LEN) };
    let s = server(Properties::new()).await;
    let (c, p) = client_proxy(&s, Properties::new());
    // As for 2^29 floats.
    let prefix = p.encode_params_prefix(|e| e.write_size(LEN / 4));
    let err = p
        .invoke_with_payload_slice("echo", OperationMode::Normal, &prefix, huge, None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Protocol(floe_wire::Error::MemoryLimit { .. })),
        "{err:?}"
    );
    echo(&p, b"still connected").await;
    c.destroy().await;
    s.communicator.destroy().await;
    // SAFETY: allocated above with this layout; `huge` is not used again.
    unsafe { std::alloc::dealloc(ptr, layout) };
}

#[tokio::test]
async fn compression_both_ways() {
    let s = server(Properties::new()).await;
    let (c, p) = client_proxy(&s, Properties::new());
    let z = p.ice_compress(true);
    let data = vec![b'z'; 5000];
    let r = z
        .invoke("echo", OperationMode::Normal, bytes_params(&p, &data))
        .await
        .unwrap()
        .into_ok()
        .unwrap();
    assert_eq!(&r.data[..], &data[..]);
    // Small requests go out with status 1 and still work.
    z.invoke("o", OperationMode::Normal, p.empty_params())
        .await
        .unwrap();
    c.destroy().await;
    s.communicator.destroy().await;
}

#[tokio::test]
async fn invocation_timeout_and_abandon() {
    let s = server(Properties::new()).await;
    let (c, p) = client_proxy(&s, Properties::new());
    let t = p.ice_invocation_timeout(Some(Duration::from_millis(50)));
    let params = p.encode_params(|e| e.write_i32(300));
    assert!(matches!(
        t.invoke("sleep", OperationMode::Normal, params.clone())
            .await,
        Err(Error::InvocationTimeout)
    ));
    // Dropping a call future abandons it; the connection stays usable.
    let fut = p.invoke("sleep", OperationMode::Normal, params);
    let _ = tokio::time::timeout(Duration::from_millis(20), fut).await;
    p.ice_ping().await.unwrap();
    c.destroy().await;
    s.communicator.destroy().await;
}

#[tokio::test]
async fn graceful_shutdown_waits_for_dispatches() {
    let s = server(Properties::new()).await;
    let (c, p) = client_proxy(&s, Properties::new());
    p.ice_ping().await.unwrap();
    let params = p.encode_params(|e| e.write_i32(200));
    let pending = {
        let p = p.clone();
        tokio::spawn(async move { p.invoke("sleep", OperationMode::Normal, params).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    s.communicator.shutdown();
    s.communicator.wait_for_shutdown().await;
    // The running dispatch replied before the connection closed.
    let r = pending.await.unwrap().unwrap().into_ok().unwrap();
    assert_eq!(&r.data[..], &200i32.to_le_bytes());
    assert!(s.adapter.is_deactivated());
    // The next call fails: nobody listens any more.
    assert!(p.ice_ping().await.is_err());
    c.destroy().await;
}

#[tokio::test]
async fn default_servants_and_closure_servants() {
    let c = Communicator::new();
    let a = c
        .create_object_adapter_with_endpoints("D", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    a.add_default_servant(
        "cat",
        servant_fn(|cur, _| {
            let name = cur.id.name.clone();
            Dispatch::ready(Ok(cur.encode_reply(|e| e.write_string(&name))))
        }),
    );
    a.activate();
    let p = a.create_proxy(Identity::new("anything", "cat"));
    let r = p
        .invoke("who", OperationMode::Normal, p.empty_params())
        .await
        .unwrap()
        .into_ok()
        .unwrap();
    assert_eq!(&r.data[..], b"\x08anything");
    assert!(matches!(
        p.ice_identity(Identity::new("x", "dog")).ice_ping().await,
        Err(Error::ObjectNotExist(_))
    ));
    c.destroy().await;
}

#[tokio::test]
async fn connection_ids_and_message_size_max() {
    let props = Properties::new();
    props.set("Ice.MessageSizeMax", "1"); // 1 KB on the server
    let s = server(props).await;
    let (c, p) = client_proxy(&s, Properties::new());
    let c1 = p.ice_get_connection().await.unwrap();
    let c2 = p
        .ice_connection_id("other")
        .ice_get_connection()
        .await
        .unwrap();
    assert!(!c1.ptr_eq(&c2), "connection ids must not share connections");
    let c3 = p.ice_facet("f1").ice_get_connection().await.unwrap();
    assert!(c1.ptr_eq(&c3), "same endpoint and id share the connection");
    // The sender does not check; the server drops the connection on an
    // over-limit frame and the (Normal, sent) call is not retried.
    let big = vec![0u8; 2000];
    let err = p
        .invoke("echo", OperationMode::Normal, bytes_params(&p, &big))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ConnectionLost(_)), "{err:?}");
    // The next call opens a new connection.
    p.ice_ping().await.unwrap();
    // Fixed proxies use exactly their connection.
    let fixed = p.ice_fixed(&c2);
    fixed.ice_ping().await.unwrap();
    c2.abort();
    assert!(fixed.ice_ping().await.is_err());
    c.destroy().await;
    s.communicator.destroy().await;
}

/// `Ice.MessageSizeMax=0` (no limit) on both sides: a frame's size claim is
/// not checked, so the reader grows its buffer with what arrives instead of
/// reserving the claimed size up front; large frames still arrive intact.
#[tokio::test]
async fn no_message_size_limit_reads_large_frames() {
    let unlimited = || {
        let props = Properties::new();
        props.set("Ice.MessageSizeMax", "0");
        props
    };
    let s = server(unlimited()).await;
    let (c, p) = client_proxy(&s, unlimited());
    let big: Vec<u8> = (0..5_000_000u32).map(|i| (i % 251) as u8).collect();
    echo(&p, &big).await;
    echo(&p, b"small after large").await;
    echo(&p, &big[..3_000_000]).await;
    c.destroy().await;
    s.communicator.destroy().await;
}

/// `ObjectAdapter::hold`: requests on an existing connection are not
/// dispatched, new connections are not accepted, until `activate`.
#[tokio::test]
async fn hold_defers_dispatch_until_activate() {
    let s = server(Properties::new()).await;
    let (c, p) = client_proxy(&s, Properties::new());
    p.ice_ping().await.unwrap();
    let before = s.servant.calls.load(Ordering::SeqCst);

    s.adapter.hold();
    assert!(s.adapter.is_holding());
    let call = tokio::spawn({
        let p = p.clone();
        async move { p.invoke("o", OperationMode::Normal, p.empty_params()).await }
    });
    // A second client must not get a connection while the adapter holds.
    let (c2, p2) = client_proxy(&s, Properties::new());
    let fresh = tokio::spawn(async move { p2.ice_ping().await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!call.is_finished(), "a held adapter dispatched a request");
    assert!(!fresh.is_finished(), "a held adapter accepted a connection");
    assert_eq!(s.servant.calls.load(Ordering::SeqCst), before);

    s.adapter.activate();
    call.await.unwrap().unwrap();
    fresh.await.unwrap().unwrap();
    assert_eq!(s.servant.calls.load(Ordering::SeqCst), before + 1);
    c.destroy().await;
    c2.destroy().await;
    s.communicator.destroy().await;
}

/// Back-to-back oneways are coalesced by the connection task but keep
/// their order (also relative to a later twoway); a oneway sent after a
/// pause is written before the call returns, so aborting the connection
/// right after it does not lose it.
#[tokio::test]
async fn oneway_bursts_keep_order_and_idle_oneways_are_written_at_once() {
    let s = server(Properties::new()).await;
    let (c, p, ow) = connected_oneway(&s).await;
    let ops: Vec<String> = (0..2000).map(|i| format!("b{i}")).collect();
    for op in &ops {
        ow.invoke(op, OperationMode::Normal, p.empty_params())
            .await
            .unwrap();
    }
    p.invoke("o", OperationMode::Normal, p.empty_params())
        .await
        .unwrap();
    let mut expected: Vec<String> = ops.iter().map(|o| format!(":{o}")).collect();
    expected.push(":o".into());
    assert_eq!(*s.servant.seen.lock().unwrap(), expected);

    tokio::time::sleep(Duration::from_millis(20)).await;
    let conn = p.ice_get_connection().await.unwrap();
    ow.invoke("idle", OperationMode::Normal, p.empty_params())
        .await
        .unwrap();
    conn.abort();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !s
        .servant
        .seen
        .lock()
        .unwrap()
        .contains(&":idle".to_string())
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(s
        .servant
        .seen
        .lock()
        .unwrap()
        .contains(&":idle".to_string()));
    c.destroy().await;
    s.communicator.destroy().await;
}

/// A protocol 1.0 request frame to identity `echo`, written by hand (as a
/// peer would): request id `rid` (0: oneway), parameters `data`.
fn request_frame(rid: i32, operation: &str, data: &[u8]) -> Vec<u8> {
    let mut body = rid.to_le_bytes().to_vec();
    body.extend_from_slice(&[4, b'e', b'c', b'h', b'o', 0, 0]); // identity, facet
    body.push(operation.len() as u8);
    body.extend_from_slice(operation.as_bytes());
    body.extend_from_slice(&[0, 0]); // mode Normal, empty context
    body.extend_from_slice(&(6 + data.len() as i32).to_le_bytes());
    body.extend_from_slice(&[1, 1]);
    body.extend_from_slice(data);
    let mut frame = b"IceP\x01\x00\x01\x00\x00\x00".to_vec();
    frame.extend_from_slice(&(14 + body.len() as i32).to_le_bytes());
    frame.extend_from_slice(&body);
    frame
}

/// A client of `s` that has connected (its ping is not in the servant's
/// record, which is cleared) and its proxy's oneway twin.
async fn connected_oneway(s: &Server) -> (Communicator, Proxy, Proxy) {
    let (c, p) = client_proxy(s, Properties::new());
    p.ice_ping().await.unwrap();
    s.servant.seen.lock().unwrap().clear();
    let ow = p.ice_oneway();
    (c, p, ow)
}

/// Sends `pattern(len)` as a `pattern` request through `p`.
async fn send_pattern(p: &Proxy, len: usize) {
    let params = p.encode_params(|e| e.write_raw(&pattern(len)));
    p.invoke("pattern", OperationMode::Normal, params)
        .await
        .unwrap();
}

/// `len` bytes that depend on `len` and their position.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + len) as u8).collect()
}

/// A stream of oneways of mixed sizes, written faster than the server
/// handles them, so that reads fill their room, the read room grows, and
/// frames straddle the ends of read buffers; then large frames (the room
/// goes back to its base size) and small ones again. Every frame arrives,
/// in order and intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oneway_streams_of_mixed_sizes_arrive_intact() {
    let s = server(Properties::new()).await;
    let (c, p, ow) = connected_oneway(&s).await;
    let sizes = [1, 300, 9_000, 15_000, 17_000, 40_000, 70_000, 2_000, 10_000];
    let mut sent = 0;
    for round in 0..3 {
        let n = if round == 1 { 20 } else { 600 };
        for i in 0..n {
            let len = if round == 1 {
                300_000 + i
            } else {
                sizes[i % sizes.len()] + i
            };
            send_pattern(&ow, len).await;
            sent += 1;
        }
    }
    p.invoke("o", OperationMode::Normal, p.empty_params())
        .await
        .unwrap();
    assert_eq!(s.servant.bad.load(Ordering::SeqCst), 0);
    let seen = s.servant.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), sent + 1);
    assert!(seen[..sent].iter().all(|op| op == ":pattern"));
    c.destroy().await;
    s.communicator.destroy().await;
}

/// Oneways of a few MB (read with the socket's low-water mark raised, see
/// `ReadSize::low_water`), each followed by small calls that must not wait
/// for a mark left behind, and a slow writer whose large oneway arrives in
/// pieces.
#[tokio::test]
async fn large_oneways_then_small_calls_are_not_held_back() {
    let props = Properties::new();
    props.set("Ice.MessageSizeMax", "10240");
    let s = server(props).await;
    let (c, p, ow) = connected_oneway(&s).await;
    for len in [3_000_000, 300_000, 1_500_000, 2_000_000] {
        send_pattern(&ow, len).await;
        // A small oneway right behind, then a twoway: both answered at once.
        send_pattern(&ow, 10).await;
        tokio::time::timeout(Duration::from_secs(5), echo(&p, b"after a large oneway"))
            .await
            .expect("a small call after a large oneway is answered");
    }
    assert_eq!(s.servant.bad.load(Ordering::SeqCst), 0);
    assert_eq!(s.servant.seen.lock().unwrap().len(), 12);

    // A raw client writing a 1 MB oneway in pieces, pausing between them:
    // the server dispatches it once it is whole, then answers a ping.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let port = s.proxy.to_data().endpoints[0]
        .port()
        .expect("a tcp endpoint") as u16;
    let mut raw = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let mut validate = [0u8; 14];
    raw.read_exact(&mut validate).await.unwrap();
    let frame = request_frame(0, "pattern", &pattern(1_000_000));
    for piece in frame.chunks(300_000) {
        raw.write_all(piece).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let ping = request_frame(9, "ice_ping", &[]);
    raw.write_all(&ping).await.unwrap();
    let mut reply = [0u8; 25];
    tokio::time::timeout(Duration::from_secs(5), raw.read_exact(&mut reply))
        .await
        .expect("the ping after a slowly written oneway is answered")
        .unwrap();
    assert_eq!(reply[8], 2, "a reply");
    assert_eq!(&reply[14..18], &9i32.to_le_bytes());
    assert_eq!(s.servant.bad.load(Ordering::SeqCst), 0);
    drop(raw);
    c.destroy().await;
    s.communicator.destroy().await;
}

/// Properties with `floe.BusyPoll` set (µs).
fn busy_poll(us: u32) -> Properties {
    let props = Properties::new();
    props.set("floe.BusyPoll", &us.to_string());
    props
}

/// The calls of [`busy_poll_current_thread`] and [`busy_poll_multi_thread`]:
/// quick replies (read while polling), slow ones (the poll gives up and the
/// reply comes through the I/O driver), large frames, oneways, concurrent
/// callers, and the server closing while the client polls.
async fn busy_poll_calls() {
    let s = server(busy_poll(200)).await;
    let (c, p) = client_proxy(&s, busy_poll(200));
    for i in 0..500 {
        echo(&p, format!("call {i}").as_bytes()).await;
    }
    // Slower than the poll window: answered through readiness.
    for ms in [1, 5] {
        let params = p.encode_params(|e| e.write_i32(ms));
        p.invoke("sleep", OperationMode::Normal, params)
            .await
            .unwrap();
    }
    // Frames larger than a read: the rest of a frame is read on readiness.
    let big = vec![3u8; 700_000];
    for _ in 0..3 {
        echo(&p, &big).await;
    }
    let before = s.servant.calls.load(Ordering::SeqCst);
    let ow = p.ice_oneway();
    for _ in 0..100 {
        ow.invoke("o", OperationMode::Normal, p.empty_params())
            .await
            .unwrap();
    }
    p.ice_ping().await.unwrap();
    assert_eq!(s.servant.calls.load(Ordering::SeqCst), before + 100);
    echo_from_tasks(&p, 4, 100).await;
    // The connection is aborted while a reply is awaited: the call fails
    // at once, and the server (which sees the socket close) serves the
    // next connection.
    let conn = p.ice_get_connection().await.unwrap();
    let params = p.encode_params(|e| e.write_i32(300));
    let pending = tokio::spawn({
        let p = p.clone();
        async move { p.invoke("sleep", OperationMode::Normal, params).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    conn.abort();
    let r = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .expect("the call ends when the connection is lost")
        .unwrap();
    assert!(r.is_err(), "{r:?}");
    p.ice_ping().await.unwrap();
    c.destroy().await;
    s.communicator.destroy().await;
}

#[tokio::test]
async fn busy_poll_current_thread() {
    busy_poll_calls().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_poll_multi_thread() {
    busy_poll_calls().await;
}
