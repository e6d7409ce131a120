//! [`Subscriber`]: one subscriber's (or link's) bounded queue and the task
//! that delivers it, with IceStorm's delivery state machine.
//!
//! ```text
//!            failure, retries left               Discard.Interval elapsed
//!  Online ─────────────────────────────> Offline ─────────────────────────> Online
//!    │  ObjectNotExist, or failure with no retries left
//!    └──────────────────────────────────> Removed (topic + store forget it)
//! ```
//!
//! - **Delivery styles** (from the subscriber proxy's mode and QoS): twoway
//!   (up to [`MAX_OUTSTANDING_TWOWAY`] requests in flight), ordered twoway
//!   (one), oneway/datagram (one write at a time, queued events coalesced
//!   up to [`ONEWAY_BATCH_MAX`] per delivery), batch oneway/datagram
//!   (events collected and sent as one batch every `Flush.Timeout`), link
//!   (queued events sent as one `forward` call, one call in flight).
//! - **Retries** count *consecutive* failures; a success resets the count.
//!   Going offline clears the queue; events published while offline are
//!   discarded; delivery resumes with the first event after the interval.
//! - **Overflow policy**: the queue holds at most `queue_max` events and
//!   `queue_bytes_max` bytes of payload (one event is always accepted into
//!   an empty queue). A publish that finds it full drops *that* event for
//!   this subscriber only,
//!   counts it (`dropped`), and logs the first drop of each overflow episode
//!   at `warn`. The publisher is never blocked or slowed, and other
//!   subscribers are unaffected: every subscriber has its own task.
//! - **Direct path** (oneway subscribers): when nothing of the subscriber is
//!   queued or being sent, [`Subscriber::offer`] asks the sink to send the
//!   event at once ([`SubscriberSink::try_deliver_now`]: a non-blocking
//!   write from the publisher's dispatch, or queued on the connection), so
//!   a keeping-up subscriber costs no queue, task wake-up or hop per event,
//!   and the delivery task cannot fall behind for lack of CPU time. The
//!   count of events handed to the task and not yet finished (`pending`)
//!   decides, under a lock, so the direct path never overtakes queued
//!   events. Anything it cannot do (no connection yet, a failure, or more
//!   than `queue_bytes_max` already waiting in the connection's write
//!   queue because the subscriber reads slower than events come) goes
//!   through the queue and the task, which applies the failure and
//!   overflow policies: the write queue is never an unbounded queue behind
//!   the bounded one, and a subscriber holds at most twice
//!   `queue_bytes_max` of the broker's memory (the delivery task itself
//!   waits while more than 1 MiB waits to be written).

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use floe::wire::Identity;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::event::Event;
use crate::qos::{Qos, Reliability};
use crate::sink::{DeliveryError, DeliveryFuture, SubscriberSink};
use crate::types::{ProxyData, ProxyExt};

/// Requests in flight to one non-ordered twoway subscriber, as in IceStorm.
pub const MAX_OUTSTANDING_TWOWAY: usize = 5;

/// Events sent in one `forward` call over a link, at most.
pub const LINK_BATCH_MAX: usize = 1000;

/// Events already queued for a oneway subscriber that one delivery takes
/// at most (written back to back; the connection coalesces them).
pub const ONEWAY_BATCH_MAX: usize = 64;

/// Payload bytes gathered into one `forward` call, at most (an event larger
/// than this goes alone), so a forward stays well below the receiving
/// broker's `Ice.MessageSizeMax` (1 MB by default).
pub const LINK_BATCH_BYTES: usize = 256 * 1024;

/// How a subscriber is delivered to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryStyle {
    /// Twoway requests, several in flight.
    Twoway,
    /// Twoway requests, one in flight (`reliability=ordered`).
    Ordered,
    /// Oneway (or datagram) requests.
    Oneway,
    /// Batch oneway (or batch datagram): flushed every `Flush.Timeout`.
    Batch,
    /// A link to another topic: `forward(EventDataSeq)` calls.
    Link,
}

impl DeliveryStyle {
    /// The style for a subscriber proxy and its QoS.
    pub fn for_subscriber(proxy: &ProxyData, qos: &Qos) -> Self {
        if proxy.is_batch() {
            DeliveryStyle::Batch
        } else if !proxy.is_twoway() {
            DeliveryStyle::Oneway
        } else if qos.reliability == Reliability::Ordered {
            DeliveryStyle::Ordered
        } else {
            DeliveryStyle::Twoway
        }
    }

