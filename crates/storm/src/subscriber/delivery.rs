//! The delivery task of one subscriber: takes events from its
//! [`EventQueue`](super::EventQueue), hands them to the sink in the
//! subscriber's [`DeliveryStyle`], and runs the failure state machine of
//! the [module docs](super).

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use tokio::time::Instant;

use super::{
    identity_to_string, DeliveryConfig, DeliveryStyle, RemovalHook, RemovalReason, SubscriberState,
    TopicCounters, LINK_BATCH_BYTES, LINK_BATCH_MAX, ONEWAY_BATCH_MAX,
};
use crate::event::Event;
use crate::qos::Qos;
use crate::sink::{DeliveryError, DeliveryFuture, SubscriberSink};

/// Futures of deliveries in flight, polled oldest first so that their
/// first polls (which put requests on the wire) follow event order. The
/// events they carry are counted in the subscriber's `outstanding`.
struct InFlight<'a> {
    futures: VecDeque<(usize, DeliveryFuture)>,
    outstanding: &'a AtomicUsize,
}

impl<'a> InFlight<'a> {
    fn new(outstanding: &'a AtomicUsize) -> Self {
        InFlight {
            futures: VecDeque::new(),
            outstanding,
        }
    }

    fn len(&self) -> usize {
        self.futures.len()
    }

    fn is_empty(&self) -> bool {
        self.futures.is_empty()
    }

    /// Adds a delivery of `count` events (first polled by the next `next`).
    fn push(&mut self, count: usize, fut: DeliveryFuture) {
        self.outstanding.fetch_add(count, Ordering::Relaxed);
        self.futures.push_back((count, fut));
    }

    /// Forgets every delivery; returns how many events they carried.
    fn clear(&mut self) -> usize {
        let n = self.futures.iter().map(|(n, _)| n).sum();
        self.futures.clear();
        self.outstanding.fetch_sub(n, Ordering::Relaxed);
        n
    }

    /// The next delivery to finish: its event count and result.
    async fn next(&mut self) -> (usize, Result<(), DeliveryError>) {
        let outstanding = self.outstanding;
        poll_fn(|cx| {
            for i in 0..self.futures.len() {
                if let Poll::Ready(r) = self.futures[i].1.as_mut().poll(cx) {
                    // The index was just used, so the entry exists.
                    let (count, _) = self.futures.remove(i).expect("index in range");
                    outstanding.fetch_sub(count, Ordering::Relaxed);
                    return Poll::Ready((count, r));
                }
            }
            Poll::Pending
        })
        .await
    }
}

impl Drop for InFlight<'_> {
    /// The task stops (removed, or aborted with its subscriber): nothing
    /// is outstanding any more.
    fn drop(&mut self) {
        self.clear();
    }
}

/// The carried-over event if any, else the next one from the queue.
async fn next_event(carry: &mut Option<Arc<Event>>, state: &SubscriberState) -> Arc<Event> {
    match carry.take() {
        Some(e) => e,
        None => state.queue.pop().await,
    }
}

/// The task that owns a subscriber's deliveries.
pub(super) struct DeliveryTask {
    pub(super) style: DeliveryStyle,
    pub(super) qos: Qos,
    pub(super) sink: Arc<dyn SubscriberSink>,
    pub(super) config: DeliveryConfig,
    pub(super) counters: Arc<TopicCounters>,
    pub(super) state: Arc<SubscriberState>,
    pub(super) on_removed: RemovalHook,
}

