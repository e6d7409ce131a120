//! Fan-in through floe-storm: 4 publishers → 1 subscriber over loopback
//! TCP, CODAC messages of 10 KB, 100 KB and 1 MB (`ByteSeq`, `FloatSeq`,
//! `DataMessage` of `benches/Bench.ice`), the broker running in-process on
//! its own tokio runtime, publishers and subscriber on another. The
//! workload itself is `floe_bench::fanin` (benches/programs/src/fanin.rs); one iteration is one
//! fan-in run (a fresh topic), timed from the first timed publish to the
//! last message received.
//!
//! `cargo bench --bench fanin`. For floe-storm side by side with IceStorm
//! 3.7 (MB/s, messages lost, ratios), use `cargo xtask compare --fanin`.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use floe::runtime::Communicator;
use floe_bench::fanin::{self, Workload, KINDS, PUBLISHERS, SIZES};
use floe_storm::config::StormConfig;
use floe_storm::server::Server;

/// A fraction of the compare run's message counts: criterion repeats.
const SCALE: f64 = 0.1;

fn fanin(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary directory for the broker's store");
    // The broker gets a runtime of its own, as it would in its own process.
    let broker_rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    let config = StormConfig {
        topic_manager_endpoints: "tcp -h 127.0.0.1 -p 0".into(),
        publish_endpoints: "tcp -h 127.0.0.1 -p 0".into(),
        data_dir: dir.path().to_path_buf(),
        ..StormConfig::default()
    };
    let server = broker_rt
        .block_on(Server::start(config, Communicator::new()))
        .expect("floe-storm starts");
    let tm = server.topic_manager_proxy();
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");

    let mut g = c.benchmark_group("fanin");
    for kind in KINDS {
        for size in SIZES {
            let w = Workload { kind, size };
            let n = floe_bench::scaled(fanin::messages_per_publisher(size), SCALE);
            g.throughput(Throughput::Bytes((PUBLISHERS * n * size) as u64));
            g.bench_function(w.name(), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let r = rt
                            .block_on(fanin::run(&tm, w, PUBLISHERS, n, Duration::from_secs(3)))
                            .expect("fan-in run");
                        assert_eq!(r.lost(), 0, "{}: messages lost", w.name());
                        total += Duration::from_secs_f64(r.seconds);
                    }
                    total
                })
            });
        }
    }
    g.finish();
    drop(rt);
    broker_rt.block_on(server.shutdown());
}

criterion_group! {
    name = benches;
    // Each iteration is a whole fan-in run: few samples.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10);
    targets = fanin
}
criterion_main!(benches);