    fn max_outstanding(self) -> usize {
        match self {
            DeliveryStyle::Twoway => MAX_OUTSTANDING_TWOWAY,
            _ => 1,
        }
    }
}

/// Timing and size settings shared by all subscribers of a broker.
#[derive(Clone, Debug)]
pub struct DeliveryConfig {
    /// `IceStorm.Discard.Interval`: how long a failed subscriber stays offline.
    pub discard_interval: Duration,
    /// `IceStorm.Flush.Timeout`: batch flush period (at least 100 ms).
    pub flush_interval: Duration,
    /// Per-subscriber queue capacity, in events.
    pub queue_max: usize,
    /// Per-subscriber queue capacity, in payload bytes.
    pub queue_bytes_max: usize,
}

impl Default for DeliveryConfig {
    fn default() -> Self {
        DeliveryConfig {
            discard_interval: Duration::from_secs(60),
            flush_interval: Duration::from_millis(1000),
            queue_max: 10_000,
            queue_bytes_max: 64 << 20,
        }
    }
}

/// Counters of one topic, shared by its subscriber tasks.
#[derive(Debug, Default)]
pub struct TopicCounters {
    /// Events published on the topic (including those received over links).
    pub events_in: AtomicU64,
    /// Events delivered successfully (per subscriber, so one event to three
    /// subscribers counts three).
    pub events_out: AtomicU64,
    /// Events dropped for a subscriber: queue overflow, offline discard, or
    /// queued when the subscriber went offline or was removed.
    pub dropped: AtomicU64,
    /// Subscribers currently offline.
    pub offline: AtomicU64,
    /// Subscribers removed after failures.
    pub removed: AtomicU64,
}

/// Why a subscriber task removed its subscriber.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemovalReason {
    /// The subscriber object does not exist.
    ObjectNotExist,
    /// A failure with no retries left.
    RetriesExhausted(String),
}

/// Called by a subscriber task when it removes its subscriber (the topic
/// forgets it and deletes it from the store).
pub type RemovalHook = Arc<dyn Fn(&Identity, RemovalReason) + Send + Sync>;

/// Per-subscriber state visible outside its task.
#[derive(Debug, Default)]
struct Shared {
    offline: AtomicBool,
    /// Set while the queue is full, so only the first drop of an overflow
    /// episode is logged.
    overflowing: AtomicBool,
    delivered: AtomicU64,
    dropped: AtomicU64,
    /// Payload bytes of the events in the queue.
    queued_bytes: AtomicUsize,
    /// Whether this subscriber is counted in `TopicCounters::offline`
    /// (swapped, so exactly one side undoes it: the task or `Drop`).
    counted_offline: AtomicBool,
    /// Events queued for the task and not yet finished (sent or dropped):
    /// the direct path is open only at 0.
    pending: AtomicUsize,
    /// Held by `offer` on a oneway subscriber while it decides between the
    /// direct path and the queue, and while it sends directly.
    direct: std::sync::Mutex<()>,
}

impl Shared {
    /// Accounts for an event leaving the queue.
    fn dequeued(&self, event: &Event) {
        self.queued_bytes.fetch_sub(event.size(), Ordering::Relaxed);
    }

    /// Accounts for `n` queued events that were sent or dropped.
    fn finished(&self, n: usize) {
        self.pending.fetch_sub(n, Ordering::AcqRel);
    }
}

/// What happened to an event offered to a subscriber.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// Queued for delivery.
    Yes,
    /// Dropped: the subscriber is offline.
    Offline,
    /// Dropped: the queue is full.
    Overflow,
    /// Dropped: the subscriber's task has ended.
    Gone,
}

