//! [`Writer`]: the send side of a TCP connection.
//!
//! Concurrency choice: whoever sends (a caller's task for requests, the
//! connection task for replies) first tries to write the frame **directly**
//! with a non-blocking vectored write while holding a std `Mutex`
//! around the queue: when nothing is queued and the socket has room (the
//! usual case), a message costs one syscall and no task hop. Only what the
//! kernel does not take is queued; the connection task, woken through its
//! [`TaskSignal`], waits for writability and drains the queue with vectored
//! writes, so concurrent senders' small frames coalesce into few syscalls.
//! Senders that queue behind earlier messages also write the queue's head
//! themselves every 256 KiB they queue ([`Writer::help`]): the queue keeps
//! draining while the connection task waits for a busy runtime.
//! Frames are never interleaved: the queue is appended to only under the
//! lock, and the direct path is taken only when the queue is empty.
//!
//! Small oneway requests (up to 16 KB of parameters) sent in a burst
//! (within 20 µs of the previous oneway) skip the direct attempt
//! ([`Writer::send_deferred`]):
//! they are queued and the connection task writes them, so a caller
//! sending oneways back to back pays a fraction of a syscall per message
//! (64 frames per `writev`) instead of one each; they leave as soon as the
//! calling task yields, and a oneway caller waits once more than 1 MiB is
//! queued. Small twoway requests take the same path while callers pipeline
//! them (the connection's last read brought several replies, whose callers
//! send their next requests together); otherwise twoway requests keep the
//! direct path.
//!
//! With `floe.OnewayBatchSize`, a oneway request that must wait in the
//! queue behind other oneway requests joins them in one BatchRequest
//! message (`WriteState::push_oneway`): the frames are not copied, the
//! later ones only lose their header and request id and the batch's
//! header is rewritten, as long as none of the batch was written.
//!
//! Replies are batched per read: when a read brought several frames, the
//! connection task corks the writer ([`Writer::cork`]) while it handles
//! them, so the replies to pipelined requests that arrived together are
//! queued and leave in one vectored write at [`Writer::uncork`]. A lone
//! request's reply is written directly.
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

use std::io::IoSlice;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use bytes::{Buf, Bytes};
use tokio::net::TcpStream;
use tokio::sync::Notify;

use super::config::ConnectionConfig;
use super::core::outbound::OutFrame;
use super::core::scratch;
use super::core::ConnectionState;
use super::signal::TaskSignal;
use crate::error::Error;
use crate::transport::stream::StreamIo;
use crate::transport::Io;

mod stamps;
mod stream;
mod tcp;
pub(super) use super::core::WriteState;

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
    state: Mutex<ConnectionState>,
    /// Wakes the connection task: something was queued (and, through
    /// [`Writer::wake_task`], anything else it must look at).
    task: TaskSignal,
    /// Wakes senders waiting for a stream transport's queue to shrink.
    written: Notify,
    /// Whether every counted send also records its time in `last_write`
    /// (busy polling needs it); otherwise only oneway and queued requests do
    /// ([`Writer::stamp_burst`], for burst detection).
    stamp_all: bool,
    /// A sender queueing behind earlier messages writes the queue's head
    /// itself once this many bytes were queued since its last try
    /// ([`Policy::help_bytes`]).
    help_bytes: usize,
    /// When the last stamped message was sent, in ns since `epoch`.
    last_write: AtomicU64,
    epoch: std::time::Instant,
    /// The connection's IceMX observer, which counts the bytes sent and
    /// received (`None` without metrics: one branch per message).
    pub(crate) metrics: Option<Arc<crate::connection::observe::ConnectionObserver>>,
}

impl Writer {
    /// The writer of a TCP socket.
    #[cfg(test)]
    pub(crate) fn new(stream: Arc<TcpStream>) -> Self {
        let config = super::config::connection_config(
            &crate::Properties::new(),
            super::config::Side::Client,
        );
        Self::with_sink(Sink::Tcp(stream), &config)
    }

    /// The writer of a connection's transport, with the connection's
    /// protocol state; when the connection busy-polls, every counted send
    /// records its time ([`Writer::last_write`]).
    pub(crate) fn for_io(io: &Io, config: &ConnectionConfig) -> Self {
        match io {
            Io::Tcp(s) => Self::with_sink(Sink::Tcp(s.clone()), config),
            Io::Stream(s) => Self::with_sink(Sink::Stream(s.clone()), config),
        }
    }

