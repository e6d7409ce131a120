//! Calls `Bench::Latency::o()` through an IceGrid registry (or any
//! `Ice::Locator`):
//!
//! ```text
//! grid_client LOCATOR PROXY [--Ice.Prop=value...]
//! cargo run --example grid_client -- \
//!     'IceGrid/Locator:tcp -h 127.0.0.1 -p 4061' a@BenchGroup
//! ```
//!
//! `PROXY` is any stringified proxy: `a@Bench-1` (an adapter),
//! `a@BenchGroup` (a replica group), a well-known `a`, or a direct one.
//! Prints `ok` and exits 0, or prints the error and exits 1.

#[path = "bench_common/mod.rs"]
mod bench_common;

use bench_common::LatencyPrx;
use floe::runtime::{Communicator, Properties};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let props = Properties::from_args(&mut args).unwrap_or_else(|e| {
        eprintln!("grid_client: {e}");
        std::process::exit(2)
    });
    let [locator, proxy] = args.as_slice() else {
        eprintln!("usage: grid_client LOCATOR PROXY [--Ice.Prop=value...]");
        std::process::exit(2)
    };
    props.set("Ice.Default.Locator", locator);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| {
            eprintln!("grid_client: {e}");
            std::process::exit(1)
        });
    let result = rt.block_on(async {
        let communicator = Communicator::with_properties(props);
        let result = async {
            let latency = LatencyPrx::unchecked_cast(communicator.string_to_proxy(proxy)?);
            latency.o().await
        }
        .await;
        communicator.destroy().await;
        result
    });
    match result {
        Ok(()) => println!("ok"),
        Err(e) => {
            println!("error: {e}");
            std::process::exit(1)
        }
    }
}