/// A running subscriber: its queue and its delivery task. Dropping it stops
/// the task.
pub struct Subscriber {
    id: Identity,
    style: DeliveryStyle,
    sink: Arc<dyn SubscriberSink>,
    tx: mpsc::Sender<Arc<Event>>,
    shared: Arc<Shared>,
    counters: Arc<TopicCounters>,
    queue_bytes_max: usize,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for Subscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriber")
            .field("id", &self.id)
            .field("style", &self.style)
            .finish_non_exhaustive()
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.task.abort();
        if self.shared.counted_offline.swap(false, Ordering::Relaxed) {
            self.counters.offline.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Subscriber {
    /// Starts the delivery task of subscriber `id`. Must be called within a
    /// tokio runtime.
    #[allow(clippy::too_many_arguments)]
    pub fn spawn(
        id: Identity,
        style: DeliveryStyle,
        qos: Qos,
        sink: Arc<dyn SubscriberSink>,
        config: &DeliveryConfig,
        counters: Arc<TopicCounters>,
        on_removed: RemovalHook,
    ) -> Subscriber {
        let (tx, rx) = mpsc::channel(config.queue_max.max(1));
        let shared = Arc::new(Shared::default());
        let task = tokio::spawn(
            DeliveryTask {
                id: id.clone(),
                style,
                qos,
                sink: sink.clone(),
                config: config.clone(),
                counters: counters.clone(),
                shared: shared.clone(),
                on_removed,
                rx,
            }
            .run(),
        );
        Subscriber {
            id,
            style,
            sink,
            tx,
            shared,
            counters,
            queue_bytes_max: config.queue_bytes_max,
            task,
        }
    }

    /// The subscriber's identity.
    pub fn id(&self) -> &Identity {
        &self.id
    }

    /// The delivery style.
    pub fn style(&self) -> DeliveryStyle {
        self.style
    }

    /// Whether the subscriber is offline (events are being discarded).
    pub fn is_offline(&self) -> bool {
        self.shared.offline.load(Ordering::Relaxed)
    }

    /// Events delivered to this subscriber.
    pub fn delivered(&self) -> u64 {
        self.shared.delivered.load(Ordering::Relaxed)
    }

    /// Events dropped for this subscriber.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Offers `event` to the subscriber without ever waiting: sent at once
    /// (oneway subscribers with nothing queued, see the module docs), or
    /// queued for the delivery task, or dropped.
    pub fn offer(&self, event: &Arc<Event>) -> Queued {
        if self.shared.offline.load(Ordering::Relaxed) {
            self.count_drop();
            return Queued::Offline;
        }
        if self.style != DeliveryStyle::Oneway {
            return self.enqueue(event);
        }
        let _direct = self.shared.direct.lock().unwrap_or_else(|p| p.into_inner());
        if self.shared.pending.load(Ordering::Acquire) == 0 {
            // A failure goes through the queue: the task retries the event
            // and applies the failure policy.
            // The connection's write queue may hold as much as the
            // subscriber queue: at most twice `queue_bytes_max` in all.
            if let Some(Ok(())) = self.sink.try_deliver_now(event, self.queue_bytes_max) {
                self.shared.overflowing.store(false, Ordering::Relaxed);
                self.shared.delivered.fetch_add(1, Ordering::Relaxed);
                self.counters.events_out.fetch_add(1, Ordering::Relaxed);
                return Queued::Yes;
            }
        }
        self.enqueue(event)
    }

    /// Queues `event` for the delivery task, or drops it if the queue is
    /// full.
    fn enqueue(&self, event: &Arc<Event>) -> Queued {
        let size = event.size();
        let before = self.shared.queued_bytes.fetch_add(size, Ordering::Relaxed);
        // Counted before the task can see the event (and finish it).
        self.shared.pending.fetch_add(1, Ordering::AcqRel);
        let sent = if before > 0 && before + size > self.queue_bytes_max {
            Err(mpsc::error::TrySendError::Full(()))
        } else {
            self.tx.try_send(event.clone()).map_err(|e| match e {
                mpsc::error::TrySendError::Full(_) => mpsc::error::TrySendError::Full(()),
                mpsc::error::TrySendError::Closed(_) => mpsc::error::TrySendError::Closed(()),
            })
        };
        if sent.is_err() {
            self.shared.queued_bytes.fetch_sub(size, Ordering::Relaxed);
            self.shared.finished(1);
        }
        match sent {
            Ok(()) => {
                self.shared.overflowing.store(false, Ordering::Relaxed);
                Queued::Yes
            }
            Err(mpsc::error::TrySendError::Full(())) => {
                self.count_drop();
                if !self.shared.overflowing.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        subscriber = %identity_to_string(&self.id),
                        capacity = self.tx.max_capacity(),
                        "subscriber queue full: dropping events for this subscriber"
                    );
                }
                Queued::Overflow
            }
            Err(mpsc::error::TrySendError::Closed(())) => Queued::Gone,
        }
    }

    fn count_drop(&self) {
        self.shared.dropped.fetch_add(1, Ordering::Relaxed);
        self.counters.dropped.fetch_add(1, Ordering::Relaxed);
    }
}

/// Identity in Ice's text form (`category/name`, escaped as Ice does in
/// the default `Unicode` mode): the form IceStorm puts into per-subscriber
/// publisher identities and logs.
pub fn identity_to_string(id: &Identity) -> String {
    floe::wire::identity_to_string(id, floe::wire::ToStringMode::Unicode)
}

