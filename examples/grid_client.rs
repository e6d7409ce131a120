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

#[path = "one_call/mod.rs"]
mod one_call;

// The Bench.ice proxies (benches/Bench.ice), shared with the benchmark programs.
use floe_bench::LatencyPrx;
use one_call::one_call_main;

fn main() {
    one_call_main(
        "grid_client",
        "LOCATOR PROXY",
        |props, locator| props.set("Ice.Default.Locator", locator),
        async |communicator, _, proxy| {
            LatencyPrx::unchecked_cast(communicator.string_to_proxy(proxy)?)
                .o()
                .await
        },
    );
}
