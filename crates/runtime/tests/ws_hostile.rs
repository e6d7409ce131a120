//! Hostile input over `ws` (tests/hostile.rs is the tcp counterpart): a
//! WebSocket client (tokio-tungstenite, and raw frames on its socket) sends
//! a floe server bad Ice frames, oversized frames and messages, text and
//! malformed WebSocket frames, and goes away mid-frame. The bad connection
//! is closed without a reply, nothing panics, and the server keeps serving
//! everyone else; an Ice message split across WebSocket messages, or two
//! in one, is still answered (IceWS frames are a byte stream). A connection
//! the server closes ends with a Close frame of status 1000, as IceWS's.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use floe_runtime::{servant_fn, Communicator, Dispatch, Identity, Properties, Proxy};

type Ws = WebSocketStream<TcpStream>;

const VALIDATE: [u8; 14] = [
    0x49, 0x63, 0x65, 0x50, 0x01, 0x00, 0x01, 0x00, 0x03, 0x00, 0x0e, 0x00, 0x00, 0x00,
];
/// `o()` on `hello`, requestId 1 (protocol_basic.txt).
const O_REQUEST: &str = "4963655001000100000024000000010000000568656c6c6f0000016f0000060000000101";
/// The reply to [`O_REQUEST`].
const O_REPLY: &str = "49636550010001000200190000000100000000060000000101";

/// Panics anywhere in this process (the server runs in it), counted by a
/// hook installed once: the tests check that hostile input caused none.
static PANICS: AtomicUsize = AtomicUsize::new(0);

fn count_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            previous(info);
        }));
    });
}

/// A floe server on `ws -h 127.0.0.1 -p 0` serving `hello` (empty replies;
/// `drop` aborts the connection instead), with `Ice.MessageSizeMax` = 64 KB,
/// and a floe proxy to it.
async fn start() -> (Communicator, Proxy, u16) {
    count_panics();
    let props = Properties::new();
    props.set("Ice.MessageSizeMax", "64");
    let c = Communicator::with_properties(props);
    let a = c
        .create_object_adapter_with_endpoints("H", "ws -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let p = a
        .add(
            Identity::from_name("hello"),
            servant_fn(|cur, _| {
                if cur.operation == "drop" {
                    if let Some(connection) = &cur.connection {
                        connection.abort();
                    }
                }
                Dispatch::ready(Ok(cur.empty_reply()))
            }),
        )
        .unwrap();
    a.activate();
    let port = a.endpoints()[0].port;
    (c, p, port)
}

/// Upgrades a connection with Ice's subprotocol and checks that the server
/// speaks first with ValidateConnection in a binary message.
async fn connect(port: u16) -> Ws {
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut request = format!("ws://127.0.0.1:{port}/")
        .into_client_request()
        .unwrap();
    request.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        HeaderValue::from_static("ice.zeroc.com"),
    );
    let (mut ws, _) = tokio_tungstenite::client_async(request, tcp).await.unwrap();
    match next(&mut ws).await {
        Some(Ok(Message::Binary(b))) => assert_eq!(b[..], VALIDATE),
        other => panic!("expected ValidateConnection, got {other:?}"),
    }
    ws
}

async fn next(ws: &mut Ws) -> Option<Result<Message, tokio_tungstenite::tungstenite::Error>> {
    tokio::time::timeout(Duration::from_secs(5), ws.next())
        .await
        .expect("no answer within 5 s")
}

/// Reads until the server has closed the connection; any message but a
/// Close (a reply, say) fails the test.
async fn expect_closed(ws: &mut Ws, case: &str) {
    loop {
        match next(ws).await {
            None | Some(Err(_)) => return,
            Some(Ok(Message::Close(_))) => continue,
            Some(Ok(m)) => panic!("{case}: server answered {m:?} instead of closing"),
        }
    }
}

/// Opens a connection, sends `messages`, and expects it closed.
async fn send_and_expect_closed(port: u16, case: &str, messages: Vec<Message>) {
    let mut ws = connect(port).await;
    for m in messages {
        // The server may close before it has read everything.
        if ws.send(m).await.is_err() {
            break;
        }
    }
    expect_closed(&mut ws, case).await;
}