/// Futures of deliveries in flight, polled oldest first so that their
/// first polls (which put requests on the wire) follow event order.
#[derive(Default)]
struct InFlight {
    futures: VecDeque<(usize, DeliveryFuture)>,
}

impl InFlight {
    fn len(&self) -> usize {
        self.futures.len()
    }

    fn is_empty(&self) -> bool {
        self.futures.is_empty()
    }

    /// Adds a delivery of `count` events (first polled by the next `next`).
    fn push(&mut self, count: usize, fut: DeliveryFuture) {
        self.futures.push_back((count, fut));
    }

    fn clear(&mut self) {
        self.futures.clear();
    }

    /// Events in the deliveries in flight.
    fn events(&self) -> usize {
        self.futures.iter().map(|(n, _)| n).sum()
    }

    /// The next delivery to finish: its event count and result.
    async fn next(&mut self) -> (usize, Result<(), DeliveryError>) {
        poll_fn(|cx| {
            for i in 0..self.futures.len() {
                if let Poll::Ready(r) = self.futures[i].1.as_mut().poll(cx) {
                    // The index was just used, so the entry exists.
                    let (count, _) = self.futures.remove(i).expect("index in range");
                    return Poll::Ready((count, r));
                }
            }
            Poll::Pending
        })
        .await
    }
}

/// The carried-over event if any, else the next one from the queue.
async fn next_event(
    carry: &mut Option<Arc<Event>>,
    rx: &mut mpsc::Receiver<Arc<Event>>,
) -> Option<Arc<Event>> {
    match carry.take() {
        Some(e) => Some(e),
        None => rx.recv().await,
    }
}

/// The task that owns a subscriber's queue.
struct DeliveryTask {
    id: Identity,
    style: DeliveryStyle,
    qos: Qos,
    sink: Arc<dyn SubscriberSink>,
    config: DeliveryConfig,
    counters: Arc<TopicCounters>,
    shared: Arc<Shared>,
    on_removed: RemovalHook,
    rx: mpsc::Receiver<Arc<Event>>,
}

