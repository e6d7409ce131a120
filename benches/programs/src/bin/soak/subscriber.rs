//! The soak topic's subscriber: a `Soak::Events` servant that checks each
//! publisher's events arrive once and in order (`seq` 0, 1, 2, ...).

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use floe::codegen::{Current, DispatchError};

use crate::soak;

/// Publisher numbers above this are counted as bad events, not tracked
/// (the soak client numbers its publishers from 0).
const MAX_PUBLISHERS: usize = 10_000;

/// What the subscriber saw, per publisher and in total.
#[derive(Debug, Default)]
pub struct Tracker {
    /// The next `seq` expected from each publisher.
    next: Vec<i64>,
    /// Events received.
    pub received: u64,
    /// Events skipped over (a later `seq` came first).
    pub gaps: u64,
    /// Events that came again or late, with a bad publisher number or a
    /// payload of the wrong size.
    pub bad: u64,
}

impl Tracker {
    /// Records event `seq` of `publisher` with a payload of `len` bytes.
    pub fn record(&mut self, publisher: i32, seq: i64, len: usize, want_len: usize) {
        self.received += 1;
        let p = match usize::try_from(publisher) {
            Ok(p) if p < MAX_PUBLISHERS && len == want_len => p,
            _ => {
                self.bad += 1;
                return;
            }
        };
        if p >= self.next.len() {
            self.next.resize(p + 1, 0);
        }
        let next = &mut self.next[p];
        if seq == *next {
            *next += 1;
        } else if seq > *next {
            self.gaps += (seq - *next) as u64;
            *next = seq + 1;
        } else {
            self.bad += 1;
        }
    }

    /// Events of `publisher` not received (yet), given it published
    /// `published`: the gaps are counted separately.
    pub fn tail_missing(&self, publisher: usize, published: u64) -> u64 {
        let next = self.next.get(publisher).copied().unwrap_or(0).max(0) as u64;
        published.saturating_sub(next)
    }
}

/// The servant.
pub struct Subscriber {
    /// Shared with the client's reporter.
    pub tracker: Arc<Mutex<Tracker>>,
    /// The payload size every event carries.
    pub payload_len: usize,
}

impl soak::Events for Subscriber {
    async fn event(
        &self,
        publisher: i32,
        seq: i64,
        payload: Bytes,
        _: &Current,
    ) -> Result<(), DispatchError> {
        let mut t = self.tracker.lock().unwrap_or_else(|p| p.into_inner());
        t.record(publisher, seq, payload.len(), self.payload_len);
        Ok(())
    }
}
