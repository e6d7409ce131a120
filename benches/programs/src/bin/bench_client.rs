//! The Bench.ice client: `cargo run --release -p floe-bench --bin bench_client -- PORT
//! [--current-thread] [WORKLOAD...]`. Runs the workloads (all when none is
//! named) against `tcp -h 127.0.0.1 -p PORT`, or the endpoints of
//! `--Bench.Endpoints='ws -h 127.0.0.1 -p P'` (with `--IceSSL.*` for ssl and
//! wss) when given, or the indirect `a@ADAPTER`, ... resolved through
//! `--Ice.Default.Locator` with `--Bench.AdapterId=ADAPTER`, all routed
//! through a Glacier2 session with `--Bench.Glacier2Router=PROXY`
//! (`cargo xtask compare --grid`), and prints one JSON object per line:
//! `{"impl":"floe","workload":..,"calls":..,"seconds":..,"us_per_call":..,"mbit_s":..,"calls_s":..}`
//! (`mbit_s` counts payload bytes only; `calls_s` is calls per second, the
//! figure of the concurrency workloads).
//!
//! Concurrency workloads, `CONCURRENT_CALLS` `o()` calls in all:
//! `pipelined_N` keeps N calls in flight on one connection (one task with
//! N call futures; `BENCH_PIPELINED_TASKS=1`: N tasks sharing one proxy,
//! each awaiting its call and sending the next), `clients_N`
//! opens N connections (`ice_connection_id`) with a task each calling in a
//! loop.
//!
//! `BENCH_SCALE` (default 1) multiplies every call and repetition count.
//! Each bulk workload starts with a few untimed calls (`WARM_UP_CALLS`)
//! so that connection start-up is not measured. Proxies, servants and
//! types are generated from `benches/Bench.ice` by `floe::slice!`.
//!
//! Runtime: the multi-thread runtime is the default because it is what most
//! applications run; `--current-thread` keeps the caller and the connection
//! task on one thread, which avoids cross-thread wake-ups on the latency
//! path.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use floe::runtime::{Communicator, Glacier2Session, Properties, Proxy, Result};
use floe_bench::*;
use futures_util::stream::{FuturesUnordered, StreamExt};

struct Ctx {
    a: LatencyPrx,
    t: ThroughputPrx,
    m: MessagesPrx,
    /// `BENCH_SCALE`.
    scale: f64,
}

/// Prints one result line.
fn report(workload: &str, calls: usize, seconds: f64, payload_bytes: f64) {
    let us = seconds * 1e6 / calls.max(1) as f64;
    let mbit = if seconds > 0.0 {
        payload_bytes * 8.0 / seconds / 1e6
    } else {
        0.0
    };
    let calls_s = if seconds > 0.0 {
        calls as f64 / seconds
    } else {
        0.0
    };
    println!(
        "{{\"impl\":\"floe\",\"workload\":\"{workload}\",\"calls\":{calls},\"seconds\":{seconds:.6},\"us_per_call\":{us:.3},\"mbit_s\":{mbit:.3},\"calls_s\":{calls_s:.1}}}"
    );
}

/// Waits until the server has read every request sent on `p`: a no-op for
/// a twoway proxy, a twoway `ice_ping` on the same connection otherwise.
async fn sync(p: &Proxy) -> Result<()> {
    if !p.mode().is_twoway() {
        p.ice_twoway().ice_ping().await?;
    }
    Ok(())
}

/// Fails the run when a reply does not hold what the server was asked for.
fn check_len(workload: &str, got: usize, want: usize) {
    if got != want {
        eprintln!("bench_client: {workload}: got {got} elements, expected {want}");
        std::process::exit(1)
    }
}

/// Runs `$call` (one awaited invocation on `$p`) `WARM_UP_CALLS` times
/// untimed, then `$calls` times timed, and reports `$payload` bytes per
/// call. Oneway runs end when the server has read every request.
macro_rules! bulk {
    ($name:expr, $p:expr, $calls:expr, $payload:expr, $call:expr) => {{
        let calls: usize = $calls;
        for _ in 0..WARM_UP_CALLS.min(calls) {
            $call;
        }
        sync($p).await?;
        let start = Instant::now();
        for _ in 0..calls {
            $call;
        }
        sync($p).await?;
        report(
            $name,
            calls,
            start.elapsed().as_secs_f64(),
            (calls * $payload) as f64,
        );
    }};
}