impl DeliveryTask {
    async fn run(mut self) {
        let max_out = self.style.max_outstanding();
        let mut in_flight = InFlight::default();
        let mut batch: Vec<Arc<Event>> = Vec::new();
        let mut failures: u32 = 0;
        let mut offline_until: Option<Instant> = None;
        // An event taken from the queue that did not fit into the last
        // link forward; it goes first next time.
        let mut carry: Option<Arc<Event>> = None;
        let flush_period = self.config.flush_interval.max(Duration::from_millis(100));
        let mut flush = tokio::time::interval(flush_period);
        flush.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let is_batch = self.style == DeliveryStyle::Batch;
        // One timer for the whole life of the task, reset when going
        // offline (no timer churn per event).
        let offline_timer = tokio::time::sleep(Duration::ZERO);
        tokio::pin!(offline_timer);

        loop {
            tokio::select! {
                biased;
                (count, result) = in_flight.next(), if !in_flight.is_empty() => {
                    match result {
                        Ok(()) => {
                            failures = 0;
                            self.shared.finished(count);
                            self.shared.delivered.fetch_add(count as u64, Ordering::Relaxed);
                            self.counters.events_out.fetch_add(count as u64, Ordering::Relaxed);
                        }
                        Err(e) => {
                            let lost = count + in_flight.events() + batch.len() + usize::from(carry.is_some());
                            in_flight.clear();
                            batch.clear();
                            carry = None;
                            let lost = lost + self.drain();
                            self.count_dropped(lost);
                            if let Some(reason) = self.removal_reason(&e, failures) {
                                tracing::info!(
                                    subscriber = %identity_to_string(&self.id),
                                    error = %e,
                                    "subscriber removed"
                                );
                                self.shared.offline.store(true, Ordering::Relaxed);
                                self.counters.removed.fetch_add(1, Ordering::Relaxed);
                                (self.on_removed)(&self.id, reason);
                                return;
                            }
                            failures += 1;
                            tracing::info!(
                                subscriber = %identity_to_string(&self.id),
                                error = %e,
                                retry = failures,
                                retry_count = self.qos.retry_count,
                                offline_for = ?self.config.discard_interval,
                                "subscriber offline"
                            );
                            self.shared.offline.store(true, Ordering::Relaxed);
                            if !self.shared.counted_offline.swap(true, Ordering::Relaxed) {
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
                    let lost = self.drain();
                    self.count_dropped(lost);
                    self.shared.offline.store(false, Ordering::Relaxed);
                    if self.shared.counted_offline.swap(false, Ordering::Relaxed) {
                        self.counters.offline.fetch_sub(1, Ordering::Relaxed);
                    }
                    tracing::debug!(subscriber = %identity_to_string(&self.id), "subscriber online");
                }
                event = next_event(&mut carry, &mut self.rx), if offline_until.is_none() && (is_batch || in_flight.len() < max_out) => {
                    let Some(event) = event else { return };
                    self.shared.dequeued(&event);
                    match self.style {
                        DeliveryStyle::Batch => batch.push(event),
                        DeliveryStyle::Link => {
                            let mut bytes = event.size();
                            let mut events = vec![event];
                            while events.len() < LINK_BATCH_MAX && bytes < LINK_BATCH_BYTES {
                                match self.rx.try_recv() {
                                    Ok(e) => {
                                        self.shared.dequeued(&e);
                                        if bytes + e.size() > LINK_BATCH_BYTES {
                                            // Next call's first event.
                                            carry = Some(e);
                                            break;
                                        }
                                        bytes += e.size();
                                        events.push(e);
                                    }
                                    Err(_) => break,
                                }
                            }
                            let n = events.len();
                            in_flight.push(n, self.sink.deliver(events));
                        }
                        DeliveryStyle::Oneway => {
                            // Coalesce what is already queued.
                            let mut events = vec![event];
                            while events.len() < ONEWAY_BATCH_MAX {
                                match self.rx.try_recv() {
                                    Ok(e) => {
                                        self.shared.dequeued(&e);
                                        events.push(e);
                                    }
                                    Err(_) => break,
                                }
                            }
                            let n = events.len();
                            in_flight.push(n, self.sink.deliver(events));
                        }
                        _ => in_flight.push(1, self.sink.deliver(vec![event])),
                    }
                }
                _ = flush.tick(), if is_batch && offline_until.is_none() => {
                    if !batch.is_empty() && in_flight.is_empty() {
                        let events = std::mem::take(&mut batch);
                        let n = events.len();
                        in_flight.push(n, self.sink.deliver(events));
                    }
                }
            }
        }
    }

    /// Discards everything queued; returns how many events that was.
    /// (Only called when nothing is carried over: failures clear `carry`
    /// first, and nothing is taken from the queue while offline.)
    fn drain(&mut self) -> usize {
        let mut n = 0;
        while let Ok(e) = self.rx.try_recv() {
            self.shared.dequeued(&e);
            n += 1;
        }
        n
    }

    /// Counts `n` queued events dropped (and finished).
    fn count_dropped(&self, n: usize) {
        self.shared.finished(n);
        if n > 0 {
            self.shared.dropped.fetch_add(n as u64, Ordering::Relaxed);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::OperationMode;
    use std::sync::Mutex;

    /// Records delivered event batches; behaviour per call is scripted.
    #[derive(Default)]
    struct FakeSink {
        delivered: Mutex<Vec<Vec<String>>>,
        script: Mutex<VecDeque<Behaviour>>,
        in_flight: AtomicU64,
        max_in_flight: AtomicU64,
    }

    #[derive(Clone, Copy)]
    enum Behaviour {
        Ok,
        Delay(Duration),
        Stall,
        Fail,
        Gone,
    }

    impl FakeSink {
        fn scripted(b: &[Behaviour]) -> Arc<FakeSink> {
            let s = FakeSink::default();
            s.script.lock().unwrap().extend(b.iter().cloned());
            Arc::new(s)
        }
        fn ops(&self) -> Vec<String> {
            self.delivered
                .lock()
                .unwrap()
                .iter()
                .flatten()
                .cloned()
                .collect()
        }
    }

    struct Handle(Arc<FakeSink>);
    impl SubscriberSink for Handle {
        fn deliver(&self, events: Vec<Arc<Event>>) -> DeliveryFuture {
            let sink = self.0.clone();
            let b = sink
                .script
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or(Behaviour::Ok);
            let ops: Vec<String> = events.iter().map(|e| e.operation.clone()).collect();
            Box::pin(async move {
                let n = sink.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                sink.max_in_flight.fetch_max(n, Ordering::SeqCst);
                let r = match b {
                    Behaviour::Ok => Ok(()),
                    Behaviour::Delay(d) => {
                        tokio::time::sleep(d).await;
                        Ok(())
                    }
                    Behaviour::Stall => std::future::pending().await,
                    Behaviour::Fail => Err(DeliveryError::Failed("refused".into())),
                    Behaviour::Gone => Err(DeliveryError::ObjectNotExist),
                };
                if r.is_ok() {
                    sink.delivered.lock().unwrap().push(ops);
                }
                sink.in_flight.fetch_sub(1, Ordering::SeqCst);
                r
            })
        }
    }

    fn ev(op: &str) -> Arc<Event> {
        Event::new(
            op,
            OperationMode::Normal,
            Default::default(),
            floe::wire::Encapsulation::empty(floe::wire::ENCODING_1_1),
        )
    }

    struct Setup {
        sub: Subscriber,
        sink: Arc<FakeSink>,
        counters: Arc<TopicCounters>,
        removed: Arc<Mutex<Vec<RemovalReason>>>,
    }

    fn setup(style: DeliveryStyle, retry: i32, script: &[Behaviour], cfg: DeliveryConfig) -> Setup {
        let sink = FakeSink::scripted(script);
        let counters = Arc::new(TopicCounters::default());
        let removed = Arc::new(Mutex::new(Vec::new()));
        let r2 = removed.clone();
        let qos = Qos {
            retry_count: retry,
            ..Qos::default()
        };
        let sub = Subscriber::spawn(
            Identity::from_name("s"),
            style,
            qos,
            Arc::new(Handle(sink.clone())),
            &cfg,
            counters.clone(),
            Arc::new(move |_, r| r2.lock().unwrap().push(r)),
        );
        Setup {
            sub,
            sink,
            counters,
            removed,
        }
    }

    async fn settle() {
        for _ in 0..50 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn ordered_keeps_one_outstanding_and_order() {
        let s = setup(
            DeliveryStyle::Ordered,
            0,
            &[Behaviour::Delay(Duration::from_millis(10)); 20],
            DeliveryConfig::default(),
        );
        for i in 0..20 {
            assert_eq!(s.sub.offer(&ev(&format!("e{i}"))), Queued::Yes);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let want: Vec<String> = (0..20).map(|i| format!("e{i}")).collect();
        assert_eq!(s.sink.ops(), want);
        assert_eq!(s.sink.max_in_flight.load(Ordering::SeqCst), 1);
        assert_eq!(s.counters.events_out.load(Ordering::SeqCst), 20);
    }

    #[tokio::test(start_paused = true)]
    async fn twoway_allows_five_outstanding() {
        let s = setup(
            DeliveryStyle::Twoway,
            0,
            &[Behaviour::Delay(Duration::from_millis(10)); 20],
            DeliveryConfig::default(),
        );
        for i in 0..20 {
            s.sub.offer(&ev(&format!("e{i}")));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(s.sink.ops().len(), 20);
        assert_eq!(s.sink.max_in_flight.load(Ordering::SeqCst), 5);
    }

    #[tokio::test(start_paused = true)]
    async fn object_not_exist_removes_at_once() {
        let s = setup(
            DeliveryStyle::Twoway,
            -1,
            &[Behaviour::Gone],
            DeliveryConfig::default(),
        );
        s.sub.offer(&ev("a"));
        settle().await;
        assert_eq!(
            *s.removed.lock().unwrap(),
            vec![RemovalReason::ObjectNotExist]
        );
        assert_eq!(s.sub.offer(&ev("b")), Queued::Offline);
    }

    #[tokio::test(start_paused = true)]
    async fn retry_count_zero_removes_at_first_failure() {
        let s = setup(
            DeliveryStyle::Oneway,
            0,
            &[Behaviour::Fail],
            DeliveryConfig::default(),
        );
        s.sub.offer(&ev("a"));
        settle().await;
        assert!(matches!(
            s.removed.lock().unwrap()[..],
            [RemovalReason::RetriesExhausted(_)]
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn offline_discards_then_resumes_and_counts_consecutive_failures() {
        let cfg = DeliveryConfig {
            discard_interval: Duration::from_secs(5),
            ..DeliveryConfig::default()
        };
        // retryCount 2: fail, (offline) ok, fail, fail, fail -> removed on the
        // third consecutive failure only.
        let s = setup(
            DeliveryStyle::Ordered,
            2,
            &[
                Behaviour::Fail,
                Behaviour::Ok,
                Behaviour::Fail,
                Behaviour::Fail,
                Behaviour::Fail,
            ],
            cfg,
        );
        s.sub.offer(&ev("a"));
        settle().await;
        assert!(s.sub.is_offline());
        assert_eq!(s.counters.offline.load(Ordering::SeqCst), 1);
        assert_eq!(s.sub.offer(&ev("discarded")), Queued::Offline);
        tokio::time::sleep(Duration::from_secs(6)).await;
        assert!(!s.sub.is_offline());
        s.sub.offer(&ev("b"));
        settle().await;
        assert_eq!(s.sink.ops(), vec!["b".to_string()]);
        // Success reset the count: two more failures are tolerated.
        for (i, op) in ["c", "d", "e"].into_iter().enumerate() {
            s.sub.offer(&ev(op));
            settle().await;
            if i < 2 {
                assert!(s.removed.lock().unwrap().is_empty(), "removed after {op}");
                tokio::time::sleep(Duration::from_secs(6)).await;
            }
        }
        assert_eq!(s.removed.lock().unwrap().len(), 1);
        assert!(s.counters.dropped.load(Ordering::SeqCst) >= 1);
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_an_offline_subscriber_updates_the_offline_gauge() {
        let s = setup(
            DeliveryStyle::Oneway,
            -1,
            &[Behaviour::Fail],
            DeliveryConfig::default(),
        );
        s.sub.offer(&ev("a"));
        settle().await;
        assert_eq!(s.counters.offline.load(Ordering::SeqCst), 1);
        let counters = s.counters.clone();
        drop(s);
        assert_eq!(counters.offline.load(Ordering::SeqCst), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn full_queue_drops_and_counts() {
        let cfg = DeliveryConfig {
            queue_max: 4,
            ..DeliveryConfig::default()
        };
        let s = setup(DeliveryStyle::Ordered, 0, &[Behaviour::Stall], cfg);
        s.sub.offer(&ev("first"));
        settle().await; // the task takes it and stalls on it
        let mut outcomes = Vec::new();
        for i in 0..10 {
            outcomes.push(s.sub.offer(&ev(&format!("e{i}"))));
        }
        assert_eq!(outcomes.iter().filter(|o| **o == Queued::Yes).count(), 4);
        assert_eq!(
            outcomes.iter().filter(|o| **o == Queued::Overflow).count(),
            6
        );
        assert_eq!(s.sub.dropped(), 6);
        assert_eq!(s.counters.dropped.load(Ordering::SeqCst), 6);
    }

    #[tokio::test(start_paused = true)]
    async fn queue_is_bounded_in_bytes_too() {
        let cfg = DeliveryConfig {
            queue_bytes_max: 10_000,
            ..DeliveryConfig::default()
        };
        let s = setup(DeliveryStyle::Ordered, 0, &[Behaviour::Stall], cfg);
        s.sub.offer(&ev("first"));
        settle().await; // taken by the task, stalled
        let big = Event::new(
            "big",
            OperationMode::Normal,
            Default::default(),
            floe::wire::Encapsulation {
                encoding: floe::wire::ENCODING_1_1,
                data: bytes::Bytes::from(vec![0u8; 4000]),
            },
        );
        let outcomes: Vec<Queued> = (0..5).map(|_| s.sub.offer(&big)).collect();
        assert_eq!(
            outcomes,
            [
                Queued::Yes,
                Queued::Yes,
                Queued::Overflow,
                Queued::Overflow,
                Queued::Overflow
            ]
        );
        assert_eq!(s.sub.dropped(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn stalled_subscriber_does_not_delay_others() {
        let stalled = setup(
            DeliveryStyle::Ordered,
            0,
            &[Behaviour::Stall],
            DeliveryConfig::default(),
        );
        let healthy = setup(DeliveryStyle::Ordered, 0, &[], DeliveryConfig::default());
        for i in 0..100 {
            let e = ev(&format!("e{i}"));
            stalled.sub.offer(&e);
            healthy.sub.offer(&e);
        }
        settle().await;
        assert_eq!(healthy.sink.ops().len(), 100);
        assert_eq!(stalled.sink.ops().len(), 0);
    }

    /// A oneway sink whose direct path works when `now` is set; records
    /// every event sent, by either path, in order.
    #[derive(Default)]
    struct DirectSink {
        now: AtomicBool,
        sent: Mutex<Vec<String>>,
        direct: AtomicU64,
        delay: Mutex<Option<Duration>>,
    }

    struct DirectHandle(Arc<DirectSink>);
    impl SubscriberSink for DirectHandle {
        fn deliver(&self, events: Vec<Arc<Event>>) -> DeliveryFuture {
            let sink = self.0.clone();
            let delay = sink.delay.lock().unwrap().take();
            Box::pin(async move {
                if let Some(d) = delay {
                    tokio::time::sleep(d).await;
                }
                let mut sent = sink.sent.lock().unwrap();
                sent.extend(events.iter().map(|e| e.operation.clone()));
                Ok(())
            })
        }
        fn try_deliver_now(
            &self,
            event: &Event,
            _max_queued: usize,
        ) -> Option<Result<(), DeliveryError>> {
            if !self.0.now.load(Ordering::SeqCst) {
                return None;
            }
            self.0.direct.fetch_add(1, Ordering::SeqCst);
            self.0.sent.lock().unwrap().push(event.operation.clone());
            Some(Ok(()))
        }
    }

    #[tokio::test(start_paused = true)]
    async fn oneway_direct_path_keeps_order_behind_queued_events() {
        let sink = Arc::new(DirectSink::default());
        *sink.delay.lock().unwrap() = Some(Duration::from_millis(10));
        let counters = Arc::new(TopicCounters::default());
        let sub = Subscriber::spawn(
            Identity::from_name("s"),
            DeliveryStyle::Oneway,
            Qos::default(),
            Arc::new(DirectHandle(sink.clone())),
            &DeliveryConfig::default(),
            counters.clone(),
            Arc::new(|_, _| {}),
        );
        // No connection yet: queued; the task's delivery is slow.
        assert_eq!(sub.offer(&ev("e0")), Queued::Yes);
        settle().await;
        // The direct path is possible now but e0 is not sent yet: queued.
        sink.now.store(true, Ordering::SeqCst);
        sub.offer(&ev("e1"));
        sub.offer(&ev("e2"));
        assert_eq!(sink.direct.load(Ordering::SeqCst), 0);
        tokio::time::sleep(Duration::from_millis(50)).await;
        // Nothing pending: sent at once, inside `offer`.
        sub.offer(&ev("e3"));
        assert_eq!(sink.direct.load(Ordering::SeqCst), 1);
        assert_eq!(*sink.sent.lock().unwrap(), ["e0", "e1", "e2", "e3"]);
        assert_eq!(sub.delivered(), 4);
        assert_eq!(counters.events_out.load(Ordering::SeqCst), 4);
        assert_eq!(sub.shared.pending.load(Ordering::SeqCst), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn batch_flushes_on_the_timer() {
        let cfg = DeliveryConfig {
            flush_interval: Duration::from_millis(500),
            ..DeliveryConfig::default()
        };
        let s = setup(DeliveryStyle::Batch, 0, &[], cfg);
        settle().await;
        tokio::time::sleep(Duration::from_millis(10)).await; // first tick passed
        for op in ["a", "b", "c"] {
            s.sub.offer(&ev(op));
        }
        settle().await;
        assert!(s.sink.delivered.lock().unwrap().is_empty());
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(
            *s.sink.delivered.lock().unwrap(),
            vec![vec!["a".to_string(), "b".into(), "c".into()]]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn link_sends_queued_events_in_one_forward() {
        let s = setup(
            DeliveryStyle::Link,
            -1,
            &[Behaviour::Delay(Duration::from_millis(50))],
            DeliveryConfig::default(),
        );
        for op in ["a", "b", "c", "d"] {
            s.sub.offer(&ev(op));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let calls = s.sink.delivered.lock().unwrap().clone();
        assert_eq!(calls.concat(), vec!["a", "b", "c", "d"]);
        assert!(calls.len() <= 2, "{calls:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn link_forwards_are_bounded_in_bytes() {
        let s = setup(
            DeliveryStyle::Link,
            -1,
            &[Behaviour::Delay(Duration::from_millis(50)); 10],
            DeliveryConfig::default(),
        );
        let big = |op: &str| {
            Event::new(
                op,
                OperationMode::Normal,
                Default::default(),
                floe::wire::Encapsulation {
                    encoding: floe::wire::ENCODING_1_1,
                    data: bytes::Bytes::from(vec![0u8; 100_000]),
                },
            )
        };
        for i in 0..7 {
            s.sub.offer(&big(&format!("b{i}")));
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        let calls = s.sink.delivered.lock().unwrap().clone();
        assert_eq!(calls.concat(), ["b0", "b1", "b2", "b3", "b4", "b5", "b6"]);
        // 100 KB events: at most two fit under LINK_BATCH_BYTES.
        assert!(calls.iter().all(|c| c.len() <= 2), "{calls:?}");
    }

    #[test]
    fn identity_text() {
        assert_eq!(identity_to_string(&Identity::from_name("s1")), "s1");
        assert_eq!(identity_to_string(&Identity::new("s8", "cat")), "cat/s8");
        assert_eq!(identity_to_string(&Identity::from_name("a/b")), "a\\/b");
        assert_eq!(identity_to_string(&Identity::from_name("a'b")), "a\\'b");
    }
}
