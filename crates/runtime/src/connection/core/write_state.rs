//! [`WriteState`]: a connection's send queue (sans-IO). The bytes
//! accepted from senders, in order, as shared `Bytes` (never copied here),
//! with the counters and flags the connection's writer keeps beside
//! them: the byte count for back-pressure, the bytes queued since a sender
//! last helped write, the first error, a stream's pending flush, and the
//! cork of the connection task's batch of replies.

use std::collections::VecDeque;
use std::io::IoSlice;

use bytes::{Buf, Bytes};

use crate::error::Error;

/// The queue of a connection's send side and its flags, behind the
/// connection's lock. No I/O: the writer moves bytes from here to the
/// socket and reports what the socket took with [`WriteState::consume`].
#[derive(Default)]
pub(crate) struct WriteState {
    /// Bytes accepted but not yet written, in order.
    pub(crate) queue: VecDeque<Bytes>,
    /// Total bytes in `queue` (back-pressure: the connection task stops
    /// reading while this is high).
    pub(crate) queued_bytes: usize,
    /// Set when writing failed or the connection closed.
    pub(crate) error: Option<Error>,
    /// Bytes queued since a sender last tried to write the queue itself.
    pub(crate) unhelped: usize,
    /// A stream transport took bytes it may not have sent yet: it needs a
    /// flush (the TCP path never sets this).
    pub(crate) unflushed: bool,
    /// The connection task is handling a batch of frames: messages are
    /// queued and leave together when it ends (`Writer::uncork`).
    pub(crate) corked: bool,
}

impl WriteState {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Moves the non-empty `parts` to the queue (they are left empty): a
    /// `Bytes` made from a `Vec` would need a shared header to be cloned.
    pub(crate) fn push(&mut self, parts: &mut [Bytes]) {
        for b in parts.iter_mut().filter(|b| !b.is_empty()) {
            self.queued_bytes += b.len();
            self.unhelped += b.len();
            self.queue.push_back(std::mem::take(b));
        }
    }

    /// Drops the first `n` queued bytes (written).
    pub(crate) fn consume(&mut self, mut n: usize) {
        while n > 0 {
            let Some(front) = self.queue.front_mut() else {
                break;
            };
            if n >= front.len() {
                let len = front.len();
                n -= len;
                self.queued_bytes -= len;
                self.queue.pop_front();
            } else {
                front.advance(n);
                self.queued_bytes -= n;
                n = 0;
            }
        }
    }

    /// Whether anything waits to be written or flushed.
    pub(crate) fn pending(&self) -> bool {
        !self.queue.is_empty() || self.unflushed
    }
}

impl WriteState {
    /// Points `iov` at the queue's head, at most `iov.len()` buffers (for
    /// one vectored write); how many were filled.
    pub(crate) fn head<'a>(&'a self, iov: &mut [IoSlice<'a>]) -> usize {
        let mut n = 0;
        for (slot, b) in iov.iter_mut().zip(self.queue.iter()) {
            *slot = IoSlice::new(b);
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(sizes: &[usize]) -> Vec<Bytes> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| Bytes::from(vec![i as u8; n]))
            .collect()
    }

    #[test]
    fn push_skips_empty_parts_and_counts_bytes() {
        let mut st = WriteState::new();
        assert!(!st.pending());
        st.push(&mut parts(&[3, 0, 5]));
        assert_eq!(st.queue.len(), 2);
        assert_eq!(st.queued_bytes, 8);
        assert_eq!(st.unhelped, 8);
        assert!(st.pending());
    }

    #[test]
    fn consume_drops_whole_and_partial_buffers_in_order() {
        let mut st = WriteState::new();
        st.push(&mut parts(&[3, 4, 5]));
        st.consume(5); // the first buffer and 2 bytes of the second
        assert_eq!(st.queued_bytes, 7);
        assert_eq!(st.queue.len(), 2);
        assert_eq!(&st.queue[0][..], &[1, 1]);
        st.consume(100); // more than queued: everything, no panic
        assert_eq!(st.queued_bytes, 0);
        assert!(!st.pending());
    }

    #[test]
    fn an_unflushed_stream_is_pending_with_an_empty_queue() {
        let mut st = WriteState::new();
        st.unflushed = true;
        assert!(st.pending());
    }

    #[test]
    fn head_fills_at_most_the_slots_given() {
        let mut st = WriteState::new();
        st.push(&mut parts(&[1, 2, 3, 4]));
        let mut iov = [IoSlice::new(&[]); 3];
        let n = st.head(&mut iov);
        assert_eq!(n, 3);
        assert_eq!(iov.iter().map(|s| s.len()).collect::<Vec<_>>(), [1, 2, 3]);
        let mut iov = [IoSlice::new(&[]); 8];
        assert_eq!(st.head(&mut iov), 4);
    }
}