async fn latency(c: &Ctx) -> Result<()> {
    for _ in 0..1000 {
        c.a.o().await?;
    }
    let n = scaled(100_000, c.scale);
    let start = Instant::now();
    for _ in 0..n {
        c.a.o().await?;
    }
    report("latency", n, start.elapsed().as_secs_f64(), 0.0);
    Ok(())
}

/// `o()` calls in all for `pipelined_N` and `clients_N` (the same in the
/// Ice C++ client).
const CONCURRENT_CALLS: usize = 100_000;

/// Waits for every task of `set`; the first error fails the run.
async fn join_all(mut set: tokio::task::JoinSet<Result<()>>) -> Result<()> {
    while let Some(r) = set.join_next().await {
        r.map_err(|e| floe::runtime::Error::Initialization(e.to_string()))??;
    }
    Ok(())
}

/// `pipelined_N`: `CONCURRENT_CALLS` calls on one connection, N in flight.
///
/// One task keeps N call futures in a `FuturesUnordered` and starts the
/// next call whenever one completes, as the Ice C++ client's AMI callbacks
/// do from its one client thread. With `BENCH_PIPELINED_TASKS` set, N
/// tasks share the proxy instead, each awaiting its call and sending the
/// next: on the multi-thread runtime that adds a cross-thread wake-up per
/// batch of replies (both forms are in `docs/performance-notes.md`).
async fn pipelined(c: &Ctx, w: &str, depth: usize) -> Result<()> {
    for _ in 0..1000 {
        c.a.o().await?;
    }
    let total = scaled(CONCURRENT_CALLS, c.scale);
    if std::env::var_os("BENCH_PIPELINED_TASKS").is_none() {
        let start = Instant::now();
        let mut in_flight = FuturesUnordered::new();
        let mut sent = 0;
        while sent < depth.min(total) {
            in_flight.push(c.a.o());
            sent += 1;
        }
        while let Some(r) = in_flight.next().await {
            r?;
            if sent < total {
                in_flight.push(c.a.o());
                sent += 1;
            }
        }
        report(w, total, start.elapsed().as_secs_f64(), 0.0);
        return Ok(());
    }
    let next = Arc::new(AtomicUsize::new(0));
    let mut set = tokio::task::JoinSet::new();
    let start = Instant::now();
    for _ in 0..depth {
        let (p, next) = (c.a.clone(), next.clone());
        set.spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < total {
                p.o().await?;
            }
            Ok(())
        });
    }
    join_all(set).await?;
    report(w, total, start.elapsed().as_secs_f64(), 0.0);
    Ok(())
}

/// `clients_N`: N connections (`ice_connection_id`), a task each making
/// `CONCURRENT_CALLS / N` calls in a loop.
async fn clients(c: &Ctx, w: &str, n: usize) -> Result<()> {
    let mut proxies = Vec::with_capacity(n);
    for i in 0..n {
        let p = c.a.ice_connection_id(&format!("c{i}"));
        for _ in 0..100 {
            p.o().await?;
        }
        proxies.push(p);
    }
    let each = (scaled(CONCURRENT_CALLS, c.scale) / n).max(1);
    let mut set = tokio::task::JoinSet::new();
    let start = Instant::now();
    for p in proxies {
        set.spawn(async move {
            for _ in 0..each {
                p.o().await?;
            }
            Ok(())
        });
    }
    join_all(set).await?;
    report(w, each * n, start.elapsed().as_secs_f64(), 0.0);
    Ok(())
}

/// The N of `{prefix}N`, if `w` is such a workload.
fn count_suffix(w: &str, prefix: &str) -> Option<usize> {
    w.strip_prefix(prefix)?.parse().ok().filter(|n| *n > 0)
}

