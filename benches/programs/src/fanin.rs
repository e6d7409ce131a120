//! The fan-in workload shared by the `fanin_client` program (run by
//! `cargo xtask compare --fanin` against floe-storm and IceStorm 3.7) and
//! `benches/fanin.rs` (criterion, floe-storm in-process): several
//! publishers send CODAC messages (`Bench::Messages`, benches/Bench.ice)
//! through an IceStorm-compatible broker to one subscriber.
//!
//! - The client speaks only the IceStorm wire contract (`TopicManager::create`,
//!   `Topic::getPublisher`, `subscribeAndGetPublisher`, `destroy`), so the
//!   same code runs against either broker.
//! - Each publisher has its own communicator (its own connection to the
//!   broker, as separate publisher processes would) and publishes with a
//!   **oneway** proxy, as IceStorm publishers do.
//! - The subscriber's adapter runs on a tokio runtime of its own (its own
//!   worker threads), as a separate subscriber process would. On the
//!   publishers' runtime it was one task among five on two workers, and
//!   while the publishers wrote it got too few turns to keep up: the
//!   broker buffered the difference and the run measured the client's
//!   scheduling more than the broker.
//! - The subscriber is a `Messages` servant on a **oneway** subscriber
//!   proxy: IceStorm's documentation recommends oneway subscribers for
//!   throughput (its clock demo defaults to oneway); twoway delivery would
//!   cap the rate at IceStorm's 5 outstanding requests per subscriber.
//! - Timing starts when the warm-up messages (a few per publisher) have
//!   all arrived and ends at the last message received. A run ends when
//!   every message has arrived or nothing arrived for the drain timeout;
//!   `lost` is sent − received.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use floe::runtime::{Communicator, Current, DispatchError, OperationMode, Properties, Proxy};
use floe::wire::ProxyData;
use floe::{Decoder, Identity};

use crate::*;

/// Any failure of a run (setup, broker, connection).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The result type of this module.
pub type Result<T, E = BoxError> = std::result::Result<T, E>;

/// Publishers per run.
pub const PUBLISHERS: usize = 4;

/// Warm-up messages per publisher (not timed).
pub const WARM_UP: usize = 5;

/// The payload kinds: `bytes` (ByteSeq), `floats` (FloatSeq), `data` (DataMessage).
pub const KINDS: [&str; 3] = ["bytes", "floats", "data"];

/// The message sizes, in payload bytes.
pub const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];

/// Every fan-in workload name: `fanin_{kind}_{size}`.
pub fn workloads() -> Vec<String> {
    let mut w = Vec::new();
    for kind in KINDS {
        for size in SIZES {
            w.push(format!("fanin_{kind}_{size}"));
        }
    }
    w
}

/// Messages per publisher for a message size, before `BENCH_SCALE`
/// (about 400–600 MB per run in total).
pub fn messages_per_publisher(size: usize) -> usize {
    match size {
        s if s <= 10_000 => 10_000,
        s if s <= 100_000 => 1_500,
        _ => 150,
    }
}

/// A parsed workload: payload kind and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workload {
    /// `bytes`, `floats` or `data`.
    pub kind: &'static str,
    /// Payload bytes per message.
    pub size: usize,
}

impl Workload {
    /// Parses `fanin_{kind}_{size}`.
    pub fn parse(name: &str) -> Option<Workload> {
        let rest = name.strip_prefix("fanin_")?;
        let (kind, size) = rest.split_once('_')?;
        let kind = KINDS.into_iter().find(|k| *k == kind)?;
        let size = size.parse().ok()?;
        Some(Workload { kind, size })
    }

    /// The workload's name.
    pub fn name(&self) -> String {
        format!("fanin_{}_{}", self.kind, self.size)
    }
}

/// What one run measured.
#[derive(Clone, Debug)]
pub struct FanInResult {
    /// Messages published in the timed phase (all publishers).
    pub sent: u64,
    /// Of those, messages the subscriber received.
    pub received: u64,
    /// Payload bytes received in the timed phase.
    pub bytes: u64,
    /// From the start of the timed phase to the last message received.
    pub seconds: f64,
}

impl FanInResult {
    /// Payload megabytes (10⁶ bytes) received per second.
    pub fn mb_per_s(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes as f64 / 1e6 / self.seconds
        } else {
            0.0
        }
    }

    /// Messages sent but not received.
    pub fn lost(&self) -> u64 {
        self.sent.saturating_sub(self.received)
    }
}

/// The subscriber's counters.
struct Received {
    messages: AtomicU64,
    /// When the last message arrived, in ns since `epoch`.
    last: AtomicU64,
    epoch: Instant,
}

impl Received {
    fn count(&self) {
        self.messages.fetch_add(1, Ordering::Relaxed);
        let ns = self.epoch.elapsed().as_nanos() as u64;
        self.last.fetch_max(ns, Ordering::Relaxed);
    }
}

