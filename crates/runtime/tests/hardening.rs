//! Hardening: frames floe accepts because Ice does, connections released as
//! soon as their peer is gone, and results too large for a frame.

use std::time::{Duration, Instant};

use bytes::Bytes;
use floe_runtime::{
    servant_fn, Communicator, Dispatch, Error, Identity, OperationMode, Properties, ReplyData,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const VALIDATE: [u8; 14] = [
    0x49, 0x63, 0x65, 0x50, 0x01, 0x00, 0x01, 0x00, 0x03, 0x00, 0x0e, 0x00, 0x00, 0x00,
];
/// The captured reply to `o()` with request id 1 (empty result).
const O_REPLY: &str = "49636550010001000200190000000100000000060000000101";

/// A server with `hello` (empty result) and `big` (a 200-byte result).
async fn start(props: Properties) -> (Communicator, u16) {
    let c = Communicator::with_properties(props);
    let a = c
        .create_object_adapter_with_endpoints("Hard", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    a.add(
        Identity::from_name("hello"),
        servant_fn(|cur, _| Dispatch::ready(Ok(cur.empty_reply()))),
    )
    .unwrap();
    a.add(
        Identity::from_name("big"),
        servant_fn(|_, _| {
            let mut encaps = vec![206, 0, 0, 0, 1, 1];
            encaps.resize(206, 7);
            Dispatch::ready(Ok(ReplyData::new(Bytes::from(encaps))))
        }),
    )
    .unwrap();
    a.activate();
    let port = a.endpoints()[0].port;
    (c, port)
}

/// A twoway `o()` request frame on `name` with request id 1.
fn request(name: &str) -> Vec<u8> {
    let mut f = vec![0x49, 0x63, 0x65, 0x50, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0];
    f.extend_from_slice(&1i32.to_le_bytes());
    f.push(name.len() as u8);
    f.extend_from_slice(name.as_bytes());
    f.extend_from_slice(&[0, 0, 1, b'o', 0, 0, 6, 0, 0, 0, 1, 1]);
    let n = f.len() as i32;
    f[10..14].copy_from_slice(&n.to_le_bytes());
    f
}

/// Connects and reads the server's ValidateConnection.
async fn raw(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut v = [0u8; 14];
    s.read_exact(&mut v).await.unwrap();
    assert_eq!(v, VALIDATE);
    s
}

/// Reads one whole frame (or fails if the server closes first).
async fn read_frame(s: &mut TcpStream) -> Vec<u8> {
    let mut f = vec![0u8; 14];
    tokio::time::timeout(Duration::from_secs(5), s.read_exact(&mut f))
        .await
        .expect("no answer")
        .expect("connection closed instead of an answer");
    let size = i32::from_le_bytes([f[10], f[11], f[12], f[13]]) as usize;
    f.resize(size, 0);
    s.read_exact(&mut f[14..]).await.unwrap();
    f
}

/// Expects the server to close the connection without answering.
async fn expect_closed(s: &mut TcpStream) {
    let mut buf = [0u8; 64];
    match tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
        .await
        .expect("server kept the connection")
    {
        Ok(0) | Err(_) => {}
        Ok(n) => panic!("server answered {n} bytes: {:02x?}", &buf[..n]),
    }
}

/// Ice for C++ reads a compression byte other than 0, 1 or 2 as "not
/// compressed, the reply may be" (the reply to such a request comes back
/// compressed when large enough) and keeps the connection; so does floe.
#[tokio::test]
async fn an_unknown_compression_byte_is_read_as_uncompressed_as_ice_does() {
    let (c, port) = start(Properties::new()).await;
    let mut s = raw(port).await;
    let expected = hex::decode(O_REPLY).unwrap();
    for byte in [3u8, 4, 0x80, 0xff] {
        let mut f = request("hello");
        f[9] = byte;
        s.write_all(&f).await.unwrap();
        let reply = read_frame(&mut s).await;
        // Under 100 bytes: not compressed, status 1 (compression accepted).
        assert_eq!(reply[9], 1, "compression byte {byte}");
        assert_eq!(reply[..9], expected[..9]);
        assert_eq!(reply[10..], expected[10..]);
        // A large reply is compressed (status 2), as Ice's is.
        let mut f = request("big");
        f[9] = byte;
        s.write_all(&f).await.unwrap();
        let reply = read_frame(&mut s).await;
        assert_eq!((reply[8], reply[9]), (2, 2), "compression byte {byte}");
    }
    // The connection is still there for ordinary requests.
    s.write_all(&request("hello")).await.unwrap();
    assert_eq!(read_frame(&mut s).await, expected);
    drop(s);
    c.destroy().await;
}

/// Ice ignores the body of a ValidateConnection message; so does floe. A
/// CloseConnection with a body still closes, and a compressed
/// ValidateConnection whose body is not bzip2 is refused (as by Ice).
#[tokio::test]
async fn a_validate_connection_with_a_body_is_ignored_as_ice_does() {
    let (c, port) = start(Properties::new()).await;
    let expected = hex::decode(O_REPLY).unwrap();
    let mut s = raw(port).await;
    for body in [&[0u8][..], &[1, 2, 3, 4, 5, 6], &[0xff; 300]] {
        let mut v = VALIDATE.to_vec();
        v.extend_from_slice(body);
        let n = v.len() as i32;
        v[10..14].copy_from_slice(&n.to_le_bytes());
        s.write_all(&v).await.unwrap();
        s.write_all(&request("hello")).await.unwrap();
        assert_eq!(read_frame(&mut s).await, expected);
    }
    // CloseConnection with a body: closed, as Ice does.
    let mut close = VALIDATE.to_vec();
    close[8] = 4;
    close[9] = 1;
    close.extend_from_slice(&[1, 2, 3]);
    close[10] = 17;
    s.write_all(&close).await.unwrap();
    expect_closed(&mut s).await;
    // Compressed ValidateConnection with a body that is not bzip2.
    let mut s = raw(port).await;
    let mut v = VALIDATE.to_vec();
    v[9] = 2;
    v.extend_from_slice(&[0xaa, 0xaa]);
    v[10] = 16;
    s.write_all(&v).await.unwrap();
    expect_closed(&mut s).await;
    c.destroy().await;
}

/// The inode of the server's socket of the connection from local port
/// `client` to `server`, from `/proc/net/tcp`.
#[cfg(target_os = "linux")]
fn server_socket_inode(server: u16, client: u16) -> Option<u64> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let local = format!("0100007F:{server:04X}");
    let remote = format!("0100007F:{client:04X}");
    table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.get(1) != Some(&local.as_str()) || f.get(2) != Some(&remote.as_str()) {
            return None;
        }
        f.get(9)?.parse().ok().filter(|&inode| inode != 0)
    })
}