async fn oneway(c: &Ctx, batch: bool) -> Result<()> {
    let p = if batch {
        c.a.ice_batch_oneway()
    } else {
        c.a.ice_oneway()
    };
    for _ in 0..WARM_UP_CALLS {
        p.o().await?;
    }
    if batch {
        p.ice_flush_batch_requests().await?;
    }
    c.a.o().await?;
    let n = scaled(100_000, c.scale);
    let start = Instant::now();
    for i in 0..n {
        p.o().await?;
        if batch && (i + 1) % 1000 == 0 {
            p.ice_flush_batch_requests().await?;
        }
    }
    if batch {
        p.ice_flush_batch_requests().await?;
    }
    c.a.o().await?;
    report(
        if batch { "batch" } else { "oneway" },
        n,
        start.elapsed().as_secs_f64(),
        0.0,
    );
    Ok(())
}

async fn throughput(c: &Ctx, w: &str) -> Result<()> {
    let t = &c.t;
    let calls = |n| scaled(n, c.scale);
    match w {
        "byteseq_send" => {
            let seq = pattern(500_000);
            bulk!(
                w,
                t,
                calls(BYTESEQ_CALLS),
                500_000,
                t.send_byte_seq(seq.clone()).await?
            )
        }
        "byteseq_recv" => bulk!(w, t, calls(BYTESEQ_CALLS), 500_000, {
            let b = t.recv_byte_seq(500_000).await?;
            check_len(w, b.len(), 500_000);
        }),
        "fixed_send" => {
            let seq = make_fixed_seq(50_000);
            bulk!(w, t, calls(30), 50_000 * 16, t.send_fixed_seq(&seq).await?)
        }
        "fixed_recv" => bulk!(w, t, calls(30), 50_000 * 16, {
            let v = t.recv_fixed_seq(50_000).await?;
            check_len(w, v.len(), 50_000);
        }),
        "strdbl_send" => {
            let seq = make_string_double_seq(50_000);
            bulk!(
                w,
                t,
                calls(30),
                50_000 * 14,
                t.send_string_double_seq(&seq).await?
            )
        }
        "strdbl_recv" => bulk!(w, t, calls(30), 50_000 * 14, {
            let v = t.recv_string_double_seq(50_000).await?;
            check_len(w, v.len(), 50_000);
        }),
        _ => unreachable!("main accepts known workloads only"),
    }
    Ok(())
}

async fn codac(c: &Ctx, w: &str) -> Result<()> {
    // codac_{bytes,floats,data}_{oneway,twoway}_{size}
    let parts: Vec<&str> = w.split('_').collect();
    let (kind, oneway, size) = (
        parts[1],
        parts[2] == "oneway",
        parts[3].parse::<usize>().unwrap_or(0),
    );
    let reps = scaled(codac_calls(size), c.scale);
    let m = if oneway {
        c.m.ice_oneway()
    } else {
        c.m.clone()
    };
    match (kind, oneway) {
        ("bytes", true) => {
            let v = pattern(size);
            bulk!(w, &m, reps, size, m.publish_bytes_one_way(v.clone()).await?)
        }
        ("bytes", false) => {
            let v = pattern(size);
            bulk!(w, &m, reps, size, m.publish_bytes_two_way(v.clone()).await?)
        }
        ("floats", true) => {
            let v: Vec<f32> = (0..size / 4).map(|i| i as f32).collect();
            bulk!(w, &m, reps, size, m.publish_floats_one_way(&v).await?)
        }
        ("floats", false) => {
            let v: Vec<f32> = (0..size / 4).map(|i| i as f32).collect();
            bulk!(w, &m, reps, size, m.publish_floats_two_way(&v).await?)
        }
        (_, true) => {
            let msg = make_data_message(size);
            bulk!(w, &m, reps, size, m.publish_data_one_way(&msg).await?)
        }
        (_, false) => {
            let msg = make_data_message(size);
            bulk!(w, &m, reps, size, m.publish_data_two_way(&msg).await?)
        }
    };
    Ok(())
}