    fn with_sink(sink: Sink, config: &ConnectionConfig) -> Self {
        let policy = &config.policy;
        let stamp_all = policy.busy_poll.is_some();
        let multi_thread = super::caller_spin::on_multi_thread_runtime();
        let state = ConnectionState::new(
            config.limits(),
            &config.liveness,
            policy.clone().for_runtime(multi_thread),
            std::time::Instant::now(),
        );
        Writer {
            sink,
            state: Mutex::new(state),
            task: TaskSignal::default(),
            written: Notify::new(),
            stamp_all,
            help_bytes: policy.help_bytes,
            last_write: AtomicU64::new(0),
            epoch: std::time::Instant::now(),
            metrics: None,
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, ConnectionState> {
        // The state stays consistent across a panic: every change is a
        // queue push or pop, or a map insert or remove.
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
        self.count_write();
        self.send_parts(parts, &[], true, 0)
    }

    /// Sends `frame`; with `deferred`, through the queue
    /// ([`Writer::send_deferred`]).
    ///
    /// # Errors
    ///
    /// As [`Writer::send`].
    pub(crate) fn send_frame(&self, frame: OutFrame<'_>, deferred: bool) -> Result<(), Error> {
        self.send_message(frame, deferred, 0)
    }

    /// Sends `frame`, a oneway request, as [`Writer::send_frame`]; when it
    /// must wait in the queue, it joins the oneway requests queued just
    /// before it in one BatchRequest of at most `batch` bytes (0: never).
    ///
    /// # Errors
    ///
    /// As [`Writer::send`].
    pub(crate) fn send_oneway(
        &self,
        frame: OutFrame<'_>,
        deferred: bool,
        batch: usize,
    ) -> Result<(), Error> {
        self.send_message(frame, deferred, batch)
    }

    fn send_message(&self, frame: OutFrame<'_>, deferred: bool, batch: usize) -> Result<(), Error> {
        let (mut parts, tail) = match frame {
            OutFrame::Stack(frame) if deferred => {
                return self.send_deferred(&mut [scratch::copied(frame)], batch);
            }
            OutFrame::Stack(frame) => {
                self.count_write();
                return self.send_parts(&mut [], frame, true, batch);
            }
            OutFrame::Parts { parts, tail } => (parts, tail),
        };
        if deferred {
            if !tail.is_empty() {
                parts[2] = scratch::copied(tail);
            }
            return self.send_deferred(&mut parts, batch);
        }
        self.count_write();
        self.send_parts(&mut parts, tail, true, batch)
    }

    /// Queues one message for the connection task to write, without trying
    /// the socket first: messages sent back to back this way leave in few
    /// vectored writes instead of one syscall each (oneway requests). With
    /// `batch`, a oneway request joins a batch ([`WriteState::queue`]).
    ///
    /// # Errors
    ///
    /// The connection's error if it is closed or a write failed.
    pub(crate) fn send_deferred(&self, parts: &mut [Bytes], batch: usize) -> Result<(), Error> {
        self.count_write();
        if let Some(m) = &self.metrics {
            count_sent(m, parts, &[]);
        }
        let mut guard = self.lock();
        guard.wrote();
        let st = &mut guard.out;
        if let Some(e) = &st.error {
            return Err(e.clone());
        }
        let was_empty = !st.pending();
        if !self.queue_and_help(st, parts, &[], batch)? {
            return Ok(());
        }
        drop(guard);
        if was_empty {
            self.task.raise();
        }
        Ok(())
    }

    /// [`Writer::send`] without recording activity (heartbeats).
    pub(crate) fn send_uncounted(&self, parts: &mut [Bytes]) -> Result<(), Error> {
        self.send_parts(parts, &[], false, 0)
    }

    /// Sends `parts` then `tail` (may be empty); `counted`: a request or
    /// reply (for the liveness rules), not a heartbeat. With `batch`, a
    /// oneway request that must wait in the queue may join a batch
    /// ([`WriteState::queue`]).
    fn send_parts(
        &self,
        parts: &mut [Bytes],
        tail: &[u8],
        counted: bool,
        batch: usize,
    ) -> Result<(), Error> {
        if let Some(m) = &self.metrics {
            count_sent(m, parts, tail);
        }
        let mut guard = self.lock();
        if counted {
            guard.wrote();
        }
        let st = &mut guard.out;
        if let Some(e) = &st.error {
            return Err(e.clone());
        }
        if st.corked {
            // The connection task writes it with the rest of its batch.
            st.queue(parts, tail, 0);
            return Ok(());
        }
        if let Sink::Stream(io) = &self.sink {
            return self.send_stream(io, guard, parts, tail, batch);
        }
        if st.queue.is_empty() {
            if self.send_direct(st, parts, tail)? {
                return Ok(());
            }
        } else if !self.queue_and_help(st, parts, tail, batch)? {
            return Ok(());
        }
        drop(guard);
        self.task.raise();
        Ok(())
    }

    /// Queues a message ([`WriteState::queue`]); when it joined a batch,
    /// the bytes it lost are taken back from those counted as sent.
    pub(super) fn queue_message(
        &self,
        st: &mut WriteState,
        parts: &mut [Bytes],
        tail: &[u8],
        batch: usize,
    ) {
        let saved = st.queue(parts, tail, batch);
        if let (Some(m), true) = (&self.metrics, saved > 0) {
            crate::connection::observe::unsent(m, saved);
        }
    }

    /// Starts a batch (called by the connection task before it handles the
    /// frames of one read): until [`Writer::uncork`], messages sent on
    /// this connection are queued instead of written one by one, so the
    /// replies to pipelined requests that arrived together leave in one
    /// vectored write instead of one syscall each.
    pub(crate) fn cork(&self) {
        self.lock().out.corked = true;
    }

    /// Ends the batch begun by [`Writer::cork`] and writes what it queued
    /// at once, as far as the socket takes it (one `sendmsg`; the
    /// connection task, the only caller, writes any rest when it loops).
    ///
    /// # Errors
    ///
    /// The connection's error if the write failed.
    pub(crate) fn uncork(&self) -> Result<(), Error> {
        let mut guard = self.lock();
        let st = &mut guard.out;
        st.corked = false;
        if let Some(e) = &st.error {
            return Err(e.clone());
        }
        if !st.pending() {
            return Ok(());
        }
        match &self.sink {
            Sink::Tcp(_) => self.write_head(st, |iov| self.try_send(iov)),
            Sink::Stream(io) => {
                // A no-op waker: the connection task polls with its own
                // when it loops, if the stream did not take everything.
                let mut cx = Context::from_waker(Waker::noop());
                match self.poll_stream(io, st, &mut cx) {
                    Poll::Ready(Err(e)) => Err(e),
                    _ => Ok(()),
                }
            }
        }
    }

    /// Raised whenever something is queued, or by [`Writer::wake_task`]:
    /// the connection task waits on it in its loop.
    pub(crate) fn task_signal(&self) -> &TaskSignal {
        &self.task
    }

    /// Wakes the connection task to look at the connection's state again
    /// (a close was asked for, a caller wants a busy poll).
    pub(crate) fn wake_task(&self) {
        self.task.raise();
    }

    /// Whether bytes are waiting to be written (or flushed).
    pub(crate) fn has_queued(&self) -> bool {
        self.lock().out.pending()
    }

    /// Bytes waiting to be written.
    pub(crate) fn queued_bytes(&self) -> usize {
        self.lock().out.queued_bytes
    }

    /// Waits until the socket is writable, then writes the queue once;
    /// runs inside the connection task's wait (`poll_wake`), which calls
    /// it again after each write, and returns at once when a sender wrote
    /// the queue meanwhile. Cancel-safe: all state lives in the queue.
    ///
    /// # Errors
    ///
    /// A write error, or [`Error::Timeout`] if the socket accepted nothing
    /// for `timeout` (a peer that stopped reading).
    pub(crate) async fn flush_queued(
        &self,
        timeout: Option<std::time::Duration>,
    ) -> Result<(), Error> {
        if !self.has_queued() {
            return Ok(());
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
                let guard = self.lock();
                let st = &guard.out;
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

    /// Refuses further writes with `err` (first error wins), fails the
    /// requests waiting for replies, and returns the error in force.
    pub(crate) fn fail(&self, err: Error) -> Error {
        let (wakers, err) = self.lock().fail(err);
        for waker in wakers {
            waker.wake();
        }
        self.notify_written();
        err
    }

    /// Wakes senders waiting for the queue to shrink (or for its error).
    pub(crate) fn notify_written(&self) {
        self.written.notify_waiters();
    }
}

#[cfg(test)]
mod tests;

/// Counts a message's bytes as sent on an observed connection.
fn count_sent(m: &crate::connection::observe::ConnectionObserver, parts: &[Bytes], tail: &[u8]) {
    let n = parts.iter().map(Bytes::len).sum::<usize>() + tail.len();
    crate::connection::observe::sent(m, n);
}