/// Whether this process still has a descriptor for socket `inode`.
#[cfg(target_os = "linux")]
fn socket_open(inode: u64) -> bool {
    let want = format!("socket:[{inode}]");
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .any(|l| l.to_str() == Some(want.as_str()))
}

/// The first `sent` bytes of a request frame announcing `size` bytes.
fn partial_request(size: i32, rid: i32, sent: usize) -> Vec<u8> {
    let mut f = vec![0u8; size as usize];
    f[..10].copy_from_slice(&[0x49, 0x63, 0x65, 0x50, 1, 0, 1, 0, 0, 0]);
    f[10..14].copy_from_slice(&size.to_le_bytes());
    f[14..18].copy_from_slice(&rid.to_le_bytes());
    f.truncate(sent);
    f
}

/// A peer that goes away in the middle of a frame (slow loris): the server
/// closes its socket as soon as its read sees the end of the stream. Before,
/// the adapter kept the connection (and its descriptor) until its next
/// accept. Measured on the server's own descriptor, for a half close (the
/// client also sees the server's end at once) and a full close.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_closing_mid_frame_is_released_at_once() {
    let (c, port) = start(Properties::new()).await;
    let cases = [
        ("half a header", partial_request(100, 1, 7)),
        ("a header", partial_request(100, 1, 14)),
        ("part of a twoway request", partial_request(1_000, 1, 300)),
        (
            "part of a large twoway",
            partial_request(900_000, 1, 100_000),
        ),
        (
            "part of a large oneway",
            partial_request(900_000, 0, 100_000),
        ),
    ];
    let mut slowest = Duration::ZERO;
    for half in [true, false] {
        for (what, bytes) in &cases {
            let mut s = raw(port).await;
            let client = s.local_addr().unwrap().port();
            let inode = server_socket_inode(port, client).expect("server socket not found");
            assert!(socket_open(inode));
            s.write_all(bytes).await.unwrap();
            let start = Instant::now();
            if half {
                s.shutdown().await.unwrap();
                expect_closed(&mut s).await;
            } else {
                drop(s);
            }
            while socket_open(inode) {
                assert!(
                    start.elapsed() < Duration::from_secs(2),
                    "{what} (half close: {half}): the server kept its socket"
                );
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            slowest = slowest.max(start.elapsed());
        }
    }
    eprintln!("slowest release: {slowest:?}");
    c.destroy().await;
}

