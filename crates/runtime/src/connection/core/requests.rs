//! [`Requests`]: the twoway requests a connection sent and waits to see
//! answered, keyed by request id (§2.1: ids from 1, never 0, wrapping),
//! each with the slot its reply lands in.
//!
//! A reply is stored in its request's slot and the caller's waker is
//! handed back to be woken once the connection's lock is released: no
//! channel and no allocation per call. The caller's future takes the
//! reply out of the slot ([`Requests::poll_reply`]); a caller that gives
//! up removes its slot ([`Requests::abandon`]), and a late reply is then
//! ignored.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::task::{Context, Poll, Waker};

use floe_wire::protocol::ReplyBody;

use crate::error::Error;

/// What a caller gets: the reply's body, or why it never came.
pub(crate) type ReplyResult = Result<ReplyBody, Error>;

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

/// Where one request's reply goes.
#[derive(Debug)]
enum Slot {
    /// No reply yet; the waker of the caller that last looked.
    Waiting(Option<Waker>),
    /// The reply (or the connection's end), not yet taken.
    Done(ReplyResult),
}

/// The pending twoway requests of one connection.
#[derive(Debug)]
pub(crate) struct Requests {
    next_id: i32,
    pending: Pending,
    /// Requests whose slot is still `Waiting`.
    waiting: usize,
}

impl Default for Requests {
    fn default() -> Self {
        Requests {
            next_id: 1,
            pending: Pending::default(),
            waiting: 0,
        }
    }
}

/// The slots by request id: the first one inline, the others in a map. A
/// connection with one request at a time (the usual twoway caller) never
/// hashes.
#[derive(Debug, Default)]
struct Pending {
    first: Option<(i32, Slot)>,
    rest: HashMap<i32, Slot, BuildHasherDefault<IdHasher>>,
}

impl Pending {
    fn contains_key(&self, id: &i32) -> bool {
        matches!(&self.first, Some((first, _)) if first == id) || self.rest.contains_key(id)
    }

    fn insert(&mut self, id: i32, slot: Slot) {
        match &self.first {
            None => self.first = Some((id, slot)),
            Some(_) => {
                self.rest.insert(id, slot);
            }
        }
    }

    fn get_mut(&mut self, id: &i32) -> Option<&mut Slot> {
        match &mut self.first {
            Some((first, slot)) if first == id => Some(slot),
            _ => self.rest.get_mut(id),
        }
    }

    fn remove(&mut self, id: &i32) -> Option<Slot> {
        match &self.first {
            Some((first, _)) if first == id => self.first.take().map(|(_, slot)| slot),
            _ => self.rest.remove(id),
        }
    }

    fn values_mut(&mut self) -> impl Iterator<Item = &mut Slot> {
        self.first
            .iter_mut()
            .map(|(_, slot)| slot)
            .chain(self.rest.values_mut())
    }
}

impl Requests {
    /// Allocates the next request id and an empty slot for its reply.
    pub(crate) fn register(&mut self) -> i32 {
        let mut id = self.next_id;
        // Skip ids still in use after a wrap-around (practically never).
        while self.pending.contains_key(&id) {
            id = next(id);
        }
        self.next_id = next(id);
        self.pending.insert(id, Slot::Waiting(None));
        self.waiting += 1;
        id
    }

    /// Stores the reply to `id`; the caller's waker to wake, if it waits.
    /// `Err` when nobody waits for this id (abandoned, answered already, or
    /// made up by the peer).
    pub(crate) fn complete(&mut self, id: i32, body: ReplyBody) -> Result<Option<Waker>, ()> {
        match self.pending.get_mut(&id) {
            Some(slot @ Slot::Waiting(_)) => {
                let Slot::Waiting(waker) = std::mem::replace(slot, Slot::Done(Ok(body))) else {
                    unreachable!("matched Waiting")
                };
                self.waiting -= 1;
                Ok(waker)
            }
            _ => Err(()),
        }
    }

    /// Frees the slot of `id` for its caller, which read the reply itself
    /// and keeps it: `false` when nobody waits for `id` (answered already,
    /// or abandoned).
    pub(crate) fn answer_caller(&mut self, id: i32) -> bool {
        if !matches!(self.pending.get_mut(&id), Some(Slot::Waiting(_))) {
            return false;
        }
        self.pending.remove(&id);
        self.waiting -= 1;
        true
    }

