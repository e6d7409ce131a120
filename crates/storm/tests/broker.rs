//! Broker tests without a network: requests go in as bytes (a `Current`
//! built here, as the runtime builds it), replies come out as bytes, and
//! deliveries land in fake sinks.
//!
//! The golden test replays every TopicManager/Topic/Finder request captured
//! from a real IceStorm 3.7.8 (`tests/golden/icestorm_topic_manager.txt`)
//! and requires byte-identical replies.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use floe::runtime::{Communicator, Current, Dispatch, DispatchError, ObjectAdapter, OperationMode};
use floe::wire::Encapsulation;
use floe::wire::Encode;
use floe::wire::{Context, Encoder, Identity, ENCODING_1_1};
use floe_storm::event::Event;
use floe_storm::link::event_data;
use floe_storm::qos::Qos;
use floe_storm::sink::{DeliveryError, DeliveryFuture, ResolveFuture, SinkFactory, SubscriberSink};
use floe_storm::topic::Topic;
use floe_storm::types::{
    direct_proxy, read_proxy, tcp_endpoint, ProxyData, ProxyMode, QosDict, MODE_ONEWAY,
};
use floe_storm::{AdapterEndpoints, StormConfig};

/// A request addressed to one of the broker's objects.
#[derive(Clone, Debug)]
struct Request {
    operation: String,
    mode: u8,
    context: Context,
    params: Encapsulation,
}

impl Request {
    fn new(operation: &str, mode: u8, params: Encapsulation) -> Request {
        Request {
            operation: operation.to_owned(),
            mode,
            context: Context::new(),
            params,
        }
    }
}

/// A dispatch outcome in reply-status terms.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Reply {
    Ok(Bytes),
    UserException(Bytes),
    ObjectNotExist,
    FacetNotExist,
    OperationNotExist,
    UnknownLocalException(String),
    UnknownUserException(String),
    UnknownException(String),
}

/// A whole encapsulation (size, version, data) held in `bytes`.
fn parse_encapsulation(bytes: Bytes) -> floe::wire::Result<Encapsulation> {
    let mut dec = floe::wire::Decoder::new(bytes);
    let e = dec.read_encapsulation()?;
    assert!(dec.is_empty());
    Ok(e)
}

/// The broker with an object adapter to put in each `Current`.
#[derive(Clone)]
struct Broker {
    core: floe_storm::Broker,
    adapter: ObjectAdapter,
    _communicator: Communicator,
}

impl Broker {
    async fn new(core: floe_storm::Broker) -> Broker {
        let communicator = Communicator::new();
        let adapter = communicator
            .create_object_adapter_with_endpoints("Test", "")
            .await
            .unwrap();
        Broker {
            core,
            adapter,
            _communicator: communicator,
        }
    }

    fn topic(&self, name: &str) -> Option<Arc<Topic>> {
        self.core.topic(name)
    }

    fn current(&self, id: &Identity, facet: &str, req: &Request) -> Current {
        Current {
            adapter: self.adapter.clone(),
            connection: None,
            id: id.clone(),
            facet: facet.into(),
            operation: req.operation.as_str().into(),
            mode: OperationMode::from_u8(req.mode).unwrap(),
            ctx: req.context.clone(),
            request_id: 1,
            encoding: req.params.encoding,
        }
    }

    async fn dispatch_topic_manager(&self, id: &Identity, facet: &str, req: &Request) -> Reply {
        let current = self.current(id, facet, req);
        reply(
            self.core
                .dispatch_topic_manager(current, req.params.clone()),
        )
        .await
    }

    async fn dispatch_publish(&self, id: &Identity, facet: &str, req: &Request) -> Reply {
        let current = self.current(id, facet, req);
        reply(self.core.dispatch_publish(current, req.params.clone())).await
    }
}

