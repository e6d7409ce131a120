//! The protocol core of a connection, without I/O (the quinn-proto split):
//! [`ConnectionState`] holds what a connection knows and decides, and the
//! tokio driver around it (the connection task, the writer, the callers'
//! futures) moves bytes between it and the transport.
//!
//! - `requests.rs`: the twoway requests waiting for replies, each with the
//!   slot its reply lands in;
//! - `policy.rs`: the performance heuristics (coalescing, copy limits,
//!   high-water marks), one named `Policy` with measured defaults;
//! - `write_state.rs`: the send queue and its flags.
//!
//! The driver holds the state behind one lock, taken by a caller to send
//! (and to look for its reply) and by the connection task to handle what
//! it read; nothing in here blocks, awaits or does I/O, so it is tested
//! with byte frames and given times.

pub(crate) mod policy;
pub(crate) mod requests;
pub(crate) mod write_state;

use std::task::Waker;

use floe_wire::protocol::ReplyBody;

use crate::error::Error;
pub(crate) use policy::Policy;
use requests::Requests;
pub(crate) use write_state::WriteState;

/// Everything a connection knows and decides, behind the driver's lock.
pub(crate) struct ConnectionState {
    /// The send queue and its flags.
    pub(crate) out: WriteState,
    /// Our twoway requests waiting for their replies.
    pub(crate) requests: Requests,
}

impl ConnectionState {
    pub(crate) fn new() -> Self {
        ConnectionState {
            out: WriteState::new(),
            requests: Requests::default(),
        }
    }

    /// Registers a twoway request: its id, or the error that closed the
    /// connection.
    pub(crate) fn register_request(&mut self) -> Result<i32, Error> {
        if let Some(e) = &self.out.error {
            return Err(e.clone());
        }
        Ok(self.requests.register())
    }

    /// Delivers the reply to request `id`; the caller's waker to wake once
    /// the lock is released. `Err` when nobody waits for it.
    pub(crate) fn complete_request(
        &mut self,
        id: i32,
        body: ReplyBody,
    ) -> Result<Option<Waker>, ()> {
        self.requests.complete(id, body)
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
}