    /// The reply to `id` if it came (the slot is then freed), else
    /// `Pending` with `cx`'s waker kept for [`Requests::complete`].
    pub(crate) fn poll_reply(&mut self, id: i32, cx: &mut Context<'_>) -> Poll<ReplyResult> {
        match self.pending.get_mut(&id) {
            Some(Slot::Waiting(waker)) => {
                match waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => *waker = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
            Some(Slot::Done(_)) => match self.pending.remove(&id) {
                Some(Slot::Done(result)) => Poll::Ready(result),
                _ => unreachable!("matched Done"),
            },
            // Taken already, or never registered: the caller polled after
            // completion, which a future does not do.
            None => Poll::Ready(Err(Error::ConnectionLost(
                "no reply slot for this request".into(),
            ))),
        }
    }

    /// Forgets a request whose caller gave up (dropped future, timeout).
    pub(crate) fn abandon(&mut self, id: i32) {
        if let Some(Slot::Waiting(_)) = self.pending.remove(&id) {
            self.waiting -= 1;
        }
    }

    /// Fails every waiting request with `err`; the wakers to wake.
    pub(crate) fn fail_all(&mut self, err: &Error) -> Vec<Waker> {
        let mut wakers = Vec::new();
        for slot in self.pending.values_mut() {
            if let Slot::Waiting(waker) = slot {
                wakers.extend(waker.take());
                *slot = Slot::Done(Err(err.clone()));
            }
        }
        self.waiting = 0;
        wakers
    }

    /// Requests still waiting for a reply.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting
    }
}

fn next(id: i32) -> i32 {
    if id == i32::MAX {
        1
    } else {
        id + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_wire::{Encapsulation, ENCODING_1_1};

    fn ok() -> ReplyBody {
        ReplyBody::Ok(Encapsulation::empty(ENCODING_1_1))
    }

    #[test]
    fn ids_start_at_one_and_replies_land_in_their_slot() {
        let mut r = Requests::default();
        let (a, b) = (r.register(), r.register());
        assert_eq!((a, b), (1, 2));
        assert_eq!(r.waiting(), 2);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(r.poll_reply(a, &mut cx).is_pending());
        assert!(
            r.complete(a, ok()).unwrap().is_some(),
            "the waiting caller's waker"
        );
        assert!(r.complete(a, ok()).is_err(), "a second reply");
        assert_eq!(r.waiting(), 1);
        assert!(matches!(r.poll_reply(a, &mut cx), Poll::Ready(Ok(_))));
        r.abandon(b);
        assert_eq!(r.waiting(), 0);
        let c = r.register();
        assert!(r.answer_caller(c), "the caller took its own reply");
        assert!(!r.answer_caller(c), "a second reply");
        assert_eq!(r.waiting(), 0);
        assert!(r.complete(b, ok()).is_err(), "a reply nobody waits for");
    }

    #[test]
    fn failing_all_answers_every_waiting_request() {
        let mut r = Requests::default();
        let a = r.register();
        let b = r.register();
        r.complete(b, ok()).unwrap();
        let mut cx = Context::from_waker(Waker::noop());
        assert!(r.poll_reply(a, &mut cx).is_pending());
        assert_eq!(r.fail_all(&Error::CloseConnection).len(), 1);
        assert!(matches!(
            r.poll_reply(a, &mut cx),
            Poll::Ready(Err(Error::CloseConnection))
        ));
        assert!(
            matches!(r.poll_reply(b, &mut cx), Poll::Ready(Ok(_))),
            "answered before"
        );
    }

    #[test]
    fn slots_inline_and_in_the_map_answer_alike() {
        let mut r = Requests::default();
        let mut cx = Context::from_waker(Waker::noop());
        let ids: Vec<i32> = (0..4).map(|_| r.register()).collect();
        // Answered out of order, the inline slot among the last.
        for &id in [ids[2], ids[0], ids[3]].iter() {
            assert!(r.poll_reply(id, &mut cx).is_pending());
            r.complete(id, ok()).unwrap();
            assert!(matches!(r.poll_reply(id, &mut cx), Poll::Ready(Ok(_))));
        }
        assert!(r.answer_caller(ids[1]));
        assert_eq!(r.waiting(), 0);
        // The inline slot is free again; the next id is not one in use.
        let (a, b) = (r.register(), r.register());
        assert_eq!((a, b), (5, 6));
        r.abandon(a);
        assert!(r.complete(a, ok()).is_err());
        assert_eq!(r.fail_all(&Error::CloseConnection).len(), 0);
        assert!(matches!(
            r.poll_reply(b, &mut cx),
            Poll::Ready(Err(Error::CloseConnection))
        ));
    }

    #[test]
    fn a_wrapped_id_skips_the_inline_slot_in_use() {
        let mut r = Requests {
            next_id: i32::MAX,
            ..Requests::default()
        };
        let held = r.register();
        assert_eq!(held, i32::MAX);
        r.next_id = i32::MAX;
        assert_eq!(r.register(), 1, "i32::MAX is still in use");
    }

    #[test]
    fn ids_wrap_to_one() {
        let mut r = Requests {
            next_id: i32::MAX,
            ..Requests::default()
        };
        assert_eq!((r.register(), r.register()), (i32::MAX, 1));
    }
}