async fn reply(d: Dispatch) -> Reply {
    let r = match d {
        Dispatch::Ready(r) => r,
        Dispatch::Pending(f) => f.await,
    };
    match r.map_err(DispatchError::encoded) {
        Ok(b) => Reply::Ok(b.to_bytes()),
        Err(DispatchError::EncodedUserException(b)) => Reply::UserException(b),
        Err(DispatchError::UserException(_)) => unreachable!("encoded above"),
        Err(DispatchError::ObjectNotExist(_)) => Reply::ObjectNotExist,
        Err(DispatchError::FacetNotExist(_)) => Reply::FacetNotExist,
        Err(DispatchError::OperationNotExist(_)) => Reply::OperationNotExist,
        Err(DispatchError::UnknownLocalException(t)) => Reply::UnknownLocalException(t),
        Err(DispatchError::UnknownUserException(t)) => Reply::UnknownUserException(t),
        Err(DispatchError::UnknownException(t)) => Reply::UnknownException(t),
        Err(other) => unreachable!("floe-storm answers with no other status: {other}"),
    }
}

type Log = Arc<Mutex<HashMap<String, Vec<Arc<Event>>>>>;

/// Records deliveries per subscriber identity name; subscribers whose name
/// starts with `dead` answer ObjectNotExist. Links go to `peer` if set.
#[derive(Default)]
struct FakeSinks {
    log: Log,
    peer: Mutex<Option<Broker>>,
}

struct Recorder {
    name: String,
    log: Log,
}

impl SubscriberSink for Recorder {
    fn deliver(&self, events: Vec<Arc<Event>>) -> DeliveryFuture {
        let dead = self.name.starts_with("dead");
        if !dead {
            self.log
                .lock()
                .unwrap()
                .entry(self.name.clone())
                .or_default()
                .extend(events);
        }
        Box::pin(async move {
            if dead {
                Err(DeliveryError::ObjectNotExist)
            } else {
                Ok(())
            }
        })
    }
}

struct LinkToPeer {
    peer: Broker,
    link: Identity,
}

impl SubscriberSink for LinkToPeer {
    fn deliver(&self, events: Vec<Arc<Event>>) -> DeliveryFuture {
        let data: Vec<_> = events.iter().map(|e| event_data(e)).collect();
        let req = Request::new("forward", 0, params(|e| e.write(&data)));
        let peer = self.peer.clone();
        let link = self.link.clone();
        Box::pin(async move {
            match peer.dispatch_publish(&link, "", &req).await {
                Reply::Ok(_) => Ok(()),
                Reply::ObjectNotExist => Err(DeliveryError::ObjectNotExist),
                other => Err(DeliveryError::Failed(format!("{other:?}"))),
            }
        })
    }
}

impl SinkFactory for FakeSinks {
    fn subscriber_sink(&self, subscriber: &ProxyData, _qos: &Qos) -> Arc<dyn SubscriberSink> {
        Arc::new(Recorder {
            name: subscriber.identity.name.to_string(),
            log: self.log.clone(),
        })
    }

    fn link_sink(&self, link: &ProxyData) -> Arc<dyn SubscriberSink> {
        match self.peer.lock().unwrap().clone() {
            Some(peer) => Arc::new(LinkToPeer {
                peer,
                link: link.identity.clone(),
            }),
            None => Arc::new(Recorder {
                name: format!("link:{}", link.identity.name),
                log: self.log.clone(),
            }),
        }
    }

    fn resolve_link(&self, topic: &ProxyData) -> ResolveFuture {
        let peer = self.peer.lock().unwrap().clone();
        let id = topic.identity.clone();
        Box::pin(async move {
            let peer = peer.ok_or("no peer")?;
            let req = Request::new("getLinkProxy", 1, empty());
            match peer.dispatch_topic_manager(&id, "", &req).await {
                Reply::Ok(b) => {
                    let mut dec = floe::wire::Decoder::new(b.slice(6..));
                    read_proxy(&mut dec).map_err(|e| e.to_string())
                }
                other => Err(format!("{other:?}")),
            }
        })
    }
}

fn empty() -> Encapsulation {
    Encapsulation::empty(ENCODING_1_1)
}

fn empty_reply() -> Bytes {
    Bytes::from_static(&[6, 0, 0, 0, 1, 1])
}

fn encaps(hex: &str) -> Encapsulation {
    parse_encapsulation(unhex(hex)).unwrap()
}

