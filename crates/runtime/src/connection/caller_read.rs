//! Replies read by their caller.
//!
//! While a twoway caller is the only one waiting on an outgoing plain TCP
//! connection, the socket's read readiness wakes that caller, which reads
//! and delivers its reply itself. Without this the connection task reads
//! the reply and wakes the caller: two task polls and a pass of the task's
//! loop per call, where one poll of the caller does.
//!
//! - The read side ([`ReadState`]: the read buffer, its sizing, frames held
//!   back for the task) is shared under a lock. The task takes it for each
//!   read; a caller only tries it, so nothing waits on it.
//! - The socket has one read-readiness waker slot. It holds the
//!   connection's [`ReadRoute`], which wakes the registered caller if there
//!   is one, else the task.
//! - A caller takes replies only. Any other frame (a request, a heartbeat,
//!   a close), the end of the stream, a read error or a bad reply is left
//!   to the task, which handles it as if it had read it, and is woken for
//!   it. A caller that gives up or finishes after a readiness wake-up went
//!   to it and before it read hands that wake-up on to the task, so none is
//!   lost.
//! - The task opens this ([`ReadRoute::open`]) only while it would read
//!   itself, on an outgoing plain TCP connection without busy polling: the
//!   connection active and not held back by its dispatch limit.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, MutexGuard, OnceLock};
use std::task::{Context, Poll, Wake, Waker};

use bytes::BytesMut;
use floe_wire::protocol::{Header, MessageType, ReplyBody};
use futures_util::task::AtomicWaker;
use tokio::net::TcpStream;

use super::core::inbound::{inbound_with, Inbound};
use super::core::CallerReply;
use super::read::{self, ReadSize};
use super::{ConnectionInner, Io};
use crate::error::Error;

/// The read side of a connection: what the task and, at times, a waiting
/// caller read into.
pub(super) struct ReadState {
    /// Bytes read and not yet taken as frames.
    pub(super) buf: BytesMut,
    /// How much the next read asks for.
    pub(super) size: ReadSize,
    /// A caller left whole frames in `buf` for the task (anything but a
    /// reply), or the error its read or a reply frame raised.
    pub(super) handed: Option<Handed>,
}

/// What a caller left to the task.
pub(super) enum Handed {
    /// Whole frames at the start of the buffer.
    Frames,
    /// The caller's read failed, or a reply frame it took was bad: the
    /// connection ends with this error.
    Failed(Error),
}

impl ReadState {
    pub(super) fn new() -> ReadState {
        ReadState {
            // Allocated at the first read: an idle connection holds no
            // read buffer.
            buf: BytesMut::new(),
            size: ReadSize::new(),
            handed: None,
        }
    }

    /// After a read's frames were handled: adapts the next read's room and
    /// the socket's low-water mark, and lets go of a buffer that is no
    /// longer worth keeping.
    #[inline]
    pub(super) fn settle(&mut self, io: &Io) {
        self.size.adapt();
        if let Io::Tcp(tcp) = io {
            self.size.low_water(tcp);
        }
        if self.buf.is_empty() && self.size.release(self.buf.capacity()) {
            // Only the slack of a large frame is left, or a burst's large
            // buffer: let the next read start with a probe, which sizes the
            // buffer to the frame it finds.
            self.buf = BytesMut::new();
        }
    }
}

/// The waker in the socket's read-readiness slot: wakes the waiting caller
/// that reads for itself, else the connection task.
#[derive(Default)]
pub(super) struct ReadRoute {
    /// The connection task's waker, set when the task starts (a task's
    /// waker stays the same for its life).
    task: OnceLock<Waker>,
    /// The caller that reads its own reply, if one does.
    caller: AtomicWaker,
    /// A readiness wake-up went to the caller, which has not read since.
    routed: AtomicBool,
    /// Callers may read: set by the task at each pass.
    open: AtomicBool,
    /// A caller left something in the read state for the task.
    handed: AtomicBool,
}

impl Wake for ReadRoute {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Marked before the caller is taken: a caller leaving meanwhile
        // sees the mark and passes the wake-up on.
        self.routed.store(true, Ordering::SeqCst);
        match self.caller.take() {
            Some(caller) => caller.wake(),
            None => {
                self.routed.store(false, Ordering::SeqCst);
                self.wake_task();
            }
        }
    }
}

impl ReadRoute {
    /// Says whether callers may read for themselves (the task, at each
    /// pass).
    pub(super) fn open(&self, open: bool) {
        if self.open.load(Ordering::Relaxed) != open {
            self.open.store(open, Ordering::Release);
        }
    }

    /// A caller stops reading: a readiness wake-up it got and did not
    /// read goes to the task.
    fn leave(&self) {
        drop(self.caller.take());
        if self.routed.swap(false, Ordering::SeqCst) {
            self.wake_task();
        }
    }

