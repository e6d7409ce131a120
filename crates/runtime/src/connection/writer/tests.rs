//! Tests of the [`Writer`] against a real loopback socket.

use super::super::core::outbound::OutFrame;
use super::super::core::policy::HELP_BYTES;
use super::*;
use std::sync::atomic::Ordering;

/// A frame of `head` then the borrowed `tail`.
fn borrowed(head: Bytes, tail: &[u8]) -> OutFrame<'_> {
    OutFrame::Parts {
        parts: [head, Bytes::new(), Bytes::new()],
        tail,
    }
}
use std::io::Read;
use std::sync::atomic::AtomicUsize;

/// Bytes accepted by the kernel so far: sent minus still queued.
fn written(sent: usize, w: &Writer) -> usize {
    sent - w.queued_bytes()
}

/// Blocks until the peer's reader has seen `n` bytes.
fn wait_read(seen: &AtomicUsize, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while seen.load(Ordering::Acquire) < n {
        assert!(std::time::Instant::now() < deadline, "peer read stalled");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// A connected loopback pair: the writer's side, and a blocking peer.
async fn connected_pair() -> (TcpStream, std::net::TcpStream) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let stream = TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (peer, _) = listener.accept().await.unwrap();
    let peer = peer.into_std().unwrap();
    peer.set_nonblocking(false).unwrap();
    (stream, peer)
}

// No connection task runs here and the test never awaits between
// sends: whatever leaves the queue was written by the senders.
#[tokio::test(flavor = "current_thread")]
async fn senders_queued_behind_others_write_the_queue_themselves() {
    let (stream, peer) = connected_pair().await;
    let seen = Arc::new(AtomicUsize::new(0));
    let reader = {
        let seen = seen.clone();
        std::thread::spawn(move || {
            let mut peer = peer;
            let mut buf = vec![0u8; 256 * 1024];
            while let Ok(n @ 1..) = peer.read(&mut buf) {
                seen.fetch_add(n, Ordering::Release);
            }
        })
    };
    let w = Writer::new(Arc::new(stream));
    let chunk = Bytes::from(vec![7u8; 64 * 1024]);
    let mut sent = 0;
    // Send faster than the peer reads until something stays queued.
    while !w.has_queued() {
        w.send(&mut [chunk.clone()]).unwrap();
        sent += chunk.len();
    }
    for deferred in [false, true] {
        // The peer takes everything the kernel accepted: the socket
        // has room again, and only a sender can use it.
        wait_read(&seen, written(sent, &w));
        let before = w.queued_bytes();
        for _ in 0..HELP_BYTES / chunk.len() {
            if deferred {
                w.send_deferred(&mut [chunk.clone()], 0).unwrap();
            } else {
                w.send(&mut [chunk.clone()]).unwrap();
            }
            sent += chunk.len();
        }
        assert!(
            w.queued_bytes() < before + HELP_BYTES,
            "deferred={deferred}: nothing written ({before} queued before, {} after)",
            w.queued_bytes()
        );
    }
    w.drain().await.unwrap();
    assert_eq!(w.queued_bytes(), 0);
    wait_read(&seen, sent);
    drop(w);
    reader.join().unwrap();
}

/// While corked, messages (even ones with a borrowed tail, copied) are
/// queued and nothing is written; `uncork` writes them all, in order, in
/// one vectored write.
#[tokio::test(flavor = "current_thread")]
async fn corked_messages_leave_together_at_uncork() {
    let (stream, peer) = connected_pair().await;
    let w = Writer::new(Arc::new(stream));
    w.cork();
    let mut expected = Vec::new();
    for i in 0..5u8 {
        let head = Bytes::from(vec![i; 14]);
        let mut tail = vec![100 + i; 3];
        expected.extend_from_slice(&head);
        expected.extend_from_slice(&tail);
        w.send_frame(borrowed(head, &tail), false).unwrap();
        tail.fill(0xEE);
    }
    assert_eq!(w.queued_bytes(), expected.len(), "written while corked");
    w.uncork().unwrap();
    assert_eq!(w.queued_bytes(), 0, "left queued after uncork");
    // Not corked any more: written at once.
    w.send(&mut [Bytes::from_static(b"end")]).unwrap();
    assert_eq!(w.queued_bytes(), 0);
    expected.extend_from_slice(b"end");
    drop(w);
    let mut peer = peer;
    let mut got = Vec::new();
    peer.read_to_end(&mut got).unwrap();
    assert_eq!(got, expected);
}

/// Messages with a borrowed tail leave whole and in order whether the
/// socket takes them at once, in part, or only after earlier messages,
/// and nothing refers to a tail once `send_borrowed` returned (each is
/// overwritten right after).
#[tokio::test(flavor = "current_thread")]
async fn borrowed_tails_are_sent_whole_and_in_order() {
    let (stream, peer) = connected_pair().await;
    // The peer reads only once everything was sent or queued.
    let (start_tx, start_rx) = std::sync::mpsc::channel::<()>();
    let reader = std::thread::spawn(move || {
        let mut peer = peer;
        start_rx.recv().unwrap();
        let mut got = Vec::new();
        peer.read_to_end(&mut got).unwrap();
        got
    });
    let w = Writer::new(Arc::new(stream));
    let pattern = |n: usize, seed: u8| -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    };
    let mut expected = Vec::new();
    // Small (written at once), 8 MiB (more than the socket takes: the
    // rest is copied into the queue), then two behind that queue.
    for (i, n) in [100usize, 8 << 20, 70_000, 5].into_iter().enumerate() {
        let head = Bytes::from(pattern(13, 200 + i as u8));
        let mut tail = pattern(n, i as u8);
        expected.extend_from_slice(&head);
        expected.extend_from_slice(&tail);
        w.send_frame(borrowed(head, &tail), false).unwrap();
        if i == 1 {
            assert!(w.has_queued(), "the socket took 8 MiB at once");
        }
        tail.fill(0xEE);
    }
    start_tx.send(()).unwrap();
    w.drain().await.unwrap();
    drop(w);
    let got = reader.join().unwrap();
    assert_eq!(got.len(), expected.len());
    assert!(got == expected, "the bytes differ");
}