fn unhex(s: &str) -> Bytes {
    if s == "-" {
        return Bytes::new();
    }
    Bytes::from(
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect::<Vec<u8>>(),
    )
}

fn parse_identity(s: &str) -> Identity {
    match s.split_once('/') {
        Some((c, n)) => Identity::new(n, c),
        None => Identity::from_name(s),
    }
}

fn capture_endpoints() -> AdapterEndpoints {
    AdapterEndpoints {
        topic_manager: vec![tcp_endpoint("127.0.0.1", 24000, 60000)],
        publish: vec![tcp_endpoint("127.0.0.1", 24001, 60000)],
        replicated: None,
    }
}

fn config(dir: &std::path::Path) -> StormConfig {
    StormConfig {
        data_dir: dir.to_path_buf(),
        flush_timeout: Duration::from_millis(100),
        ..StormConfig::default()
    }
}

async fn open(dir: &std::path::Path, sinks: Arc<FakeSinks>) -> Broker {
    Broker::new(floe_storm::Broker::open(config(dir), capture_endpoints(), sinks).unwrap()).await
}

fn reply_bytes(r: &Reply) -> (u8, Bytes) {
    match r {
        Reply::Ok(b) => (0, b.clone()),
        Reply::UserException(b) => (1, b.clone()),
        Reply::ObjectNotExist => (2, Bytes::new()),
        Reply::FacetNotExist => (3, Bytes::new()),
        Reply::OperationNotExist => (4, Bytes::new()),
        Reply::UnknownLocalException(_) => (5, Bytes::new()),
        Reply::UnknownUserException(_) => (6, Bytes::new()),
        Reply::UnknownException(_) => (7, Bytes::new()),
    }
}

async fn call(b: &Broker, id: &str, op: &str, mode: u8, params: Encapsulation) -> Reply {
    b.dispatch_topic_manager(&parse_identity(id), "", &Request::new(op, mode, params))
        .await
}

fn params(f: impl FnOnce(&mut Encoder)) -> Encapsulation {
    parse_encapsulation(params_bytes(f)).unwrap()
}

fn params_bytes(f: impl FnOnce(&mut Encoder)) -> Bytes {
    let mut enc = Encoder::new();
    let m = enc.start_encapsulation(ENCODING_1_1);
    f(&mut enc);
    enc.end_encapsulation(m);
    enc.finish()
}

fn subscriber(name: &str, mode: u8) -> ProxyData {
    let mut p = direct_proxy(
        Identity::from_name(name),
        vec![tcp_endpoint("127.0.0.1", 24002, 60000)],
    );
    p.mode = ProxyMode::from_u8(mode).unwrap();
    p
}

async fn subscribe(b: &Broker, topic: &str, sub: &ProxyData, qos: &[(&str, &str)]) -> Reply {
    subscribe_in(b, "IceStorm", topic, sub, qos).await
}

async fn subscribe_in(
    b: &Broker,
    instance: &str,
    topic: &str,
    sub: &ProxyData,
    qos: &[(&str, &str)],
) -> Reply {
    let qos: QosDict = qos
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let p = params(|e| {
        e.write(&qos);
        sub.encode(e);
    });
    call(
        b,
        &format!("{instance}/topic.{topic}"),
        "subscribeAndGetPublisher",
        0,
        p,
    )
    .await
}

async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
}

#[tokio::test]
async fn replies_match_the_real_icestorm_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let broker = open(dir.path(), Arc::new(FakeSinks::default())).await;
    let golden = include_str!("golden/icestorm_topic_manager.txt");
    let mut n = 0;
    for line in golden.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [id, op, mode, p, status, body] = f[..] else {
            panic!("bad golden line {line}")
        };
        let reply = call(&broker, id, op, mode.parse().unwrap(), encaps(p)).await;
        let (st, bytes) = reply_bytes(&reply);
        assert_eq!(
            (st, bytes.clone()),
            (status.parse().unwrap(), unhex(body)),
            "{id} {op}: got {reply:?}"
        );
        n += 1;
    }
    assert_eq!(n, 40);
}

