//! [`Subscriber`]: one subscriber (or link) of a topic: its queue
//! ([`queue`]), its delivery task (`delivery.rs`) and what publishers see of
//! it ([`Subscriber::offer`]).
//!
//! ```text
//!            failure, retries left               Discard.Interval elapsed
//!  Online ─────────────────────────────> Offline ─────────────────────────> Online
//!    │  ObjectNotExist, failure with no retries left, QueueSizeMax reached
//!    │  (RemoveSubscriber), or stalled over its budget for Send.Timeout
//!    └──────────────────────────────────> Removed (topic + store forget it)
//! ```
//!
//! - **Delivery styles** (from the subscriber proxy's mode and QoS): twoway
//!   (up to [`MAX_OUTSTANDING_TWOWAY`] requests in flight), ordered twoway
//!   (one), oneway/datagram (one write at a time, queued events coalesced
//!   up to [`ONEWAY_BATCH_MAX`] per delivery), batch oneway/datagram
//!   (queued events sent as one batch every `Flush.Timeout`), link (queued
//!   events sent as one `forward` call, one call in flight).
//! - **Retries** count *consecutive* failures; a success resets the count.
//!   Going offline clears the queue; events published while offline are
//!   discarded (counted in `dropped`); delivery resumes with the first event
//!   after the interval. This is IceStorm's behaviour after a delivery
//!   failure, and it is logged.
//! - **No silent loss.** A subscriber that is online receives every event
//!   offered to it, in order. Its queue has no event limit unless
//!   `IceStorm.Send.QueueSizeMax` sets one, and its byte budget is not a
//!   drop point: the topic stops admitting events while the queue is over
//!   budget ([`crate::admission`]), so publishers wait. Events are dropped
//!   for an online subscriber only under an explicit
//!   `IceStorm.Send.QueueSizeMaxPolicy=DropEvents` (the oldest queued event
//!   goes; counted, logged once per episode). Every other way an event
//!   cannot be delivered removes the subscriber visibly: logged, counted in
//!   `removed`, forgotten by the topic and the store.
//! - **Direct path** (oneway subscribers): when nothing of the subscriber is
//!   queued or being sent, [`Subscriber::offer`] asks the sink to send the
//!   event at once ([`SubscriberSink::try_deliver_now`]: a non-blocking
//!   write from the publisher's dispatch, or queued on the connection), so
//!   a keeping-up subscriber costs no queue, task wake-up or hop per event.
//!   The count of events handed to the task and not yet finished
//!   (`pending`) decides, under a lock, so the direct path never overtakes
//!   queued events. When more than the byte budget already waits in the
//!   connection's write queue, the event goes through the queue, which is
//!   then *backlogged*: congested as if full, so the publishers wait, until
//!   that event is delivered (once the connection has written all but
//!   [`floe::runtime::SEND_HIGH_WATER`]). The write queue is thus counted
//!   in the budget, and a subscriber holds about its budget of the
//!   broker's memory, not twice that; while it is congested the events
//!   still take the direct path, not the queue and the task.

mod delivery;
pub mod queue;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use floe::wire::Identity;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::event::Event;
use crate::metrics::SubscriberCounters;
pub use crate::metrics::TopicCounters;
use crate::qos::{Qos, Reliability};
use crate::sink::SubscriberSink;
use crate::types::{ProxyData, ProxyExt};

use delivery::DeliveryTask;
pub use queue::{EventQueue, OverflowPolicy, Pushed, QueueLimits};

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
    /// `IceStorm.Send.QueueSizeMax`: events per subscriber queue at most
    /// (`None`: no limit, IceStorm's default).
    pub queue_size_max: Option<usize>,
    /// `IceStorm.Send.QueueSizeMaxPolicy`.
    pub queue_size_max_policy: OverflowPolicy,
    /// `floe.Storm.Send.QueueBytesMax`: the per-subscriber byte budget past
    /// which publishers wait.
    pub queue_bytes_max: usize,
    /// `IceStorm.Send.Timeout`: how long a subscriber over its budget may
    /// make no progress before it is removed (`None`: never).
    pub send_timeout: Option<Duration>,
}

