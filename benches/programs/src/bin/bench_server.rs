//! The Bench.ice server: `cargo run --release -p floe-bench --bin bench_server -- PORT
//! [--current-thread]`. Serves `a` (Latency), `t` (Throughput) and `m`
//! (Messages) on `tcp -h 127.0.0.1 -p PORT`, or on the endpoints of
//! `--Bench.Endpoints='ssl -h 127.0.0.1 -p P'` (with `--IceSSL.*`) when
//! given, prints `Bench ready` once listening, and exits on
//! `Throughput::shutdown` or SIGINT/SIGTERM.

use floe::runtime::{Communicator, Properties};
use floe_bench::servants::add_bench_servants;
use floe_bench::*;

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
    install_bench_tracing(&props);
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
        let ok = add_bench_servants(&adapter, &communicator);
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