#[tokio::test]
async fn mode_mismatch_unknown_operation_and_missing_objects() {
    let dir = tempfile::tempdir().unwrap();
    let broker = open(dir.path(), Arc::new(FakeSinks::default())).await;
    let create = params(|e| e.write_string("t"));
    assert!(matches!(
        call(&broker, "IceStorm/TopicManager", "create", 0, create).await,
        Reply::Ok(_)
    ));
    // getName is idempotent: mode 0 is refused like IceStorm does.
    assert!(matches!(
        call(&broker, "IceStorm/topic.t", "getName", 0, empty()).await,
        Reply::UnknownLocalException(t) if t.contains("unexpected operation mode")
    ));
    assert_eq!(
        call(&broker, "IceStorm/topic.t", "bogus", 0, empty()).await,
        Reply::OperationNotExist
    );
    assert_eq!(
        call(&broker, "IceStorm/topic.nope", "getName", 1, empty()).await,
        Reply::ObjectNotExist
    );
    assert_eq!(
        call(&broker, "Other/TopicManager", "retrieveAll", 1, empty()).await,
        Reply::ObjectNotExist
    );
    assert_eq!(
        broker
            .dispatch_publish(
                &parse_identity("IceStorm/nope.publish"),
                "",
                &Request::new("o", 0, empty())
            )
            .await,
        Reply::ObjectNotExist
    );
    // Truncated params: status 5, not a panic.
    assert!(matches!(
        call(
            &broker,
            "IceStorm/TopicManager",
            "create",
            0,
            encaps("0900000001010a6e65")
        )
        .await,
        Reply::UnknownLocalException(_)
    ));
    // ice_ids like IceStorm's.
    let ids = call(&broker, "IceStorm/topic.t", "ice_ids", 1, empty()).await;
    let want = params_bytes(|e| {
        e.write_size(3);
        for s in [
            "::Ice::Object",
            "::IceStorm::Topic",
            "::IceStorm::TopicInternal",
        ] {
            e.write_string(s);
        }
    });
    assert_eq!(ids, Reply::Ok(want));
}

#[tokio::test]
async fn publish_fans_out_verbatim_and_answers_twoway_publishers_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let sinks = Arc::new(FakeSinks::default());
    let broker = open(dir.path(), sinks.clone()).await;
    call(
        &broker,
        "IceStorm/TopicManager",
        "create",
        0,
        params(|e| e.write_string("news")),
    )
    .await;
    for (name, mode) in [("sub1", 0), ("sub2", MODE_ONEWAY as u8), ("sub4", 2)] {
        assert!(matches!(
            subscribe(&broker, "news", &subscriber(name, mode), &[]).await,
            Reply::Ok(_)
        ));
    }
    let mut ctx = Context::new();
    ctx.insert("k".into(), "v".into());
    let sliced = encaps("32000000010101110e3a3a4361703a3a44657269766564060000000164310b3a3a4361703a3a426173650800000005000000");
    let req = Request {
        operation: "clsSliced".into(),
        mode: 2,
        context: ctx.clone(),
        params: sliced.clone(),
    };
    let pubid = parse_identity("IceStorm/news.publish");
    assert_eq!(
        broker.dispatch_publish(&pubid, "", &req).await,
        Reply::Ok(empty_reply())
    );
    // A 1.0 request gets a 1.0 empty reply.
    let req10 = Request::new("enums", 0, encaps("0a0000000100022c0100"));
    assert_eq!(
        broker.dispatch_publish(&pubid, "", &req10).await,
        Reply::Ok(unhex("060000000100"))
    );
    // ice_isA is an event like any other (never checkedCast a publisher).
    let isa = Request::new("ice_isA", 1, params(|e| e.write_string("::Cap::Hello")));
    assert_eq!(
        broker.dispatch_publish(&pubid, "", &isa).await,
        Reply::Ok(empty_reply())
    );
    tokio::time::sleep(Duration::from_millis(300)).await; // batch flush
    let log = sinks.log.lock().unwrap();
    for name in ["sub1", "sub2", "sub4"] {
        let got = &log[name];
        assert_eq!(got.len(), 3, "{name}");
        assert_eq!(got[0].operation, "clsSliced");
        assert_eq!(got[0].mode as u8, 2);
        assert_eq!(got[0].context, ctx);
        assert_eq!(got[0].params, sliced);
        // Zero copy: the very same bytes, not a copy.
        assert_eq!(got[0].params.data.as_ptr(), sliced.data.as_ptr());
        assert_eq!(got[1].params, encaps("0a0000000100022c0100"));
        assert_eq!(got[2].operation, "ice_isA");
    }
    let t = broker.topic("news").unwrap();
    assert_eq!(
        t.counters()
            .events_in
            .load(std::sync::atomic::Ordering::Relaxed),
        3
    );
    assert_eq!(
        t.counters()
            .events_out
            .load(std::sync::atomic::Ordering::Relaxed),
        9
    );
}

