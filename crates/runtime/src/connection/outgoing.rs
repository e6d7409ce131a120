//! The request side of a [`Connection`]: twoway and oneway invocations
//! (written by the caller's task, see `writer/`), batched requests and
//! their flush (§2.6). The frames come from the protocol core
//! (`core/outbound.rs`); the reply lands in the request's slot there.

use std::time::Duration;

use super::caller_spin::{self, Spin, SpinPhase, Waiting};
use super::*;

impl Connection {
    /// Sends the batch requests queued on this connection (§2.6).
    ///
    /// # Errors
    ///
    /// If the connection is closed.
    pub fn flush_batch_requests(&self) -> Result<()> {
        let batch = self.inner.writer.lock().take_batch();
        match batch {
            Some((frame, compress)) => self.inner.send_whole(frame, compress),
            None => Ok(()),
        }
    }

    /// Queues a batched request; auto-flushes the requests queued before it
    /// when the batch reaches `Ice.BatchAutoFlushSize` (§2.6).
    pub(crate) fn queue_batch_request(
        &self,
        head: &RequestHead<'_>,
        params: &[u8],
        compress: bool,
    ) -> Result<()> {
        let to_send = self
            .inner
            .writer
            .lock()
            .queue_batch_request(head, params, compress)?;
        match to_send {
            Some((frame, compress)) => self.inner.send_whole(frame, compress),
            None => Ok(()),
        }
    }

    /// Sends a request: for twoway, the reply to await ([`ReplyFuture`]);
    /// for oneway, `None`, and the caller then awaits
    /// [`Connection::oneway_sent`].
    /// Errors here mean nothing was sent (for §7.2).
    ///
    /// Not an `async fn`: the invocation (`Proxy::invoke_params`) awaits
    /// the reply itself, one future level fewer per call.
    pub(crate) fn send_invocation(
        &self,
        head: &RequestHead<'_>,
        params: Params<'_>,
        twoway: bool,
        compress: bool,
        span: &tracing::Span,
    ) -> std::result::Result<Option<ReplyFuture<'_>>, InvokeError> {
        let inner = &*self.inner;
        // A small oneway request that follows another oneway on this
        // connection within the coalescing window (a burst) is queued for
        // the connection task instead of written here: back-to-back
        // oneways coalesce into few vectored writes (as Ice queues them
        // while the connection is busy) and leave as soon as this task
        // yields. A oneway after a pause is written before the call
        // returns, as Ice does on an idle connection. Twoway requests are
        // written directly (their caller waits for the reply anyway), and
        // so are large oneways, where a syscall per message costs little;
        // except while callers pipeline small twoway requests (the last
        // read brought several replies, whose callers are about to send
        // their next requests): those are queued too and leave together.
        let (id, deferred) = {
            let mut st = inner.writer.lock();
            let id = if twoway {
                st.register_request().map_err(InvokeError::unsent)?
            } else {
                st.check_active().map_err(InvokeError::unsent)?;
                0
            };
            let deferred =
                twoway && params.len() <= inner.config.policy.copy_limit && st.pipelining();
            (id, deferred)
        };
        // Abandons the request if this future is dropped before the reply.
        let reply = twoway.then(|| ReplyFuture {
            inner,
            id,
            done: false,
            reading: false,
            spin: SpinPhase::Idle,
            _waiting: Waiting::start(),
        });
        let deferred = deferred || (!twoway && self.oneway_deferred(&params));
        self.send_request(head, id, params, compress, deferred)
            .map_err(InvokeError::unsent)?;
        crate::spans::record_sent(span, id, inner.info.id);
        if twoway && inner.config.policy.busy_poll.is_some() {
            inner.writer.wake_task();
        }
        Ok(reply)
    }

    /// The end of a oneway invocation: returns once earlier messages are
    /// (nearly) written, so that a caller sending oneways in a loop does
    /// not queue without bound.
    pub(crate) async fn oneway_sent(&self) -> std::result::Result<ReplyBody, InvokeError> {
        let inner = &*self.inner;
        let high_water = inner.config.policy.send_high_water;
        if inner.writer.queued_bytes() > high_water {
            inner
                .writer
                .wait_queued_below(high_water, inner.config.write_timeout)
                .await
                .map_err(InvokeError::sent)?;
        }
        Ok(ReplyBody::Ok(floe_wire::Encapsulation::empty(
            floe_wire::ENCODING_1_1,
        )))
    }

    /// Stamps a oneway request's send time (burst detection, one clock
    /// read) and says whether the request, with `params`, is part of a
    /// burst and is queued for the connection task (see
    /// [`Connection::invoke`]).
    fn oneway_deferred(&self, params: &Params<'_>) -> bool {
        let policy = &self.inner.config.policy;
        let burst = self.inner.writer.stamp_oneway(policy.coalesce_window);
        burst && params.len() <= policy.copy_limit
    }

    /// Sends a oneway request now, without waiting: written at once, or,
    /// within a burst of small oneways, queued for the connection task to
    /// write together with the rest of the burst. `None` (nothing sent)
    /// when more than `max_queued` bytes already wait to be written: the
    /// peer does not keep up, and the caller must wait or keep the message
    /// in a queue of its own, which it can bound.
    pub(crate) fn try_send_oneway_request(
        &self,
        head: &RequestHead<'_>,
        params: Params<'_>,
        compress: bool,
        max_queued: usize,
    ) -> Option<Result<()>> {
        if self.inner.writer.queued_bytes() > max_queued {
            return None;
        }
        let deferred = self.oneway_deferred(&params);
        Some(self.send_request(head, 0, params, compress, deferred))
    }

    /// Writes (or queues) one Request frame with request id `id`; never
    /// waits. Large parameters go beside the frame head in a vectored
    /// write, shared, not copied. With `deferred`, the frame is queued for
    /// the connection task to write ([`Writer::send_deferred`]).
    fn send_request(
        &self,
        head: &RequestHead<'_>,
        id: i32,
        params: Params<'_>,
        compress: bool,
        deferred: bool,
    ) -> Result<()> {
        if id != 0 && deferred {
            // Queued twoway requests count for burst detection too (a
            // oneway was stamped by `oneway_deferred`); a twoway request
            // written at once reads no clock.
            self.inner.writer.stamp_burst();
        }
        let inner = &*self.inner;
        let mut room = [0; outbound::STACK_FRAME];
        let compression = inner.compression(compress);
        let policy = &inner.config.policy;
        let frame = outbound::request(head, id, params, compression, policy, &mut room)?;
        match inner.config.oneway_batch_size {
            batch if id == 0 && batch > 0 => inner.writer.send_oneway(frame, deferred, batch),
            _ => inner.writer.send_frame(frame, deferred),
        }
    }
}