/// The subscriber servant: counts what arrives (after the generated code
/// has decoded it, as a real subscriber's would).
struct Subscriber(Arc<Received>);

impl Messages for Subscriber {
    async fn publish_bytes_one_way(&self, m: Bytes, _: &Current) -> Result<(), DispatchError> {
        std::hint::black_box(m);
        self.0.count();
        Ok(())
    }
    async fn publish_bytes_two_way(&self, m: Bytes, _: &Current) -> Result<i32, DispatchError> {
        self.0.count();
        Ok(m.len() as i32)
    }
    async fn publish_floats_one_way(&self, m: Vec<f32>, _: &Current) -> Result<(), DispatchError> {
        std::hint::black_box(m);
        self.0.count();
        Ok(())
    }
    async fn publish_floats_two_way(&self, m: Vec<f32>, _: &Current) -> Result<i32, DispatchError> {
        self.0.count();
        Ok(m.len() as i32)
    }
    async fn publish_data_one_way(&self, m: DataMessage, _: &Current) -> Result<(), DispatchError> {
        std::hint::black_box(m);
        self.0.count();
        Ok(())
    }
    async fn publish_data_two_way(
        &self,
        m: DataMessage,
        _: &Current,
    ) -> Result<i32, DispatchError> {
        self.0.count();
        Ok(m.signals.len() as i32)
    }
}

/// The subscriber's own runtime (its own threads, as a separate
/// subscriber process would have), created on first use.
fn subscriber_runtime() -> &'static tokio::runtime::Handle {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        // Named apart from the publishers' workers, for profiles.
        finish_runtime(
            tokio::runtime::Builder::new_multi_thread()
                .thread_name("subscriber")
                .enable_all(),
        )
    })
    .handle()
}

/// Properties of every communicator of the run: large messages allowed
/// (the 1 MB workloads), no retries hiding failures.
fn properties() -> Properties {
    let props = Properties::new();
    props.set("Ice.MessageSizeMax", "102400");
    props
}

/// Decodes a proxy returned by an IceStorm operation (null is an error).
fn returned_proxy(comm: &Communicator, reply: floe::runtime::Response, op: &str) -> Result<Proxy> {
    let mut dec = Decoder::from_encapsulation(reply.into_ok()?)?;
    let data: Option<ProxyData> = dec.read()?;
    data.map(|d| Proxy::from_data(comm, d))
        .ok_or_else(|| format!("{op} returned a null proxy").into())
}

/// One payload, encoded once and published many times.
enum Payload {
    Bytes(Bytes),
    Floats(Vec<f32>),
    Data(DataMessage),
}

impl Payload {
    fn new(w: Workload) -> Payload {
        match w.kind {
            "bytes" => Payload::Bytes(pattern(w.size)),
            "floats" => Payload::Floats((0..w.size / 4).map(|i| i as f32).collect()),
            _ => Payload::Data(make_data_message(w.size)),
        }
    }

    async fn publish(&self, p: &MessagesPrx) -> floe::runtime::Result<()> {
        match self {
            Payload::Bytes(b) => p.publish_bytes_one_way(b.clone()).await,
            Payload::Floats(f) => p.publish_floats_one_way(f).await,
            Payload::Data(d) => p.publish_data_one_way(d).await,
        }
    }
}