#[tokio::test]
async fn per_subscriber_publisher_reaches_one_subscriber() {
    let dir = tempfile::tempdir().unwrap();
    let sinks = Arc::new(FakeSinks::default());
    let broker = open(dir.path(), sinks.clone()).await;
    call(
        &broker,
        "IceStorm/TopicManager",
        "create",
        0,
        params(|e| e.write_string("a.publish.x")),
    )
    .await;
    let mut cat = subscriber("s1", 0);
    cat.identity.category = "cat".into();
    let Reply::Ok(p) = subscribe(&broker, "a.publish.x", &cat, &[]).await else {
        panic!()
    };
    subscribe(&broker, "a.publish.x", &subscriber("s2", 0), &[]).await;
    let mut dec = floe::wire::Decoder::new(p.slice(6..));
    let per = read_proxy(&mut dec).unwrap().unwrap();
    assert_eq!(per.identity.name, "topic.a.publish.x.publish.cat/s1");
    let r = broker
        .dispatch_publish(&per.identity, "", &Request::new("o", 0, empty()))
        .await;
    assert_eq!(r, Reply::Ok(empty_reply()));
    settle().await;
    let log = sinks.log.lock().unwrap();
    assert_eq!(log["s1"].len(), 1);
    assert!(!log.contains_key("s2"));
}

#[tokio::test]
async fn dead_subscriber_is_removed_and_stays_removed_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let sinks = Arc::new(FakeSinks::default());
        let broker = open(dir.path(), sinks.clone()).await;
        call(
            &broker,
            "IceStorm/TopicManager",
            "create",
            0,
            params(|e| e.write_string("t")),
        )
        .await;
        subscribe(
            &broker,
            "t",
            &subscriber("dead1", 0),
            &[("retryCount", "-1")],
        )
        .await;
        subscribe(&broker, "t", &subscriber("alive", 0), &[]).await;
        let pubid = parse_identity("IceStorm/t.publish");
        broker
            .dispatch_publish(&pubid, "", &Request::new("o", 0, empty()))
            .await;
        settle().await;
        assert_eq!(
            broker.topic("t").unwrap().subscriber_ids(),
            [Identity::from_name("alive")]
        );
    }
    let broker = open(dir.path(), Arc::new(FakeSinks::default())).await;
    assert_eq!(
        broker.topic("t").unwrap().subscriber_ids(),
        [Identity::from_name("alive")]
    );
}

