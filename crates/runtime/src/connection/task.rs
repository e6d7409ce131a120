//! The connection task: one per connection, reading and handling frames,
//! polling the dispatches it started, flushing queued writes, running the
//! liveness monitor (idle timeout or ACM) and the graceful close.

use super::caller_read::{Handed, ReadState};
use super::dispatch::Finished;
use super::*;
use crate::timer::Periodic;

/// The connection task: reads and handles frames, polls dispatches,
/// flushes queued writes, runs the liveness monitor and the graceful close.
pub(super) async fn run(conn: Arc<ConnectionInner>) {
    let waker = std::future::poll_fn(|cx| Poll::Ready(cx.waker().clone())).await;
    conn.route.set_task(&waker);
    // The core decides when the liveness rules run (sans-IO); their timer
    // ticks on the timer thread, off tokio's timer wheel (see `timer.rs`).
    // Without a period there is none.
    let monitor_period = conn.writer.lock().timer_period();
    let mut monitor = monitor_period.map(|period| Periodic::start(period, waker.clone()));
    let mut dispatches = DispatchSet::new(waker);
    let max = conn.config.message_size_max;
    let busy_poll = conn.config.policy.busy_poll;
    // Callers read their own replies on outgoing plain TCP connections
    // without busy polling (see `caller_read.rs`). An accepted connection
    // (a server's) rarely carries requests of its own: its task keeps the
    // socket's readiness to itself.
    let callers_may_read =
        matches!(conn.io, Io::Tcp(_)) && busy_poll.is_none() && !conn.info.incoming;
    // Whole frames left in the read buffer because the dispatch limit was
    // reached, or by a caller reading its reply.
    let mut held = false;
    let end: Error = loop {
        // One look at the core per pass: the phase (and, while closing,
        // whether CloseConnection is due), whether to read (back-pressure:
        // not while too many dispatches run, or they hold too many
        // parameter bytes, or too many reply bytes wait for a peer that
        // does not read them), whether to write, the close's deadline.
        let pass = conn
            .writer
            .lock()
            .task_pass(dispatches.len(), dispatches.bytes());
        if let Some(m) = &conn.writer.metrics {
            // IceMX: a graceful close started; the CloseConnection this
            // pass queued counts as sent in `closing`, as in Ice.
            match &pass {
                TaskPass::Close { .. } => {
                    m.closing();
                    super::observe::sent(m, floe_wire::protocol::CLOSE_CONNECTION.len());
                }
                TaskPass::Run { active: false, .. } => m.closing(),
                _ => {}
            }
        }
        let (active, can_read, has_queued, close_sent, deadline) = match pass {
            TaskPass::Ended(e) => break e,
            TaskPass::Close { deadline } => {
                // All our dispatches replied: CloseConnection is queued
                // (§1.4); write it and wait for the peer to close the
                // socket. A peer that does not read cannot hold the close
                // up past the close timeout.
                let deadline = tokio::time::Instant::from_std(deadline);
                match tokio::time::timeout_at(deadline, conn.writer.drain()).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => break e,
                    Err(_) => break Error::ConnectionManuallyClosed,
                }
                continue;
            }
            TaskPass::Run {
                active,
                can_read,
                has_queued,
                close_sent,
                deadline,
            } => (active, can_read, has_queued, close_sent, deadline),
        };
        if conn.route.handed() {
            // What a caller reading its reply left: an error to end with,
            // or whole frames, handled before any new read.
            match conn.take_handed(&mut conn.read_state()) {
                Some(Handed::Failed(e)) => break e,
                Some(Handed::Frames) => held = true,
                None => {}
            }
        }
        if held && can_read {
            // Frames held back (by the dispatch limit, or left by a
            // caller) go before any new read.
            let mut guard = conn.read_state();
            let state = &mut *guard;
            let (buf, size) = (&mut state.buf, &mut state.size);
            match handle_frames(&conn, buf, size, &mut dispatches, active) {
                Ok(still_held) => held = still_held,
                Err(e) => break e,
            }
            continue;
        }
        conn.route.open(callers_may_read && can_read && active);
        let deadline = deadline.map(tokio::time::Instant::from_std);
        if let (Some(window), Io::Tcp(tcp)) = (
            busy_poll
                .filter(|_| can_read && dispatches.is_empty() && conn.read_state().buf.is_empty()),
            &conn.io,
        ) {
            // `floe.BusyPoll`: right after this connection wrote, an answer
            // (the reply to our request, or the peer's next request after
            // our reply) is likely within microseconds: poll for it
            // instead of sleeping until the I/O driver reports it. The
            // rest of a partly received frame is left to readiness: it
            // comes as fast as the peer writes it.
            let expecting = conn.info.incoming || conn.waiting_requests() > 0;
            let until = conn.writer.last_write() + window;
            if expecting && !has_queued && std::time::Instant::now() < until {
                // The read side is taken out while the task polls (callers
                // never read with busy polling).
                let (mut buf, mut size) = {
                    let mut guard = conn.read_state();
                    let state = &mut *guard;
                    let size = std::mem::replace(&mut state.size, ReadSize::new());
                    (std::mem::take(&mut state.buf), size)
                };
                let polled = read::busy_poll(tcp, &mut buf, &mut size, max, until, || {
                    let st = conn.writer.lock();
                    st.out.pending() || !st.is_active()
                })
                .await;
                let mut guard = conn.read_state();
                let state = &mut *guard;
                (state.buf, state.size) = (buf, size);
                if let Some(read) = polled {
                    let read_in = (active, close_sent);
                    if let Some(e) =
                        after_read(&conn, read, state, &mut dispatches, read_in, &mut held)
                    {
                        break e;
                    }
                    continue;
                }
            }
        }
        // A stream transport reads into the frame buffer while the task
        // waits: lend it, with room reserved, and take it back after.
        let lent = match &conn.io {
            Io::Stream(io) if can_read => {
                let mut guard = conn.read_state();
                let state = &mut *guard;
                read::reserve_stream_room(&mut state.buf, &state.size);
                io.lend_read_buf(std::mem::take(&mut state.buf));
                Some(io)
            }
            _ => None,
        };
        let woke = {
            // The waits that keep state from one poll to the next (the
            // flush, the close's deadline) are futures pinned here; the
            // others are polled directly by `poll_wake`.
            let flush = has_queued.then(|| conn.writer.flush_queued(conn.config.write_timeout));
            let mut flush = std::pin::pin!(flush);
            let mut close_by = std::pin::pin!(deadline.map(tokio::time::sleep_until));
            std::future::poll_fn(|cx| {
                poll_wake(
                    cx,
                    &conn,
                    &mut dispatches,
                    flush.as_mut().as_pin_mut(),
                    can_read.then_some(callers_may_read),
                    monitor.as_mut(),
                    close_by.as_mut().as_pin_mut(),
                )
            })
            .await
        };
        match woke {
            Woke::Finished(done) => {
                let frame = done.frame.as_ref();
                let result = done.result.map_err(|e| fill_failed(e, frame));
                conn.send_reply(done.rid, done.compress, result);
            }
            Woke::Flushed(r) => {
                if let Err(e) = r {
                    break e;
                }
            }
            Woke::Readable(r) => {
                let mut guard = conn.read_state();
                let state = &mut *guard;
                let read = match (&conn.io, r) {
                    (Io::Tcp(tcp), Ok(_)) => {
                        read::read(tcp, &mut state.buf, &mut state.size, max, false)
                    }
                    (Io::Stream(io), Ok(filled)) => {
                        state.buf = io.take_read_buf();
                        state.size.stream_read(filled);
                        Ok(filled.0)
                    }
                    (_, Err(e)) => Err(e),
                };
                let ended = after_read(
                    &conn,
                    read,
                    state,
                    &mut dispatches,
                    (active, close_sent),
                    &mut held,
                );
                if let Some(e) = ended {
                    break e;
                }
            }
            // Something was queued, a close or a busy poll was asked for
            // (raised after `has_queued` was read, or kept since): the
            // next pass looks.
            Woke::Signal => {}
            Woke::Tick => {
                if let Some(e) = run_monitor(&conn, can_read, dispatches.len()) {
                    break e;
                }
            }
            Woke::CloseTimeout => break Error::ConnectionManuallyClosed,
        }
        if let Some(io) = lent {
            let mut guard = conn.read_state();
            let state = &mut *guard;
            if state.buf.capacity() == 0 {
                state.buf = io.take_read_buf();
            }
        }
    };
    conn.route.open(false);
    match &end {
        Error::CloseConnection | Error::ConnectionManuallyClosed => {
            event_if!(conn.config.trace.network >= 1, info, debug, remote = ?conn.info.remote, "connection closed: {end}")
        }
        Error::Protocol(e) => {
            tracing::warn!(remote = ?conn.info.remote, "closing connection after protocol error: {e}")
        }
        e => event_if!(
            conn.config.trace.warn_connections,
            warn,
            debug,
            remote = ?conn.info.remote,
            "connection ended: {e}"
        ),
    }
    if let Some(m) = &conn.writer.metrics {
        m.ended(&end);
    }
    conn.terminate(end);
    if conn.info.incoming {
        // The accepting adapter lets go of it now (its socket is closed
        // when the last handle goes), not at the next accept.
        if let Some(dispatcher) = conn.dispatcher() {
            dispatcher.untrack(Arc::as_ptr(&conn) as usize);
        }
    }
    // Dispatches already started run to completion, as in Ice, where a
    // dispatch in progress is not cancelled when its connection closes: a
    // peer's last oneway requests (sent just before its CloseConnection,
    // or before it went away) are carried out. Their replies have nowhere
    // to go.
    while !dispatches.is_empty() {
        let _ = dispatches.next().await;
    }
}

