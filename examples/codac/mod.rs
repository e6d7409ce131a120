//! The CODAC data-acquisition workloads (ITER's Control, Data Access and
//! Communication studies of Ice): `Bench::Messages` from
//! `benches/Bench.ice`, carrying a `ByteSeq`, a `FloatSeq` or a
//! `DataMessage{name, id, signalCount, sampleCount, times, signals}` per
//! call, oneway or twoway. Shared by `examples/codac.rs` and the demo tour.
//!
//! - [`direct`]: a client sending to a server.
//! - [`fanin`]: publishers sending through an IceStorm-compatible broker
//!   to one subscriber.

#![allow(dead_code)] // each program uses its own part of it

pub mod direct;
pub mod fanin;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use floe::runtime::{Current, DispatchError, Properties};

floe::slice!("benches/Bench.ice");

pub use bench::{DataMessage, Messages, MessagesDispatcher, MessagesPrx, SignalData};

/// Any failure of a run.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The message sizes of the CODAC tests, in payload bytes.
pub const SIZES: [usize; 4] = [10_000, 100_000, 1_000_000, 10_000_000];

/// `Ice.MessageSizeMax` (KB) of every communicator: 10 MB messages fit.
pub const MESSAGE_SIZE_MAX_KB: &str = "32768";

/// Properties of every communicator of a run.
pub fn properties() -> Properties {
    let props = Properties::new();
    props.set("Ice.MessageSizeMax", MESSAGE_SIZE_MAX_KB);
    props
}

/// What a message carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `sequence<byte>`, as `Bytes` (zero copy).
    Bytes,
    /// `sequence<float>`, as `Vec<f32>`.
    Floats,
    /// `DataMessage`: `size / 400` signals of 100 samples each.
    Data,
}

impl Kind {
    /// Every kind, in table order.
    pub const ALL: [Kind; 3] = [Kind::Bytes, Kind::Floats, Kind::Data];

    /// The Slice type's name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Bytes => "ByteSeq",
            Kind::Floats => "FloatSeq",
            Kind::Data => "DataMessage",
        }
    }
}

/// One message, built once and sent many times.
pub enum Payload {
    /// For `publishBytes*`.
    Bytes(Bytes),
    /// For `publishFloats*`.
    Floats(Vec<f32>),
    /// For `publishData*`.
    Data(DataMessage),
}

impl Payload {
    /// A message of `kind` with about `size` payload bytes.
    pub fn new(kind: Kind, size: usize) -> Payload {
        match kind {
            Kind::Bytes => Payload::Bytes((0..size).map(|i| i as u8).collect::<Vec<u8>>().into()),
            Kind::Floats => Payload::Floats((0..size / 4).map(|i| i as f32).collect()),
            Kind::Data => {
                let signals = (size / 400).max(1);
                Payload::Data(DataMessage {
                    name: "codac".into(),
                    id: 1,
                    signal_count: signals as i32,
                    sample_count: 100,
                    times: (0..100).map(|i| i as f32 * 1e-3).collect(),
                    signals: (0..signals)
                        .map(|s| SignalData {
                            name: format!("signal{s}"),
                            samples: (0..100).map(|i| (s * 100 + i) as f32).collect(),
                        })
                        .collect(),
                })
            }
        }
    }

    /// Sends it through `p` with the `void` operation (`publish*OneWay`)
    /// or the one that returns a count (`publish*TwoWay`); either goes
    /// oneway or twoway as `p` says.
    pub async fn send(&self, p: &MessagesPrx, counted: bool) -> floe::runtime::Result<()> {
        match (self, counted) {
            (Payload::Bytes(b), false) => p.publish_bytes_one_way(b.clone()).await,
            (Payload::Bytes(b), true) => p.publish_bytes_two_way(b.clone()).await.map(drop),
            (Payload::Floats(f), false) => p.publish_floats_one_way(f).await,
            (Payload::Floats(f), true) => p.publish_floats_two_way(f).await.map(drop),
            (Payload::Data(d), false) => p.publish_data_one_way(d).await,
            (Payload::Data(d), true) => p.publish_data_two_way(d).await.map(drop),
        }
    }
}

/// Messages per run for messages of `size` bytes: about `budget` bytes
/// in all, at least `min`.
pub fn messages(size: usize, budget: f64, min: usize) -> usize {
    ((budget / size as f64) as usize).max(min)
}

/// One line of a table.
#[derive(Clone, Debug)]
pub struct Row {
    /// The payload type.
    pub kind: Kind,
    /// Payload bytes per message.
    pub size: usize,
    /// `oneway` or `twoway`.
    pub mode: &'static str,
    /// Messages sent (by all publishers).
    pub sent: u64,
    /// Of those, messages received.
    pub received: u64,
    /// From the first message sent to the last one received.
    pub seconds: f64,
}

impl Row {
    /// Messages received per second.
    pub fn messages_per_s(&self) -> f64 {
        self.received as f64 / self.seconds.max(1e-9)
    }

