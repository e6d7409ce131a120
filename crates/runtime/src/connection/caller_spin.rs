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
//! One caller of the process spins at a time ([`Spin::begin`]): with
//! several calls waiting at once the CPU is better spent on the others, and
//! callers on many connections would otherwise all spin.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Context;
use std::time::{Duration, Instant};

/// Set while a caller of this process spins.
static SPINNING: AtomicBool = AtomicBool::new(false);

/// Whether no caller of this process spins now.
#[inline]
pub(super) fn free() -> bool {
    !SPINNING.load(Ordering::Relaxed)
}

/// One caller's spin: while it lives, no other caller of the process
/// spins.
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
    /// Starts a spin of `window`, unless another caller spins.
    pub(super) fn begin(window: Duration) -> Option<Spin> {
        SPINNING
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()?;
        let started = Instant::now();
        let multi_thread = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        Some(Spin {
            started,
            until: started + window,
            multi_thread,
        })
    }

    /// Whether the window is still open.
    #[inline]
    pub(super) fn open(&self) -> bool {
        Instant::now() < self.until
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
        Instant::now() < self.end
    }
}

impl Drop for Spin {
    fn drop(&mut self) {
        SPINNING.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_spin_at_a_time() {
        let first = Spin::begin(Duration::from_secs(60)).expect("nobody spins");
        assert!(first.open());
        assert!(!free());
        assert!(Spin::begin(Duration::from_secs(60)).is_none());
        drop(first);
        assert!(free());
        let ran_out = Spin::begin(Duration::ZERO).expect("free again");
        assert!(!ran_out.open());
    }
}