fn all_workloads() -> Vec<String> {
    let mut w: Vec<String> = [
        "latency",
        "oneway",
        "batch",
        "byteseq_send",
        "byteseq_recv",
        "fixed_send",
        "fixed_recv",
        "strdbl_send",
        "strdbl_recv",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for kind in ["bytes", "floats", "data"] {
        for way in ["oneway", "twoway"] {
            for size in [10_000, 100_000, 1_000_000, 10_000_000] {
                w.push(format!("codac_{kind}_{way}_{size}"));
            }
        }
    }
    for kind in ["pipelined", "clients"] {
        for n in [1, 4, 16, 64] {
            w.push(format!("{kind}_{n}"));
        }
    }
    w
}

async fn run(port: u16, workloads: Vec<String>, props: Properties, scale: f64) -> Result<()> {
    let endpoints = props
        .get("Bench.Endpoints")
        .unwrap_or_else(|| format!("tcp -h 127.0.0.1 -p {port}"));
    let adapter_id = props.get("Bench.AdapterId");
    let router = props.get("Bench.Glacier2Router");
    let communicator = Communicator::with_properties(props);
    let session = match &router {
        Some(r) => {
            let r = communicator.string_to_proxy(r)?;
            Some(Glacier2Session::create(&communicator, &r, "bench", "bench").await?)
        }
        None => None,
    };
    let proxy = |id: &str| {
        let p = communicator.string_to_proxy(&match &adapter_id {
            Some(adapter) => format!("{id}@{adapter}"),
            None => format!("{id}:{endpoints}"),
        })?;
        Ok::<_, floe::runtime::Error>(match &session {
            Some(s) => s.routed(&p),
            None => p,
        })
    };
    let c = Ctx {
        a: LatencyPrx::unchecked_cast(proxy("a")?),
        t: ThroughputPrx::unchecked_cast(proxy("t")?),
        m: MessagesPrx::unchecked_cast(proxy("m")?),
        scale,
    };
    for w in workloads {
        match w.as_str() {
            "latency" => latency(&c).await?,
            "oneway" => oneway(&c, false).await?,
            "batch" => oneway(&c, true).await?,
            "shutdown" => c.t.shutdown().await?,
            w if w.starts_with("codac_") => codac(&c, w).await?,
            w if w.starts_with("pipelined_") => {
                let n = count_suffix(w, "pipelined_").unwrap_or(1);
                pipelined(&c, w, n).await?
            }
            w if w.starts_with("clients_") => {
                let n = count_suffix(w, "clients_").unwrap_or(1);
                clients(&c, w, n).await?
            }
            w => throughput(&c, w).await?,
        }
    }
    if let Some(s) = session {
        s.destroy().await?;
    }
    communicator.destroy().await;
    Ok(())
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let current_thread = args.iter().any(|a| a == "--current-thread");
    args.retain(|a| a != "--current-thread");
    let props = Properties::from_args(&mut args).unwrap_or_else(|e| {
        eprintln!("bench_client: {e}");
        std::process::exit(2)
    });
    let Some(port) = args.first().and_then(|p| p.parse::<u16>().ok()) else {
        eprintln!("usage: bench_client PORT [--current-thread] [WORKLOAD...]");
        std::process::exit(2)
    };
    let known = all_workloads();
    let mut workloads: Vec<String> = args[1..].to_vec();
    if workloads.is_empty() {
        workloads = known.clone();
    }
    for w in &workloads {
        if w != "shutdown" && !known.contains(w) {
            eprintln!("bench_client: unknown workload `{w}`");
            std::process::exit(2)
        }
    }
    install_bench_tracing(&props);
    if props.get("Ice.MessageSizeMax").is_none() {
        props.set("Ice.MessageSizeMax", "102400");
    }
    let scale = bench_scale();
    let rt = build_runtime(current_thread);
    // On the multi-thread runtime the workload runs as a spawned task, on a
    // worker thread: replies then wake it on the worker that read them
    // instead of unparking the main thread that `block_on` runs on.
    let result = rt.block_on(async move {
        tokio::spawn(run(port, workloads, props, scale))
            .await
            .unwrap_or_else(|e| Err(floe::runtime::Error::Initialization(e.to_string())))
    });
    if let Err(e) = result {
        eprintln!("bench_client: {e}");
        std::process::exit(1)
    }
}