/// Why [`Connection::invoke`] failed, and whether the request may have
/// reached the peer (the retry rules of §7.2 depend on it).
#[derive(Debug)]
pub(crate) struct InvokeError {
    /// The failure.
    pub(crate) error: Error,
    /// The request was written (or queued to be): the peer may have run it.
    pub(crate) sent: bool,
}

impl InvokeError {
    /// A failure before anything was sent.
    pub(crate) fn unsent(error: Error) -> Self {
        InvokeError { error, sent: false }
    }

    /// A failure after the request was sent.
    pub(crate) fn sent(error: Error) -> Self {
        InvokeError { error, sent: true }
    }
}

impl ConnectionInner {
    /// Sends one frame built whole (a batch, a reply), compressed when
    /// asked and worth it.
    fn send_whole(&self, frame: BytesMut, compress: bool) -> Result<()> {
        let frame = outbound::compressed(frame, self.compression(compress));
        self.writer.send_frame(OutFrame::whole(frame), false)
    }
}

/// The reply to a twoway request: ready once its slot holds it (or the
/// connection ended). The only caller waiting on a plain TCP connection
/// reads the reply itself when the socket becomes readable (see
/// `caller_read.rs`), and, while its connection's spin window is open,
/// polls the socket for it first (see `caller_spin.rs`); otherwise the
/// connection task stores it. Dropped before that, it abandons the
/// request; a late reply is then ignored.
pub(crate) struct ReplyFuture<'a> {
    inner: &'a ConnectionInner,
    id: i32,
    done: bool,
    /// Readiness wakes this caller, which reads for itself.
    reading: bool,
    /// Whether this caller polls the socket for its reply, or did.
    spin: SpinPhase,
    /// Counts the call as waiting in the process (see `caller_spin.rs`).
    _waiting: Waiting,
}

