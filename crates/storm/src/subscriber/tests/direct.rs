//! The oneway direct path: order behind queued events, the byte budget
//! held by a connection, and slow draining.

use super::*;

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
