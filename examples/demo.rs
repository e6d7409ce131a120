//! The floe tour, `cargo xtask demo` (a release build): four short stops,
//! each printing what happened and what it measured.
//!
//! 1. **hello**: a server and a client (each with its own communicator,
//!    over TCP on 127.0.0.1) and one `sayHello` call, with the code
//!    generated from `examples/hello/slice/Hello.ice`.
//! 2. **oneway and batch**: the same call twoway, oneway and batched
//!    oneway, timed per call.
//! 3. **floe-storm**: the IceStorm-compatible broker started as a separate
//!    process (the `floe-storm` binary), four publishers and a subscriber on
//!    a topic, and the measured fan-in (every message counted).
//! 4. **file transfer**: a small file downloaded in chunks from a server
//!    that answers 1 ms late (as a distant one would), one and eight chunks
//!    in flight, with a progress bar and a checksum.
//!
//! Everything stops at the end, or on Ctrl-C: the broker process is
//! killed, never left behind.
//!
//! ```sh
//! cargo xtask demo                        # builds floe-storm and this tour (release), runs it
//! cargo run --release --example demo      # the same, floe-storm built on first use
//! ```

#[path = "codac/mod.rs"]
mod codac;
#[path = "icestorm/mod.rs"]
mod icestorm;
#[path = "storm_process/mod.rs"]
mod storm_process;
#[path = "file_transfer/mod.rs"]
mod transfer;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use floe::runtime::{Communicator, Current, DispatchError, Properties};
use floe::Identity;
use storm_process::StormProcess;

floe::slice!("examples/hello/slice/Hello.ice");

use demo::{HelloDispatcher, HelloPrx};

/// Any failure of the tour.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How much each stop does.
#[derive(Clone, Copy, Debug)]
struct Sizes {
    /// Calls per way in stop 2.
    calls: usize,
    /// Messages per publisher in stop 3.
    per_publisher: usize,
    /// Bytes of the file of stop 4.
    file: u64,
}

/// The tour's sizes on a release build.
const FULL: Sizes = Sizes {
    calls: 20_000,
    per_publisher: 250,
    file: 32_000_000,
};

/// How late the file server of stop 4 answers each chunk: the round trip
/// of a distant link, which chunks in flight hide (loopback has none).
const REPLY_DELAY: Duration = Duration::from_millis(1);

/// The hello servant: counts the calls.
struct HelloI(AtomicU64);

impl demo::Hello for HelloI {
    async fn say_hello(&self, _delay: i32, _: &Current) -> Result<(), DispatchError> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    async fn shutdown(&self, current: &Current) -> Result<(), DispatchError> {
        current.adapter.communicator()?.shutdown();
        Ok(())
    }
}

fn micros_per_call(start: Instant, calls: usize) -> f64 {
    start.elapsed().as_secs_f64() * 1e6 / calls as f64
}

/// Stops 1 and 2.
async fn hello(sizes: Sizes) -> Result<(), BoxError> {
    println!("1. hello");
    let server = Communicator::new();
    let client = Communicator::new();
    let result = async {
        let adapter = server
            .create_object_adapter_with_endpoints("Hello", "tcp -h 127.0.0.1 -p 0")
            .await?;
        let servant = Arc::new(HelloI(AtomicU64::new(0)));
        let proxy = adapter.add(
            Identity::from_name("hello"),
            Arc::new(HelloDispatcher(servant.clone())),
        )?;
        adapter.activate();
        println!("   server: object `hello` on {}", adapter.endpoints()[0]);

        let start = Instant::now();
        let hello = HelloPrx::checked_cast(client.string_to_proxy(&proxy.to_string())?)
            .await?
            .ok_or("not a ::Demo::Hello")?;
        hello.say_hello(0).await?;
        println!(
            "   client: checked_cast (ice_isA) and sayHello(0) in {:.1} ms, connection included",
            start.elapsed().as_secs_f64() * 1e3
        );

        println!("2. oneway and batch ({} calls each way)", sizes.calls);
        let start = Instant::now();
        for _ in 0..sizes.calls {
            hello.say_hello(0).await?;
        }
        println!(
            "   twoway          {:>8.2} µs/call (each waits for its reply)",
            micros_per_call(start, sizes.calls)
        );
        let oneway = hello.ice_oneway();
        let start = Instant::now();
        for _ in 0..sizes.calls {
            oneway.say_hello(0).await?;
        }
        hello.ice_ping().await?; // returns after the oneways were dispatched
        println!(
            "   oneway          {:>8.2} µs/call (returns once written)",
            micros_per_call(start, sizes.calls)
        );
        let batch = hello.ice_batch_oneway();
        let start = Instant::now();
        for _ in 0..sizes.calls {
            batch.say_hello(0).await?;
        }
        batch.ice_flush_batch_requests().await?;
        hello.ice_ping().await?;
        println!(
            "   batched oneway  {:>8.2} µs/call (queued; sent at Ice.BatchAutoFlushSize and by one flush)",
            micros_per_call(start, sizes.calls)
        );
        let dispatched = servant.0.load(Ordering::Relaxed);
        let expected = 1 + 3 * sizes.calls as u64;
        if dispatched != expected {
            return Err(format!("the servant saw {dispatched} calls, not {expected}").into());
        }
        println!("   the servant counted {dispatched} calls");
        Ok::<_, BoxError>(())
    }
    .await;
    client.destroy().await;
    server.destroy().await;
    result
}