impl ReplyFuture<'_> {
    /// The reply is in: a caller that read for itself stops, and the spin
    /// window learns how long it took.
    #[inline]
    fn finish(&mut self) {
        self.done = true;
        if self.reading {
            self.reading = false;
            self.inner.caller_leaves();
        }
        if !matches!(self.spin, SpinPhase::Idle) {
            self.learn();
        }
    }

    /// The spin window learns whether this caller's spin caught its reply.
    #[cold]
    fn learn(&mut self) {
        if self.end_spin() {
            self.inner.writer.lock().spin.caught();
        } else if let SpinPhase::RanOut(started) = self.spin {
            self.inner.writer.lock().spin.missed(started.elapsed());
        }
        self.spin = SpinPhase::Idle;
    }

    /// Stops spinning, if this caller spins: whether it did.
    fn end_spin(&mut self) -> bool {
        let SpinPhase::Spinning(spin) = &self.spin else {
            return false;
        };
        let started = spin.started;
        self.inner.spin_quiet(false);
        // Lets another caller spin.
        self.spin = SpinPhase::RanOut(started);
        true
    }

    /// A lone caller that reads for itself starts polling for its reply,
    /// for up to `window`, unless another twoway call of the process waits.
    #[inline(never)]
    fn start_spin(&mut self, cx: &mut Context<'_>, window: Duration) -> Poll<Result<ReplyBody>> {
        let Some(spin) = Spin::begin(window) else {
            return Poll::Pending;
        };
        self.inner.spin_quiet(true);
        let yields = !spin.multi_thread();
        self.spin = SpinPhase::Spinning(spin);
        if yields {
            // The request was just written: its reply is at least a
            // round trip away, and this runtime's other tasks go first.
            caller_spin::yield_once(cx);
            return Poll::Pending;
        }
        // On the multi-thread runtime the spin starts in this poll. If it
        // ran out, the next poll reads through readiness.
        self.spin_read(cx).unwrap_or_else(|| {
            cx.waker().wake_by_ref();
            Poll::Pending
        })
    }

    /// A spinning caller reads: its reply, if it came; pending while it
    /// spins; `None` once it stopped (the window ran out: it waits for
    /// readiness; or the task reads now: it waits for its slot).
    #[inline(never)]
    fn spin_read(&mut self, cx: &mut Context<'_>) -> Option<Poll<Result<ReplyBody>>> {
        let inner = self.inner;
        // A spinning caller may get its reply without ever being pending:
        // it takes from tokio's budget, as tokio's own resources do, so
        // that a task calling in a loop still yields now and then.
        let Poll::Ready(budget) = tokio::task::coop::poll_proceed(cx) else {
            return Some(Poll::Pending);
        };
        let SpinPhase::Spinning(spin) = &self.spin else {
            return None;
        };
        let slice = spin.slice();
        let (reading, mine) = loop {
            let (reading, mine) = inner.caller_reads(cx, self.id, true);
            if !(reading && mine.is_none() && slice.more()) {
                break (reading, mine);
            }
            std::hint::spin_loop();
        };
        self.reading = reading;
        let Some(body) = mine else {
            if matches!(&self.spin, SpinPhase::Spinning(s) if reading && s.open()) {
                caller_spin::yield_once(cx);
                return Some(Poll::Pending);
            }
            // The window ran out (the caller reads through readiness from
            // now on), or the task reads now (it delivers the reply).
            self.end_spin();
            return None;
        };
        budget.made_progress();
        self.finish();
        Some(Poll::Ready(Ok(body)))
    }
}

impl Future for ReplyFuture<'_> {
    type Output = Result<ReplyBody>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.inner;
        if self.reading {
            if let SpinPhase::Spinning(_) = self.spin {
                if let Some(read) = self.spin_read(cx) {
                    return read;
                }
            }
            if self.reading {
                let (reading, mine) = inner.caller_reads(cx, self.id, false);
                self.reading = reading;
                if let Some(body) = mine {
                    self.finish();
                    return Poll::Ready(Ok(body));
                }
            }
        }
        let (polled, alone, window) = {
            let mut st = inner.writer.lock();
            let polled = st.requests.poll_reply(self.id, cx);
            let alone = st.requests.waiting() == 1;
            // One spin per call, right after the request was written.
            let first = !self.reading && matches!(self.spin, SpinPhase::Idle);
            let window = (polled.is_pending() && alone && first && caller_spin::alone())
                .then(|| st.spin.start())
                .flatten();
            (polled, alone, window)
        };
        if polled.is_ready() {
            self.finish();
        } else if !self.reading && inner.caller_may_read(alone) {
            inner.caller_waits(cx);
            self.reading = true;
            if let Some(window) = window {
                return self.start_spin(cx, window);
            }
        }
        polled
    }
}

impl Drop for ReplyFuture<'_> {
    fn drop(&mut self) {
        self.end_spin();
        if self.reading {
            self.inner.caller_leaves();
        }
        if !self.done {
            self.inner.writer.lock().requests.abandon(self.id);
        }
    }
}