/// Waits until `received` reaches `want` or nothing arrived for `drain`.
async fn wait_for(received: &Received, want: u64, drain: Duration) -> u64 {
    let mut last = received.messages.load(Ordering::Relaxed);
    let mut since = Instant::now();
    loop {
        let now = received.messages.load(Ordering::Relaxed);
        if now >= want {
            return now;
        }
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= drain {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Runs one fan-in measurement through the broker whose TopicManager is
/// `topic_manager` (a stringified proxy): `publishers` publishers send
/// `per_publisher` messages each to one subscriber.
///
/// # Errors
///
/// Broker or connection failures while setting up; lost messages are
/// reported in the result, not as errors.
pub async fn run(
    topic_manager: &str,
    w: Workload,
    publishers: usize,
    per_publisher: usize,
    drain: Duration,
) -> Result<FanInResult> {
    let sub_comm = Communicator::with_properties(properties());
    let result = run_with(
        &sub_comm,
        topic_manager,
        w,
        publishers,
        per_publisher,
        drain,
    )
    .await;
    sub_comm.destroy().await;
    result
}

async fn run_with(
    sub_comm: &Communicator,
    topic_manager: &str,
    w: Workload,
    publishers: usize,
    per_publisher: usize,
    drain: Duration,
) -> Result<FanInResult> {
    static RUN: AtomicU64 = AtomicU64::new(0);
    let tm = sub_comm.string_to_proxy(topic_manager)?;
    let name = format!(
        "fanin-{}-{}-{}",
        w.name(),
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    );
    let reply = tm
        .invoke(
            "create",
            OperationMode::Normal,
            tm.encode_params(|e| e.write_string(&name)),
        )
        .await?;
    let topic = returned_proxy(sub_comm, reply, "create")?;

    // The subscriber.
    let received = Arc::new(Received {
        messages: AtomicU64::new(0),
        last: AtomicU64::new(0),
        epoch: Instant::now(),
    });
    let (adapter, sub) = {
        let (sub_comm, received) = (sub_comm.clone(), received.clone());
        subscriber_runtime()
            .spawn(async move {
                let adapter = sub_comm
                    .create_object_adapter_with_endpoints(
                        "FanIn.Subscriber",
                        "tcp -h 127.0.0.1 -p 0",
                    )
                    .await?;
                let sub = adapter
                    .add(
                        Identity::from_name("subscriber"),
                        MessagesDispatcher::new(Subscriber(received)),
                    )?
                    .ice_oneway();
                adapter.activate();
                Ok::<_, BoxError>((adapter, sub))
            })
            .await
            .map_err(|e| format!("subscriber setup: {e}"))??
    };
    topic
        .invoke(
            "subscribeAndGetPublisher",
            OperationMode::Normal,
            topic.encode_params(|e| {
                e.write_size(0); // QoS: none
                e.write(&sub.to_data());
            }),
        )
        .await?
        .into_ok()?;

    // The publishers, each with its own communicator and connection.
    let reply = topic
        .invoke(
            "getPublisher",
            OperationMode::Nonmutating,
            topic.empty_params(),
        )
        .await?;
    let publisher = returned_proxy(sub_comm, reply, "getPublisher")?.to_data();
    let payload = Arc::new(Payload::new(w));
    let mut comms = Vec::new();
    let mut prxs = Vec::new();
    for _ in 0..publishers {
        let c = Communicator::with_properties(properties());
        let p = MessagesPrx::unchecked_cast(Proxy::from_data(&c, publisher.clone()).ice_oneway());
        // Connect now, not in the timed phase.
        p.ice_twoway().ice_ping().await?;
        comms.push(c);
        prxs.push(p);
    }

    // Warm-up: a few messages each, all delivered before timing starts.
    let result = async {
        for p in &prxs {
            for _ in 0..WARM_UP {
                payload.publish(p).await?;
            }
        }
        let warm = (publishers * WARM_UP) as u64;
        let got = wait_for(&received, warm, drain).await;
        if got < warm {
            return Err(format!("warm-up: {got} of {warm} messages arrived").into());
        }
        received.messages.store(0, Ordering::Relaxed);
        let start_ns = received.epoch.elapsed().as_nanos() as u64;
        received.last.store(start_ns, Ordering::Relaxed);
        let tasks: Vec<_> = prxs
            .iter()
            .map(|p| {
                let (p, payload) = (p.clone(), payload.clone());
                tokio::spawn(async move {
                    for _ in 0..per_publisher {
                        payload.publish(&p).await?;
                    }
                    Ok::<_, floe::runtime::Error>(())
                })
            })
            .collect();
        for t in tasks {
            t.await.map_err(|e| format!("publisher task: {e}"))??;
        }
        let sent = (publishers * per_publisher) as u64;
        let got = wait_for(&received, sent, drain).await;
        let last_ns = received.last.load(Ordering::Relaxed);
        let seconds = Duration::from_nanos(last_ns.saturating_sub(start_ns)).as_secs_f64();
        Ok(FanInResult {
            sent,
            received: got,
            bytes: got * w.size as u64,
            seconds,
        })
    }
    .await;

    for c in comms {
        c.destroy().await;
    }
    let _ = topic
        .invoke("destroy", OperationMode::Normal, topic.empty_params())
        .await;
    adapter.deactivate().await;
    adapter.wait_for_deactivate().await;
    result
}

/// One JSON result line, in the format of the bench clients plus `sent`,
/// `received`, `lost` and `mb_s`.
pub fn json_line(implementation: &str, w: Workload, r: &FanInResult) -> String {
    let us = if r.received > 0 {
        r.seconds * 1e6 / r.received as f64
    } else {
        0.0
    };
    format!(
        "{{\"impl\":\"{implementation}\",\"workload\":\"{}\",\"calls\":{},\"seconds\":{:.6},\"us_per_call\":{us:.3},\"mbit_s\":{:.3},\"mb_s\":{:.3},\"sent\":{},\"received\":{},\"lost\":{}}}",
        w.name(),
        r.received,
        r.seconds,
        r.mb_per_s() * 8.0,
        r.mb_per_s(),
        r.sent,
        r.received,
        r.lost()
    )
}
