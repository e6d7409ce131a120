//! The Bench.ice server: `cargo run --release --example bench_server -- PORT
//! [--current-thread]`. Serves `a` (Latency), `t` (Throughput) and `m`
//! (Messages) on `tcp -h 127.0.0.1 -p PORT`, or on the endpoints of
//! `--Bench.Endpoints='ssl -h 127.0.0.1 -p P'` (with `--IceSSL.*`) when
//! given, prints `Bench ready` once listening, and exits on
//! `Throughput::shutdown` or SIGINT/SIGTERM.

#[path = "bench_common/mod.rs"]
mod bench_common;

use std::sync::Mutex;

use bench_common::*;
use bytes::Bytes;
use floe::runtime::{Communicator, Current, DispatchError, Identity, Properties};

/// The result type of servant operations.
type Dispatched<T> = Result<T, DispatchError>;

struct LatencyI;

impl Latency for LatencyI {
    async fn o(&self, _: &Current) -> Dispatched<()> {
        Ok(())
    }
}

/// The last sequence built for each `recv*` operation, keyed by its
/// requested length; replies are copies of it (as in the C++ server).
struct ThroughputI {
    communicator: Communicator,
    bytes: Mutex<(i32, Bytes)>,
    fixed: Mutex<(i32, Vec<Fixed>)>,
    strdbl: Mutex<(i32, Vec<StringDouble>)>,
}

/// The cached value in `slot` if it was built for `n`, else `make(n)`,
/// cached.
fn cached<T: Clone>(slot: &Mutex<(i32, T)>, n: i32, make: impl FnOnce(usize) -> T) -> T {
    let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
    if slot.0 != n {
        *slot = (n, make(n.max(0) as usize));
    }
    slot.1.clone()
}

impl Throughput for ThroughputI {
    async fn send_byte_seq(&self, seq: Bytes, _: &Current) -> Dispatched<()> {
        std::hint::black_box(seq);
        Ok(())
    }
    async fn recv_byte_seq(&self, size: i32, _: &Current) -> Dispatched<Bytes> {
        Ok(cached(&self.bytes, size, pattern))
    }
    async fn send_fixed_seq(&self, seq: Vec<Fixed>, _: &Current) -> Dispatched<()> {
        std::hint::black_box(seq);
        Ok(())
    }
    async fn recv_fixed_seq(&self, count: i32, _: &Current) -> Dispatched<Vec<Fixed>> {
        Ok(cached(&self.fixed, count, make_fixed_seq))
    }
    async fn send_string_double_seq(&self, seq: Vec<StringDouble>, _: &Current) -> Dispatched<()> {
        std::hint::black_box(seq);
        Ok(())
    }
    async fn recv_string_double_seq(
        &self,
        count: i32,
        _: &Current,
    ) -> Dispatched<Vec<StringDouble>> {
        Ok(cached(&self.strdbl, count, make_string_double_seq))
    }
    async fn shutdown(&self, _: &Current) -> Dispatched<()> {
        self.communicator.shutdown();
        Ok(())
    }
}

struct MessagesI;

impl Messages for MessagesI {
    async fn publish_bytes_one_way(&self, message: Bytes, _: &Current) -> Dispatched<()> {
        std::hint::black_box(message);
        Ok(())
    }
    async fn publish_bytes_two_way(&self, message: Bytes, _: &Current) -> Dispatched<i32> {
        Ok(message.len() as i32)
    }
    async fn publish_floats_one_way(&self, message: Vec<f32>, _: &Current) -> Dispatched<()> {
        std::hint::black_box(message);
        Ok(())
    }
    async fn publish_floats_two_way(&self, message: Vec<f32>, _: &Current) -> Dispatched<i32> {
        Ok(message.len() as i32)
    }
    async fn publish_data_one_way(&self, message: DataMessage, _: &Current) -> Dispatched<()> {
        std::hint::black_box(message);
        Ok(())
    }
    async fn publish_data_two_way(&self, message: DataMessage, _: &Current) -> Dispatched<i32> {
        Ok(message.signals.len() as i32)
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let current_thread = args.iter().any(|a| a == "--current-thread");
    args.retain(|a| a != "--current-thread");
    let props = Properties::from_args(&mut args).unwrap_or_else(|e| {
        eprintln!("bench_server: {e}");
        std::process::exit(2)
    });
    let Some(port) = args.first().and_then(|p| p.parse::<u16>().ok()) else {
        eprintln!("usage: bench_server PORT [--current-thread] [--Ice.Prop=value...]");
        std::process::exit(2)
    };
    if props.get("Ice.MessageSizeMax").is_none() {
        // The CODAC workloads send 10 MB messages.
        props.set("Ice.MessageSizeMax", "102400");
    }
    let rt = build_runtime(current_thread);
    rt.block_on(async move {
        let communicator = Communicator::with_properties(props);
        let endpoints = communicator
            .properties()
            .get("Bench.Endpoints")
            .unwrap_or_else(|| format!("tcp -h 127.0.0.1 -p {port}"));
        let adapter = communicator
            .create_object_adapter_with_endpoints("Bench", &endpoints)
            .await
            .unwrap_or_else(|e| {
                eprintln!("bench_server: {e}");
                std::process::exit(1)
            });
        let t = ThroughputDispatcher::new(ThroughputI {
            communicator: communicator.clone(),
            bytes: Mutex::new((-1, Bytes::new())),
            fixed: Mutex::new((-1, Vec::new())),
            strdbl: Mutex::new((-1, Vec::new())),
        });
        let ok = adapter
            .add(Identity::from_name("a"), LatencyDispatcher::new(LatencyI))
            .and_then(|_| adapter.add(Identity::from_name("t"), t))
            .and_then(|_| {
                adapter.add(Identity::from_name("m"), MessagesDispatcher::new(MessagesI))
            });
        if let Err(e) = ok {
            eprintln!("bench_server: {e}");
            std::process::exit(1)
        }
        adapter.activate();
        println!("Bench ready");
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .unwrap_or_else(|e| {
                eprintln!("bench_server: {e}");
                std::process::exit(1)
            });
        tokio::select! {
            _ = communicator.wait_for_shutdown() => {}
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        communicator.destroy().await;
    });
}
