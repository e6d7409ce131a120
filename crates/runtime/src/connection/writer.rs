//! [`Writer`]: the send side of a TCP connection.
//!
//! Concurrency choice: whoever sends (a caller's task for requests, the
//! connection task for replies) first tries to write the frame **directly**
//! with a non-blocking vectored write while holding a std `Mutex`
//! around the queue: when nothing is queued and the socket has room (the
//! usual case), a message costs one syscall and no task hop. Only what the
//! kernel does not take is queued; the connection task, woken through a
//! `Notify`, waits for writability and drains the queue with vectored
//! writes, so concurrent senders' small frames coalesce into few syscalls.
//! Senders that queue behind earlier messages also write the queue's head
//! themselves every 256 KiB they queue ([`Writer::help`]): the queue keeps
//! draining while the connection task waits for a busy runtime.
//! Frames are never interleaved: the queue is appended to only under the
//! lock, and the direct path is taken only when the queue is empty.
//!
//! Small oneway requests (up to 16 KB of parameters) sent in a burst
//! (within 20 µs of the previous write) skip the direct attempt
//! ([`Writer::send_deferred`]):
//! they are queued and the connection task writes them, so a caller
//! sending oneways back to back pays a fraction of a syscall per message
//! (64 frames per `writev`) instead of one each; they leave as soon as the
//! calling task yields, and a oneway caller waits once more than 1 MiB is
//! queued. Twoway requests and replies keep the direct path.
//!
//! Nothing here awaits while holding the lock, and a sender never owns
//! half-written state, so dropping a caller's future cannot corrupt the
//! stream.
//!
//! Over a stream transport (TLS) the same queue is written through the
//! stream's `poll_write_vectored` and `poll_flush` under the same lock:
//! a sender finding the connection idle writes directly (polled with a
//! no-op waker), and whatever the stream does not take or flush at once
//! is left to the connection task, which polls with its own waker. Only
//! the connection task waits for the stream to become writable, so no
//! other task's waker can take its place.

use std::collections::VecDeque;
use std::io::IoSlice;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use bytes::{Buf, Bytes};
use tokio::net::TcpStream;
use tokio::sync::Notify;

use crate::error::Error;
use crate::transport::stream::StreamIo;
use crate::transport::Io;

#[path = "stream_writer.rs"]
mod stream_writer;
#[path = "tcp_writer.rs"]
mod tcp_writer;

pub(super) struct WriteState {
    /// Bytes accepted but not yet written, in order.
    queue: VecDeque<Bytes>,
    /// Total bytes in `queue` (back-pressure: the connection task stops
    /// reading while this is high).
    queued_bytes: usize,
    /// Set when writing failed or the connection closed.
    error: Option<Error>,
    /// Bytes queued since a sender last tried to write the queue itself.
    unhelped: usize,
    /// A stream transport took bytes it may not have sent yet: it needs a
    /// flush (the TCP path never sets this).
    unflushed: bool,
}

impl WriteState {
    /// Appends the non-empty `parts` to the queue.
    pub(super) fn push(&mut self, parts: &[Bytes]) {
        for b in parts.iter().filter(|b| !b.is_empty()) {
            self.queued_bytes += b.len();
            self.unhelped += b.len();
            self.queue.push_back(b.clone());
        }
    }

    /// Drops the first `n` queued bytes (written).
    pub(super) fn consume(&mut self, mut n: usize) {
        while n > 0 {
            let Some(front) = self.queue.front_mut() else {
                break;
            };
            if n >= front.len() {
                let len = front.len();
                n -= len;
                self.queued_bytes -= len;
                self.queue.pop_front();
            } else {
                front.advance(n);
                self.queued_bytes -= n;
                n = 0;
            }
        }
    }

    /// Whether anything waits to be written or flushed.
    pub(super) fn pending(&self) -> bool {
        !self.queue.is_empty() || self.unflushed
    }
}

/// What a [`Writer`] writes to.
pub(super) enum Sink {
    /// A TCP socket, written with `sendmsg`.
    Tcp(Arc<TcpStream>),
    /// A stream transport, written through `AsyncWrite`.
    Stream(Arc<StreamIo>),
}

/// The write half of a connection, shared by senders and the connection task.
pub(crate) struct Writer {
    sink: Sink,
    state: Mutex<WriteState>,
    /// Wakes the connection task when something was queued.
    queued: Notify,
    /// Wakes senders waiting for a stream transport's queue to shrink.
    written: Notify,
    /// When the last message was sent, in ns since `epoch` (ACM activity
    /// tracking; heartbeats do not count).
    last_write: AtomicU64,
    epoch: std::time::Instant,
}

impl Writer {
    /// The writer of a TCP socket.
    #[cfg(test)]
    pub(crate) fn new(stream: Arc<TcpStream>) -> Self {
        Self::with_sink(Sink::Tcp(stream))
    }

