//! The graceful close of a connection (§1.4) as the connection task runs
//! it, sans-IO: once a close was begun, the connection waits until its
//! dispatches replied (and, when asked, until its own requests got their
//! replies), then says CloseConnection and waits for the peer to close the
//! socket; all of it bounded by the close timeout from the moment the close
//! was first seen. [`GracefulClose`] decides; the task writes the frame and
//! keeps the timer.

use std::time::{Duration, Instant};

/// Progress of a graceful close, kept by the connection task.
#[derive(Debug)]
pub(crate) struct GracefulClose {
    timeout: Duration,
    /// When the close gives up (set when the close is first seen).
    deadline: Option<Instant>,
    /// CloseConnection was written.
    sent: bool,
}

/// What the connection task does on a pass of its loop while closing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CloseStep {
    /// Nothing to do now: dispatches (or our requests) are still running,
    /// or CloseConnection is already out.
    Wait,
    /// Write CloseConnection now and wait for it to leave, until
    /// `deadline`; then [`GracefulClose::mark_sent`].
    Send {
        /// When to stop waiting for the frame to be written.
        deadline: Instant,
    },
}

impl GracefulClose {
    /// A connection that is not closing, whose close will be bounded by
    /// `timeout` (`Ice.Override.CloseTimeout`).
    pub(crate) fn new(timeout: Duration) -> Self {
        GracefulClose {
            timeout,
            deadline: None,
            sent: false,
        }
    }

    /// A pass of the task's loop at `now` while the connection is closing,
    /// with `dispatching` dispatches running and whether the close waits
    /// for requests of ours still waiting for their replies.
    pub(crate) fn step(&mut self, now: Instant, dispatching: usize, waiting: bool) -> CloseStep {
        let deadline = *self.deadline.get_or_insert(now + self.timeout);
        if !self.sent && dispatching == 0 && !waiting {
            CloseStep::Send { deadline }
        } else {
            CloseStep::Wait
        }
    }

    /// CloseConnection was written.
    pub(crate) fn mark_sent(&mut self) {
        self.sent = true;
    }

    /// Whether CloseConnection was written: the peer closing the socket is
    /// then the expected end, not a lost connection.
    pub(crate) fn sent(&self) -> bool {
        self.sent
    }

    /// When the close gives up, once it began.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(10);

    #[test]
    fn waits_for_dispatches_then_sends_with_the_first_deadline() {
        let start = Instant::now();
        let mut c = GracefulClose::new(T);
        assert_eq!(c.deadline(), None);
        assert_eq!(c.step(start, 2, false), CloseStep::Wait);
        assert_eq!(c.deadline(), Some(start + T));
        // Later passes keep the deadline of the first one.
        let later = start + Duration::from_secs(3);
        assert_eq!(c.step(later, 1, false), CloseStep::Wait);
        assert_eq!(
            c.step(later, 0, false),
            CloseStep::Send {
                deadline: start + T
            }
        );
        assert!(!c.sent());
        c.mark_sent();
        assert!(c.sent());
        assert_eq!(c.step(later, 0, false), CloseStep::Wait, "sent once");
    }

    #[test]
    fn waits_for_our_requests_when_asked() {
        let start = Instant::now();
        let mut c = GracefulClose::new(T);
        assert_eq!(c.step(start, 0, true), CloseStep::Wait);
        assert_eq!(
            c.step(start, 0, false),
            CloseStep::Send {
                deadline: start + T
            }
        );
    }
}