impl DeliveryTask {
    pub(super) async fn run(self) {
        let max_out = self.style.max_outstanding();
        let mut in_flight = InFlight::new(&self.state.counters.outstanding);
        let mut failures: u32 = 0;
        let mut offline_until: Option<Instant> = None;
        // An event taken from the queue that did not fit into the last
        // link forward; it goes first next time.
        let mut carry: Option<Arc<Event>> = None;
        let flush_period = self.config.flush_interval.max(Duration::from_millis(100));
        let mut flush = tokio::time::interval(flush_period);
        flush.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // Batch subscribers leave their events in the queue (counted against
        // the budget) until the flush takes them.
        let is_batch = self.style == DeliveryStyle::Batch;
        // One timer for the whole life of the task, reset when going
        // offline (no timer churn per event).
        let offline_timer = tokio::time::sleep(Duration::ZERO);
        tokio::pin!(offline_timer);
        let state = &*self.state;

        loop {
            tokio::select! {
                biased;
                () = state.expelled.notified() => {
                    let reason = state
                        .expel
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .take();
                    if let Some(reason) = reason {
                        let lost = in_flight.clear() + usize::from(carry.take().is_some());
                        self.remove(lost, reason);
                        return;
                    }
                }
                (count, result) = in_flight.next(), if !in_flight.is_empty() => {
                    match result {
                        Ok(()) => {
                            failures = 0;
                            state.finished(count);
                            // Written, or the connection holds less than
                            // SEND_HIGH_WATER: the backlog is over.
                            state.queue.clear_backlog();
                            state.counters.delivered.fetch_add(count as u64, Ordering::Relaxed);
                            self.counters.events_out.fetch_add(count as u64, Ordering::Relaxed);
                        }
                        Err(e) => {
                            let lost = count + in_flight.clear() + usize::from(carry.take().is_some());
                            if let Some(reason) = self.removal_reason(&e, failures) {
                                self.remove(lost, reason);
                                return;
                            }
                            failures += 1;
                            tracing::info!(
                                subscriber = %identity_to_string(&state.id),
                                error = %e,
                                retry = failures,
                                retry_count = self.qos.retry_count,
                                offline_for = ?self.config.discard_interval,
                                "subscriber offline"
                            );
                            state.offline.store(true, Ordering::Release);
                            self.count_dropped(lost + state.queue.clear());
                            state.queue.wake_waiters();
                            if !state.counted_offline.swap(true, Ordering::Relaxed) {
                                self.counters.offline.fetch_add(1, Ordering::Relaxed);
                            }
                            let until = Instant::now() + self.config.discard_interval;
                            offline_until = Some(until);
                            offline_timer.as_mut().reset(until);
                        }
                    }
                }
                () = &mut offline_timer, if offline_until.is_some() => {
                    offline_until = None;
                    // Offers made while offline were discarded; anything
                    // queued in the race with going offline goes too.
                    self.count_dropped(state.queue.clear());
                    state.offline.store(false, Ordering::Release);
                    if state.counted_offline.swap(false, Ordering::Relaxed) {
                        self.counters.offline.fetch_sub(1, Ordering::Relaxed);
                    }
                    tracing::debug!(subscriber = %identity_to_string(&state.id), "subscriber online");
                }
                event = next_event(&mut carry, state), if !is_batch && offline_until.is_none() && in_flight.len() < max_out => {
                    match self.style {
                        DeliveryStyle::Link => {
                            let mut bytes = event.size();
                            let mut events = vec![event];
                            while events.len() < LINK_BATCH_MAX && bytes < LINK_BATCH_BYTES {
                                let Some(e) = state.queue.try_pop() else { break };
                                if bytes + e.size() > LINK_BATCH_BYTES {
                                    // Next call's first event.
                                    carry = Some(e);
                                    break;
                                }
                                bytes += e.size();
                                events.push(e);
                            }
                            let n = events.len();
                            in_flight.push(n, self.sink.deliver(events));
                        }
                        DeliveryStyle::Oneway => {
                            // Coalesce what is already queued.
                            let mut events = vec![event];
                            while events.len() < ONEWAY_BATCH_MAX {
                                let Some(e) = state.queue.try_pop() else { break };
                                events.push(e);
                            }
                            let n = events.len();
                            in_flight.push(n, self.sink.deliver(events));
                        }
                        _ => in_flight.push(1, self.sink.deliver(vec![event])),
                    }
                }
                _ = flush.tick(), if is_batch && offline_until.is_none() => {
                    if in_flight.is_empty() {
                        let events = state.queue.take_all();
                        if !events.is_empty() {
                            let n = events.len();
                            in_flight.push(n, self.sink.deliver(events));
                        }
                    }
                }
            }
        }
    }

    /// Removes the subscriber: `lost` events were taken from the queue and
    /// not delivered; the queue is discarded too. Logged and counted.
    fn remove(&self, lost: usize, reason: RemovalReason) {
        let state = &*self.state;
        state.removed.store(true, Ordering::Release);
        state.offline.store(true, Ordering::Release);
        let lost = lost + state.queue.clear();
        state.queue.wake_waiters();
        self.count_dropped(lost);
        tracing::warn!(
            subscriber = %identity_to_string(&state.id),
            reason = %reason,
            lost_events = lost,
            "subscriber removed"
        );
        self.counters.removed.fetch_add(1, Ordering::Relaxed);
        (self.on_removed)(&state.id, reason);
    }

    /// Counts `n` events dropped (and finished).
    fn count_dropped(&self, n: usize) {
        self.state.finished(n);
        if n > 0 {
            self.state
                .counters
                .dropped
                .fetch_add(n as u64, Ordering::Relaxed);
            self.counters.dropped.fetch_add(n as u64, Ordering::Relaxed);
        }
    }

    fn removal_reason(&self, e: &DeliveryError, failures: u32) -> Option<RemovalReason> {
        match e {
            DeliveryError::ObjectNotExist => Some(RemovalReason::ObjectNotExist),
            DeliveryError::Failed(msg) if !self.qos.may_retry(failures) => {
                Some(RemovalReason::RetriesExhausted(msg.clone()))
            }
            DeliveryError::Failed(_) => None,
        }
    }
}