    /// The writer of a connection's transport.
    pub(crate) fn for_io(io: &Io) -> Self {
        match io {
            Io::Tcp(s) => Self::with_sink(Sink::Tcp(s.clone())),
            Io::Stream(s) => Self::with_sink(Sink::Stream(s.clone())),
        }
    }

    fn with_sink(sink: Sink) -> Self {
        Writer {
            sink,
            state: Mutex::new(WriteState {
                queue: VecDeque::new(),
                queued_bytes: 0,
                error: None,
                unhelped: 0,
                unflushed: false,
            }),
            queued: Notify::new(),
            written: Notify::new(),
            last_write: AtomicU64::new(0),
            epoch: std::time::Instant::now(),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, WriteState> {
        // The state stays consistent across a panic (queue pushes/pops only).
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends one message made of `parts` (e.g. a frame head and a large
    /// payload), written back to back. Returns once the bytes are written or
    /// queued.
    ///
    /// # Errors
    ///
    /// The connection's error if it is closed or the write failed.
    pub(crate) fn send(&self, parts: &mut [Bytes]) -> Result<(), Error> {
        let ns = self.epoch.elapsed().as_nanos() as u64;
        self.last_write.store(ns, Ordering::Relaxed);
        self.send_uncounted(parts)
    }

    /// Queues one message for the connection task to write, without trying
    /// the socket first: messages sent back to back this way leave in few
    /// vectored writes instead of one syscall each (oneway requests).
    ///
    /// # Errors
    ///
    /// The connection's error if it is closed or a write failed.
    pub(crate) fn send_deferred(&self, parts: &mut [Bytes]) -> Result<(), Error> {
        let ns = self.epoch.elapsed().as_nanos() as u64;
        self.last_write.store(ns, Ordering::Relaxed);
        let mut st = self.lock();
        if let Some(e) = &st.error {
            return Err(e.clone());
        }
        let was_empty = !st.pending();
        if !self.queue_and_help(&mut st, parts, &[])? {
            return Ok(());
        }
        drop(st);
        if was_empty {
            self.queued.notify_one();
        }
        Ok(())
    }

    /// Whether a counted message was sent less than `window` ago.
    pub(crate) fn wrote_within(&self, window: std::time::Duration) -> bool {
        let last = self.last_write.load(Ordering::Relaxed);
        last != 0
            && (self.epoch.elapsed().as_nanos() as u64).saturating_sub(last)
                < window.as_nanos() as u64
    }

    /// When the last counted message was sent.
    pub(crate) fn last_write(&self) -> std::time::Instant {
        self.epoch + std::time::Duration::from_nanos(self.last_write.load(Ordering::Relaxed))
    }

    /// [`Writer::send`] without recording activity (heartbeats).
    pub(crate) fn send_uncounted(&self, parts: &mut [Bytes]) -> Result<(), Error> {
        self.send_parts(parts, &[])
    }

    /// [`Writer::send`] of a message whose last part, `tail`, is borrowed
    /// (e.g. the caller's `&[f32]`, sent from its own memory): written
    /// straight from `tail` while the socket takes it; only what is left
    /// over (or everything, behind earlier messages) is copied into the
    /// queue, before this returns. Nothing refers to `tail` afterwards.
    ///
    /// # Errors
    ///
    /// As [`Writer::send`].
    pub(crate) fn send_borrowed(&self, parts: &mut [Bytes], tail: &[u8]) -> Result<(), Error> {
        let ns = self.epoch.elapsed().as_nanos() as u64;
        self.last_write.store(ns, Ordering::Relaxed);
        self.send_parts(parts, tail)
    }

    /// Sends `parts` then `tail` (may be empty).
    fn send_parts(&self, parts: &mut [Bytes], tail: &[u8]) -> Result<(), Error> {
        let mut st = self.lock();
        if let Some(e) = &st.error {
            return Err(e.clone());
        }
        if let Sink::Stream(io) = &self.sink {
            return self.send_stream(io, st, parts, tail);
        }
        if st.queue.is_empty() {
            if self.send_direct(&mut st, parts, tail)? {
                return Ok(());
            }
        } else if !self.queue_and_help(&mut st, parts, tail)? {
            return Ok(());
        }
        drop(st);
        self.queued.notify_one();
        Ok(())
    }

    /// Notified whenever something is queued (one permit per
    /// [`Notify::notify_one`]); the connection task keeps one `notified()`
    /// future armed across its loop instead of creating one per pass.
    pub(crate) fn queued_notify(&self) -> &Notify {
        &self.queued
    }

    /// Whether bytes are waiting to be written (or flushed).
    pub(crate) fn has_queued(&self) -> bool {
        self.lock().pending()
    }

    /// Bytes waiting to be written.
    pub(crate) fn queued_bytes(&self) -> usize {
        self.lock().queued_bytes
    }

    /// Waits until something is queued and the socket is writable, then
    /// writes once; runs inside the connection task's `select!`, which calls
    /// it again after each write. Cancel-safe: all state lives in the queue.
    ///
    /// # Errors
    ///
    /// A write error, or [`Error::Timeout`] if the socket accepted nothing
    /// for `timeout` (a peer that stopped reading).
    pub(crate) async fn flush_queued(
        &self,
        timeout: Option<std::time::Duration>,
    ) -> Result<(), Error> {
        while !self.has_queued() {
            self.queued.notified().await;
        }
        let stream = match &self.sink {
            Sink::Tcp(s) => s,
            Sink::Stream(io) => {
                return match timeout {
                    Some(t) => tokio::time::timeout(t, self.write_stream(io))
                        .await
                        .map_err(|_| self.fail(Error::Timeout))?,
                    None => self.write_stream(io).await,
                };
            }
        };
        let ready = match timeout {
            Some(t) => tokio::time::timeout(t, stream.writable())
                .await
                .map_err(|_| self.fail(Error::Timeout))?,
            None => stream.writable().await,
        };
        if let Err(e) = ready {
            return Err(self.fail(Error::from_io(&e)));
        }
        self.write_queued()
    }

    /// Waits until everything queued has been written (used before a
    /// graceful close).
    pub(crate) async fn drain(&self) -> Result<(), Error> {
        while self.has_queued() {
            let stream = match &self.sink {
                Sink::Tcp(s) => s,
                Sink::Stream(io) => {
                    self.write_stream(io).await?;
                    continue;
                }
            };
            if let Err(e) = stream.writable().await {
                return Err(self.fail(Error::from_io(&e)));
            }
            self.write_queued()?;
        }
        Ok(())
    }

    /// Senders' back-pressure: waits until at most `limit` bytes are
    /// queued, writing the queue as the socket takes it (alongside the
    /// connection task). A oneway caller thus waits while its earlier
    /// messages are still unsent, as Ice's synchronous oneways do, instead
    /// of queueing without bound.
    ///
    /// # Errors
    ///
    /// The connection's error, or [`Error::Timeout`] if the socket accepted
    /// nothing for `timeout`.
    pub(crate) async fn wait_queued_below(
        &self,
        limit: usize,
        timeout: Option<std::time::Duration>,
    ) -> Result<(), Error> {
        // Without a write timeout, re-check now and then: the connection
        // task may fail the writer (peer gone) while we wait.
        const RECHECK: std::time::Duration = std::time::Duration::from_secs(1);
        loop {
            // Armed before the check, so that progress made after it wakes us.
            let written = self.written.notified();
            tokio::pin!(written);
            written.as_mut().enable();
            {
                let st = self.lock();
                if let Some(e) = &st.error {
                    return Err(e.clone());
                }
                if st.queued_bytes <= limit {
                    return Ok(());
                }
            }
            let stream = match &self.sink {
                Sink::Tcp(s) => s,
                Sink::Stream(_) => {
                    // Only the connection task writes a stream (see the
                    // module documentation): wait for its progress.
                    match timeout {
                        Some(t) => tokio::time::timeout(t, written)
                            .await
                            .map_err(|_| self.fail(Error::Timeout))?,
                        None => {
                            let _ = tokio::time::timeout(RECHECK, written).await;
                        }
                    }
                    continue;
                }
            };
            let ready = match timeout {
                Some(t) => tokio::time::timeout(t, stream.writable())
                    .await
                    .map_err(|_| self.fail(Error::Timeout))?,
                None => match tokio::time::timeout(RECHECK, stream.writable()).await {
                    Ok(r) => r,
                    Err(_) => continue,
                },
            };
            if let Err(e) = ready {
                return Err(self.fail(Error::from_io(&e)));
            }
            self.write_queued()?;
        }
    }

    /// Refuses further writes with `err` (first error wins) and returns the
    /// error in force.
    pub(crate) fn fail(&self, err: Error) -> Error {
        let mut st = self.lock();
        st.queue.clear();
        st.queued_bytes = 0;
        st.unflushed = false;
        let err = st.error.get_or_insert(err).clone();
        drop(st);
        self.written.notify_waiters();
        err
    }
}

#[cfg(test)]
mod tests {
    use super::tcp_writer::HELP_BYTES;
    use super::*;
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
                    w.send_deferred(&mut [chunk.clone()]).unwrap();
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
            w.send_borrowed(&mut [head], &tail).unwrap();
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
            w.send_deferred(&mut [chunk.clone()]).unwrap();
            assert!(w.write_queued().is_err(), "queued write");
            // A sender helping after HELP_BYTES queued.
            let w = Writer::new(stream.clone());
            let mut res = Ok(());
            for _ in 0..=HELP_BYTES / chunk.len() {
                res = res.and_then(|()| w.send_deferred(&mut [chunk.clone()]));
            }
            assert!(res.is_err(), "helping sender");
        });
    }
}
