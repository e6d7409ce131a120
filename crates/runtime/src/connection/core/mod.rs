//! The protocol core of a connection, without I/O (the quinn-proto split):
//! [`ConnectionState`] holds what a connection knows and decides, and the
//! tokio driver around it (the connection task, the writer, the callers'
//! futures) moves bytes between it and the transport.
//!
//! | file | what it decides |
//! |---|---|
//! | `mod.rs` | [`ConnectionState`]: the lifecycle ([`Phase`]), replies to our requests, reads and what they were, back-pressure, the batch queue, timers, the task's passes |
//! | `inbound.rs` | what one received frame asks (`inbound`: frames in, `Inbound` out) |
//! | `outbound.rs` | the frames a connection sends: requests, replies, batches |
//! | `requests.rs` | our twoway requests waiting for replies, each with its reply slot |
//! | `write_state.rs` | the send queue and its flags |
//! | `close.rs` | the graceful close (§1.4) |
//! | `idle.rs`, `acm.rs`, `liveness.rs` | heartbeats and closing idle, inactive or silent connections (Ice 3.8 and Ice 3.7 rules) |
//! | `limits.rs`, `params.rs`, `policy.rs` | frame size limits, a request's parameters, the performance heuristics |
//! | `spin.rs` | how long a lone caller polls for its reply before it sleeps |
//!
//! The driver holds the state behind one lock, taken by a caller to send
//! (and to look for its reply) and by the connection task for what it
//! read, wrote or timed; nothing in here blocks, awaits or does I/O, so it
//! is tested with byte frames and given times (`tests.rs`).

pub(crate) mod acm;
pub(crate) mod close;
pub(crate) mod idle;
pub(crate) mod inbound;
pub(crate) mod limits;
pub(crate) mod liveness;
pub(crate) mod outbound;
pub(crate) mod params;
pub(crate) mod policy;
pub(crate) mod requests;
pub(crate) mod scratch;
pub(crate) mod spin;
pub(crate) mod write_state;

#[cfg(test)]
mod tests;

use std::task::Waker;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use floe_wire::protocol::{BatchBuilder, Reply, RequestHead, CLOSE_CONNECTION};

use crate::error::Error;
use acm::{AcmCloseAction, AcmInputs};
use close::{CloseStep, GracefulClose};
use liveness::{Liveness, Monitor};
pub(crate) use policy::Policy;
use requests::Requests;
pub(crate) use write_state::WriteState;

/// Where a connection is in its life.
#[derive(Clone, Debug)]
pub(crate) enum Phase {
    /// Carries requests both ways.
    Active,
    /// Closing gracefully (§1.4): no new requests, running dispatches
    /// finish, then CloseConnection.
    Closing {
        /// The close also waits for our requests to get their replies
        /// (`Connection::close`; an idle close does not).
        wait_for_requests: bool,
    },
    /// Ended, with the error that ended it.
    Closed(Error),
}

/// The settings of a connection the core needs.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// `Ice.BatchAutoFlushSize` in bytes (0 = off).
    pub(crate) batch_auto_flush_size: usize,
    /// `MaxDispatches`: dispatches running at once before reads stop.
    pub(crate) max_dispatches: usize,
    /// `floe.MaxDispatchBytes`: parameter bytes the running dispatches
    /// may hold before reads stop.
    pub(crate) max_dispatch_bytes: usize,
    /// How long a graceful close waits for the peer.
    pub(crate) close_timeout: std::time::Duration,
}

impl Limits {
    /// Whether another request may be dispatched while `dispatching`
    /// dispatches hold `bytes` of parameters.
    pub(crate) fn may_dispatch(&self, dispatching: usize, bytes: usize) -> bool {
        dispatching < self.max_dispatches && bytes < self.max_dispatch_bytes
    }
}

/// What a reply read by a waiting caller was (see
/// [`ConnectionState::caller_reply`]).
#[derive(Debug)]
pub(crate) enum CallerReply {
    /// The caller's own reply.
    Own(floe_wire::protocol::ReplyBody),
    /// Another caller's, with its waker.
    Other(Option<Waker>),
    /// For a request nobody waits for.
    Abandoned(i32),
}