/// Handles the outcome of a read into `buf`: frames are handled until the
/// dispatch limit is reached (`held` then says whole frames wait in
/// `buf`), and the error that ends the connection (the peer closed it, or
/// the read or a frame failed) is returned. `active`: requests are
/// dispatched (not closing); `close_sent`: the peer's close is expected.
#[allow(clippy::too_many_arguments)]
fn after_read(
    conn: &Arc<ConnectionInner>,
    read: std::io::Result<usize>,
    state: &mut ReadState,
    dispatches: &mut DispatchSet,
    (active, close_sent): (bool, bool),
    held: &mut bool,
) -> Option<Error> {
    match read {
        Ok(0) => Some(if close_sent {
            Error::ConnectionManuallyClosed
        } else {
            Error::ConnectionLost("peer closed the connection".into())
        }),
        Ok(n) => {
            if let Some(m) = &conn.writer.metrics {
                super::observe::received(m, n);
            }
            let (buf, size) = (&mut state.buf, &mut state.size);
            let handled = handle_frames(conn, buf, size, dispatches, active).map(|h| *held = h);
            if let Err(e) = handled {
                state.size.adapt();
                return Some(e);
            }
            state.settle(&conn.io);
            None
        }
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => None,
        Err(e) => Some(Error::from_io(&e)),
    }
}