impl Default for DeliveryConfig {
    fn default() -> Self {
        DeliveryConfig {
            discard_interval: Duration::from_secs(60),
            flush_interval: Duration::from_millis(1000),
            queue_size_max: None,
            queue_size_max_policy: OverflowPolicy::RemoveSubscriber,
            queue_bytes_max: 64 << 20,
            send_timeout: Some(Duration::from_secs(60)),
        }
    }
}

/// Why a subscriber was removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemovalReason {
    /// The subscriber object does not exist.
    ObjectNotExist,
    /// A failure with no retries left.
    RetriesExhausted(String),
    /// Its queue held `IceStorm.Send.QueueSizeMax` events
    /// (`QueueSizeMaxPolicy=RemoveSubscriber`).
    QueueSizeMaxReached,
    /// Over its byte budget, it made no progress for `IceStorm.Send.Timeout`.
    Stalled(Duration),
}

impl std::fmt::Display for RemovalReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemovalReason::ObjectNotExist => f.write_str("object does not exist"),
            RemovalReason::RetriesExhausted(e) => write!(f, "delivery failed: {e}"),
            RemovalReason::QueueSizeMaxReached => {
                f.write_str("queue reached IceStorm.Send.QueueSizeMax")
            }
            RemovalReason::Stalled(t) => write!(
                f,
                "no progress for {} ms over its queue budget (IceStorm.Send.Timeout)",
                t.as_millis()
            ),
        }
    }
}

/// Called by a subscriber task when it removes its subscriber (the topic
/// forgets it and deletes it from the store).
pub type RemovalHook = Arc<dyn Fn(&Identity, RemovalReason) + Send + Sync>;

/// A subscriber's state shared by its handle, its delivery task and the
/// publishers waiting for it ([`crate::admission`]).
pub struct SubscriberState {
    id: Identity,
    queue: EventQueue,
    offline: AtomicBool,
    /// Set once the subscriber is removed or being removed: offers are
    /// refused and nobody waits for it.
    removed: AtomicBool,
    /// A removal asked for from outside the task (stalled, event limit).
    expel: Mutex<Option<RemovalReason>>,
    expelled: Notify,
    /// Set while `DropEvents` drops, so only the first drop of an episode
    /// is logged.
    dropping: AtomicBool,
    /// Delivered, dropped and outstanding events (`crate::metrics`).
    counters: SubscriberCounters,
    /// Whether this subscriber is counted in `TopicCounters::offline`
    /// (swapped, so exactly one side undoes it: the task or `Drop`).
    counted_offline: AtomicBool,
    /// Events queued for the task and not yet finished (sent or dropped):
    /// the direct path is open only at 0.
    pending: AtomicUsize,
    /// Held by `offer` on a oneway subscriber while it decides between the
    /// direct path and the queue, and while it sends directly.
    direct: Mutex<()>,
    send_timeout: Option<Duration>,
    sink: Arc<dyn SubscriberSink>,
}