#[tokio::test]
async fn restart_keeps_topics_subscribers_links_and_qos() {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = |b: Broker| async move {
        let mut out = Vec::new();
        out.push(reply_bytes(
            &call(&b, "IceStorm/TopicManager", "retrieveAll", 1, empty()).await,
        ));
        for t in ["news", "news2"] {
            let id = format!("IceStorm/topic.{t}");
            out.push(reply_bytes(
                &call(&b, &id, "getSubscribers", 0, empty()).await,
            ));
            out.push(reply_bytes(
                &call(&b, &id, "getLinkInfoSeq", 1, empty()).await,
            ));
        }
        out
    };
    let before;
    {
        let broker = open(dir.path(), Arc::new(FakeSinks::default())).await;
        for t in ["news", "news2", "gone"] {
            call(
                &broker,
                "IceStorm/TopicManager",
                "create",
                0,
                params(|e| e.write_string(t)),
            )
            .await;
        }
        subscribe(
            &broker,
            "news",
            &subscriber("z", 0),
            &[("reliability", "ordered")],
        )
        .await;
        subscribe(&broker, "news", &subscriber("a", MODE_ONEWAY as u8), &[]).await;
        subscribe(&broker, "news", &subscriber("m", 0), &[]).await;
        let unsub = params(|e| subscriber("m", 0).encode(e));
        call(&broker, "IceStorm/topic.news", "unsubscribe", 2, unsub).await;
        let news2 = direct_proxy(
            Identity::new("topic.news2", "IceStorm"),
            capture_endpoints().topic_manager,
        );
        let link = params(|e| {
            news2.encode(e);
            e.write_i32(5);
        });
        assert_eq!(
            call(&broker, "IceStorm/topic.news", "link", 0, link).await,
            Reply::Ok(empty_reply())
        );
        call(&broker, "IceStorm/topic.gone", "destroy", 0, empty()).await;
        before = snapshot(broker).await;
    }
    let broker = open(dir.path(), Arc::new(FakeSinks::default())).await;
    let after = snapshot(broker.clone()).await;
    assert_eq!(before, after);
    assert_eq!(
        broker.topic("news").unwrap().subscriber_ids(),
        [
            Identity::from_name("z"),
            Identity::from_name("a"),
            // Links are listed as subscribers, like IceStorm does.
            Identity::new("topic.news2", "IceStorm"),
        ]
    );
    assert_eq!(broker.topic("news").unwrap().link_infos()[0].cost, 5);
    assert!(broker.topic("gone").is_none());
}

