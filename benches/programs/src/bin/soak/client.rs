//! The soak client: `clients` tasks, each with its own communicator, run
//! [`round`] in a loop until the deadline, while a subscriber of the same
//! process counts the events they publish through the broker.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use floe::codegen::ClassRef;
use floe::runtime::{Communicator, Identity, Proxy};
use floe_storm::slice::ice_storm::{QoS, TopicManagerPrx, TopicPrx};

use crate::soak::{self, Node, Tag};
use crate::subscriber::{Subscriber, Tracker};
use crate::{fail, properties};
use floe_bench::{make_data_message, pattern, LatencyPrx, MessagesPrx, ThroughputPrx};

/// Any setup failure.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How the client was started.
pub struct Options {
    /// The soak server's port on 127.0.0.1.
    pub port: u16,
    /// The broker's TopicManager, stringified.
    pub topic_manager: String,
    /// Client tasks.
    pub clients: usize,
    /// How long the tasks run.
    pub seconds: u64,
}

/// Size of the large byte sequences (sent and received each round).
const BIG: usize = 500_000;
/// CODAC message size (`make_data_message`).
const CODAC: usize = 10_000;
/// Nodes in the class graph of `reverse`.
const NODES: i32 = 64;
/// Tags shared by the nodes (node `v` has tag `v % TAGS`).
const TAGS: i32 = 4;
/// Events each task publishes per round, and their payload size.
const EVENTS: usize = 5;
const EVENT_BYTES: usize = 256;
/// Error messages printed in full (the rest are only counted).
const PRINTED_ERRORS: u64 = 20;
/// How often `soak-stats` lines are printed.
const STATS_EVERY: Duration = Duration::from_secs(10);
/// After the tasks stop, how long the subscriber may go without a new
/// event before the rest counts as missing.
const DRAIN: Duration = Duration::from_secs(15);

/// Counters shared by every task.
#[derive(Default)]
struct Counters {
    calls: AtomicU64,
    errors: AtomicU64,
}

impl Counters {
    /// Counts the outcome of one call: `Some` of its value on success.
    fn count<T>(&self, op: &str, r: floe::runtime::Result<T>) -> Option<T> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.error(op, &e);
                None
            }
        }
    }

    /// Counts an error (a failed call or a wrong result).
    fn error(&self, op: &str, what: &dyn std::fmt::Display) {
        let n = self.errors.fetch_add(1, Ordering::Relaxed);
        if n < PRINTED_ERRORS {
            eprintln!("soak: {op}: {what}");
        }
    }
}

/// One task's proxies and data.
struct Task {
    id: i32,
    a: LatencyPrx,
    a_oneway: LatencyPrx,
    a_batch: LatencyPrx,
    t: ThroughputPrx,
    m: MessagesPrx,
    m_oneway: MessagesPrx,
    g: soak::GraphPrx,
    events: soak::EventsPrx,
    big: Bytes,
    data: floe_bench::DataMessage,
    payload: Bytes,
    /// Events published (accepted by the runtime) so far.
    published: Arc<AtomicU64>,
}

/// A list of `NODES` nodes, values 0.., sharing `TAGS` tags.
fn make_list() -> Option<ClassRef<Node>> {
    let tags: Vec<ClassRef<Tag>> = (0..TAGS)
        .map(|t| {
            ClassRef::new(Tag {
                name: format!("tag{t}"),
            })
        })
        .collect();
    let mut list = None;
    for value in (0..NODES).rev() {
        let tag = Some(tags[(value % TAGS) as usize].clone());
        list = Some(ClassRef::new(Node {
            value,
            next: list,
            tag,
        }));
    }
    list
}

/// Checks `reverse`'s result: values NODES-1 down to 0, tags kept and
/// still shared (one instance per tag name).
fn check_reversed(list: Option<ClassRef<Node>>) -> Result<(), String> {
    let mut want = NODES - 1;
    let mut node = list;
    let mut seen: Vec<Option<ClassRef<Tag>>> = vec![None; TAGS as usize];
    while let Some(n) = node {
        let r = n.read();
        if r.value != want {
            return Err(format!("node {want} has value {}", r.value));
        }
        let Some(tag) = r.tag.clone() else {
            return Err(format!("node {want} has no tag"));
        };
        let slot = &mut seen[(want % TAGS) as usize];
        if tag.read().name != format!("tag{}", want % TAGS) {
            return Err(format!("node {want} has tag {}", tag.read().name));
        }
        match slot {
            Some(first) if !ClassRef::ptr_eq(first, &tag) => {
                return Err(format!("node {want}: its tag is a copy, not shared"));
            }
            Some(_) => {}
            None => *slot = Some(tag),
        }
        want -= 1;
        node = r.next.clone();
    }
    if want != -1 {
        return Err(format!("list ends at {}", want + 1));
    }
    Ok(())
}

