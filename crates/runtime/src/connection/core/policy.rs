//! [`Policy`]: the performance heuristics of a connection, in one place.
//!
//! None of these change what goes on the wire, only when and in how many
//! system calls it goes: how small messages are coalesced, when a frame
//! is copied or sent beside its head, when senders help write a backlog,
//! and when callers and the reader are held back. The defaults were
//! measured on two-core loopback machines (`docs/performance-notes.md`).

use std::time::Duration;

/// A connection's performance heuristics, with their measured defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Policy {
    /// A small oneway request sent within this long after the previous
    /// one on its connection is queued for the connection task (coalesced
    /// with the rest of its burst) instead of written at once (20 µs).
    pub(crate) coalesce_window: Duration,
    /// A read that delivers more replies than this marks the connection
    /// as pipelining: its callers' next small twoway requests are queued
    /// and leave in one write (4: with a few calls in flight, writing each
    /// at once lets the peer start on the first; from a dozen on, queueing
    /// wins by 1.5-3x).
    pub(crate) pipelined_replies: usize,
    /// Results, and oneways within a burst, up to this size are copied
    /// into the frame buffer; larger ones go beside it (16 KiB).
    pub(crate) copy_limit: usize,
    /// Request parameters up to this size are copied into the frame
    /// buffer; larger ones go beside it, shared (2 KiB: copying 10 KB
    /// parameters cost a fan-in client 5% of the machine).
    pub(crate) params_copy_limit: usize,
    /// A sender that queues behind earlier messages writes the queue's
    /// head itself once this many bytes were queued since its last try
    /// (256 KiB), so a backlog drains while the connection task waits for
    /// a busy runtime.
    pub(crate) help_bytes: usize,
    /// A oneway invocation returns once at most this many bytes wait to
    /// be written (1 MiB).
    pub(crate) send_high_water: usize,
    /// The connection stops reading while more than this many bytes of
    /// replies wait to be written (8 MiB).
    pub(crate) write_high_water: usize,
    /// `floe.BusyPoll`: how long after a write the connection task polls
    /// the socket for the answer instead of sleeping (off by default).
    pub(crate) busy_poll: Option<Duration>,
    /// `floe.CallerSpin`: the longest a lone twoway caller polls its
    /// socket for the reply before it sleeps, adapted per connection to
    /// how fast the peer answers (50 µs; see `spin.rs`).
    pub(crate) caller_spin: Option<Duration>,
    /// Callers spin on tokio's current-thread runtime too: only when
    /// `floe.CallerSpin` is set. There the spinning thread is the one that
    /// runs every task, so it yields to the scheduler after each read,
    /// which costs about four times the instructions of the multi-thread
    /// runtime's spin (`docs/performance-notes.md`).
    pub(crate) caller_spin_current_thread: bool,
}

/// A oneway invocation returns only once at most this many bytes wait in
/// the connection's write queue; it is the
/// `max_queued` of
/// [`Proxy::try_send_oneway_now`](crate::Proxy::try_send_oneway_now) that
/// sends the same way without waiting.
pub const SEND_HIGH_WATER: usize = 1024 * 1024;

/// [`Policy::caller_spin`]'s default.
pub(crate) const CALLER_SPIN: Duration = Duration::from_micros(50);

/// [`Policy::help_bytes`]'s default.
pub(crate) const HELP_BYTES: usize = 256 * 1024;

impl Default for Policy {
    fn default() -> Self {
        Policy {
            coalesce_window: Duration::from_micros(20),
            pipelined_replies: 4,
            copy_limit: 16 * 1024,
            params_copy_limit: 2 * 1024,
            help_bytes: HELP_BYTES,
            send_high_water: SEND_HIGH_WATER,
            write_high_water: 8 * 1024 * 1024,
            busy_poll: None,
            caller_spin: Some(CALLER_SPIN),
            caller_spin_current_thread: false,
        }
    }
}

impl Policy {
    /// The policy of a connection whose runtime is tokio's multi-thread one
    /// (`multi_thread`) or not: callers spin on the current-thread runtime
    /// only when asked to.
    pub(crate) fn for_runtime(mut self, multi_thread: bool) -> Self {
        if !multi_thread && !self.caller_spin_current_thread {
            self.caller_spin = None;
        }
        self
    }
}
