//! Hostile input on a raw TcpStream (§7.3): the bad connection is closed
//! without a reply, the server keeps serving everyone else.

use std::time::Duration;

use floe_runtime::{servant_fn, Communicator, Dispatch, Identity, OperationMode, Proxy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const VALIDATE: [u8; 14] = [
    0x49, 0x63, 0x65, 0x50, 0x01, 0x00, 0x01, 0x00, 0x03, 0x00, 0x0e, 0x00, 0x00, 0x00,
];
/// `o()` on `hello`, requestId 1 (protocol_basic.txt).
const O_REQUEST: &str = "4963655001000100000024000000010000000568656c6c6f0000016f0000060000000101";

async fn start() -> (Communicator, Proxy, u16) {
    let c = Communicator::new();
    let a = c
        .create_object_adapter_with_endpoints("H", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let p = a
        .add(
            Identity::from_name("hello"),
            servant_fn(|cur, _| Dispatch::ready(Ok(cur.empty_reply()))),
        )
        .unwrap();
    a.activate();
    let port = a.endpoints()[0].port;
    (c, p, port)
}

/// Connects, checks the server speaks first with ValidateConnection.
async fn raw(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut v = [0u8; 14];
    s.read_exact(&mut v).await.unwrap();
    assert_eq!(v, VALIDATE);
    s
}

/// Sends `bytes` and expects the server to close without sending anything.
async fn expect_closed(port: u16, bytes: &[u8]) {
    let mut s = raw(port).await;
    s.write_all(bytes).await.unwrap();
    let mut buf = [0u8; 64];
    let r = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
        .await
        .expect("server did not close the connection");
    match r {
        Ok(0) | Err(_) => {}
        Ok(n) => panic!("server answered {n} bytes: {:02x?}", &buf[..n]),
    }
}

fn o_request() -> Vec<u8> {
    hex::decode(O_REQUEST).unwrap()
}

#[tokio::test]
async fn valid_request_gets_a_captured_reply() {
    let (c, _p, port) = start().await;
    let mut s = raw(port).await;
    s.write_all(&o_request()).await.unwrap();
    let mut reply = [0u8; 25];
    s.read_exact(&mut reply).await.unwrap();
    assert_eq!(
        hex::encode(reply),
        "49636550010001000200190000000100000000060000000101"
    );
    // ValidateConnection from the client is ignored; CloseConnection closes.
    s.write_all(&VALIDATE).await.unwrap();
    let mut close = VALIDATE;
    close[8] = 4;
    close[9] = 1;
    s.write_all(&close).await.unwrap();
    let mut buf = [0u8; 8];
    assert_eq!(s.read(&mut buf).await.unwrap_or(0), 0);
    c.destroy().await;
}

#[tokio::test]
async fn bad_frames_close_only_their_connection() {
    let (c, p, port) = start().await;
    let good = raw(port).await;

    let mut bad_magic = o_request();
    bad_magic[0] = b'X';
    expect_closed(port, &bad_magic).await;
    let mut proto11 = o_request();
    proto11[5] = 1;
    expect_closed(port, &proto11).await;
    let mut enc11 = o_request();
    enc11[7] = 1;
    expect_closed(port, &enc11).await;
    let mut bad_type = o_request();
    bad_type[8] = 9;
    expect_closed(port, &bad_type).await;
    let mut small = o_request();
    small[10] = 5;
    expect_closed(port, &small).await;
    let mut huge = o_request();
    huge[10..14].copy_from_slice(&(100 * 1024 * 1024i32).to_le_bytes());
    expect_closed(port, &huge).await;
    // Negative batch count.
    let mut batch = VALIDATE.to_vec();
    batch[8] = 1;
    batch[10] = 18;
    batch.extend_from_slice(&(-1i32).to_le_bytes());
    expect_closed(port, &batch).await;
    // Corrupt bzip2 body (raw_cpp.txt "junk!" frame).
    expect_closed(
        port,
        &hex::decode("4963655001000100000217000000280000006a756e6b21").unwrap(),
    )
    .await;
    // Identity string running past the frame.
    let mut trunc = o_request();
    trunc[18] = 0x40;
    expect_closed(port, &trunc).await;
    // Two facets.
    let mut two = hex::decode(
        "49636550010001000000000000000100000001610002016101620 16f00000600000001 01"
            .replace(' ', ""),
    )
    .unwrap();
    let n = two.len() as i32;
    two[10..14].copy_from_slice(&n.to_le_bytes());
    expect_closed(port, &two).await;
    // Garbage.
    expect_closed(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await;

    // Everyone else is still served.
    p.ice_ping().await.unwrap();
    let mut good = good;
    good.write_all(&o_request()).await.unwrap();
    let mut reply = [0u8; 25];
    good.read_exact(&mut reply).await.unwrap();
    assert_eq!(reply[8], 2);
    drop(good);
    c.destroy().await;
}

#[tokio::test]
async fn bad_params_get_status_5_and_bad_mode_too() {
    let (c, _p, port) = start().await;
    let mut s = raw(port).await;
    // Unsupported params encoding 1.2.
    let mut r = o_request();
    let last = r.len() - 1;
    r[last] = 2;
    s.write_all(&r).await.unwrap();
    let mut head = [0u8; 19];
    s.read_exact(&mut head).await.unwrap();
    assert_eq!(head[8], 2, "a reply");
    assert_eq!(head[18], 5, "status 5");
    let size = i32::from_le_bytes([head[10], head[11], head[12], head[13]]) as usize;
    let mut rest = vec![0u8; size - 19];
    s.read_exact(&mut rest).await.unwrap();
    // Invalid mode byte 7.
    let mut r = o_request();
    r[28] = 7;
    s.write_all(&r).await.unwrap();
    s.read_exact(&mut head).await.unwrap();
    assert_eq!(head[18], 5);
    let size = i32::from_le_bytes([head[10], head[11], head[12], head[13]]) as usize;
    let mut rest = vec![0u8; size - 19];
    s.read_exact(&mut rest).await.unwrap();
    assert!(String::from_utf8_lossy(&rest).contains("MarshalException"));
    // A params encapsulation larger than the frame: status 5, not a close.
    let mut r = o_request();
    r[30] = 0x60;
    s.write_all(&r).await.unwrap();
    s.read_exact(&mut head).await.unwrap();
    assert_eq!(head[18], 5);
    let size = i32::from_le_bytes([head[10], head[11], head[12], head[13]]) as usize;
    let mut rest = vec![0u8; size - 19];
    s.read_exact(&mut rest).await.unwrap();
    assert!(String::from_utf8_lossy(&rest).contains("UnmarshalOutOfBounds"));
    drop(s);
    c.destroy().await;
}

#[tokio::test]
async fn client_rejects_a_server_that_does_not_validate() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let fake = tokio::spawn(async move {
        // Every attempt (the client retries once) gets a Reply header
        // instead of ValidateConnection.
        loop {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut bad = VALIDATE;
            bad[8] = 2;
            s.write_all(&bad).await.unwrap();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(300)).await;
                drop(s);
            });
        }
    });
    let c = Communicator::new();
    let p = c
        .string_to_proxy(&format!("x:tcp -h 127.0.0.1 -p {port}"))
        .unwrap();
    let err = p
        .invoke("o", OperationMode::Normal, p.empty_params())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not validated"), "{err}");
    fake.abort();
    c.destroy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_request_is_answered_after_validation() {
    let (c, _p, port) = start().await;
    for _ in 0..20 {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        // Written before reading the server's ValidateConnection.
        s.write_all(&o_request()).await.unwrap();
        let mut both = [0u8; 14 + 25];
        s.read_exact(&mut both).await.unwrap();
        assert_eq!(both[..14], VALIDATE);
        assert_eq!(both[14 + 8], 2, "then the reply");
    }
    c.destroy().await;
}
