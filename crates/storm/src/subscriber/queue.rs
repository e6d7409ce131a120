//! [`EventQueue`]: one subscriber's queue of events waiting for its
//! delivery task, with its byte budget and IceStorm's event-count limit.
//!
//! - **Byte budget** (`floe.Storm.Send.QueueBytesMax`): never a drop point.
//!   A queue at or over its budget is *congested*: the topic admits no new
//!   event for it until it drains below the low-water mark (three quarters
//!   of the budget), so publishers wait instead of events being lost (see
//!   [`crate::admission`]). [`EventQueue::room`] wakes the waiting publisher.
//!   A oneway subscriber's events mostly bypass the queue (the direct path
//!   of [`crate::subscriber`]) and wait in its connection's write queue
//!   instead; the budget covers that too: when the connection holds a
//!   budget's worth, the queue is marked *backlogged*
//!   ([`EventQueue::set_backlogged`]) and is congested as if full until a
//!   delivery from the queue finishes, which happens once the connection
//!   has written all but [`floe::runtime::SEND_HIGH_WATER`] of it.
//! - **Event limit** (`IceStorm.Send.QueueSizeMax`, none by default) with
//!   IceStorm's policy (`IceStorm.Send.QueueSizeMaxPolicy`): an event that
//!   finds the queue holding the limit either makes the subscriber be
//!   removed (`RemoveSubscriber`, the default) or pushes the **oldest**
//!   queued event out (`DropEvents`), as IceStorm 3.7 does.
//!
//! The queue is a `VecDeque` under a mutex, shared by the publishers
//! (producers) and the delivery task (the one consumer); the byte count is
//! also kept in an atomic so that the admission check reads it without the
//! lock.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use crate::event::Event;

/// What happens when a subscriber's queue holds `IceStorm.Send.QueueSizeMax`
/// events and another one comes (`IceStorm.Send.QueueSizeMaxPolicy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OverflowPolicy {
    /// The subscriber is removed (IceStorm's default).
    #[default]
    RemoveSubscriber,
    /// The oldest queued event is dropped to make room; each drop is counted.
    DropEvents,
}

impl OverflowPolicy {
    /// Parses IceStorm's value (`RemoveSubscriber` or `DropEvents`).
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim() {
            "RemoveSubscriber" => Some(OverflowPolicy::RemoveSubscriber),
            "DropEvents" => Some(OverflowPolicy::DropEvents),
            _ => None,
        }
    }
}

/// The limits of one queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueLimits {
    /// `IceStorm.Send.QueueSizeMax`: events held at most (`None`: no limit).
    pub max_events: Option<usize>,
    /// What to do at `max_events`.
    pub policy: OverflowPolicy,
    /// The byte budget (at least 1): payload bytes at which the queue is
    /// congested.
    pub budget: usize,
}

/// The outcome of [`EventQueue::push`].
#[derive(Debug)]
pub enum Pushed {
    /// Queued.
    Queued,
    /// Queued after the oldest event was dropped (`DropEvents`); the dropped
    /// event is returned so the caller can account for it.
    DroppedOldest(Arc<Event>),
    /// Not queued: the queue holds `max_events` and the policy is
    /// `RemoveSubscriber`.
    LimitReached,
}

#[derive(Default)]
struct Inner {
    events: VecDeque<Arc<Event>>,
}

/// One subscriber's event queue (see the module docs).
pub struct EventQueue {
    inner: Mutex<Inner>,
    /// Payload bytes queued (written under the lock, read without it).
    bytes: AtomicUsize,
    /// The subscriber's connection holds a budget's worth of events sent
    /// around the queue (see the module docs).
    backlogged: AtomicBool,
    /// Wakes the delivery task when an event is queued.
    ready: Notify,
    /// Wakes publishers waiting for the queue to drain below low water.
    room: Notify,
    limits: QueueLimits,
}

impl std::fmt::Debug for EventQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventQueue")
            .field("len", &self.len())
            .field("bytes", &self.bytes())
            .field("limits", &self.limits)
            .finish()
    }
}

