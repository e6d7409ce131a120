//! [`TaskSignal`]: how other tasks wake a connection task.
//!
//! Senders queue frames, `close()` asks for a graceful close, a busy-poll
//! caller asks for a poll: each only needs the connection task to run one
//! more pass of its loop, which then looks at the connection's state. A
//! flag and one registered waker carry that, where a `tokio::sync::Notify`
//! per reason cost a waiter-list lock each time the task polled it (three
//! per pass of the loop, two passes per call).

use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use futures_util::task::AtomicWaker;

/// Wakes one task (the connection task) to run its loop once more.
///
/// Signals are not counted: several before the task runs wake it once.
/// A signal sent while the task runs is not lost: it completes the next
/// [`TaskSignal::poll_raised`].
#[derive(Default)]
pub(crate) struct TaskSignal {
    raised: AtomicBool,
    waker: AtomicWaker,
}

impl TaskSignal {
    /// Wakes the waiting task, or makes its next wait return at once.
    pub(crate) fn raise(&self) {
        self.raised.store(true, Ordering::Release);
        self.waker.wake();
    }

    /// Ready once the signal was raised since the last poll that
    /// returned ready (at once if it already was), and otherwise registers
    /// `cx`'s waker. Cancel-safe: a raise is only consumed by a poll that
    /// returns it.
    pub(crate) fn poll_raised(&self, cx: &mut Context<'_>) -> Poll<()> {
        // Checked before registering too: a raised flag needs no waker.
        if self.raised.swap(false, Ordering::AcqRel) {
            return Poll::Ready(());
        }
        self.waker.register(cx.waker());
        // A raise between the check and the registration found no waker
        // (or the old one): its flag is seen here.
        if self.raised.swap(false, Ordering::AcqRel) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn raised_before_the_wait_completes_it_at_once() {
        let s = TaskSignal::default();
        s.raise();
        s.raise();
        std::future::poll_fn(|cx| s.poll_raised(cx)).await;
        // Both raises were consumed by the one wait.
        let again = std::future::poll_fn(|cx| s.poll_raised(cx));
        let again = tokio::time::timeout(std::time::Duration::from_millis(20), again).await;
        assert!(again.is_err());
    }

    #[tokio::test]
    async fn raise_from_another_task_wakes_the_waiter() {
        let s = Arc::new(TaskSignal::default());
        let s2 = s.clone();
        let waiter =
            tokio::spawn(async move { std::future::poll_fn(|cx| s2.poll_raised(cx)).await });
        tokio::task::yield_now().await;
        s.raise();
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("woken")
            .expect("task");
    }

    #[test]
    fn a_raise_between_polls_is_kept() {
        let s = TaskSignal::default();
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(s.poll_raised(&mut cx).is_pending());
        s.raise();
        assert!(s.poll_raised(&mut cx).is_ready());
        assert!(s.poll_raised(&mut cx).is_pending());
    }
}
