//! A Bench.ice server that registers with an IceGrid registry (or any
//! `Ice::Locator`):
//!
//! ```text
//! grid_server LOCATOR ADAPTER_ID REPLICA_GROUP [--Ice.Prop=value...]
//! cargo run --example grid_server -- \
//!     'IceGrid/Locator:tcp -h 127.0.0.1 -p 4061' Bench-1 BenchGroup
//! ```
//!
//! It serves `a` (Latency), `t` (Throughput) and `m` (Messages) on the
//! object adapter `BenchAdapter`, listening on `BenchAdapter.Endpoints`
//! (default `tcp -h 127.0.0.1`, a free port), registers `ADAPTER_ID` in
//! the replica group `REPLICA_GROUP` (`""` or `-` for none) with the
//! registry behind `LOCATOR` (which needs
//! `IceGrid.Registry.DynamicRegistration=1`), prints `READY <port>`, and on
//! SIGTERM or SIGINT unregisters and exits 0.
//!
//! Started by an IceGrid node from a descriptor
//! (`<server id=".." exe=".../grid_server"> <adapter name="BenchAdapter"
//! id=".." replica-group=".."/>`), it gets only `--Ice.Config=FILE`: the
//! locator, adapter id, replica group and endpoints then come from that
//! file (`Ice.Default.Locator`, `BenchAdapter.AdapterId`, ...).
//!
//! It logs as an Ice server does ([`floe::runtime::logger`]): to stderr,
//! prefixed with `Ice.ProgramName` (the server id under a node), with
//! `Ice.StdOut`/`Ice.StdErr` appending its output to files, and its admin
//! object serves the `Process`, `Properties` and `Logger` facets
//! (`icegridadmin server stop|properties|show ID log`).

use floe::runtime::{Communicator, Properties};
// The Bench.ice servants (benches/Bench.ice), shared with the benchmark programs.
use floe_bench::servants::add_bench_servants;

fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("grid_server: {message}");
    std::process::exit(1)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let props = Properties::from_args(&mut args).unwrap_or_else(|e| {
        eprintln!("grid_server: {e}");
        std::process::exit(2)
    });
    let mut positional = args.into_iter();
    if let Some(locator) = positional.next() {
        props.set("Ice.Default.Locator", &locator);
    }
    if let Some(id) = positional.next() {
        props.set("BenchAdapter.AdapterId", &id);
    }
    if let Some(group) = positional.next().filter(|g| !g.is_empty() && g != "-") {
        props.set("BenchAdapter.ReplicaGroupId", &group);
    }
    if props.get("Ice.Default.Locator").is_none() {
        eprintln!(
            "usage: grid_server LOCATOR ADAPTER_ID REPLICA_GROUP [--Ice.Prop=value...]\n\
             (or --Ice.Config=FILE setting Ice.Default.Locator and BenchAdapter.AdapterId)"
        );
        std::process::exit(2)
    }
    if props.get("BenchAdapter.Endpoints").is_none() {
        props.set("BenchAdapter.Endpoints", "tcp -h 127.0.0.1");
    }
    // Ice's logger: `Ice.ProgramName` as the prefix, `Ice.StdOut`/`Ice.StdErr`
    // (what a node's descriptor may set) redirected first.
    floe::runtime::logger::install(&props).unwrap_or_else(|e| fail(e));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(e));
    rt.block_on(async move {
        let communicator = Communicator::with_properties(props);
        let adapter = communicator
            .create_object_adapter("BenchAdapter")
            .await
            .unwrap_or_else(|e| fail(e));
        add_bench_servants(&adapter, &communicator).unwrap_or_else(|e| fail(e));
        communicator
            .shutdown_on_signals()
            .unwrap_or_else(|e| fail(e));
        adapter
            .activate_and_register()
            .await
            .unwrap_or_else(|e| fail(format!("cannot register {}: {e}", adapter.adapter_id())));
        let port = adapter.endpoints().first().map_or(0, |e| e.port);
        println!("READY {port}");
        use std::io::Write;
        let _ = std::io::stdout().flush();
        communicator.wait_for_shutdown().await;
        communicator.destroy().await;
    });
}