/// What a pass of the connection task's loop does ([`ConnectionState::task_pass`]).
#[derive(Debug)]
pub(crate) enum TaskPass {
    /// The connection ended with this error: the task ends.
    Ended(Error),
    /// CloseConnection is queued: write it, then wait for the peer to
    /// close the socket, until `deadline`.
    Close {
        /// When the close gives up.
        deadline: Instant,
    },
    /// Wait for the socket, the dispatches, the queue or the timers.
    Run {
        /// Requests are dispatched (not closing).
        active: bool,
        /// Reading is allowed (back-pressure off).
        can_read: bool,
        /// Bytes wait to be written.
        has_queued: bool,
        /// CloseConnection was written (the peer closing is expected).
        close_sent: bool,
        /// When a graceful close gives up, once it began.
        deadline: Option<Instant>,
    },
}

/// What the connection task does after a timer ran ([`ConnectionState::handle_timeout`]).
#[derive(Debug, Default)]
pub(crate) struct TimerAction {
    /// A heartbeat was queued: write the queue.
    pub(crate) heartbeat: bool,
    /// A graceful close began.
    pub(crate) closing: bool,
    /// End the connection now with this error.
    pub(crate) end: Option<Error>,
}

/// Everything a connection knows and decides, behind the driver's lock.
pub(crate) struct ConnectionState {
    /// The send queue and its flags.
    pub(crate) out: WriteState,
    /// Our twoway requests waiting for their replies.
    pub(crate) requests: Requests,
    phase: Phase,
    limits: Limits,
    batch: BatchBuilder,
    /// Whether any queued batch request asked for compression.
    batch_compress: bool,
    monitor: Monitor,
    close: GracefulClose,
    /// A request or reply was queued or written since the last monitor
    /// run (heartbeats do not count).
    wrote: bool,
    /// The last read delivered more than `pipelined_replies` replies.
    pipelining: bool,
    /// How long a lone caller polls for its reply (`floe.CallerSpin`).
    pub(crate) spin: spin::SpinWindow,
    policy: Policy,
}

impl ConnectionState {
    /// The state of a connection that starts at `now`.
    pub(crate) fn new(limits: Limits, liveness: &Liveness, policy: Policy, now: Instant) -> Self {
        ConnectionState {
            out: WriteState::new(),
            requests: Requests::default(),
            phase: Phase::Active,
            close: GracefulClose::new(limits.close_timeout),
            limits,
            batch: BatchBuilder::new(),
            batch_compress: false,
            monitor: Monitor::new(liveness, now),
            wrote: false,
            pipelining: false,
            spin: spin::SpinWindow::new(policy.caller_spin),
            policy,
        }
    }

    // ------------------------------------------------------------ lifecycle

    /// Whether new requests may be sent.
    pub(crate) fn is_active(&self) -> bool {
        matches!(self.phase, Phase::Active)
    }

    /// `Ok` while active; else the error a new request fails with.
    pub(crate) fn check_active(&self) -> Result<(), Error> {
        match &self.phase {
            Phase::Active => Ok(()),
            Phase::Closing { .. } => Err(Error::ConnectionManuallyClosed),
            Phase::Closed(e) => Err(e.clone()),
        }
    }

    /// The error that ended the connection, once it ended.
    pub(crate) fn end_error(&self) -> Option<Error> {
        match &self.phase {
            Phase::Closed(e) => Some(e.clone()),
            _ => None,
        }
    }

    /// Starts a graceful close (§1.4); with `wait_for_requests`, it waits
    /// for our requests' replies too. Whether the phase changed (the task
    /// must look).
    pub(crate) fn begin_close(&mut self, wait_for_requests: bool) -> bool {
        match &mut self.phase {
            Phase::Active => {
                self.phase = Phase::Closing { wait_for_requests };
                true
            }
            Phase::Closing {
                wait_for_requests: w,
            } => {
                *w |= wait_for_requests;
                false
            }
            Phase::Closed(_) => false,
        }
    }