/// A masked client frame, written raw: `first` is FIN and opcode, `len`
/// the claimed payload length (which `payload` need not match).
fn raw_frame(first: u8, len: u64, payload: &[u8], masked: bool) -> Vec<u8> {
    let mask_bit = if masked { 0x80 } else { 0 };
    let mut f = vec![first];
    if len < 126 {
        f.push(mask_bit | len as u8);
    } else if len <= 0xffff {
        f.push(mask_bit | 126);
        f.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        f.push(mask_bit | 127);
        f.extend_from_slice(&len.to_be_bytes());
    }
    if masked {
        // A zero masking key leaves the payload as it is.
        f.extend_from_slice(&[0, 0, 0, 0]);
    }
    f.extend_from_slice(payload);
    f
}

/// Writes `bytes` on the connection's socket, under tungstenite.
async fn send_raw_and_expect_closed(port: u16, case: &str, bytes: &[u8]) {
    let mut ws = connect(port).await;
    let _ = ws.get_mut().write_all(bytes).await;
    expect_closed(&mut ws, case).await;
}

fn o_request() -> Vec<u8> {
    hex::decode(O_REQUEST).unwrap()
}

/// [`O_REQUEST`] for the operation `op` instead of `o`.
fn request(op: &str) -> Vec<u8> {
    let o = o_request();
    // Header, requestId, identity `hello`, empty facet: 26 bytes; then `o`.
    let mut r = o[..26].to_vec();
    r.push(op.len() as u8);
    r.extend_from_slice(op.as_bytes());
    r.extend_from_slice(&o[28..]);
    let total = r.len() as i32;
    r[10..14].copy_from_slice(&total.to_le_bytes());
    r
}

/// `o()` with `size` bytes of parameters: a well-formed request.
fn o_request_with_params(size: usize) -> Vec<u8> {
    let mut r = o_request();
    // The params encapsulation: size (6 + size), encoding 1.1.
    r.truncate(r.len() - 6);
    r.extend_from_slice(&(6 + size as i32).to_le_bytes());
    r.extend_from_slice(&[1, 1]);
    r.extend(std::iter::repeat_n(0x5a, size));
    let total = r.len() as i32;
    r[10..14].copy_from_slice(&total.to_le_bytes());
    r
}

