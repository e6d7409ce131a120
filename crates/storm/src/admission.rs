//! [`Admission`]: how a topic holds publishers back instead of dropping
//! events (back-pressure).
//!
//! Every subscriber (and link) of a topic has a byte budget
//! (`floe.Storm.Send.QueueBytesMax`, 64 MiB by default). An event is
//! admitted into the topic only while none of the subscribers it goes to is
//! at or over its budget; then it is offered to all of them at once, so
//! every subscriber sees the topic's events in the same order. While one is
//! congested, the publish **waits**:
//!
//! - The publisher's dispatch stays pending. floe-runtime stops reading a
//!   connection that has `<adapter>.MaxDispatches` dispatches pending (32
//!   on floe-storm's Publish adapter), or pending dispatches holding
//!   `<adapter>.MaxDispatchBytes` of events (1 MiB on floe-storm), so the
//!   publisher's socket fills and its sends block, as with any slow peer:
//!   TCP back-pressure, with no event lost and the broker's memory bounded
//!   by the budgets plus a constant per publisher connection (32 events or
//!   1 MiB, and the frames of one read beyond that).
//! - Waiting publishes are admitted **in arrival order** (a FIFO turn per
//!   topic), so each publisher's events keep their order, twoway or oneway,
//!   and a later publish never overtakes a waiting one.
//! - A subscriber that makes no progress for `IceStorm.Send.Timeout` while
//!   it is congested is **removed** (logged, counted in the topic's
//!   `removed`, deleted from the store, gone from `getSubscribers`), and the
//!   publishers and the healthy subscribers go on. A negative
//!   `Send.Timeout` waits for ever. A slow subscriber that does make
//!   progress is never removed: the topic runs at its pace. Progress is an
//!   event delivered, or fewer bytes waiting in the subscriber's connection
//!   (a oneway subscriber drains a budget's worth of them while no event
//!   is delivered, which may take longer than the timeout).
//!
//! Design notes:
//! - Back-pressure is per topic, not per subscriber: the alternative, a
//!   publisher that goes on while one subscriber's events pile up, is
//!   exactly the unbounded queue (IceStorm) or the silent loss this replaces.
//!   A subscriber that cannot keep up for good should be given its own
//!   topic, a `DropEvents` limit, or a `Send.Timeout` that removes it.
//! - Links are subscribers here: a link whose remote broker is slow holds
//!   the topic's publishers back the same way; a link that fails goes
//!   offline (events for it are discarded, counted) as in IceStorm, and
//!   offline subscribers are never waited for. Events that arrive over a
//!   link (`forward`) wait like any publish, which holds back the upstream
//!   broker's link delivery in turn.
//! - `reliability=ordered` subscribers are delivered one request at a
//!   time; their queue fills sooner and they hold the topic to their pace
//!   like any other subscriber.
//! - The fast path costs one uncontended `try_lock` of a std mutex, an
//!   atomic load and a budget check per subscriber: while no queue is over
//!   its budget, publishing never waits and never allocates a future.
//! - One fan-out runs at a time per topic (the std mutex), fast path or
//!   not, so every subscriber sees the topic's events in the same order
//!   on a multi-thread runtime too.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, MutexGuard, TryLockError};

use tokio::sync::{Mutex, OwnedMutexGuard};

use crate::subscriber::{RemovalReason, SubscriberState};

/// The order of one topic's publishes: the fan-out lock, and the FIFO turn
/// of the publishes that wait.
#[derive(Debug, Default)]
pub struct Admission {
    /// Held while an admitted event is offered to the subscribers.
    fan_out: std::sync::Mutex<()>,
    /// The FIFO turn of waiting publishes.
    turn: Arc<Mutex<()>>,
    /// Publishes that took the waiting path and were not offered yet
    /// (their [`Waiting`] tickets): while there are any, no publish takes
    /// the fast path, so none overtakes them.
    waiting: Arc<AtomicUsize>,
}

/// The turn, held while a waiting publish checks the budgets and fans out.
pub type Turn = OwnedMutexGuard<()>;

/// The fan-out lock (see [`Admission`]).
pub type FanOut<'a> = MutexGuard<'a, ()>;

/// A publish on the waiting path, counted until dropped.
#[derive(Debug)]
pub struct Waiting(Arc<AtomicUsize>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Admission {
    /// The fan-out lock at once, if no publish is waiting and no other
    /// fan-out runs (the fast path).
    pub fn try_now(&self) -> Option<FanOut<'_>> {
        if self.waiting.load(Ordering::Acquire) != 0 {
            return None;
        }
        match self.fan_out.try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Puts a publish on the waiting path: from now until the ticket is
    /// dropped, later publishes wait behind it.
    pub fn wait(&self) -> Waiting {
        self.waiting.fetch_add(1, Ordering::AcqRel);
        Waiting(self.waiting.clone())
    }

    /// The turn, after every earlier waiting publish.
    pub async fn turn(&self) -> Turn {
        self.turn.clone().lock_owned().await
    }

    /// The fan-out lock, once the fan-out running on another thread ends.
    pub fn fan_out(&self) -> FanOut<'_> {
        self.fan_out.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Waits until `subscriber` is no longer congested (drained below its
/// low-water mark, offline or removed). If it takes nothing for its
/// `Send.Timeout` meanwhile (no event delivered, and its connection writes
/// nothing of its backlog), it is removed and the wait ends. Progress is
/// looked at every quarter of the timeout, so a subscriber is removed
/// between one and one and a quarter timeouts after it last took anything.
pub async fn room_in(subscriber: &SubscriberState) {
    let mut progress = subscriber.delivered();
    let mut backlog = subscriber.backlog();
    let mut last_progress = tokio::time::Instant::now();
    loop {
        let notified = subscriber.queue().room().notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if !subscriber.is_congested() {
            return;
        }
        let Some(timeout) = subscriber.send_timeout() else {
            notified.await;
            continue;
        };
        let step = (timeout / 4).max(std::time::Duration::from_millis(1));
        if tokio::time::timeout(step, notified).await.is_ok() {
            continue;
        }
        let (now, left) = (subscriber.delivered(), subscriber.backlog());
        let moved = now != progress || left < backlog;
        (progress, backlog) = (now, left);
        if moved {
            last_progress = tokio::time::Instant::now();
        } else if last_progress.elapsed() >= timeout && subscriber.is_congested() {
            subscriber.expel(RemovalReason::Stalled(timeout));
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waiting_publishes_go_first_come_first_served() {
        let a = Arc::new(Admission::default());
        assert!(a.try_now().is_some(), "free");
        let first = a.wait();
        // A waiting publish closes the fast path.
        assert!(a.try_now().is_none());
        let held = a.turn().await;
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for i in 0..3 {
            let (a, order) = (a.clone(), order.clone());
            let ticket = a.wait();
            waiters.push(tokio::spawn(async move {
                let _ticket = ticket;
                let _t = a.turn().await;
                let _f = a.fan_out();
                order.lock().unwrap().push(i);
            }));
            tokio::task::yield_now().await;
        }
        drop(held);
        drop(first);
        // A newcomer never jumps the queue.
        assert!(a.try_now().is_none());
        for w in waiters {
            w.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [0, 1, 2]);
        assert!(a.try_now().is_some());
    }
}