    /// Ends the connection with `err` (the first end wins): the send queue
    /// is dropped and every waiting request fails. The wakers to wake once
    /// the lock is released; `None` if it had ended already.
    pub(crate) fn terminate(&mut self, err: Error) -> Option<Vec<Waker>> {
        if matches!(self.phase, Phase::Closed(_)) {
            return None;
        }
        self.phase = Phase::Closed(err.clone());
        Some(self.fail(err).0)
    }

    /// A pass of the connection task while closing, at `now`, with
    /// `dispatching` dispatches running: whether to write CloseConnection
    /// now (all our dispatches replied and, when asked, our requests were
    /// answered), and the close's deadline. The frame is queued here.
    pub(crate) fn poll_close(&mut self, now: Instant, dispatching: usize) -> CloseStep {
        let Phase::Closing { wait_for_requests } = self.phase else {
            return CloseStep::Wait;
        };
        let waiting = wait_for_requests && self.requests.waiting() > 0;
        let step = self.close.step(now, dispatching, waiting);
        if let CloseStep::Send { .. } = step {
            self.out.push(&mut [Bytes::from_static(&CLOSE_CONNECTION)]);
            self.close.mark_sent();
        }
        step
    }

    /// One pass of the connection task's loop, with `dispatching`
    /// dispatches holding `bytes` of parameters: what it must do first,
    /// and what it may wait for. The clock is read only while closing.
    pub(crate) fn task_pass(&mut self, dispatching: usize, bytes: usize) -> TaskPass {
        let step = match &self.phase {
            Phase::Closed(e) => return TaskPass::Ended(e.clone()),
            Phase::Closing { .. } if !self.close.sent() => {
                self.poll_close(Instant::now(), dispatching)
            }
            _ => CloseStep::Wait,
        };
        if let CloseStep::Send { deadline } = step {
            return TaskPass::Close { deadline };
        }
        TaskPass::Run {
            active: matches!(self.phase, Phase::Active),
            can_read: self.may_read(dispatching, bytes),
            has_queued: self.out.pending(),
            close_sent: self.close.sent(),
            deadline: self.close.deadline(),
        }
    }

    // ------------------------------------------------------------ requests

    /// Registers a twoway request: its id, or the error a new request fails
    /// with.
    pub(crate) fn register_request(&mut self) -> Result<i32, Error> {
        self.check_active()?;
        if let Some(e) = &self.out.error {
            return Err(e.clone());
        }
        let id = self.requests.register();
        if self.requests.waiting() > 1 {
            self.spin.crowded();
        }
        Ok(id)
    }

    /// Fails everything with `err` (the first error wins): the send queue
    /// and every waiting request. The wakers to wake once the lock is
    /// released, and the error in force.
    pub(crate) fn fail(&mut self, err: Error) -> (Vec<Waker>, Error) {
        self.out.queue.clear();
        self.out.queued_bytes = 0;
        self.out.unflushed = false;
        let err = self.out.error.get_or_insert(err).clone();
        (self.requests.fail_all(&err), err)
    }

    /// A request or reply was sent (for the liveness rules).
    pub(crate) fn wrote(&mut self) {
        self.wrote = true;
    }

    /// Whether the connection's callers are pipelining: their small twoway
    /// requests then wait in the queue to leave together.
    pub(crate) fn pipelining(&self) -> bool {
        self.pipelining
    }

    // ------------------------------------------------------------ batches

    /// Queues a batched request; the requests queued before it, as one
    /// BatchRequest frame to send now, when it brings the batch to
    /// `Ice.BatchAutoFlushSize` (§2.6), with whether to compress it.
    ///
    /// # Errors
    ///
    /// A closed connection, or a batch too large for a frame.
    pub(crate) fn queue_batch_request(
        &mut self,
        head: &RequestHead<'_>,
        params: &[u8],
        compress: bool,
    ) -> Result<Option<(BytesMut, bool)>, Error> {
        self.check_active()?;
        limits::check_batch_push(&self.batch, head, params.len())?;
        let at = self.batch.push(head, params);
        let previous_compress = self.batch_compress;
        self.batch_compress |= compress;
        let limit = self.limits.batch_auto_flush_size;
        if limit > 0 && self.batch.frame_size() >= limit {
            Ok(self.batch.take_frame_before(at).map(|f| {
                self.batch_compress = compress;
                (f, previous_compress)
            }))
        } else {
            Ok(None)
        }
    }

