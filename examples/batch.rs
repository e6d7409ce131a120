//! Batched oneways: many small calls sent as one message.
//!
//! It makes the same number of `add` calls four ways and prints the cost of
//! one call:
//!
//! - twoway: each call waits for its reply;
//! - oneway: each call returns once written;
//! - batch, explicit flush: calls are queued, and one
//!   `ice_flush_batch_requests` sends them all;
//! - batch, automatic flush: `Ice.BatchAutoFlushSize` (in KB) sends the
//!   queue whenever it would grow past that size, as in Ice.
//!
//! ```sh
//! cargo run --release --example batch            # 100000 calls each way
//! cargo run --release --example batch -- 10000
//! ```

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use floe::runtime::{Communicator, Current, DispatchError, Error, Properties};
use floe::Identity;

#[floe::interface(module = "Demo")]
pub trait Counter {
    /// Adds `n` to the total.
    async fn add(&self, n: i32);
    /// The total so far.
    async fn total(&self) -> i64;
}

struct CounterI(AtomicI64);

impl Counter for CounterI {
    async fn add(&self, n: i32, _: &Current) -> Result<(), DispatchError> {
        self.0.fetch_add(i64::from(n), Ordering::Relaxed);
        Ok(())
    }
    async fn total(&self, _: &Current) -> Result<i64, DispatchError> {
        Ok(self.0.load(Ordering::Relaxed))
    }
}

fn per_call(elapsed: Duration, calls: usize) -> String {
    format!(
        "{:>8.2} µs/call",
        elapsed.as_secs_f64() * 1e6 / calls as f64
    )
}

async fn run(calls: usize) -> Result<(), Error> {
    let server = Communicator::new();
    let adapter = server
        .create_object_adapter_with_endpoints("Counter", "tcp -h 127.0.0.1 -p 0")
        .await?;
    let proxy = adapter.add(
        Identity::from_name("counter"),
        CounterDispatcher::new(CounterI(AtomicI64::new(0))),
    )?;
    adapter.activate();

    // Automatic flushes whenever a batch would pass 16 KB.
    let props = Properties::new();
    props.set("Ice.BatchAutoFlushSize", "16");
    let client = Communicator::with_properties(props);
    let counter = CounterPrx::unchecked_cast(client.string_to_proxy(&proxy.to_string())?);
    counter.ice_ping().await?;
    let mut expected = 0;

    let start = Instant::now();
    for _ in 0..calls {
        counter.add(1).await?;
    }
    println!(
        "twoway                 {}",
        per_call(start.elapsed(), calls)
    );
    expected += calls as i64;

    let oneway = counter.ice_oneway();
    let start = Instant::now();
    for _ in 0..calls {
        oneway.add(1).await?;
    }
    // A twoway call after them returns once they were all dispatched.
    assert_eq!(counter.total().await?, expected + calls as i64);
    println!(
        "oneway                 {}",
        per_call(start.elapsed(), calls)
    );
    expected += calls as i64;

    let batch = counter.ice_batch_oneway();
    let start = Instant::now();
    for _ in 0..calls {
        batch.add(1).await?; // queued up to 16 KB, then sent on its own
    }
    batch.ice_flush_batch_requests().await?; // the rest
    assert_eq!(counter.total().await?, expected + calls as i64);
    println!(
        "batch, automatic flush {}",
        per_call(start.elapsed(), calls)
    );
    expected += calls as i64;

    // Without automatic flushing: everything goes in one message.
    let props = Properties::new();
    props.set("Ice.BatchAutoFlushSize", "0");
    let unbounded = Communicator::with_properties(props);
    let batch = CounterPrx::unchecked_cast(unbounded.string_to_proxy(&proxy.to_string())?)
        .ice_batch_oneway();
    let start = Instant::now();
    for _ in 0..calls {
        batch.add(1).await?;
    }
    batch.ice_flush_batch_requests().await?;
    assert_eq!(counter.total().await?, expected + calls as i64);
    println!(
        "batch, one flush       {}",
        per_call(start.elapsed(), calls)
    );

    unbounded.destroy().await;
    client.destroy().await;
    server.destroy().await;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let calls = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    println!("{calls} calls each way");
    run(calls).await
}

#[cfg(test)]
mod tests {
    /// CI runs the example to completion (`test = true` in Cargo.toml),
    /// with fewer calls.
    #[tokio::test]
    async fn runs_to_completion() {
        super::run(2_000).await.expect("the example runs");
    }
}