impl std::fmt::Debug for SubscriberState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubscriberState")
            .field("id", &identity_to_string(&self.id))
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl SubscriberState {
    /// The subscriber's identity.
    pub fn id(&self) -> &Identity {
        &self.id
    }

    /// Its queue.
    pub fn queue(&self) -> &EventQueue {
        &self.queue
    }

    /// Whether publishers must wait for this subscriber: online, not
    /// removed, and its queue at or over its byte budget.
    pub fn is_congested(&self) -> bool {
        self.queue.is_congested() && !self.is_gone() && !self.offline.load(Ordering::Acquire)
    }

    /// Whether it is removed or being removed.
    pub fn is_gone(&self) -> bool {
        self.removed.load(Ordering::Acquire)
    }

    /// Whether nothing it was offered is still to be sent: its queue is
    /// empty and no delivery is in flight, or it is offline or removed
    /// (what it had is then counted as dropped).
    pub fn is_drained(&self) -> bool {
        self.pending.load(Ordering::Acquire) == 0
            || self.is_gone()
            || self.offline.load(Ordering::Acquire)
    }

    /// Events delivered so far: the measure of progress.
    pub fn delivered(&self) -> u64 {
        self.counters.delivered.load(Ordering::Relaxed)
    }

    /// Its counters.
    pub fn counters(&self) -> &SubscriberCounters {
        &self.counters
    }

    /// Bytes sent to it that its connection has not written yet
    /// ([`SubscriberSink::backlog`]): while it drains them it makes
    /// progress, though no event is delivered meanwhile.
    pub fn backlog(&self) -> usize {
        self.sink.backlog()
    }

    /// `IceStorm.Send.Timeout`: how long it may stay congested without
    /// progress.
    pub fn send_timeout(&self) -> Option<Duration> {
        self.send_timeout
    }

    /// Asks the delivery task to remove the subscriber (once; later calls
    /// and calls after another removal do nothing). Publishers waiting for
    /// it are released at once.
    pub fn expel(&self, reason: RemovalReason) {
        if self.removed.swap(true, Ordering::AcqRel) {
            return;
        }
        *self.expel.lock().unwrap_or_else(|p| p.into_inner()) = Some(reason);
        self.expelled.notify_one();
        self.queue.wake_waiters();
    }

    /// Accounts for `n` queued events that were sent or dropped.
    fn finished(&self, n: usize) {
        self.pending.fetch_sub(n, Ordering::AcqRel);
    }
}

/// What happened to an event offered to a subscriber.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// Sent at once or queued for delivery.
    Yes,
    /// Queued; the oldest queued event was dropped for it (`DropEvents`).
    YesDroppedOldest,
    /// Dropped: the subscriber is offline.
    Offline,
    /// Not queued: the subscriber is removed (or is being removed now,
    /// because its queue reached `QueueSizeMax` under `RemoveSubscriber`).
    Gone,
}

/// A running subscriber: its queue and its delivery task. Dropping it stops
/// the task.
pub struct Subscriber {
    style: DeliveryStyle,
    state: Arc<SubscriberState>,
    counters: Arc<TopicCounters>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for Subscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriber")
            .field("id", &self.state.id)
            .field("style", &self.style)
            .finish_non_exhaustive()
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.task.abort();
        // Publishers waiting for it go on; what it still had queued is
        // counted (unsubscribed, removed, or the broker shut down).
        self.state.removed.store(true, Ordering::Release);
        let left = self.state.queue.clear();
        self.count_drops(left as u64);
        self.state.queue.wake_waiters();
        if self.state.counted_offline.swap(false, Ordering::Relaxed) {
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
        let state = Arc::new(SubscriberState {
            id,
            queue: EventQueue::new(QueueLimits {
                max_events: config.queue_size_max,
                policy: config.queue_size_max_policy,
                budget: config.queue_bytes_max,
            }),
            offline: AtomicBool::new(false),
            removed: AtomicBool::new(false),
            expel: Mutex::new(None),
            expelled: Notify::new(),
            dropping: AtomicBool::new(false),
            counters: SubscriberCounters::default(),
            counted_offline: AtomicBool::new(false),
            pending: AtomicUsize::new(0),
            direct: Mutex::new(()),
            send_timeout: config.send_timeout,
            sink: sink.clone(),
        });
        let task = tokio::spawn(
            DeliveryTask {
                style,
                qos,
                sink,
                config: config.clone(),
                counters: counters.clone(),
                state: state.clone(),
                on_removed,
            }
            .run(),
        );
        Subscriber {
            style,
            state,
            counters,
            task,
        }
    }

    /// The subscriber's identity.
    pub fn id(&self) -> &Identity {
        &self.state.id
    }

    /// The delivery style.
    pub fn style(&self) -> DeliveryStyle {
        self.style
    }

