//! Small-call latency over loopback TCP against an in-process floe server
//! (`support`): twoway `o()`, oneway `o()` (with a twoway `o()` every 1,000
//! to keep the queue bounded) and batch oneway `o()` flushed every 1,000,
//! on tokio's multi-thread and current-thread runtimes; twoway `o()` again
//! with `floe.BusyPoll=50`.
//!
//! `cargo bench --bench latency`. For floe side by side with Ice C++ and a
//! raw socket, use `cargo xtask compare`.

mod support;

use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use floe::runtime::{OperationMode, Properties};
use support::Bench;

const NORMAL: OperationMode = OperationMode::Normal;

/// Twoway `o()` round trips on `bench`.
fn twoway_o(g: &mut BenchmarkGroup<'_, WallTime>, bench: &Bench) {
    let empty = bench.a.empty_params();
    g.bench_function("twoway_o", |b| {
        b.to_async(&bench.rt).iter(|| async {
            // Invariant: the in-process server answers `o()`.
            bench
                .a
                .invoke("o", NORMAL, empty.clone())
                .await
                .expect("o()")
        })
    });
}

fn latency(c: &mut Criterion) {
    for (flavour, current_thread) in [("multi_thread", false), ("current_thread", true)] {
        let bench = Bench::start(current_thread);
        let empty = bench.a.empty_params();
        let oneway = bench.a.ice_oneway();
        let batch = bench.a.ice_batch_oneway();
        let mut g = c.benchmark_group(format!("latency_{flavour}"));
        twoway_o(&mut g, &bench);
        g.throughput(Throughput::Elements(1000));
        g.bench_function("oneway_o_x1000", |b| {
            b.to_async(&bench.rt).iter(|| async {
                for _ in 0..1000 {
                    oneway
                        .invoke("o", NORMAL, empty.clone())
                        .await
                        .expect("oneway o()");
                }
                bench
                    .a
                    .invoke("o", NORMAL, empty.clone())
                    .await
                    .expect("o()")
            })
        });
        g.bench_function("batch_o_x1000", |b| {
            b.to_async(&bench.rt).iter(|| async {
                for _ in 0..1000 {
                    batch
                        .invoke("o", NORMAL, empty.clone())
                        .await
                        .expect("batch o()");
                }
                batch.ice_flush_batch_requests().await.expect("flush");
                bench
                    .a
                    .invoke("o", NORMAL, empty.clone())
                    .await
                    .expect("o()")
            })
        });
        g.finish();
    }
    // `floe.BusyPoll=50` on both communicators (multi-thread runtime: the
    // in-process server polls on one worker while the client polls on the
    // other; see docs/performance-notes.md for the two-process figures).
    let props = Properties::new();
    props.set("floe.BusyPoll", "50");
    let bench = Bench::start_with(false, props);
    let mut g = c.benchmark_group("latency_busy_poll");
    twoway_o(&mut g, &bench);
    g.finish();
}

criterion_group! {
    name = benches;
    // Short runs: a shared 2-core machine gains little from longer ones.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30);
    targets = latency
}
criterion_main!(benches);
