//! [`StreamIo`]: the generic stream path of a connection, for transports
//! that are a byte stream over TCP but not the socket itself (TLS for
//! `ssl`; TLS or a WebSocket for `ws`/`wss`).
//!
//! The stream sits behind a std `Mutex` and is only ever polled, never
//! awaited with the lock held: the connection task polls reads with its
//! waker; writes are polled by whoever holds the writer's queue lock
//! (see `connection/writer/`). Reads fill the spare capacity of a frame
//! buffer the connection task lends to the stream before it waits
//! ([`StreamIo::lend_read_buf`]) and takes back after, so received frames
//! are split off that buffer as on the TCP path, with no copy beyond what
//! the transport itself makes (TLS decrypts into it).

use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// At most this many queued buffers go into one vectored write.
const MAX_IOV: usize = 64;

/// A byte stream a connection can run over.
pub(crate) trait AsyncStream: AsyncRead + AsyncWrite + Send + Unpin {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin> AsyncStream for T {}

struct StreamState {
    /// `None` once the connection was shut down.
    stream: Option<Box<dyn AsyncStream>>,
    /// The frame buffer lent by the connection task while it waits.
    read_buf: BytesMut,
}

/// A connection's stream (TLS, WebSocket), shared by its reader and writer.
pub(crate) struct StreamIo {
    state: Mutex<StreamState>,
}

impl StreamIo {
    /// Wraps an established stream (handshakes done).
    pub(crate) fn new(stream: impl AsyncStream + 'static) -> StreamIo {
        StreamIo {
            state: Mutex::new(StreamState {
                stream: Some(Box::new(stream)),
                read_buf: BytesMut::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, StreamState> {
        // Only polls run under the lock; the state stays consistent.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Lends the connection task's frame buffer (with its spare capacity
    /// reserved) to the reads of [`StreamIo::poll_read`].
    pub(crate) fn lend_read_buf(&self, buf: BytesMut) {
        self.lock().read_buf = buf;
    }

    /// Takes the frame buffer back, with what the reads added to it.
    pub(crate) fn take_read_buf(&self) -> BytesMut {
        std::mem::take(&mut self.lock().read_buf)
    }

    /// Reads into the lent buffer's spare capacity: the bytes read (0 at
    /// the end of the stream) and whether they filled that room.
    pub(crate) fn poll_read(&self, cx: &mut Context<'_>) -> Poll<io::Result<(usize, bool)>> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let Some(stream) = st.stream.as_mut() else {
            return Poll::Ready(Ok((0, false)));
        };
        if st.read_buf.capacity() == st.read_buf.len() {
            st.read_buf.reserve(1024);
        }
        let spare = st.read_buf.spare_capacity_mut();
        let room = spare.len();
        let mut rb = ReadBuf::uninit(spare);
        match Pin::new(stream).poll_read(cx, &mut rb) {
            Poll::Ready(Ok(())) => {
                let n = rb.filled().len();
                // SAFETY: `poll_read` initialised the first `n` bytes of
                // the spare capacity (`ReadBuf::filled`).
                unsafe { st.read_buf.set_len(st.read_buf.len() + n) };
                Poll::Ready(Ok((n, n == room)))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }

    /// One vectored write of the head of `queue`: the bytes the stream
    /// took (the caller drops them from the queue).
    pub(crate) fn poll_write_queue(
        &self,
        cx: &mut Context<'_>,
        queue: &VecDeque<Bytes>,
    ) -> Poll<io::Result<usize>> {
        let mut st = self.lock();
        let Some(stream) = st.stream.as_mut() else {
            return Poll::Ready(Err(io::ErrorKind::NotConnected.into()));
        };
        let mut iov = [IoSlice::new(&[]); MAX_IOV];
        let mut n = 0;
        for (slot, b) in iov.iter_mut().zip(queue.iter()) {
            *slot = IoSlice::new(b);
            n += 1;
        }
        let stream = Pin::new(stream);
        if stream.is_write_vectored() {
            stream.poll_write_vectored(cx, &iov[..n])
        } else {
            // One buffer per write: no copy to coalesce them here, the
            // stream (TLS records, WebSocket frames) buffers its output.
            match queue.front() {
                Some(b) => stream.poll_write(cx, b),
                None => Poll::Ready(Ok(0)),
            }
        }
    }

    /// Pushes what the stream buffered out to the socket.
    pub(crate) fn poll_flush(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut st = self.lock();
        match st.stream.as_mut() {
            Some(stream) => Pin::new(stream).poll_flush(cx),
            None => Poll::Ready(Err(io::ErrorKind::NotConnected.into())),
        }
    }

    /// Closes the stream now: one non-blocking attempt at its closing
    /// message (a TLS close_notify, a WebSocket Close frame), then the
    /// socket is closed (the stream dropped).
    pub(crate) fn shutdown(&self) {
        let stream = self.lock().stream.take();
        if let Some(mut stream) = stream {
            let mut cx = Context::from_waker(std::task::Waker::noop());
            let _ = Pin::new(&mut stream).poll_shutdown(&mut cx);
        }
    }
}