/// Handles the whole frames in `buf` ([`handle_buffered`]) and tells the
/// core what they were; whether frames are held back by the dispatch
/// limit.
fn handle_frames(
    conn: &Arc<ConnectionInner>,
    buf: &mut BytesMut,
    size: &mut ReadSize,
    dispatches: &mut DispatchSet,
    active: bool,
) -> Result<bool> {
    let seen = handle_buffered(conn, buf, size, dispatches, active)?;
    conn.writer
        .lock()
        .record_read(seen.replies, seen.traffic, seen.heartbeat);
    Ok(seen.held)
}

/// One run of the liveness rules ([`ConnectionState::handle_timeout`]),
/// carried out. Returns the error to end the connection with when it must
/// be dropped.
///
/// [`ConnectionState::handle_timeout`]: super::core::ConnectionState::handle_timeout
fn run_monitor(conn: &ConnectionInner, reading: bool, dispatching: usize) -> Option<Error> {
    let action = {
        let mut st = conn.writer.lock();
        if !reading {
            st.reads_paused();
        }
        st.handle_timeout(std::time::Instant::now(), dispatching)
    };
    if action.heartbeat {
        // Queued by the core: the task's next pass writes it.
        conn.writer.wake_task();
    }
    if action.closing {
        tracing::debug!("closing idle or inactive connection");
        conn.writer.wake_task();
    }
    action.end
}

/// What ended one wait of the connection task's loop.
enum Woke {
    /// A dispatch that was not done at once finished.
    Finished(Finished),
    /// The write queue was written (or the write failed).
    Flushed(Result<()>),
    /// The transport has something to read: readiness of a TCP socket,
    /// or a read done into the lent buffer of a stream (its size, and
    /// whether it filled the room).
    Readable(std::io::Result<(usize, bool)>),
    /// The task's signal was raised.
    Signal,
    /// The liveness monitor's period passed.
    Tick,
    /// The graceful close's deadline passed.
    CloseTimeout,
}