    /// Payload megabytes (10⁶ bytes) received per second.
    pub fn mb_per_s(&self) -> f64 {
        self.messages_per_s() * self.size as f64 / 1e6
    }
}

/// Prints a table's title and column names.
pub fn print_header(title: &str) {
    println!("{title}");
    println!(
        "  {:<12} {:>8} {:<7} {:>9} {:>12} {:>10}",
        "message", "size", "mode", "messages", "messages/s", "MB/s"
    );
}

/// Prints one row (and the messages lost, if any).
pub fn print_row(r: &Row) {
    let size = match r.size {
        s if s >= 1_000_000 => format!("{} MB", s / 1_000_000),
        s => format!("{} KB", s / 1_000),
    };
    let lost = match r.sent - r.received.min(r.sent) {
        0 => String::new(),
        n => format!("  ({n} LOST)"),
    };
    println!(
        "  {:<12} {:>8} {:<7} {:>9} {:>12.0} {:>10.1}{lost}",
        r.kind.name(),
        size,
        r.mode,
        r.received,
        r.messages_per_s(),
        r.mb_per_s()
    );
}

/// What a receiving servant counted: messages (per publisher, from the
/// request context's `publisher` entry, as IceStorm forwards contexts),
/// and when the last one arrived.
pub struct Received {
    total: AtomicU64,
    by_publisher: Vec<AtomicU64>,
    last_ns: AtomicU64,
    epoch: Instant,
}

impl Received {
    /// Counters for up to `publishers` publishers.
    pub fn new(publishers: usize) -> Received {
        Received {
            total: AtomicU64::new(0),
            by_publisher: (0..publishers).map(|_| AtomicU64::new(0)).collect(),
            last_ns: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }

    fn count(&self, current: &Current) {
        if let Some(n) = publisher_index(&current.ctx) {
            if let Some(c) = self.by_publisher.get(n) {
                c.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.total.fetch_add(1, Ordering::Relaxed);
        let ns = self.epoch.elapsed().as_nanos() as u64;
        self.last_ns.fetch_max(ns, Ordering::Relaxed);
    }

    /// Messages received so far.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// Messages received from each publisher.
    pub fn by_publisher(&self) -> Vec<u64> {
        self.by_publisher
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect()
    }

    /// Starts a new count; the time of "now" for [`Received::since`].
    pub fn reset(&self) -> Instant {
        self.total.store(0, Ordering::Relaxed);
        for c in &self.by_publisher {
            c.store(0, Ordering::Relaxed);
        }
        let now = Instant::now();
        self.last_ns.store(
            now.duration_since(self.epoch).as_nanos() as u64,
            Ordering::Relaxed,
        );
        now
    }

    /// Seconds from `start` to the last message received.
    pub fn since(&self, start: Instant) -> f64 {
        let last = self.epoch + Duration::from_nanos(self.last_ns.load(Ordering::Relaxed));
        last.saturating_duration_since(start).as_secs_f64()
    }

    /// Waits until `want` messages arrived, or none for `idle`; the count.
    pub async fn wait_for(&self, want: u64, idle: Duration) -> u64 {
        let (mut seen, mut since) = (self.total(), Instant::now());
        loop {
            let now = self.total();
            if now >= want {
                return now;
            }
            if now != seen {
                (seen, since) = (now, Instant::now());
            } else if since.elapsed() > idle {
                return now;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

/// The publisher number a request context carries.
fn publisher_index(ctx: &BTreeMap<String, String>) -> Option<usize> {
    ctx.get("publisher")?.parse().ok()
}

/// A request context naming publisher `n`.
pub fn publisher_context(n: usize) -> BTreeMap<String, String> {
    BTreeMap::from([("publisher".to_owned(), n.to_string())])
}

/// The server's and the subscriber's servant: counts what arrives (after
/// the generated code has decoded it, as a real consumer's would).
pub struct Counter(pub std::sync::Arc<Received>);

type Reply<T> = Result<T, DispatchError>;

impl Messages for Counter {
    async fn publish_bytes_one_way(&self, m: Bytes, c: &Current) -> Reply<()> {
        std::hint::black_box(m);
        self.0.count(c);
        Ok(())
    }
    async fn publish_bytes_two_way(&self, m: Bytes, c: &Current) -> Reply<i32> {
        self.0.count(c);
        Ok(m.len() as i32)
    }
    async fn publish_floats_one_way(&self, m: Vec<f32>, c: &Current) -> Reply<()> {
        std::hint::black_box(m);
        self.0.count(c);
        Ok(())
    }
    async fn publish_floats_two_way(&self, m: Vec<f32>, c: &Current) -> Reply<i32> {
        self.0.count(c);
        Ok(m.len() as i32)
    }
    async fn publish_data_one_way(&self, m: DataMessage, c: &Current) -> Reply<()> {
        std::hint::black_box(m);
        self.0.count(c);
        Ok(())
    }
    async fn publish_data_two_way(&self, m: DataMessage, c: &Current) -> Reply<i32> {
        self.0.count(c);
        Ok(m.signals.len() as i32)
    }
}
