//! Bench.ice's checks from a floe client, the same 24 as `bench.py client`
//! (same names, same data), on generated proxies.

use std::future::Future;

use bytes::Bytes;
use floe::runtime::{Communicator, Error};
use floe_codegen_tests::bench;

use crate::support::Report;

/// The number of checks (`bench.py` runs as many).
pub const COUNT: usize = 24;

const MB: usize = 1000 * 1000;

/// Byte `i` is `i % 256`.
pub fn byte_data(n: usize) -> Bytes {
    (0..n).map(|i| i as u8).collect()
}

/// Fixed `i` is `{i, -i, i * 0.5}`.
pub fn fixed_data(n: usize) -> bench::FixedSeq {
    (0..n as i32)
        .map(|i| bench::Fixed {
            i,
            j: -i,
            d: f64::from(i) * 0.5,
        })
        .collect()
}

/// StringDouble `i` is `{i, i * 0.25}`.
pub fn sd_data(n: usize) -> bench::StringDoubleSeq {
    (0..n as i32)
        .map(|i| bench::StringDouble {
            s: i.to_string(),
            d: f64::from(i) * 0.25,
        })
        .collect()
}

/// Float `i` is `i * 0.5`.
pub fn float_data(n: usize) -> bench::FloatSeq {
    (0..n).map(|i| i as f32 * 0.5).collect()
}

pub fn same_fixed(a: &[bench::Fixed], b: &[bench::Fixed]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.i == y.i && x.j == y.j && x.d == y.d)
}

pub fn same_sd(a: &[bench::StringDouble], b: &[bench::StringDouble]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.s == y.s && x.d == y.d)
}

fn data_message(signals: i32, samples: i32) -> bench::DataMessage {
    bench::DataMessage {
        name: "msg".into(),
        id: 7,
        signal_count: signals,
        sample_count: samples,
        times: float_data(samples as usize),
        signals: (0..signals)
            .map(|k| bench::SignalData {
                name: format!("s{k}"),
                samples: float_data(samples as usize),
            })
            .collect(),
    }
}

type Outcome = Result<(), String>;

fn expect(ok: bool) -> Outcome {
    ok.then_some(()).ok_or_else(|| "wrong value".to_owned())
}

fn done<T>(r: Result<T, Error>) -> Outcome {
    r.map(|_| ()).map_err(|e| e.to_string())
}

async fn record(report: &mut Report, name: &str, check: impl Future<Output = Outcome>) {
    match check.await {
        Ok(()) => report.passed.push(name.to_owned()),
        Err(why) => report.failed.push(format!("{name}: {why}")),
    }
}

/// Runs every check against the Bench server on `port`.
pub async fn run(communicator: &Communicator, port: u16) -> Report {
    let proxy = |name: &str| {
        communicator
            .string_to_proxy(&format!("{name}:tcp -h 127.0.0.1 -p {port}"))
            .expect("proxy")
    };
    let latency = bench::LatencyPrx::unchecked_cast(proxy("latency"));
    let throughput = bench::ThroughputPrx::unchecked_cast(proxy("throughput"));
    let messages = bench::MessagesPrx::unchecked_cast(proxy("messages"));
    let encoding_1_0 = throughput.ice_encoding_version(floe::wire::ENCODING_1_0);
    let compressed = throughput.ice_compress(true);
    let mut r = Report::default();
    record(&mut r, "ping", async { done(latency.ice_ping().await) }).await;
    record(&mut r, "is_a", async {
        expect(latency.ice_is_a("::Bench::Latency").await.ok() == Some(true))
    })
    .await;
    record(&mut r, "checked_cast", async {
        done(bench::ThroughputPrx::checked_cast((*throughput).clone()).await)
    })
    .await;
    record(&mut r, "latency", async { done(latency.o().await) }).await;
    record(&mut r, "oneway", async {
        done(latency.ice_oneway().o().await)
    })
    .await;
    for (name, n) in [("0", 0), ("1k", 1000), ("1m", MB)] {
        record(&mut r, &format!("send_bytes_{name}"), async {
            done(throughput.send_byte_seq(byte_data(n)).await)
        })
        .await;
    }
    for (name, n) in [("0", 0), ("1k", 1000), ("1m", MB)] {
        record(&mut r, &format!("recv_bytes_{name}"), async {
            let got = throughput
                .recv_byte_seq(n as i32)
                .await
                .map_err(|e| e.to_string())?;
            expect(got == byte_data(n))
        })
        .await;
    }
    record(&mut r, "send_fixed", async {
        done(throughput.send_fixed_seq(&fixed_data(1000)).await)
    })
    .await;
    record(&mut r, "recv_fixed", async {
        let got = throughput
            .recv_fixed_seq(1000)
            .await
            .map_err(|e| e.to_string())?;
        expect(same_fixed(&got, &fixed_data(1000)))
    })
    .await;
    record(&mut r, "send_string_double", async {
        done(throughput.send_string_double_seq(&sd_data(1000)).await)
    })
    .await;
    record(&mut r, "recv_string_double", async {
        let got = throughput
            .recv_string_double_seq(1000)
            .await
            .map_err(|e| e.to_string())?;
        expect(same_sd(&got, &sd_data(1000)))
    })
    .await;
    record(&mut r, "encoding_1_0", async {
        let got = encoding_1_0
            .recv_fixed_seq(100)
            .await
            .map_err(|e| e.to_string())?;
        expect(same_fixed(&got, &fixed_data(100)))
    })
    .await;
    record(&mut r, "compressed", async {
        done(compressed.send_byte_seq(byte_data(100_000)).await)
    })
    .await;
    record(&mut r, "publish_bytes", async {
        expect(messages.publish_bytes_two_way(byte_data(10_000)).await.ok() == Some(10_000))
    })
    .await;
    record(&mut r, "publish_floats", async {
        expect(
            messages
                .publish_floats_two_way(&float_data(2500))
                .await
                .ok()
                == Some(2500),
        )
    })
    .await;
    record(&mut r, "publish_data", async {
        expect(
            messages
                .publish_data_two_way(&data_message(4, 100))
                .await
                .ok()
                == Some(400),
        )
    })
    .await;
    record(&mut r, "publish_oneways", async {
        let oneway = messages.ice_oneway();
        done(oneway.publish_bytes_one_way(byte_data(1000)).await)?;
        done(oneway.publish_floats_one_way(&float_data(100)).await)?;
        done(oneway.publish_data_one_way(&data_message(2, 10)).await)?;
        expect(messages.publish_bytes_two_way(byte_data(10)).await.ok() == Some(10))
    })
    .await;
    record(&mut r, "not_exist", async {
        let nobody = bench::LatencyPrx::unchecked_cast(proxy("nobody"));
        match nobody.o().await {
            Err(Error::ObjectNotExist(_)) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    record(&mut r, "bad_data", async {
        let bad = vec![bench::Fixed { i: 1, j: 1, d: 1.0 }];
        match throughput.send_fixed_seq(&bad).await {
            Err(Error::UnknownException(_)) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    record(&mut r, "twoway_after_failures", async {
        done(latency.o().await)
    })
    .await;
    r.complete = true;
    r
}