/// One round of mixed operations; every call is counted in `c`.
async fn round(task: &Task, c: &Counters) {
    for _ in 0..10 {
        c.count("o", task.a.o().await);
    }
    for _ in 0..10 {
        c.count("o (oneway)", task.a_oneway.o().await);
    }
    for _ in 0..10 {
        c.count("o (batch oneway)", task.a_batch.o().await);
    }
    c.count(
        "flushBatchRequests",
        task.a_batch.ice_flush_batch_requests().await,
    );
    c.count("sendByteSeq", task.t.send_byte_seq(task.big.clone()).await);
    if let Some(b) = c.count("recvByteSeq", task.t.recv_byte_seq(BIG as i32).await) {
        if b != task.big {
            c.error(
                "recvByteSeq",
                &format!("{} bytes, not the pattern", b.len()),
            );
        }
    }
    if let Some(v) = c.count("recvFixedSeq", task.t.recv_fixed_seq(1000).await) {
        if v.len() != 1000 {
            c.error("recvFixedSeq", &format!("{} elements", v.len()));
        }
    }
    let want = task.data.signals.len() as i32;
    if let Some(n) = c.count(
        "publishDataTwoWay",
        task.m.publish_data_two_way(&task.data).await,
    ) {
        if n != want {
            c.error("publishDataTwoWay", &format!("returned {n}, not {want}"));
        }
    }
    c.count(
        "publishDataOneWay",
        task.m_oneway.publish_data_one_way(&task.data).await,
    );
    if let Some(r) = c.count("reverse", task.g.reverse(&make_list()).await) {
        if let Err(e) = check_reversed(r) {
            c.error("reverse", &e);
        }
    }
    for _ in 0..EVENTS {
        let seq = task.published.load(Ordering::Relaxed) as i64;
        let r = task.events.event(task.id, seq, task.payload.clone()).await;
        if c.count("event (storm publish)", r).is_some() {
            task.published.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// One task: its own communicator, rounds until `deadline`.
async fn run_task(
    id: i32,
    opts: Arc<Options>,
    publisher: floe::wire::ProxyData,
    published: Arc<AtomicU64>,
    c: Arc<Counters>,
    deadline: Instant,
) -> Result<(), BoxError> {
    let comm = Communicator::with_properties(properties());
    let at =
        |name: &str| comm.string_to_proxy(&format!("{name}:tcp -h 127.0.0.1 -p {}", opts.port));
    let a = LatencyPrx::unchecked_cast(at("a")?);
    let m = MessagesPrx::unchecked_cast(at("m")?);
    let task = Task {
        id,
        a_oneway: a.ice_oneway(),
        a_batch: a.ice_batch_oneway(),
        a,
        t: ThroughputPrx::unchecked_cast(at("t")?),
        m_oneway: m.ice_oneway(),
        m,
        g: soak::GraphPrx::unchecked_cast(at("g")?),
        events: soak::EventsPrx::unchecked_cast(Proxy::from_data(&comm, publisher).ice_oneway()),
        big: pattern(BIG),
        data: make_data_message(CODAC),
        payload: pattern(EVENT_BYTES),
        published,
    };
    while Instant::now() < deadline {
        round(&task, &c).await;
    }
    comm.destroy().await;
    Ok(())
}

/// Cumulative figures, printed as one line.
pub struct Totals {
    seconds: f64,
    calls: u64,
    errors: u64,
    published: u64,
    received: u64,
    missing: u64,
    bad: u64,
}

impl Totals {
    fn take(start: Instant, c: &Counters, published: &[Arc<AtomicU64>], t: &Tracker) -> Totals {
        let counts: Vec<u64> = published
            .iter()
            .map(|p| p.load(Ordering::Relaxed))
            .collect();
        Totals {
            seconds: start.elapsed().as_secs_f64(),
            calls: c.calls.load(Ordering::Relaxed),
            errors: c.errors.load(Ordering::Relaxed),
            published: counts.iter().sum(),
            received: t.received,
            missing: t.gaps
                + counts
                    .iter()
                    .enumerate()
                    .map(|(i, n)| t.tail_missing(i, *n))
                    .sum::<u64>(),
            bad: t.bad,
        }
    }

    /// `KIND t=.. calls=.. errors=.. published=.. received=.. missing=.. bad=..`
    /// (`KIND` is `soak-stats` or `soak-final`; `missing` counts events
    /// not received yet, final only at the end).
    pub fn line(&self, kind: &str) -> String {
        format!(
            "{kind} t={:.1} calls={} errors={} published={} received={} missing={} bad={}",
            self.seconds,
            self.calls,
            self.errors,
            self.published,
            self.received,
            self.missing,
            self.bad
        )
    }
}

fn print_line(line: String) {
    use std::io::Write;
    println!("{line}");
    let _ = std::io::stdout().flush();
}

/// Runs the soak client (see the module docs).
///
/// # Errors
///
/// Setup failures (broker, subscriber); failed operations are counted.
pub async fn run(opts: Options) -> Result<(), BoxError> {
    let opts = Arc::new(opts);
    let sub_comm = Communicator::with_properties(properties());
    let tm = TopicManagerPrx::unchecked_cast(sub_comm.string_to_proxy(&opts.topic_manager)?);
    let name = format!("soak-{}", std::process::id());
    let topic = tm.create(&name).await?.ok_or("create returned null")?;
    let topic = TopicPrx::unchecked_cast(Proxy::from_data(&sub_comm, topic));

    let tracker = Arc::new(Mutex::new(Tracker::default()));
    let adapter = sub_comm
        .create_object_adapter_with_endpoints("Soak.Subscriber", "tcp -h 127.0.0.1 -p 0")
        .await?;
    let servant = Subscriber {
        tracker: tracker.clone(),
        payload_len: EVENT_BYTES,
    };
    let sub = adapter
        .add(
            Identity::from_name("subscriber"),
            soak::EventsDispatcher::new(servant),
        )?
        .ice_oneway();
    adapter.activate();
    let publisher = topic
        .subscribe_and_get_publisher(&QoS::new(), &Some(sub.to_data()))
        .await?
        .ok_or("subscribeAndGetPublisher returned null")?;

    let start = Instant::now();
    let deadline = start + Duration::from_secs(opts.seconds);
    let counters = Arc::new(Counters::default());
    let published: Vec<Arc<AtomicU64>> = (0..opts.clients).map(|_| Arc::default()).collect();
    let totals = || {
        let t = tracker.lock().unwrap_or_else(|p| p.into_inner());
        Totals::take(start, &counters, &published, &t)
    };
    let mut tasks = Vec::new();
    for (id, p) in published.iter().enumerate() {
        tasks.push(tokio::spawn(run_task(
            id as i32,
            opts.clone(),
            publisher.clone(),
            p.clone(),
            counters.clone(),
            deadline,
        )));
    }
    let all = futures_join(tasks);
    tokio::pin!(all);
    let mut ticker =
        tokio::time::interval_at(tokio::time::Instant::now() + STATS_EVERY, STATS_EVERY);
    let results = loop {
        tokio::select! {
            r = &mut all => break r,
            _ = ticker.tick() => print_line(totals().line("soak-stats")),
        }
    };
    for r in results {
        match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => fail(format!("client task: {e}")),
            Err(e) => fail(format!("client task panicked: {e}")),
        }
    }

    // Drain: wait for the broker to deliver what it accepted.
    let mut last = totals().received;
    let mut since = Instant::now();
    loop {
        let now = totals();
        if now.received >= now.published || since.elapsed() >= DRAIN {
            break;
        }
        if now.received != last {
            last = now.received;
            since = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    print_line(totals().line("soak-final"));
    let _ = topic.destroy().await;
    sub_comm.destroy().await;
    Ok(())
}

/// Awaits every task (in order), whatever each returns.
async fn futures_join<T>(
    tasks: Vec<tokio::task::JoinHandle<T>>,
) -> Vec<Result<T, tokio::task::JoinError>> {
    let mut out = Vec::with_capacity(tasks.len());
    for t in tasks {
        out.push(t.await);
    }
    out
}