#[tokio::test]
async fn links_forward_with_cost_filter_and_one_hop_between_two_brokers() {
    let dir_a = tempfile::tempdir().unwrap();
    let dir_b = tempfile::tempdir().unwrap();
    let sinks_a = Arc::new(FakeSinks::default());
    let sinks_b = Arc::new(FakeSinks::default());
    let a = open(dir_a.path(), sinks_a.clone()).await;
    let mut cb = config(dir_b.path());
    cb.instance_name = "B".into();
    let b = floe_storm::Broker::open(
        cb,
        AdapterEndpoints {
            topic_manager: vec![tcp_endpoint("127.0.0.1", 34000, 60000)],
            publish: vec![tcp_endpoint("127.0.0.1", 34001, 60000)],
            replicated: None,
        },
        sinks_b.clone(),
    )
    .unwrap();
    let b = Broker::new(b).await;
    *sinks_a.peer.lock().unwrap() = Some(b.clone());
    call(
        &a,
        "IceStorm/TopicManager",
        "create",
        0,
        params(|e| e.write_string("news")),
    )
    .await;
    let Reply::Ok(tp) = call(
        &b,
        "B/TopicManager",
        "create",
        0,
        params(|e| e.write_string("news")),
    )
    .await
    else {
        panic!()
    };
    let r = subscribe_in(&b, "B", "news", &subscriber("remote", 0), &[]).await;
    assert!(matches!(r, Reply::Ok(_)));
    let b_news = {
        let mut dec = floe::wire::Decoder::new(tp.slice(6..));
        read_proxy(&mut dec).unwrap().unwrap()
    };
    let link = params(|e| {
        b_news.encode(e);
        e.write_i32(5);
    });
    let news_a = "IceStorm/topic.news";
    let lr = a
        .dispatch_topic_manager(&parse_identity(news_a), "", &Request::new("link", 0, link))
        .await;
    assert_eq!(lr, Reply::Ok(empty_reply()));
    // b links back to a: events that came over a link must not bounce back.
    *sinks_b.peer.lock().unwrap() = Some(a.clone());
    let Reply::Ok(tpa) = call(
        &a,
        "IceStorm/TopicManager",
        "retrieve",
        1,
        params(|e| e.write_string("news")),
    )
    .await
    else {
        panic!()
    };
    let a_news = read_proxy(&mut floe::wire::Decoder::new(tpa.slice(6..)))
        .unwrap()
        .unwrap();
    let back = params(|e| {
        a_news.encode(e);
        e.write_i32(0);
    });
    assert_eq!(
        b.dispatch_topic_manager(
            &parse_identity("B/topic.news"),
            "",
            &Request::new("link", 0, back)
        )
        .await,
        Reply::Ok(empty_reply())
    );
    subscribe(&a, "news", &subscriber("local", 0), &[]).await;

    let publish = |cost: &str| {
        let mut ctx = Context::new();
        ctx.insert("cost".into(), cost.into());
        Request {
            operation: format!("c{cost}"),
            mode: 0,
            context: ctx,
            params: empty(),
        }
    };
    let pub_a = parse_identity("IceStorm/news.publish");
    a.dispatch_publish(&pub_a, "", &publish("3")).await;
    a.dispatch_publish(&pub_a, "", &publish("9")).await;
    settle().await;
    let ops = |s: &FakeSinks, n: &str| -> Vec<String> {
        s.log
            .lock()
            .unwrap()
            .get(n)
            .map(|v| v.iter().map(|e| e.operation.clone()).collect())
            .unwrap_or_default()
    };
    assert_eq!(ops(&sinks_a, "local"), ["c3", "c9"]);
    assert_eq!(
        ops(&sinks_b, "remote"),
        ["c3"],
        "cost 9 must not cross a cost-5 link"
    );
    // Publishing on b reaches a once (b's link has cost 0) and does not come back.
    b.dispatch_publish(&parse_identity("B/news.publish"), "", &publish("1"))
        .await;
    settle().await;
    assert_eq!(ops(&sinks_a, "local"), ["c3", "c9", "c1"]);
    assert_eq!(ops(&sinks_b, "remote"), ["c3", "c1"]);

    // The counters, with IceStorm's meanings: published by publishers,
    // forwarded over links; a link is a subscriber of its topic.
    let counts = |broker: &floe_storm::Broker| {
        let m = broker.metrics();
        let t = m.topic("news").unwrap().clone();
        let subs: Vec<(String, bool, u64, usize, usize)> = m
            .subscribers_of("news")
            .map(|s| (s.id.clone(), s.link, s.delivered, s.queued, s.outstanding))
            .collect();
        ((t.published, t.forwarded, t.subscribers, t.links), subs)
    };
    assert_eq!(
        counts(&a.core),
        (
            (2, 1, 1, 1),
            vec![
                ("B/topic.news".into(), true, 1, 0, 0),
                ("local".into(), false, 3, 0, 0)
            ]
        )
    );
    assert_eq!(
        counts(&b.core),
        (
            (1, 1, 1, 1),
            vec![
                ("remote".into(), false, 2, 0, 0),
                ("IceStorm/topic.news".into(), true, 1, 0, 0)
            ]
        )
    );
}

/// Hostile input: every captured request, truncated at every length and
/// with every byte flipped, gets a reply (never a panic); so do `forward`
/// calls with mangled event data.
#[tokio::test]
async fn mangled_requests_get_replies_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let broker = open(dir.path(), Arc::new(FakeSinks::default())).await;
    call(
        &broker,
        "IceStorm/TopicManager",
        "create",
        0,
        params(|e| e.write_string("news")),
    )
    .await;
    call(
        &broker,
        "IceStorm/TopicManager",
        "create",
        0,
        params(|e| e.write_string("news2")),
    )
    .await;
    let golden = include_str!("golden/icestorm_topic_manager.txt");
    let mut forward = vec![(
        "IceStorm/news.link".to_string(),
        "forward".to_string(),
        0u8,
        params_bytes(|e| {
            e.write_size(2);
            for op in ["a", "b"] {
                e.write_string(op);
                e.write_size(0);
                e.write_byte_seq(&[6, 0, 0, 0, 1, 1]);
                e.write_size(1);
                e.write_string("cost");
                e.write_string("1");
            }
        }),
    )];
    let mut cases: Vec<(String, String, u8, Bytes)> = golden
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[0].to_string(),
                f[1].to_string(),
                f[2].parse().unwrap(),
                unhex(f[3]),
            )
        })
        .filter(|(_, op, _, _)| op != "destroy")
        .collect();
    cases.append(&mut forward);
    let mut replies = 0;
    for (id, op, mode, full) in cases {
        let data = full.slice(6..);
        let mut variants: Vec<Vec<u8>> = (0..data.len()).map(|n| data[..n].to_vec()).collect();
        for i in 0..data.len() {
            let mut v = data.to_vec();
            v[i] ^= 0xff;
            variants.push(v);
        }
        for v in variants {
            let req = Request::new(
                &op,
                mode,
                Encapsulation {
                    encoding: ENCODING_1_1,
                    data: Bytes::from(v),
                },
            );
            let identity = parse_identity(&id);
            let _ = if id.ends_with(".link") {
                broker.dispatch_publish(&identity, "", &req).await
            } else {
                broker.dispatch_topic_manager(&identity, "", &req).await
            };
            replies += 1;
        }
    }
    assert!(replies > 1500, "{replies}");
}