    /// The queued batch requests as one frame, and whether to compress it.
    pub(crate) fn take_batch(&mut self) -> Option<(BytesMut, bool)> {
        let compress = std::mem::take(&mut self.batch_compress);
        self.batch.take_frame().map(|f| (f, compress))
    }

    // ------------------------------------------------------------ reading

    /// Whether the connection may read now, with `dispatching` dispatches
    /// holding `bytes` of parameters (the driver counts them: it owns
    /// their futures): dispatches below their limits and replies waiting
    /// to be written below the policy's high-water mark.
    pub(crate) fn may_read(&self, dispatching: usize, bytes: usize) -> bool {
        self.limits.may_dispatch(dispatching, bytes)
            && self.out.queued_bytes < self.policy.write_high_water
    }

    /// What one read's frames were: `replies` delivered to callers,
    /// `traffic` (a request or reply), `heartbeat` (a ValidateConnection).
    pub(crate) fn record_read(&mut self, replies: usize, traffic: bool, heartbeat: bool) {
        self.monitor.read(traffic, heartbeat);
        self.pipelining = replies > self.policy.pipelined_replies;
    }

    /// Not reading (back-pressure) is not the peer's silence: the idle
    /// check pauses, as Ice 3.8's does.
    pub(crate) fn reads_paused(&mut self) {
        self.monitor.read(false, false);
    }

    /// A reply read by the caller waiting for `own`, the `replies`-th of
    /// its read: the reply's body when it is that caller's (its slot is
    /// freed), else it is delivered as [`ConnectionState::deliver_reply`]
    /// does. The read counts as [`ConnectionState::record_read`] says.
    pub(crate) fn caller_reply(&mut self, reply: Reply, own: i32, replies: usize) -> CallerReply {
        self.record_read(replies, true, false);
        if reply.request_id == own && self.requests.answer_caller(own) {
            return CallerReply::Own(reply.body);
        }
        match self.deliver_reply(reply) {
            Ok(waker) => CallerReply::Other(waker),
            Err(id) => CallerReply::Abandoned(id),
        }
    }

    /// Delivers `reply` to its request's slot: the waiting caller's waker
    /// (to wake once the lock is released), or `Err` with the request id
    /// when nobody waits for it (abandoned, answered, or made up).
    pub(crate) fn deliver_reply(&mut self, reply: Reply) -> Result<Option<Waker>, i32> {
        let id = reply.request_id;
        self.requests.complete(id, reply.body).map_err(|()| id)
    }

    // ------------------------------------------------------------ timers

    /// How often [`ConnectionState::handle_timeout`] must run; `None`: never.
    pub(crate) fn timer_period(&self) -> Option<std::time::Duration> {
        self.monitor.period()
    }

    /// The liveness monitor's run at `now`, with `dispatching` dispatches
    /// running: a heartbeat is queued, an idle or inactive connection
    /// starts its graceful close, a silent one ends.
    pub(crate) fn handle_timeout(&mut self, now: Instant, dispatching: usize) -> TimerAction {
        let inputs = AcmInputs {
            wrote: std::mem::take(&mut self.wrote),
            pending_requests: self.requests.waiting() > 0,
            dispatching,
        };
        let decided = self.monitor.check(now, inputs);
        let mut action = TimerAction::default();
        if decided.heartbeat && self.out.error.is_none() {
            self.out.push(&mut [Bytes::from_static(
                &floe_wire::protocol::VALIDATE_CONNECTION,
            )]);
            action.heartbeat = true;
        }
        match decided.close {
            None => {}
            Some(AcmCloseAction::Graceful) => action.closing = self.begin_close(false),
            Some(AcmCloseAction::Forceful) => {
                action.end = Some(match self.monitor {
                    Monitor::Acm(_) => Error::ConnectionTimeout,
                    Monitor::Idle(_) => Error::ConnectionAborted(
                        "the idle check found the connection silent for the idle timeout".into(),
                    ),
                })
            }
        }
        action
    }
}
