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

// The oneway direct path (events sent on the caller's task when the
// connection takes them).
mod direct;
