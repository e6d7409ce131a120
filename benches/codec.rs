//! Encoding and decoding throughput of the `Bench.ice` types, no I/O:
//! `ByteSeq` 500 KB, `FixedSeq` 50,000, `StringDoubleSeq` 50,000,
//! `DataMessage` 100 KB and 10 MB, and the small frames of the latency path (an `o()`
//! request, its reply, a batch of 1,000 oneway `o()`).
//!
//! `cargo bench --bench codec`. The types' encoding is the bench pair's
//! (`floe_bench`, benches/programs/), so these numbers explain the wire share of
//! `cargo xtask compare`'s rows.

use std::hint::black_box;
use std::time::Duration;

use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use floe::wire::protocol::{
    BatchBuilder, CompressionStatus, Message, OperationMode, Reply, ReplyStatus, RequestHead,
};
use floe::wire::{Context, Identity};
use floe_bench::*;

#[allow(clippy::approx_constant)] // 3.14 is the value every bench client sends.
fn sequences(c: &mut Criterion) {
    let bytes = pattern(500_000);
    let fixed: Vec<Fixed> = (0..50_000)
        .map(|i| Fixed {
            i,
            j: 2 * i,
            d: i as f64 * 0.5,
        })
        .collect();
    let strdbl = vec![
        StringDouble {
            s: "hello".into(),
            d: 3.14,
        };
        50_000
    ];

    let mut g = c.benchmark_group("byteseq_500k");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("encode", |b| {
        b.iter(|| encaps(|e| e.write_byte_seq(black_box(&bytes))))
    });
    let encoded = encaps(|e| e.write_byte_seq(&bytes));
    g.bench_function("decode", |b| {
        b.iter(|| decoder(black_box(&encoded)).read_byte_seq())
    });
    g.finish();

    let mut g = c.benchmark_group("fixedseq_50k");
    g.throughput(Throughput::Bytes(50_000 * 16));
    g.bench_function("encode", |b| {
        b.iter(|| encaps(|e| write_fixed_seq(e, black_box(&fixed))))
    });
    let encoded = encaps(|e| write_fixed_seq(e, &fixed));
    g.bench_function("decode", |b| {
        b.iter(|| read_fixed_seq(&mut decoder(black_box(&encoded))))
    });
    g.finish();

    let mut g = c.benchmark_group("stringdoubleseq_50k");
    g.throughput(Throughput::Bytes(50_000 * 14));
    g.bench_function("encode", |b| {
        b.iter(|| encaps(|e| write_string_double_seq(e, black_box(&strdbl))))
    });
    let encoded = encaps(|e| write_string_double_seq(e, &strdbl));
    g.bench_function("decode", |b| {
        b.iter(|| read_string_double_seq(&mut decoder(black_box(&encoded))))
    });
    g.finish();

    for (name, data) in [
        ("datamessage_100k", make_data_message(100_000)),
        ("datamessage_10m", make_data_message(10_000_000)),
    ] {
        let mut g = c.benchmark_group(name);
        let encoded = encaps(|e| write_data_message(e, &data));
        g.throughput(Throughput::Bytes(encoded.len() as u64));
        g.bench_function("encode", |b| {
            b.iter(|| encaps(|e| write_data_message(e, black_box(&data))))
        });
        g.bench_function("decode", |b| {
            b.iter(|| read_data_message(&mut decoder(black_box(&encoded))))
        });
        g.finish();
    }
}

fn frames(c: &mut Criterion) {
    let id = Identity::from_name("a");
    let ctx = Context::new();
    let head = RequestHead {
        identity: &id,
        facet: "",
        operation: "o",
        mode: OperationMode::Normal,
        context: &ctx,
    };
    let empty = encaps(|_| {});
    let mut g = c.benchmark_group("frames");
    let mut buf = BytesMut::with_capacity(256);
    g.bench_function("request_o_encode", |b| {
        b.iter(|| {
            buf.clear();
            head.encode(
                &mut buf,
                black_box(7),
                &empty,
                CompressionStatus::NotSupported,
            );
            black_box(buf.len())
        })
    });
    let mut request = BytesMut::new();
    head.encode(&mut request, 7, &empty, CompressionStatus::NotSupported);
    let request = request.freeze();
    assert_eq!(request.len(), 32, "o() request is 32 bytes");
    g.bench_function("request_o_parse", |b| {
        b.iter(|| Message::parse(black_box(request.clone())))
    });
    g.bench_function("reply_empty_encode", |b| {
        b.iter(|| {
            buf.clear();
            Reply::encode_head(
                &mut buf,
                black_box(7),
                ReplyStatus::OK,
                empty.len(),
                CompressionStatus::NotSupported,
            );
            buf.extend_from_slice(&empty);
            black_box(buf.len())
        })
    });
    let mut reply = BytesMut::new();
    Reply::encode_head(
        &mut reply,
        7,
        ReplyStatus::OK,
        empty.len(),
        CompressionStatus::NotSupported,
    );
    reply.extend_from_slice(&empty);
    let reply = reply.freeze();
    assert_eq!(reply.len(), 25, "empty reply is 25 bytes");
    g.bench_function("reply_empty_parse", |b| {
        b.iter(|| Message::parse(black_box(reply.clone())))
    });

    g.throughput(Throughput::Elements(1000));
    g.bench_function("batch_1000_o_encode", |b| {
        b.iter_batched_ref(
            BatchBuilder::new,
            |batch| {
                for _ in 0..1000 {
                    batch.push(&head, &empty);
                }
                batch.take_frame()
            },
            BatchSize::SmallInput,
        )
    });
    let mut batch = BatchBuilder::new();
    for _ in 0..1000 {
        batch.push(&head, &empty);
    }
    // Invariant: 1,000 requests were queued just above.
    let frame = batch.take_frame().expect("queued requests").freeze();
    g.bench_function("batch_1000_o_parse", |b| {
        b.iter(|| match Message::parse(black_box(frame.clone())) {
            Ok((_, Message::BatchRequest(batch))) => batch.iter().filter(|r| r.is_ok()).count(),
            _ => 0,
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    // Short runs: a shared 2-core machine gains little from longer ones.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    targets = sequences, frames
}
criterion_main!(benches);
