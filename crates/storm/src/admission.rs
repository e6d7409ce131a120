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
//!   on floe-storm's Publish adapter), so the publisher's socket fills and
//!   its sends block, as with any slow peer: TCP back-pressure, with no
//!   event lost and the broker's memory bounded by the budgets plus a
//!   constant per publisher connection (32 events).
//! - Waiting publishes are admitted **in arrival order** (a FIFO turn per
//!   topic), so each publisher's events keep their order, twoway or oneway,
//!   and a later publish never overtakes a waiting one.
//! - A subscriber that makes no progress for `IceStorm.Send.Timeout` while
//!   it is congested is **removed** (logged, counted in the topic's
//!   `removed`, deleted from the store, gone from `getSubscribers`), and the
//!   publishers and the healthy subscribers go on. A negative
//!   `Send.Timeout` waits for ever. A slow subscriber that does make
//!   progress is never removed: the topic runs at its pace.
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
//! - The fast path costs one uncontended `try_lock` and a budget check per
//!   subscriber: while no queue is over its budget, publishing never waits
//!   and never allocates a future.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::{Mutex, OwnedMutexGuard};

use crate::subscriber::{RemovalReason, SubscriberState};

/// A publish that has to wait for room (see the module docs).
pub type AdmissionFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The FIFO turn of one topic's publishes.
#[derive(Debug, Default)]
pub struct Admission {
    turn: Arc<Mutex<()>>,
}

/// The turn, held while a publish checks the budgets and fans out.
pub type Turn = OwnedMutexGuard<()>;

impl Admission {
    /// The turn at once, if nobody holds it and nobody is waiting for it.
    pub fn try_turn(&self) -> Option<Turn> {
        self.turn.clone().try_lock_owned().ok()
    }

    /// The turn, after every earlier publish.
    pub async fn turn(&self) -> Turn {
        self.turn.clone().lock_owned().await
    }
}

/// Waits until `subscriber` is no longer congested (drained below its
/// low-water mark, offline or removed). If it delivers nothing for its
/// `Send.Timeout` meanwhile, it is removed and the wait ends. Progress is
/// looked at every quarter of the timeout, so a subscriber is removed
/// between one and one and a quarter timeouts after its last delivery.
pub async fn room_in(subscriber: &SubscriberState) {
    let mut progress = subscriber.delivered();
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
        let now = subscriber.delivered();
        if now != progress {
            progress = now;
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
    async fn the_turn_is_first_come_first_served() {
        let a = Arc::new(Admission::default());
        let held = a.try_turn().expect("free");
        assert!(a.try_turn().is_none());
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for i in 0..3 {
            let (a, order) = (a.clone(), order.clone());
            waiters.push(tokio::spawn(async move {
                let _t = a.turn().await;
                order.lock().unwrap().push(i);
            }));
            tokio::task::yield_now().await;
        }
        drop(held);
        // A newcomer never jumps the queue.
        assert!(a.try_turn().is_none());
        for w in waiters {
            w.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [0, 1, 2]);
        assert!(a.try_turn().is_some());
    }
}