/// Built-ins are answered per object from the generated dispatchers' type
/// ids (IceStorm's internal interfaces included), in the request's
/// encoding; malformed params are status 5.
#[tokio::test]
async fn builtins_and_malformed_forward() {
    let dir = tempfile::tempdir().unwrap();
    let broker = open(dir.path(), Arc::new(FakeSinks::default())).await;
    call(
        &broker,
        "IceStorm/TopicManager",
        "create",
        0,
        params(|e| e.write_string("t")),
    )
    .await;
    let is_a = |id: &str| params(|e| e.write_string(id));
    let yes = Reply::Ok(Bytes::from_static(&[7, 0, 0, 0, 1, 1, 1]));
    for (obj, id) in [
        ("IceStorm/TopicManager", "::IceStorm::TopicManagerInternal"),
        ("IceStorm/Finder", "::IceStorm::Finder"),
        ("IceStorm/topic.t", "::IceStorm::Topic"),
    ] {
        assert_eq!(
            call(&broker, obj, "ice_isA", 1, is_a(id)).await,
            yes,
            "{obj}"
        );
    }
    let link = parse_identity("IceStorm/t.link");
    let r = broker
        .dispatch_publish(
            &link,
            "",
            &Request::new("ice_isA", 1, is_a("::IceStorm::TopicLink")),
        )
        .await;
    assert_eq!(r, yes);
    let r = call(&broker, "IceStorm/Finder", "ice_id", 1, empty()).await;
    assert_eq!(
        r,
        Reply::Ok(params_bytes(|e| e.write_string("::IceStorm::Finder")))
    );
    // Encoding 1.0 request, 1.0 reply.
    let ping10 = Encapsulation::empty(floe::wire::ENCODING_1_0);
    assert_eq!(
        call(&broker, "IceStorm/topic.t", "ice_ping", 1, ping10).await,
        Reply::Ok(Bytes::from_static(&[6, 0, 0, 0, 1, 0]))
    );
    // Truncated ice_isA params.
    let r = call(
        &broker,
        "IceStorm/topic.t",
        "ice_isA",
        1,
        encaps("0700000001010a"),
    )
    .await;
    assert!(matches!(r, Reply::UnknownLocalException(_)), "{r:?}");
    // A forward whose count promises more than the bytes hold.
    let r = broker
        .dispatch_publish(
            &link,
            "",
            &Request::new("forward", 0, encaps("08000000010109ff")),
        )
        .await;
    assert!(matches!(r, Reply::UnknownLocalException(_)), "{r:?}");
    // An event whose data is not one encapsulation.
    let bad = params(|e| {
        e.write_size(1);
        e.write_string("o");
        e.write_size(0);
        e.write_byte_seq(&[9, 0, 0, 0, 1, 1]);
        e.write_size(0);
    });
    let r = broker
        .dispatch_publish(&link, "", &Request::new("forward", 0, bad))
        .await;
    assert!(matches!(r, Reply::UnknownLocalException(_)), "{r:?}");
    // A facet on an existing object: FacetNotExist.
    let r = broker
        .dispatch_topic_manager(
            &parse_identity("IceStorm/topic.t"),
            "f",
            &Request::new("getName", 1, empty()),
        )
        .await;
    assert_eq!(r, Reply::FacetNotExist);
}