/// The environment variable that makes the test below run its child part.
#[cfg(any(target_os = "linux", target_os = "android"))]
const SIGPIPE_CHILD: &str = "FLOE_WRITER_SIGPIPE_CHILD";

/// Writing to a connection the peer reset gives an error, not `SIGPIPE`,
/// in a process where the signal has its default action (kill), as in a
/// C host program: the test runs itself again as a child process with
/// `SIGPIPE` at `SIG_DFL` and checks that the child was not killed.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn writes_to_a_reset_connection_fail_without_sigpipe() {
    if std::env::var_os(SIGPIPE_CHILD).is_some() {
        return sigpipe_child();
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "connection::writer::tests::writes_to_a_reset_connection_fail_without_sigpipe",
            "--test-threads=1",
        ])
        .env(SIGPIPE_CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("1 passed"),
        "the child ran no test:\n{stdout}"
    );
}

/// The child part: each write path (a direct send, the connection
/// task's write of the queue, a helping sender) on a connection whose
/// reset was already seen by a read, so that the write gets `EPIPE`.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn sigpipe_child() {
    // SAFETY: setting a signal's disposition to its default; no handler.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (stream, peer) = connected_pair().await;
        let stream = Arc::new(stream);
        // A zero linger makes the close a reset.
        socket2::SockRef::from(&peer)
            .set_linger(Some(std::time::Duration::ZERO))
            .unwrap();
        drop(peer);
        // The connection task's read sees the reset first.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let mut b = [std::mem::MaybeUninit::new(0u8); 1];
            match socket2::SockRef::from(&*stream).recv(&mut b) {
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
                _ => assert!(std::time::Instant::now() < deadline, "no reset seen"),
            }
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        stream.writable().await.unwrap();
        let chunk = Bytes::from(vec![7u8; 64 * 1024]);
        // A direct send.
        let w = Writer::new(stream.clone());
        assert!(w.send(&mut [chunk.clone()]).is_err(), "direct send");
        // The connection task's write of the queue.
        let w = Writer::new(stream.clone());
        w.send_deferred(&mut [chunk.clone()], 0).unwrap();
        assert!(w.write_queued().is_err(), "queued write");
        // A sender helping after HELP_BYTES queued.
        let w = Writer::new(stream.clone());
        let mut res = Ok(());
        for _ in 0..=HELP_BYTES / chunk.len() {
            res = res.and_then(|()| w.send_deferred(&mut [chunk.clone()], 0));
        }
        assert!(res.is_err(), "helping sender");
    });
}

/// Oneway requests that join batches: IceMX counts as sent exactly the
/// bytes the peer reads (each joined request's header and request id,
/// dropped, is taken back), fewer than the frames handed to the writer.
#[tokio::test(flavor = "current_thread")]
async fn batched_oneways_count_the_bytes_on_the_wire() {
    const FRAMES: usize = 2_000;
    const FRAME: usize = 1_018;
    let (stream, peer) = connected_pair().await;
    let reader = std::thread::spawn(move || {
        let mut peer = peer;
        let mut buf = vec![0u8; 256 * 1024];
        let mut total = 0;
        while let Ok(n @ 1..) = peer.read(&mut buf) {
            total += n;
        }
        total
    });
    let props = crate::Properties::new();
    props.set("IceMX.Metrics.V.GroupBy", "id");
    let admin = crate::metrics::MetricsAdmin::from_properties(&props).unwrap();
    let info = crate::ConnectionInfo {
        local: None,
        remote: None,
        incoming: false,
        adapter_name: String::new(),
        connection_id: String::new(),
        transport: "tcp",
        id: 1,
        tls: None,
        endpoint: None,
        headers: Vec::new(),
    };
    let mut w = Writer::new(Arc::new(stream));
    w.metrics = crate::connection::observe::ConnectionObserver::start(&admin, &info);
    for i in 0..FRAMES {
        // A oneway request's header and request id 0, then a body.
        let mut frame = bytes::BytesMut::from(&b"IceP\x01\x00\x01\x00\x00\x00"[..]);
        frame.extend_from_slice(&(FRAME as i32).to_le_bytes());
        frame.extend_from_slice(&[0; 4]);
        frame.extend_from_slice(&[i as u8; FRAME - 18]);
        w.send_oneway(OutFrame::whole(frame), true, 64 * 1024)
            .unwrap();
    }
    w.drain().await.unwrap();
    assert!(w.metrics.is_some(), "the view counts the connection");
    let entries = admin.map_entries("V", "Connection").unwrap();
    let sent: i64 = entries.iter().map(|e| e.sent.load(Ordering::Relaxed)).sum();
    drop(w);
    let read = reader.join().unwrap();
    assert_eq!(sent, read as i64);
    assert!(
        read < FRAMES * FRAME,
        "some requests joined a batch: {read}"
    );
}