/// One poll of everything the connection task waits for, in this order:
/// finished dispatches, the write queue's flush (`flush`, when bytes are
/// queued), the transport (`read`: whether a TCP socket's readiness goes
/// through the read route, when the task reads at all), the task's
/// signal, the liveness monitor, the close's deadline.
///
/// Written out rather than a `tokio::select!`, whose per-branch
/// bookkeeping cost about 110 instructions a message.
///
/// The signal is polled after the socket: every pass reads the core's
/// state anyway, so a pass that reads need not register for the signal
/// first (a raise is kept until a wait completes). A TCP socket is waited
/// on through `poll_read_ready`, whose one waker slot holds the task's
/// waker, or (routed) the connection's read route (see `caller_read.rs`),
/// which wakes this task or the caller that reads its own reply.
/// (`TcpStream::readable` queues a waiter in the socket's list under its
/// lock at each poll, about 250 instructions a pass.)
fn poll_wake(
    cx: &mut Context<'_>,
    conn: &ConnectionInner,
    dispatches: &mut DispatchSet,
    flush: Option<Pin<&mut impl Future<Output = Result<()>>>>,
    read: Option<bool>,
    monitor: Option<&mut Periodic>,
    close_by: Option<Pin<&mut tokio::time::Sleep>>,
) -> Poll<Woke> {
    if !dispatches.is_empty() {
        if let Poll::Ready(Some(done)) = dispatches.poll_next(cx) {
            return Poll::Ready(Woke::Finished(done));
        }
    }
    if let Some(Poll::Ready(r)) = flush.map(|f| f.poll(cx)) {
        return Poll::Ready(Woke::Flushed(r));
    }
    if let Some(routed) = read {
        let polled = match &conn.io {
            Io::Tcp(tcp) if routed => conn.poll_task_readable(tcp).map_ok(|()| (0, false)),
            Io::Tcp(tcp) => tcp.poll_read_ready(cx).map_ok(|()| (0, false)),
            Io::Stream(io) => io.poll_read(cx),
        };
        if let Poll::Ready(r) = polled {
            return Poll::Ready(Woke::Readable(r));
        }
    }
    if conn.writer.task_signal().poll_raised(cx).is_ready() {
        return Poll::Ready(Woke::Signal);
    }
    if let Some(Poll::Ready(())) = monitor.map(|m| m.poll_tick(cx)) {
        return Poll::Ready(Woke::Tick);
    }
    if let Some(Poll::Ready(())) = close_by.map(|s| s.poll(cx)) {
        return Poll::Ready(Woke::CloseTimeout);
    }
    Poll::Pending
}

/// What one read's frames were.
#[derive(Clone, Copy, Debug, Default)]
struct Seen {
    /// Replies delivered to waiting callers.
    replies: usize,
    /// A request or reply (not only heartbeats).
    traffic: bool,
    /// A heartbeat from the peer.
    heartbeat: bool,
    /// Whole frames were left in the buffer: the connection's dispatch
    /// limit (`MaxDispatches`, `floe.MaxDispatchBytes`) was reached.
    held: bool,
}

/// Handles every whole frame in `buf`, leaving a partial one; what the
/// frames were.
///
/// When the read brought more than one frame, the writer is corked while
/// they are handled, so the replies to requests that arrived together
/// (pipelined) leave in one write at the end; a lone frame's reply is
/// written directly. Frames stay in `buf` once the running dispatches
/// reach the connection's limits, as if they had not been read.
fn handle_buffered(
    conn: &Arc<ConnectionInner>,
    buf: &mut BytesMut,
    size: &mut ReadSize,
    dispatches: &mut DispatchSet,
    active: bool,
) -> Result<Seen> {
    let max = conn.config.message_size_max;
    let mut seen = Seen::default();
    let mut corked = false;
    let handled = loop {
        if dispatches.len() >= conn.config.max_dispatches
            || dispatches.bytes() >= conn.config.max_dispatch_bytes
        {
            seen.held = !matches!(read::whole_frame(buf, max), Ok(Err(_)));
            break Ok(seen);
        }
        match read::whole_frame(buf, max) {
            Err(e) => break Err(e.into()),
            Ok(Ok(header)) => {
                let len = header.size;
                if !corked && len < buf.len() {
                    conn.writer.cork();
                    corked = true;
                }
                size.frame(len);
                let frame = buf.split_to(len).freeze();
                match conn.handle_frame(header, frame, dispatches, active) {
                    Ok(Handled::Reply) => {
                        seen.replies += 1;
                        seen.traffic = true;
                    }
                    Ok(Handled::Traffic) => seen.traffic = true,
                    Ok(Handled::Heartbeat) => seen.heartbeat = true,
                    Err(e) => break Err(e),
                }
            }
            Ok(Err(need)) => {
                // The next read makes room for the rest (see `read::read`),
                // after the frames split off here were dispatched: their
                // buffer can then be taken back instead of a new one
                // allocated.
                size.need(buf, need, max);
                break Ok(seen);
            }
        }
    };
    if corked {
        let flushed = conn.writer.uncork();
        return handled.and_then(|seen| flushed.map(|()| seen));
    }
    handled
}
