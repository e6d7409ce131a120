use super::*;
use crate::sink::{DeliveryError, DeliveryFuture};
use crate::types::OperationMode;
use std::collections::VecDeque;
use std::sync::atomic::AtomicU64;
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
async fn counters_follow_queued_outstanding_and_delivered() {
    let s = setup(
        DeliveryStyle::Twoway,
        0,
        &[Behaviour::Delay(Duration::from_millis(10)); 8],
        DeliveryConfig::default(),
    );
    for i in 0..8 {
        s.sub.offer(&ev(&format!("e{i}")));
    }
    settle().await;
    let state = s.sub.state();
    assert_eq!(state.counters().outstanding.load(Ordering::SeqCst), 5);
    assert_eq!(state.queue().len(), 3);
    assert_eq!(s.sub.delivered(), 0);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(state.counters().outstanding.load(Ordering::SeqCst), 0);
    assert_eq!(state.queue().len(), 0);
    assert_eq!(s.sub.delivered(), 8);
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
    assert_eq!(s.sub.offer(&ev("b")), Queued::Gone);
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
async fn no_event_is_dropped_by_default_however_many_queue() {
    let s = setup(
        DeliveryStyle::Ordered,
        0,
        &[Behaviour::Stall],
        DeliveryConfig::default(),
    );
    s.sub.offer(&ev("first"));
    settle().await; // the task takes it and stalls on it
    for i in 0..50_000 {
        assert_eq!(s.sub.offer(&ev(&format!("e{i}"))), Queued::Yes);
    }
    assert_eq!(s.sub.dropped(), 0);
    assert_eq!(s.sub.state().queue().len(), 50_000);
    assert!(s.removed.lock().unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn queue_size_max_with_drop_events_drops_the_oldest_and_counts() {
    let cfg = DeliveryConfig {
        queue_size_max: Some(4),
        queue_size_max_policy: OverflowPolicy::DropEvents,
        ..DeliveryConfig::default()
    };
    let s = setup(
        DeliveryStyle::Ordered,
        0,
        &[Behaviour::Delay(Duration::from_secs(1))],
        cfg,
    );
    s.sub.offer(&ev("first"));
    settle().await; // the task takes it and waits on it
    let outcomes: Vec<Queued> = (0..10)
        .map(|i| s.sub.offer(&ev(&format!("e{i}"))))
        .collect();
    assert_eq!(outcomes[..4], [Queued::Yes; 4]);
    assert_eq!(outcomes[4..], [Queued::YesDroppedOldest; 6]);
    assert_eq!(s.sub.dropped(), 6);
    assert_eq!(s.counters.dropped.load(Ordering::SeqCst), 6);
    tokio::time::sleep(Duration::from_secs(5)).await;
    // The newest four follow the first, in order; the subscriber stays.
    assert_eq!(s.sink.ops(), ["first", "e6", "e7", "e8", "e9"]);
    assert!(s.removed.lock().unwrap().is_empty());
    assert_eq!(s.sub.state().pending.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn queue_size_max_with_remove_subscriber_removes_it_visibly() {
    let cfg = DeliveryConfig {
        queue_size_max: Some(4),
        ..DeliveryConfig::default()
    };
    let s = setup(DeliveryStyle::Ordered, -1, &[Behaviour::Stall], cfg);
    s.sub.offer(&ev("first"));
    settle().await;
    let outcomes: Vec<Queued> = (0..6).map(|i| s.sub.offer(&ev(&format!("e{i}")))).collect();
    assert_eq!(outcomes[..4], [Queued::Yes; 4]);
    assert_eq!(outcomes[4..], [Queued::Gone; 2]);
    settle().await;
    assert_eq!(
        *s.removed.lock().unwrap(),
        [RemovalReason::QueueSizeMaxReached]
    );
    assert_eq!(s.counters.removed.load(Ordering::SeqCst), 1);
    // The stalled one, the four queued and the one refused.
    assert_eq!(s.sub.dropped(), 6);
}

#[tokio::test(start_paused = true)]
async fn the_byte_budget_marks_congestion_and_never_drops() {
    let cfg = DeliveryConfig {
        queue_bytes_max: 10_000,
        ..DeliveryConfig::default()
    };
    let s = setup(
        DeliveryStyle::Ordered,
        0,
        &[Behaviour::Delay(Duration::from_secs(1)); 6],
        cfg,
    );
    s.sub.offer(&ev("first"));
    settle().await; // taken by the task, in flight
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
    assert_eq!(outcomes, [Queued::Yes; 5]);
    assert!(s.sub.state().is_congested());
    assert_eq!(s.sub.dropped(), 0);
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(s.sink.ops().len(), 6);
    assert!(!s.sub.state().is_congested());
}

#[tokio::test(start_paused = true)]
async fn a_stalled_congested_subscriber_is_removed_after_the_send_timeout() {
    let cfg = DeliveryConfig {
        queue_bytes_max: 1000,
        send_timeout: Some(Duration::from_secs(2)),
        ..DeliveryConfig::default()
    };
    let s = setup(DeliveryStyle::Ordered, -1, &[Behaviour::Stall], cfg);
    s.sub.offer(&ev("first"));
    settle().await;
    for i in 0..20 {
        s.sub.offer(&ev(&format!("e{i}")));
    }
    assert!(s.sub.state().is_congested());
    let started = tokio::time::Instant::now();
    crate::admission::room_in(s.sub.state()).await;
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    settle().await;
    assert_eq!(
        *s.removed.lock().unwrap(),
        [RemovalReason::Stalled(Duration::from_secs(2))]
    );
    assert_eq!(s.sub.offer(&ev("late")), Queued::Gone);
}

#[tokio::test(start_paused = true)]
async fn a_slow_subscriber_that_makes_progress_is_not_removed() {
    let cfg = DeliveryConfig {
        queue_bytes_max: 1000,
        send_timeout: Some(Duration::from_secs(2)),
        ..DeliveryConfig::default()
    };
    // Each delivery takes 1.5 s: never 2 s without progress.
    let s = setup(
        DeliveryStyle::Ordered,
        -1,
        &[Behaviour::Delay(Duration::from_millis(1500)); 40],
        cfg,
    );
    for i in 0..30 {
        s.sub.offer(&ev(&format!("e{i}")));
    }
    assert!(s.sub.state().is_congested());
    crate::admission::room_in(s.sub.state()).await;
    assert!(s.removed.lock().unwrap().is_empty());
    assert!(!s.sub.state().is_congested());
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
    /// Bytes the fake connection has not written: past `max_queued`, the
    /// direct path refuses.
    backlog: AtomicUsize,
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
        max_queued: usize,
    ) -> Option<Result<(), DeliveryError>> {
        if !self.0.now.load(Ordering::SeqCst) || self.backlog() > max_queued {
            return None;
        }
        self.0.direct.fetch_add(1, Ordering::SeqCst);
        self.0.sent.lock().unwrap().push(event.operation.clone());
        Some(Ok(()))
    }
    fn backlog(&self) -> usize {
        self.0.backlog.load(Ordering::SeqCst)
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
    assert_eq!(sub.state().pending.load(Ordering::SeqCst), 0);
}

/// A oneway subscriber on `sink` with a 1,000-byte budget and
/// `send_timeout`; its direct path is open.
fn direct_subscriber(sink: &Arc<DirectSink>, send_timeout: Option<Duration>) -> Subscriber {
    sink.now.store(true, Ordering::SeqCst);
    let cfg = DeliveryConfig {
        queue_bytes_max: 1000,
        send_timeout,
        ..DeliveryConfig::default()
    };
    Subscriber::spawn(
        Identity::from_name("s"),
        DeliveryStyle::Oneway,
        Qos::default(),
        Arc::new(DirectHandle(sink.clone())),
        &cfg,
        Arc::new(TopicCounters::default()),
        Arc::new(|_, _| {}),
    )
}

#[tokio::test(start_paused = true)]
async fn a_connection_holding_the_budget_congests_until_the_queue_delivers() {
    let sink = Arc::new(DirectSink::default());
    let sub = direct_subscriber(&sink, None);
    sub.offer(&ev("e0"));
    assert_eq!(sink.direct.load(Ordering::SeqCst), 1);
    assert!(!sub.state().is_congested());
    // The connection holds more than the budget: the next event is queued
    // and publishers must wait, though the queue holds one small event.
    sink.backlog.store(1001, Ordering::SeqCst);
    *sink.delay.lock().unwrap() = Some(Duration::from_millis(10));
    sub.offer(&ev("e1"));
    assert_eq!(sink.direct.load(Ordering::SeqCst), 1);
    assert!(sub.state().is_congested());
    let state = sub.state().clone();
    let waiter = tokio::spawn(async move { crate::admission::room_in(&state).await });
    settle().await;
    assert!(!waiter.is_finished());
    // The queued event is delivered (the connection drained): room again.
    sink.backlog.store(0, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(50)).await;
    waiter.await.unwrap();
    assert!(!sub.state().is_congested());
    assert!(!sub.state().is_gone());
    sub.offer(&ev("e2"));
    assert_eq!(sink.direct.load(Ordering::SeqCst), 2);
    assert_eq!(*sink.sent.lock().unwrap(), ["e0", "e1", "e2"]);
}

#[tokio::test(start_paused = true)]
async fn a_subscriber_draining_its_backlog_slowly_is_not_removed() {
    let sink = Arc::new(DirectSink::default());
    let sub = direct_subscriber(&sink, Some(Duration::from_secs(1)));
    // The connection holds 3,000 bytes and writes 100 every 100 ms: the
    // queued event goes out after 3 s, three send timeouts, with no event
    // delivered meanwhile.
    sink.backlog.store(3000, Ordering::SeqCst);
    *sink.delay.lock().unwrap() = Some(Duration::from_secs(3));
    sub.offer(&ev("e0"));
    assert!(sub.state().is_congested());
    let state = sub.state().clone();
    let waiter = tokio::spawn(async move { crate::admission::room_in(&state).await });
    for _ in 0..30 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        sink.backlog.fetch_sub(100, Ordering::SeqCst);
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    waiter.await.unwrap();
    assert!(!sub.state().is_gone(), "removed while it made progress");
    assert_eq!(*sink.sent.lock().unwrap(), ["e0"]);
    // Stalled for good now: removed after the timeout.
    sink.backlog.store(3000, Ordering::SeqCst);
    *sink.delay.lock().unwrap() = Some(Duration::from_secs(3600));
    sub.offer(&ev("e1"));
    let state = sub.state().clone();
    tokio::time::timeout(Duration::from_secs(2), crate::admission::room_in(&state))
        .await
        .expect("a stalled subscriber is removed after about the timeout");
    assert!(sub.state().is_gone());
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