    /// The state publishers wait on.
    pub fn state(&self) -> &Arc<SubscriberState> {
        &self.state
    }

    /// Whether the subscriber is offline (events are being discarded).
    pub fn is_offline(&self) -> bool {
        self.state.offline.load(Ordering::Relaxed)
    }

    /// Events delivered to this subscriber.
    pub fn delivered(&self) -> u64 {
        self.state.delivered()
    }

    /// Events dropped for this subscriber.
    pub fn dropped(&self) -> u64 {
        self.state.counters.dropped.load(Ordering::Relaxed)
    }

    /// Offers `event` to the subscriber without ever waiting: sent at once
    /// (oneway subscribers with nothing queued, see the module docs) or
    /// queued for the delivery task. The byte budget is not checked here:
    /// the topic admits events only while no subscriber is over it.
    pub fn offer(&self, event: &Arc<Event>) -> Queued {
        let s = &*self.state;
        if s.is_gone() {
            return Queued::Gone;
        }
        if s.offline.load(Ordering::Relaxed) {
            self.count_drops(1);
            return Queued::Offline;
        }
        if self.style != DeliveryStyle::Oneway {
            return self.enqueue(event);
        }
        let _direct = s.direct.lock().unwrap_or_else(|p| p.into_inner());
        if s.pending.load(Ordering::Acquire) == 0 {
            // A failure goes through the queue: the task retries the event
            // and applies the failure policy. The connection's write queue
            // may hold as much as the subscriber's budget; with an event
            // limit (`QueueSizeMax`), nothing may wait there, so that the
            // limit counts what the subscriber has not taken, as in IceStorm.
            let limits = s.queue.limits();
            let max_waiting = if limits.max_events.is_some() {
                0
            } else {
                limits.budget
            };
            if let Some(Ok(())) = s.sink.try_deliver_now(event, max_waiting) {
                s.counters.delivered.fetch_add(1, Ordering::Relaxed);
                self.counters.events_out.fetch_add(1, Ordering::Relaxed);
                return Queued::Yes;
            }
            if max_waiting > 0 && s.sink.backlog() > max_waiting {
                // The connection holds the budget: publishers wait until
                // this event, delivered from the queue, is written.
                s.queue.set_backlogged();
            }
        }
        self.enqueue(event)
    }

    /// Queues `event` for the delivery task, applying the event limit.
    fn enqueue(&self, event: &Arc<Event>) -> Queued {
        let s = &*self.state;
        // Counted before the task can see the event (and finish it).
        s.pending.fetch_add(1, Ordering::AcqRel);
        match s.queue.push(event.clone()) {
            Pushed::Queued => {
                s.dropping.store(false, Ordering::Relaxed);
                Queued::Yes
            }
            Pushed::DroppedOldest(_) => {
                s.finished(1);
                self.count_drops(1);
                if !s.dropping.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        subscriber = %identity_to_string(&s.id),
                        queue_size_max = ?s.queue.limits().max_events,
                        "subscriber queue full: dropping its oldest events \
                         (IceStorm.Send.QueueSizeMaxPolicy=DropEvents)"
                    );
                }
                Queued::YesDroppedOldest
            }
            Pushed::LimitReached => {
                s.finished(1);
                self.count_drops(1);
                s.expel(RemovalReason::QueueSizeMaxReached);
                Queued::Gone
            }
        }
    }

    fn count_drops(&self, n: u64) {
        self.state.counters.dropped.fetch_add(n, Ordering::Relaxed);
        self.counters.dropped.fetch_add(n, Ordering::Relaxed);
    }
}

/// Identity in Ice's text form (`category/name`, escaped as Ice does in
/// the default `Unicode` mode): the form IceStorm puts into per-subscriber
/// publisher identities and logs.
pub fn identity_to_string(id: &Identity) -> String {
    floe::wire::identity_to_string(id, floe::wire::ToStringMode::Unicode)
}

#[cfg(test)]
mod tests;