/// Reads binary messages until `want` bytes arrived.
async fn read_bytes(ws: &mut Ws, want: usize) -> Vec<u8> {
    let mut got = Vec::new();
    while got.len() < want {
        match next(ws).await {
            Some(Ok(Message::Binary(b))) => got.extend_from_slice(&b),
            other => panic!("expected a reply, got {other:?} after {} bytes", got.len()),
        }
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_messages_close_only_their_connection() {
    let (c, p, port) = start().await;
    let mut good = connect(port).await;
    let bin = |b: Vec<u8>| Message::Binary(b.into());

    send_and_expect_closed(
        port,
        "garbage",
        vec![bin(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec())],
    )
    .await;
    let mut bad_magic = o_request();
    bad_magic[0] = b'X';
    send_and_expect_closed(port, "bad magic", vec![bin(bad_magic)]).await;
    let mut bad_type = o_request();
    bad_type[8] = 9;
    send_and_expect_closed(port, "bad message type", vec![bin(bad_type)]).await;
    let mut small = o_request();
    small[10] = 5;
    send_and_expect_closed(port, "size below a header", vec![bin(small)]).await;
    // A header claiming 100 MB: refused before any body is read.
    let mut huge = o_request();
    huge[10..14].copy_from_slice(&(100 * 1024 * 1024i32).to_le_bytes());
    send_and_expect_closed(port, "100 MB header", vec![bin(huge)]).await;
    // A whole, well-formed request of 100 KB, above Ice.MessageSizeMax (64 KB).
    send_and_expect_closed(
        port,
        "frame above MessageSizeMax",
        vec![bin(o_request_with_params(100 * 1024))],
    )
    .await;
    // A 2 MB WebSocket message, above the transport's message limit.
    send_and_expect_closed(
        port,
        "2 MB WebSocket message",
        vec![bin(o_request_with_params(2 << 20))],
    )
    .await;
    // Ice messages travel in binary messages only.
    send_and_expect_closed(port, "text message", vec![Message::text("IceP")]).await;
    // Corrupt bzip2 body (raw_cpp.txt "junk!" frame).
    send_and_expect_closed(
        port,
        "corrupt bzip2",
        vec![bin(hex::decode(
            "4963655001000100000217000000280000006a756e6b21",
        )
        .unwrap())],
    )
    .await;

    // Everyone else is still served: the connection opened first, and a
    // floe client over ws.
    good.send(bin(o_request())).await.unwrap();
    assert_eq!(hex::encode(read_bytes(&mut good, 25).await), O_REPLY);
    p.ice_ping().await.unwrap();
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a panic in the server");
    // Gone before destroy(), which otherwise waits for its graceful close.
    drop(good);
    c.destroy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_websocket_frames_close_only_their_connection() {
    let (c, p, port) = start().await;
    let o = o_request();
    send_raw_and_expect_closed(
        port,
        "unmasked frame",
        &raw_frame(0x82, o.len() as u64, &o, false),
    )
    .await;
    send_raw_and_expect_closed(port, "reserved opcode", &raw_frame(0x83, 4, b"IceP", true)).await;
    // A frame claiming 2^62 bytes: refused from its header, nothing allocated.
    send_raw_and_expect_closed(port, "2^62-byte frame", &raw_frame(0x82, 1 << 62, &o, true)).await;
    // A continuation with no message to continue.
    send_raw_and_expect_closed(
        port,
        "stray continuation",
        &raw_frame(0x80, 4, b"IceP", true),
    )
    .await;
    p.ice_ping().await.unwrap();
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a panic in the server");
    c.destroy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peers_that_leave_mid_frame_close_only_their_connection() {
    let (c, p, port) = start().await;
    let o = o_request();
    // Half an Ice message, then a WebSocket Close.
    let mut ws = connect(port).await;
    ws.send(Message::Binary(o[..20].to_vec().into()))
        .await
        .unwrap();
    let _ = ws.close(None).await;
    expect_closed(&mut ws, "close mid-frame").await;
    // Half an Ice message, then the TCP connection drops.
    let mut ws = connect(port).await;
    ws.send(Message::Binary(o[..20].to_vec().into()))
        .await
        .unwrap();
    drop(ws);
    // Half a WebSocket frame, then the TCP connection drops.
    let mut ws = connect(port).await;
    let frame = raw_frame(0x82, o.len() as u64, &o, true);
    ws.get_mut().write_all(&frame[..12]).await.unwrap();
    drop(ws);
    // The server is still there for everyone else.
    for _ in 0..3 {
        p.ice_ping().await.unwrap();
    }
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a panic in the server");
    c.destroy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ice_messages_split_or_joined_across_websocket_messages_are_answered() {
    let (c, _p, port) = start().await;
    let o = o_request();
    let mut ws = connect(port).await;
    // Cut inside the header, then inside the body.
    for part in [&o[..5], &o[5..20], &o[20..]] {
        ws.send(Message::Binary(part.to_vec().into()))
            .await
            .unwrap();
    }
    assert_eq!(hex::encode(read_bytes(&mut ws, 25).await), O_REPLY);
    // Two requests in one message, the second with requestId 2.
    let mut two = o.clone();
    let mut second = o.clone();
    second[14] = 2;
    two.extend_from_slice(&second);
    ws.send(Message::Binary(two.into())).await.unwrap();
    let replies = read_bytes(&mut ws, 50).await;
    assert_eq!(hex::encode(&replies[..25]), O_REPLY);
    assert_eq!(replies[25 + 14], 2, "the second reply answers requestId 2");
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a panic in the server");
    drop(ws);
    c.destroy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_the_server_aborts_ends_with_status_1000() {
    let (c, _p, port) = start().await;
    assert_eq!(request("o"), o_request());
    let mut ws = connect(port).await;
    ws.send(Message::Binary(request("drop").into()))
        .await
        .unwrap();
    // No reply: a Close frame with status 1000 (normal closure), which Ice
    // for JavaScript reports as ConnectionLostException (without a status,
    // the browser's 1005 is a SocketException).
    match next(&mut ws).await {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(frame.code, CloseCode::Normal),
        other => panic!("expected a Close frame with status 1000, got {other:?}"),
    }
    expect_closed(&mut ws, "after the Close frame").await;
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a panic in the server");
    c.destroy().await;
}
