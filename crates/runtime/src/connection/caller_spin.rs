//! A lone twoway caller polling its socket for the reply
//! (`floe.CallerSpin`), the driver side of `core/spin.rs`.
//!
//! A caller that reads its own reply (`caller_read.rs`) and whose
//! connection's [`SpinWindow`](super::core::spin::SpinWindow) is open reads
//! the socket directly, without waiting for the I/O driver's readiness, and
//! between two reads yields to the runtime (which runs its other tasks and
//! polls the I/O driver without blocking meanwhile), until the reply is in
//! or the window ran out. Then it waits for readiness as any caller does.
//!
//! A caller spins only while it is the only twoway call waiting in the
//! process ([`Waiting`]), and stops as soon as another one starts: with
//! several calls waiting, the CPU is better spent on the others (on the
//! multi-thread runtime a spin holds its worker), and callers on many
//! connections would otherwise all spin. The connection's window also stays
//! shut for a call after calls overlapped on it
//! ([`SpinWindow::crowded`](super::core::spin::SpinWindow::crowded)): calls
//! pipelined from one task are sent by that task, which a spin would hold.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Context;
use std::time::{Duration, Instant};

/// The twoway calls of this process waiting for their replies.
static WAITING: AtomicUsize = AtomicUsize::new(0);

/// One twoway call waiting for its reply, counted while it lives.
#[derive(Debug)]
pub(super) struct Waiting(());

impl Waiting {
    /// Counts one more call waiting.
    #[inline]
    pub(super) fn start() -> Waiting {
        WAITING.fetch_add(1, Ordering::Relaxed);
        Waiting(())
    }
}

impl Drop for Waiting {
    #[inline]
    fn drop(&mut self) {
        WAITING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether the one twoway call waiting in the process is the caller's own.
#[inline]
pub(super) fn alone() -> bool {
    WAITING.load(Ordering::Relaxed) == 1
}

/// Where a caller is with its spin.
#[derive(Debug)]
pub(super) enum SpinPhase {
    /// It has not spun (yet).
    Idle,
    /// It polls the socket for its reply.
    Spinning(Spin),
    /// Its spin, started then, ran out: it waits for readiness.
    RanOut(Instant),
}

/// One caller's spin: it polls only while its call is the only twoway
/// call waiting in the process ([`Spin::open`]).
#[derive(Debug)]
pub(super) struct Spin {
    /// When it started (right after the request was written).
    pub(super) started: Instant,
    /// When it runs out.
    until: Instant,
    /// It runs on tokio's multi-thread runtime.
    multi_thread: bool,
}

impl Spin {
    /// Starts a spin of `window`, if the caller's call is the only one
    /// waiting in the process.
    pub(super) fn begin(window: Duration) -> Option<Spin> {
        if !alone() {
            return None;
        }
        let started = Instant::now();
        Some(Spin {
            started,
            until: started + window,
            multi_thread: on_multi_thread_runtime(),
        })
    }

    /// Whether the window is still open, and the caller's call still the
    /// only one waiting in the process.
    #[inline]
    pub(super) fn open(&self) -> bool {
        alone() && Instant::now() < self.until
    }

    /// The reads of one poll: on the multi-thread runtime the caller
    /// reads until its reply is in or the window ran out, without
    /// yielding; on the current-thread runtime it reads once per poll.
    ///
    /// On the multi-thread runtime any wake-up of a task by itself
    /// reschedules it as a yield, which wakes an idle worker (a futex or
    /// the driver's event, and a context switch per pass): the spin would
    /// cost more than it saves. The window is short (at most
    /// `floe.CallerSpin`, 50 µs by default), and the other workers take the
    /// new tasks meanwhile. A current-thread runtime has nobody else to run
    /// its tasks and to poll the I/O driver, so there the caller yields
    /// after each read.
    pub(super) fn slice(&self) -> Slice {
        let end = if self.multi_thread {
            self.until
        } else {
            Instant::now()
        };
        Slice { end }
    }

    /// Whether it runs on tokio's multi-thread runtime (see
    /// [`Spin::slice`]).
    pub(super) fn multi_thread(&self) -> bool {
        self.multi_thread
    }
}

/// Whether the caller runs on tokio's multi-thread runtime.
pub(super) fn on_multi_thread_runtime() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}

/// Lets the runtime run its other tasks and poll its I/O driver before the
/// task of `cx` is polled again for the next read: tokio's `yield_now`,
/// polled once, which schedules the task after the driver's next poll.
pub(super) fn yield_once(cx: &mut Context<'_>) {
    let yielded = pin!(tokio::task::yield_now()).poll(cx);
    debug_assert!(yielded.is_pending());
}

impl super::ConnectionInner {
    /// A caller starts (`true`) or stops polling its socket: the socket
    /// stops or starts again waking the I/O driver for small replies
    /// ([`ReadSize::quiet`](super::read::ReadSize::quiet)). Otherwise, on
    /// the multi-thread runtime, each reply wakes the worker parked in the
    /// driver, only for it to find the reply taken.
    pub(super) fn spin_quiet(&self, on: bool) {
        if let super::Io::Tcp(tcp) = &self.io {
            self.read_state().size.quiet(tcp, on);
        }
    }
}

/// The reads of one poll of a spinning caller.
pub(super) struct Slice {
    end: Instant,
}

impl Slice {
    /// Whether to read again in this poll.
    #[inline]
    pub(super) fn more(&self) -> bool {
        alone() && Instant::now() < self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_spins_only_while_its_call_is_the_only_one_waiting() {
        // Other tests of this binary make no calls.
        let mine = Waiting::start();
        let spin = Spin::begin(Duration::from_secs(60)).expect("alone");
        assert!(spin.open());
        let other = Waiting::start();
        assert!(!spin.open(), "another call started");
        assert!(Spin::begin(Duration::from_secs(60)).is_none());
        drop(other);
        assert!(spin.open());
        assert!(!Spin::begin(Duration::ZERO).expect("alone").open());
        drop(mine);
        assert!(
            Spin::begin(Duration::from_secs(60)).is_none(),
            "not waiting"
        );
    }
}