    /// Wakes the connection task (nobody before it started).
    fn wake_task(&self) {
        if let Some(task) = self.task.get() {
            task.wake_by_ref();
        }
    }

    /// The connection task's waker, which the route wakes when no caller
    /// reads (once, when the task starts).
    pub(super) fn set_task(&self, waker: &Waker) {
        let _ = self.task.set(waker.clone());
    }

    /// Whether a caller left something for the task since it last looked.
    pub(super) fn handed(&self) -> bool {
        self.handed.load(Ordering::Acquire)
    }
}

/// The route and the waker made of it (made once per connection).
pub(super) fn route() -> (Arc<ReadRoute>, Waker) {
    let route = Arc::new(ReadRoute::default());
    let waker = Waker::from(route.clone());
    (route, waker)
}

impl ConnectionInner {
    /// The read side, locked (by the task, for a read or for frames held
    /// back).
    pub(super) fn read_state(&self) -> MutexGuard<'_, ReadState> {
        // A panic cannot leave the state half-changed in a way that
        // matters more than the panic itself: the connection ends.
        self.read.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The task waits for `tcp` to be readable: the task is woken through
    /// the route, unless a caller reads.
    pub(super) fn poll_task_readable(&self, tcp: &TcpStream) -> Poll<std::io::Result<()>> {
        tcp.poll_read_ready(&mut Context::from_waker(&self.route_waker))
    }

    /// Whether a waiting caller may start reading its reply itself
    /// (`alone`: it is the only one waiting).
    pub(super) fn caller_may_read(&self, alone: bool) -> bool {
        alone && self.route.open.load(Ordering::Acquire)
    }

    /// A caller that will read its own reply: readiness wakes it from now
    /// on. The slot is registered already, by the task or by the last
    /// caller that read.
    pub(super) fn caller_waits(&self, cx: &mut Context<'_>) {
        self.route.caller.register(cx.waker());
    }

    /// The caller waiting for `own`, woken: reads what the socket holds
    /// and delivers the replies in it. Whether it goes on reading (else
    /// it left, and the task reads again), and its own reply if it came
    /// (its slot is then freed: the caller keeps the reply). A caller that
    /// `spins` reads straight from the socket, not through readiness (see
    /// `caller_spin.rs`), and returns when the socket is empty.
    #[inline]
    pub(super) fn caller_reads(
        &self,
        cx: &mut Context<'_>,
        own: i32,
        spins: bool,
    ) -> (bool, Option<ReplyBody>) {
        let (Io::Tcp(tcp), true) = (&self.io, self.route.open.load(Ordering::Acquire)) else {
            self.caller_leaves();
            return (false, None);
        };
        let mut guard = match self.read.try_lock() {
            Ok(guard) if guard.handed.is_none() => guard,
            // The task reads now, or has frames to handle first.
            _ => {
                self.caller_leaves();
                return (false, None);
            }
        };
        let state = &mut *guard;
        self.route.caller.register(cx.waker());
        let max = self.config.message_size_max;
        let mut mine = None;
        loop {
            self.route.routed.store(false, Ordering::SeqCst);
            // Read first: a wake-up through the route says the socket is
            // readable, and a read that drains it clears the readiness, so
            // that the poll below registers at once.
            match read::read(tcp, &mut state.buf, &mut state.size, max, spins) {
                // The end of the stream stays readable: the task reads it
                // again and ends the connection.
                Ok(0) => break,
                Ok(n) => {
                    if let Some(m) = &self.writer.metrics {
                        super::observe::received(m, n);
                    }
                    let handed = self.take_replies(state, own, &mut mine);
                    state.settle(&self.io);
                    if handed {
                        self.route.handed.store(true, Ordering::Release);
                        break;
                    }
                }
                // Readiness is not polled while spinning: a direct read
                // does not clear it, so it may still say readable.
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && spins => {
                    return (true, mine)
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                // The read took the error: the task ends the connection
                // with it.
                Err(e) => {
                    state.handed = Some(Handed::Failed(Error::from_io(&e)));
                    self.route.handed.store(true, Ordering::Release);
                    break;
                }
            }
            if spins {
                if mine.is_some() {
                    return (true, mine);
                }
                continue;
            }
            match tcp.poll_read_ready(&mut Context::from_waker(&self.route_waker)) {
                // Registered again: the next readiness wakes this caller.
                Poll::Pending => return (true, mine),
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(_)) => break,
            }
        }
        drop(guard);
        self.caller_leaves();
        self.writer.wake_task();
        (false, mine)
    }

    /// A caller stops reading (its reply came, it gave up, or it leaves
    /// the rest to the task): a readiness wake-up it got and did not read
    /// goes to the task.
    pub(super) fn caller_leaves(&self) {
        self.route.leave();
    }

    /// The task takes what a caller left: whole frames to handle, or the
    /// error to end the connection with.
    pub(super) fn take_handed(&self, state: &mut ReadState) -> Option<Handed> {
        self.route.handed.store(false, Ordering::Release);
        state.handed.take()
    }