/// A zeroed buffer of `len` bytes that the system only maps (untouched
/// pages take no memory), or `None` if it refuses.
fn lazily_zeroed(len: usize) -> Option<Bytes> {
    let layout = std::alloc::Layout::array::<u8>(len).ok()?;
    // SAFETY: `layout` has a non-zero size; the allocation is zeroed, so
    // all `len` bytes are initialised, and it is handed to a `Vec<u8>` with
    // the same layout (capacity `len`, alignment 1), which frees it.
    unsafe {
        let p = std::alloc::alloc_zeroed(layout);
        if p.is_null() {
            return None;
        }
        Some(Bytes::from(Vec::from_raw_parts(p, len, len)))
    }
}

/// A result over 2 GiB cannot be put in a frame (its size is an i32): the
/// caller gets a MemoryLimitException (status 5) instead of the
/// connection's task panicking, and the connection keeps serving. The
/// result is a mapped but untouched buffer, so the test needs no 2 GiB of
/// memory.
#[tokio::test]
async fn a_result_over_2_gib_is_a_memory_limit_exception_not_a_panic() {
    let len = i32::MAX as usize + 16;
    if lazily_zeroed(len).is_none() {
        eprintln!("skipped: cannot map {len} bytes");
        return;
    }
    let c = Communicator::new();
    let a = c
        .create_object_adapter_with_endpoints("Huge", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let p = a
        .add(
            Identity::from_name("huge"),
            servant_fn(move |cur, _| {
                if cur.operation == "huge" {
                    let data = lazily_zeroed(len).expect("mapped once already");
                    Dispatch::ready(Ok(ReplyData::new(data)))
                } else {
                    Dispatch::ready(Ok(cur.empty_reply()))
                }
            }),
        )
        .unwrap();
    a.activate();
    let err = p
        .invoke("huge", OperationMode::Normal, p.empty_params())
        .await
        .expect_err("a result over 2 GiB was sent");
    match &err {
        Error::UnknownLocalException(text) => {
            assert!(text.contains("MemoryLimitException"), "{text}")
        }
        other => panic!("expected a MemoryLimitException reply, got {other:?}"),
    }
    // Same connection, still serving.
    let conn = p.ice_get_connection().await.unwrap();
    p.invoke("small", OperationMode::Normal, p.empty_params())
        .await
        .unwrap();
    assert!(conn.ptr_eq(&p.ice_get_connection().await.unwrap()));
    c.destroy().await;
}

/// `Ice.TCP.Backlog` sets the listen queue: with the adapter holding
/// (nothing accepted), a queue of 2 takes about 3 connects and leaves the
/// rest waiting; with the default (the system's `SOMAXCONN`) all are
/// queued.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn ice_tcp_backlog_sets_the_listen_queue() {
    async fn queued(backlog: Option<&str>) -> usize {
        let props = Properties::new();
        if let Some(b) = backlog {
            props.set("Ice.TCP.Backlog", b);
        }
        let c = Communicator::with_properties(props);
        let a = c
            .create_object_adapter_with_endpoints("Held", "tcp -h 127.0.0.1 -p 0")
            .await
            .unwrap();
        let port = a.endpoints()[0].port;
        let mut connects = tokio::task::JoinSet::new();
        for _ in 0..20 {
            let connect = TcpStream::connect(("127.0.0.1", port));
            connects.spawn(tokio::time::timeout(Duration::from_millis(300), connect));
        }
        // Connects beyond the queue wait for a SYN retransmission (1 s).
        let streams: Vec<TcpStream> = connects
            .join_all()
            .await
            .into_iter()
            .filter_map(|r| r.ok()?.ok())
            .collect();
        let n = streams.len();
        drop(streams);
        c.destroy().await;
        n
    }
    let small = queued(Some("2")).await;
    assert!((1..=4).contains(&small), "{small} connects queued");
    assert_eq!(queued(None).await, 20);
}