impl EventQueue {
    /// An empty queue.
    pub fn new(limits: QueueLimits) -> EventQueue {
        EventQueue {
            inner: Mutex::new(Inner::default()),
            bytes: AtomicUsize::new(0),
            backlogged: AtomicBool::new(false),
            ready: Notify::new(),
            room: Notify::new(),
            limits: QueueLimits {
                budget: limits.budget.max(1),
                ..limits
            },
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Poisoning only follows a panic elsewhere; the deque stays valid.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The limits.
    pub fn limits(&self) -> &QueueLimits {
        &self.limits
    }

    /// Events queued.
    pub fn len(&self) -> usize {
        self.lock().events.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Payload bytes queued.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    /// Whether the queue is at or over its byte budget, or backlogged: the
    /// topic admits no new event for this subscriber until it drains.
    pub fn is_congested(&self) -> bool {
        self.bytes() >= self.limits.budget || self.backlogged.load(Ordering::Acquire)
    }

    /// Marks the queue congested because the subscriber's connection holds
    /// its budget of events sent around the queue; the event that found it
    /// so is queued next, and [`EventQueue::clear_backlog`] ends it.
    pub fn set_backlogged(&self) {
        self.backlogged.store(true, Ordering::Release);
    }

    /// Ends a backlog (a delivery from the queue finished, or the
    /// subscriber went offline) and wakes the publishers waiting for room
    /// if there was one.
    pub fn clear_backlog(&self) {
        if self.backlogged.load(Ordering::Acquire) && self.backlogged.swap(false, Ordering::AcqRel)
        {
            self.room.notify_waiters();
        }
    }

    fn low_water(&self) -> usize {
        self.limits.budget - self.limits.budget / 4
    }

    /// Queues `event` at the back, applying the event limit. Never waits and
    /// never refuses for bytes: the byte budget is enforced before, by
    /// admission.
    pub fn push(&self, event: Arc<Event>) -> Pushed {
        let size = event.size();
        let outcome = {
            let mut inner = self.lock();
            let mut dropped = None;
            if self
                .limits
                .max_events
                .is_some_and(|max| inner.events.len() >= max)
            {
                match self.limits.policy {
                    OverflowPolicy::RemoveSubscriber => return Pushed::LimitReached,
                    OverflowPolicy::DropEvents => {
                        dropped = inner.events.pop_front();
                        if let Some(d) = &dropped {
                            self.bytes.fetch_sub(d.size(), Ordering::AcqRel);
                        }
                    }
                }
            }
            inner.events.push_back(event);
            self.bytes.fetch_add(size, Ordering::AcqRel);
            dropped.map_or(Pushed::Queued, Pushed::DroppedOldest)
        };
        self.ready.notify_one();
        outcome
    }

    /// Takes the oldest event, if any.
    pub fn try_pop(&self) -> Option<Arc<Event>> {
        let event = self.lock().events.pop_front()?;
        self.taken(event.size());
        Some(event)
    }

    /// Takes the oldest event, waiting for one. Cancel-safe: an event is
    /// only taken by the call that returns it.
    pub async fn pop(&self) -> Arc<Event> {
        loop {
            if let Some(e) = self.try_pop() {
                return e;
            }
            // `notify_one` stores a permit when the task is not waiting, so
            // an event queued between `try_pop` and here is not missed.
            self.ready.notified().await;
        }
    }

    /// Takes every queued event (a batch flush).
    pub fn take_all(&self) -> Vec<Arc<Event>> {
        let events: Vec<Arc<Event>> = self.lock().events.drain(..).collect();
        let bytes: usize = events.iter().map(|e| e.size()).sum();
        if bytes > 0 {
            self.taken(bytes);
        }
        events
    }

    /// Discards everything queued and ends a backlog; returns how many
    /// events that was.
    pub fn clear(&self) -> usize {
        let n = self.take_all().len();
        self.clear_backlog();
        n
    }

    /// Accounts for `size` bytes leaving the queue; wakes waiting publishers
    /// when that crosses the low-water mark.
    fn taken(&self, size: usize) {
        let before = self.bytes.fetch_sub(size, Ordering::AcqRel);
        let low = self.low_water();
        if before >= low && before - size < low {
            self.room.notify_waiters();
        }
    }

    /// Wakes publishers waiting for room now (the subscriber went offline
    /// or was removed: nothing will be waited for).
    pub fn wake_waiters(&self) {
        self.room.notify_waiters();
    }

    /// The notification publishers wait on (see [`crate::admission`]).
    pub fn room(&self) -> &Notify {
        &self.room
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::OperationMode;

    fn ev(op: &str, size: usize) -> Arc<Event> {
        Event::new(
            op,
            OperationMode::Normal,
            Default::default(),
            floe::wire::Encapsulation {
                encoding: floe::wire::ENCODING_1_1,
                data: bytes::Bytes::from(vec![0u8; size]),
            },
        )
    }

    fn queue(max_events: Option<usize>, policy: OverflowPolicy, budget: usize) -> EventQueue {
        EventQueue::new(QueueLimits {
            max_events,
            policy,
            budget,
        })
    }

    #[test]
    fn bytes_are_counted_and_congestion_follows_the_budget() {
        let q = queue(None, OverflowPolicy::RemoveSubscriber, 1000);
        let size = ev("e0", 400).size();
        for i in 0..3 {
            assert!(matches!(q.push(ev(&format!("e{i}"), 400)), Pushed::Queued));
        }
        assert_eq!(q.bytes(), 3 * size);
        assert!(q.is_congested());
        assert_eq!(q.try_pop().unwrap().operation, "e0");
        assert_eq!(q.bytes(), 2 * size);
        assert!(!q.is_congested());
        assert_eq!(q.clear(), 2);
        assert_eq!(q.bytes(), 0);
    }

    #[test]
    fn no_event_limit_by_default_and_never_a_drop_for_bytes() {
        let q = queue(None, OverflowPolicy::RemoveSubscriber, 10);
        for i in 0..10_000 {
            assert!(matches!(q.push(ev(&format!("e{i}"), 100)), Pushed::Queued));
        }
        assert_eq!(q.len(), 10_000);
    }

    #[test]
    fn remove_subscriber_policy_refuses_at_the_limit() {
        let q = queue(Some(2), OverflowPolicy::RemoveSubscriber, 1 << 20);
        assert!(matches!(q.push(ev("a", 1)), Pushed::Queued));
        assert!(matches!(q.push(ev("b", 1)), Pushed::Queued));
        assert!(matches!(q.push(ev("c", 1)), Pushed::LimitReached));
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn drop_events_policy_drops_the_oldest() {
        let q = queue(Some(2), OverflowPolicy::DropEvents, 1 << 20);
        q.push(ev("a", 1));
        q.push(ev("b", 1));
        match q.push(ev("c", 1)) {
            Pushed::DroppedOldest(d) => assert_eq!(d.operation, "a"),
            other => panic!("{other:?}"),
        }
        let ops: Vec<String> = q.take_all().iter().map(|e| e.operation.clone()).collect();
        assert_eq!(ops, ["b", "c"]);
        assert_eq!(q.bytes(), 0);
    }

    #[tokio::test]
    async fn pop_waits_for_an_event() {
        let q = Arc::new(queue(None, OverflowPolicy::RemoveSubscriber, 1 << 20));
        let q2 = q.clone();
        let t = tokio::spawn(async move { q2.pop().await.operation.clone() });
        tokio::task::yield_now().await;
        q.push(ev("x", 1));
        assert_eq!(t.await.unwrap(), "x");
    }

    #[tokio::test]
    async fn draining_below_low_water_wakes_waiters() {
        let q = queue(None, OverflowPolicy::RemoveSubscriber, 4000);
        for i in 0..8 {
            q.push(ev(&format!("e{i}"), 990));
        }
        assert!(q.is_congested());
        let notified = q.room().notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        // Above low water (3/4 of the budget): no wake-up yet.
        for _ in 0..5 {
            q.try_pop();
        }
        assert!(futures_poll(notified.as_mut()).is_pending());
        q.try_pop();
        assert!(futures_poll(notified.as_mut()).is_ready());
    }

    fn futures_poll<F: std::future::Future>(f: std::pin::Pin<&mut F>) -> std::task::Poll<()> {
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        f.poll(&mut cx).map(|_| ())
    }
}