    /// Delivers the replies at the start of `state.buf`, keeping the one
    /// to `own` in `mine` (its slot is freed, nothing is woken); whether
    /// the caller stopped at something that is the task's (left in place,
    /// or a reply frame's error).
    fn take_replies(&self, state: &mut ReadState, own: i32, mine: &mut Option<ReplyBody>) -> bool {
        let max = self.config.message_size_max;
        let mut replies = 0;
        let handed = loop {
            match read::whole_frame(&state.buf, max) {
                Ok(Err(need)) => {
                    state.size.need(&state.buf, need, max);
                    break None;
                }
                Ok(Ok(header)) if header.message_type == MessageType::Reply => {
                    state.size.frame(header.size);
                    let frame = state.buf.split_to(header.size).freeze();
                    let reply = match inbound_with(header, frame, max) {
                        Ok(Inbound::Reply(reply)) => reply,
                        // A reply header gives a reply or an error.
                        Ok(_) => continue,
                        Err(e) => break Some(Handed::Failed(e.into())),
                    };
                    self.trace_frame(&header);
                    replies += 1;
                    let taken = self.writer.lock().caller_reply(reply, own, replies);
                    match taken {
                        CallerReply::Own(body) => *mine = Some(body),
                        // Woken even when it is this task's own waker:
                        // another future of this task (`join!`) waits on
                        // it, and may have been polled already this round.
                        CallerReply::Other(Some(waker)) => waker.wake(),
                        CallerReply::Other(None) => {}
                        CallerReply::Abandoned(id) => {
                            tracing::trace!(id, "reply for an abandoned request")
                        }
                    }
                }
                // Another frame, or a bad header: the task handles them
                // in order.
                _ => break Some(Handed::Frames),
            }
        };
        let stop = handed.is_some();
        state.handed = handed;
        stop
    }

    /// Takes one reply frame: the waker of the caller it answers (`Ok`),
    /// or the request id nobody waits for (`Err`).
    pub(super) fn receive_reply(
        &self,
        header: Header,
        frame: bytes::Bytes,
    ) -> Result<Result<Option<Waker>, i32>, Error> {
        let inbound = inbound_with(header, frame, self.config.message_size_max)?;
        self.trace_frame(&header);
        let Inbound::Reply(reply) = inbound else {
            // A reply header always gives a reply or an error.
            return Ok(Err(0));
        };
        let delivered = self.writer.lock().deliver_reply(reply);
        if let Err(id) = delivered {
            tracing::trace!(id, "reply for an abandoned request");
        }
        Ok(delivered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A waker that counts its wake-ups.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counted() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count::default());
        (count.clone(), Waker::from(count))
    }

    fn woken(count: &Count) -> usize {
        count.0.load(Ordering::SeqCst)
    }

    #[test]
    fn readiness_wakes_the_task_when_no_caller_reads() {
        let (route, waker) = route();
        let (task, task_waker) = counted();
        route.set_task(&task_waker);
        waker.wake_by_ref();
        assert_eq!(woken(&task), 1);
        assert!(!route.routed.load(Ordering::SeqCst));
    }

    #[test]
    fn readiness_wakes_the_reading_caller_and_not_the_task() {
        let (route, waker) = route();
        let (task, task_waker) = counted();
        let (caller, caller_waker) = counted();
        route.set_task(&task_waker);
        route.caller.register(&caller_waker);
        waker.wake_by_ref();
        assert_eq!((woken(&task), woken(&caller)), (0, 1));
        assert!(route.routed.load(Ordering::SeqCst), "not read yet");
        // The next readiness goes to the task: the caller was taken.
        waker.wake_by_ref();
        assert_eq!((woken(&task), woken(&caller)), (1, 1));
    }

    #[test]
    fn a_caller_leaving_before_it_read_passes_the_wake_up_on() {
        let (route, waker) = route();
        let (task, task_waker) = counted();
        let (_, caller_waker) = counted();
        route.set_task(&task_waker);
        route.caller.register(&caller_waker);
        waker.wake_by_ref();
        // Its reply came through the task, or it gave up: the readiness it
        // was woken for is the task's now.
        route.leave();
        assert_eq!(woken(&task), 1);
        // A caller that read before it left passes nothing on.
        route.caller.register(&caller_waker);
        route.routed.store(false, Ordering::SeqCst);
        route.leave();
        assert_eq!(woken(&task), 1);
    }

    #[test]
    fn the_open_flag_follows_the_task() {
        let (route, _) = route();
        assert!(
            !route.open.load(Ordering::SeqCst),
            "closed until the task opens it"
        );
        route.open(true);
        assert!(route.open.load(Ordering::SeqCst));
        route.open(false);
        assert!(!route.open.load(Ordering::SeqCst));
    }
}