/// Stop 3.
async fn storm(sizes: Sizes) -> Result<(), BoxError> {
    println!("3. floe-storm, a broker process");
    let broker = StormProcess::start(&[])?;
    println!(
        "   started floe-storm (pid {}): TopicManager {}",
        broker.id().unwrap_or(0),
        broker.topic_manager
    );
    let size = 100_000;
    let row = codac::fanin::run(
        &broker.topic_manager,
        codac::fanin::FanIn {
            kind: codac::Kind::Bytes,
            size,
            twoway: false,
            publishers: 4,
            per_publisher: sizes.per_publisher,
        },
    )
    .await?;
    println!(
        "   4 oneway publishers -> topic -> 1 subscriber: {} messages of {} KB",
        row.sent,
        size / 1000
    );
    println!(
        "   fan-in: {:.0} messages/s, {:.1} MB/s; the subscriber got {} of {}",
        row.messages_per_s(),
        row.mb_per_s(),
        row.received,
        row.sent
    );
    if row.received != row.sent {
        return Err("messages were lost".into());
    }
    broker.stop()?;
    println!("   floe-storm stopped (SIGTERM, exit status 0)");
    Ok(())
}

/// Stop 4.
async fn file_transfer(sizes: Sizes) -> Result<(), BoxError> {
    println!(
        "4. file transfer ({:.0} MB in 256 KB chunks; each reply {} ms late, as from a distant server)",
        sizes.file as f64 / 1e6,
        REPLY_DELAY.as_millis()
    );
    let dir = tempfile::tempdir()?;
    transfer::write_sample_file(&dir.path().join("sample.dat"), sizes.file)?;
    let props = || {
        let p = Properties::new();
        p.set("Ice.MessageSizeMax", transfer::MESSAGE_SIZE_MAX_KB);
        p
    };
    let server = Communicator::with_properties(props());
    let client = Communicator::with_properties(props());
    let result = async {
        let adapter = server
            .create_object_adapter_with_endpoints("FileStore", "tcp -h 127.0.0.1 -p 0")
            .await?;
        let proxy = adapter.add(
            Identity::from_name("files"),
            transfer::FileStoreDispatcher::new(
                transfer::store::FileStoreI::new(dir.path()).with_delay(REPLY_DELAY),
            ),
        )?;
        adapter.activate();
        let store =
            transfer::FileStorePrx::unchecked_cast(client.string_to_proxy(&proxy.to_string())?);
        for in_flight in [1, 8] {
            let bar = indicatif::ProgressBar::new(0).with_style(
                indicatif::ProgressStyle::with_template(
                    "   {msg:18} [{bar:32}] {bytes:>9}/{total_bytes:9} {bytes_per_sec:>11}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            let label = format!("{in_flight} in flight");
            let bar = bar.with_message(label.clone());
            let out = dir.path().join("received.dat");
            let d = transfer::download::download(
                &store,
                "sample.dat",
                &out,
                256 * 1024,
                in_flight,
                &bar,
            )
            .await;
            bar.finish_and_clear();
            let d = d?;
            println!(
                "   {label:<11} {:>8.1} MB/s, CRC-32 {:08x} matches the server's",
                d.mb_per_s(),
                d.crc32
            );
        }
        Ok::<_, BoxError>(())
    }
    .await;
    client.destroy().await;
    server.destroy().await;
    result
}

/// The four stops, in order.
async fn tour(sizes: Sizes) -> Result<(), BoxError> {
    hello(sizes).await?;
    storm(sizes).await?;
    file_transfer(sizes).await?;
    println!("done: every communicator destroyed, the broker stopped");
    Ok(())
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM.
async fn interrupted() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    // On a signal the tour is dropped where it is: its communicators and
    // the broker process (killed by `StormProcess`'s `Drop`) with it.
    let finished = tokio::select! {
        result = tour(FULL) => Some(result),
        _ = interrupted() => None,
    };
    // Here the tour is dropped, finished or not.
    finished.unwrap_or_else(|| {
        println!("\ninterrupted: the broker and the communicators are stopped");
        std::process::exit(130)
    })
}

#[cfg(test)]
mod tests {
    /// CI runs the tour to completion in the dev profile (`test = true` in
    /// Cargo.toml), with small sizes.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_to_completion() {
        let small = super::Sizes {
            calls: 200,
            per_publisher: 20,
            file: 1_000_003,
        };
        super::tour(small).await.expect("the tour runs");
    }
}
