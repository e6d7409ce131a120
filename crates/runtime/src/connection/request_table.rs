//! [`RequestTable`]: the twoway requests a connection sent and waits to see
//! answered, keyed by request id (§2.1: ids from 1, never 0, wrapping).
//!
//! A std `Mutex` is enough: it is held for a hash-map insert or remove, never
//! across an `.await`, by the caller (register/abandon) and the connection
//! task (complete).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;

use floe_wire::protocol::ReplyBody;
use tokio::sync::oneshot;

use crate::error::Error;

/// Where a reply goes: the waiting caller.
pub(crate) type ReplySender = oneshot::Sender<Result<ReplyBody, Error>>;
/// What the caller awaits.
pub(crate) type ReplyReceiver = oneshot::Receiver<Result<ReplyBody, Error>>;

/// Request ids are small distinct integers: hash them as themselves.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) | *b as u64;
        }
    }
    fn write_i32(&mut self, i: i32) {
        self.0 = i as u32 as u64;
    }
}

struct Table {
    next_id: i32,
    pending: HashMap<i32, ReplySender, BuildHasherDefault<IdHasher>>,
    /// Set once the connection is closed: new requests fail with it.
    closed: Option<Error>,
}

/// Pending twoway requests of one connection.
pub(crate) struct RequestTable {
    table: Mutex<Table>,
}

impl RequestTable {
    pub(crate) fn new() -> Self {
        RequestTable {
            table: Mutex::new(Table {
                next_id: 1,
                pending: HashMap::default(),
                closed: None,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        // A panic while holding this lock leaves the map consistent (every
        // operation is a single insert/remove), so poisoning is ignored.
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Allocates the next request id and a slot for its reply.
    pub(crate) fn register(&self) -> Result<(i32, ReplyReceiver), Error> {
        let (tx, rx) = oneshot::channel();
        let mut t = self.lock();
        if let Some(e) = &t.closed {
            return Err(e.clone());
        }
        let mut id = t.next_id;
        // Skip ids still in use after a wrap-around (practically never).
        while t.pending.contains_key(&id) {
            id = if id == i32::MAX { 1 } else { id + 1 };
        }
        t.next_id = if id == i32::MAX { 1 } else { id + 1 };
        t.pending.insert(id, tx);
        Ok((id, rx))
    }

    /// Delivers a reply; false if nobody waits for this id (abandoned, or a
    /// reply the peer made up).
    pub(crate) fn complete(&self, id: i32, body: ReplyBody) -> bool {
        let tx = self.lock().pending.remove(&id);
        match tx {
            Some(tx) => {
                let _ = tx.send(Ok(body));
                true
            }
            None => false,
        }
    }

    /// Forgets a request whose caller gave up (dropped future, timeout).
    pub(crate) fn abandon(&self, id: i32) {
        self.lock().pending.remove(&id);
    }

    /// Fails every pending request with `err` and refuses new ones.
    pub(crate) fn close(&self, err: Error) {
        let pending = {
            let mut t = self.lock();
            if t.closed.is_none() {
                t.closed = Some(err.clone());
            }
            std::mem::take(&mut t.pending)
        };
        for (_, tx) in pending {
            let _ = tx.send(Err(err.clone()));
        }
    }

    /// Number of requests waiting for a reply.
    pub(crate) fn len(&self) -> usize {
        self.lock().pending.len()
    }
}

/// Removes its request from the table when dropped: a caller that drops the
/// invocation future (or times out) abandons the request cleanly; a late
/// reply is then ignored.
pub(crate) struct PendingGuard<'a> {
    pub(crate) table: &'a RequestTable,
    pub(crate) id: i32,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.table.abandon(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_wire::{Encapsulation, ENCODING_1_1};

    #[test]
    fn ids_start_at_one_and_complete() {
        let t = RequestTable::new();
        let (a, mut ra) = t.register().unwrap();
        let (b, _rb) = t.register().unwrap();
        assert_eq!((a, b), (1, 2));
        assert!(t.complete(1, ReplyBody::Ok(Encapsulation::empty(ENCODING_1_1))));
        assert!(ra.try_recv().unwrap().is_ok());
        assert!(!t.complete(1, ReplyBody::UnknownException(String::new())));
        t.abandon(2);
        assert_eq!(t.len(), 0);
        t.close(Error::CloseConnection);
        assert!(t.register().is_err());
    }

    #[test]
    fn ids_wrap_to_one() {
        let t = RequestTable::new();
        t.lock().next_id = i32::MAX;
        let (a, _ra) = t.register().unwrap();
        let (b, _rb) = t.register().unwrap();
        assert_eq!((a, b), (i32::MAX, 1));
    }
}
