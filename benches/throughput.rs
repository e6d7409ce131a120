//! Bulk transfer over loopback TCP against an in-process floe server
//! (`support`): 500 KB `ByteSeq`, 50,000 `Fixed` and 50,000 `StringDouble`,
//! each sent and received, arguments encoded per call as a typed proxy
//! would.
//!
//! `cargo bench --bench throughput`. For floe side by side with Ice C++ and
//! a raw socket, use `cargo xtask compare`.

mod support;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use floe::runtime::OperationMode;
use floe::wire::Decoder;
use support::*;

const NORMAL: OperationMode = OperationMode::Normal;

fn throughput(c: &mut Criterion) {
    let bench = Bench::start(false);
    let t = &bench.t;
    let bytes = pattern(500_000);
    let fixed = fixed_seq();
    let strdbl = string_double_seq();

    let mut g = c.benchmark_group("throughput");
    g.throughput(Throughput::Bytes(500_000));
    g.bench_function("byteseq_send_500k", |b| {
        b.to_async(&bench.rt).iter(|| async {
            let params = t.encode_params(|e| e.write_byte_seq(&bytes));
            // Invariant: the in-process server implements these operations.
            t.invoke("sendByteSeq", NORMAL, params).await.expect("send")
        })
    });
    let size = t.encode_params(|e| e.write_i32(500_000));
    g.bench_function("byteseq_recv_500k", |b| {
        b.to_async(&bench.rt).iter(|| async {
            let r = t.invoke("recvByteSeq", NORMAL, size.clone()).await;
            let encaps = r.expect("recv").into_ok().expect("ok reply");
            let mut dec = Decoder::from_encapsulation(encaps).expect("encapsulation");
            dec.read_byte_seq().expect("bytes").len()
        })
    });

    g.throughput(Throughput::Bytes(50_000 * 16));
    g.bench_function("fixedseq_send_50k", |b| {
        b.to_async(&bench.rt).iter(|| async {
            let params = t.encode_params(|e| write_fixed_seq(e, &fixed));
            t.invoke("sendFixedSeq", NORMAL, params)
                .await
                .expect("send")
        })
    });
    let count = t.encode_params(|e| e.write_i32(50_000));
    g.bench_function("fixedseq_recv_50k", |b| {
        b.to_async(&bench.rt).iter(|| async {
            let r = t.invoke("recvFixedSeq", NORMAL, count.clone()).await;
            let encaps = r.expect("recv").into_ok().expect("ok reply");
            let mut dec = Decoder::from_encapsulation(encaps).expect("encapsulation");
            read_fixed_seq(&mut dec).expect("seq").len()
        })
    });

    g.throughput(Throughput::Bytes(50_000 * 14));
    g.bench_function("stringdoubleseq_send_50k", |b| {
        b.to_async(&bench.rt).iter(|| async {
            let params = t.encode_params(|e| write_string_double_seq(e, &strdbl));
            t.invoke("sendStringDoubleSeq", NORMAL, params)
                .await
                .expect("send")
        })
    });
    g.bench_function("stringdoubleseq_recv_50k", |b| {
        b.to_async(&bench.rt).iter(|| async {
            let r = t.invoke("recvStringDoubleSeq", NORMAL, count.clone()).await;
            let encaps = r.expect("recv").into_ok().expect("ok reply");
            let mut dec = Decoder::from_encapsulation(encaps).expect("encapsulation");
            read_string_double_seq(&mut dec).expect("seq").len()
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    // Short runs: a shared 2-core machine gains little from longer ones.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    targets = throughput
}
criterion_main!(benches);
