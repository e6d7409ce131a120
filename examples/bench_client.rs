//! The Bench.ice client: `cargo run --release --example bench_client -- PORT
//! [--current-thread] [WORKLOAD...]`. Runs the workloads (all when none is
//! named) against `127.0.0.1:PORT` and prints one JSON object per line:
//! `{"impl":"floe","workload":..,"calls":..,"seconds":..,"us_per_call":..,"mbit_s":..}`
//! (`mbit_s` counts payload bytes only).
//!
//! Runtime: the multi-thread runtime is the default because it is what most
//! applications run; `--current-thread` keeps the caller and the connection
//! task on one thread, which avoids cross-thread wake-ups on the latency
//! path.

// The workload is specified as {"hello", 3.14}, not PI.
#![allow(clippy::approx_constant)]

#[path = "bench_common/mod.rs"]
mod bench_common;

use std::time::Instant;

use bench_common::*;
use bytes::Bytes;
use floe::runtime::{Communicator, OperationMode, Properties, Proxy, Result};
use floe::wire::Decoder;

const NORMAL: OperationMode = OperationMode::Normal;

struct Ctx {
    a: Proxy,
    t: Proxy,
    m: Proxy,
}

/// Prints one result line.
fn report(workload: &str, calls: usize, seconds: f64, payload_bytes: f64) {
    let us = seconds * 1e6 / calls.max(1) as f64;
    let mbit = if seconds > 0.0 {
        payload_bytes * 8.0 / seconds / 1e6
    } else {
        0.0
    };
    println!(
        "{{\"impl\":\"floe\",\"workload\":\"{workload}\",\"calls\":{calls},\"seconds\":{seconds:.6},\"us_per_call\":{us:.3},\"mbit_s\":{mbit:.3}}}"
    );
}

async fn latency(c: &Ctx) -> Result<()> {
    let empty = c.a.empty_params();
    for _ in 0..1000 {
        c.a.invoke("o", NORMAL, empty.clone()).await?;
    }
    let n = 100_000;
    let start = Instant::now();
    for _ in 0..n {
        c.a.invoke("o", NORMAL, empty.clone()).await?;
    }
    report("latency", n, start.elapsed().as_secs_f64(), 0.0);
    Ok(())
}

async fn oneway(c: &Ctx, batch: bool) -> Result<()> {
    let empty = c.a.empty_params();
    let p = if batch {
        c.a.ice_batch_oneway()
    } else {
        c.a.ice_oneway()
    };
    let n = 100_000;
    let start = Instant::now();
    for i in 0..n {
        p.invoke("o", NORMAL, empty.clone()).await?;
        if batch && (i + 1) % 1000 == 0 {
            p.ice_flush_batch_requests().await?;
        }
    }
    if batch {
        p.ice_flush_batch_requests().await?;
    }
    c.a.invoke("o", NORMAL, empty).await?;
    report(
        if batch { "batch" } else { "oneway" },
        n,
        start.elapsed().as_secs_f64(),
        0.0,
    );
    Ok(())
}

/// Runs `calls` invocations of `op` with `params` on `p`, decoding each
/// reply with `check`, and reports `payload` bytes per call.
async fn repeat(
    name: &str,
    p: &Proxy,
    op: &str,
    params: Bytes,
    calls: usize,
    payload: usize,
    check: impl Fn(Decoder) -> floe::wire::Result<()>,
) -> Result<()> {
    let start = Instant::now();
    for _ in 0..calls {
        let r = p.invoke(op, NORMAL, params.clone()).await?.into_ok()?;
        if p.mode().is_twoway() {
            check(Decoder::from_encapsulation(r)?)?;
        }
    }
    if !p.mode().is_twoway() {
        p.ice_twoway().ice_ping().await?;
    }
    report(
        name,
        calls,
        start.elapsed().as_secs_f64(),
        (calls * payload) as f64,
    );
    Ok(())
}

fn none(_: Decoder) -> floe::wire::Result<()> {
    Ok(())
}

async fn throughput(c: &Ctx, w: &str) -> Result<()> {
    let t = &c.t;
    match w {
        "byteseq_send" => {
            let params = t.encode_params(|e| e.write_byte_seq(&pattern(500_000)));
            repeat(w, t, "sendByteSeq", params, 200, 500_000, none).await
        }
        "byteseq_recv" => {
            let params = t.encode_params(|e| e.write_i32(500_000));
            repeat(w, t, "recvByteSeq", params, 200, 500_000, |mut d| {
                let b = d.read_byte_seq()?;
                assert_eq!(b.len(), 500_000);
                Ok(())
            })
            .await
        }
        "fixed_send" => {
            let seq: Vec<Fixed> = (0..50_000)
                .map(|i| Fixed {
                    i,
                    j: 2 * i,
                    d: i as f64 * 0.5,
                })
                .collect();
            // Encoded per call, as a typed proxy would.
            let start = Instant::now();
            for _ in 0..30 {
                let params = t.encode_params(|e| write_fixed_seq(e, &seq));
                t.invoke("sendFixedSeq", NORMAL, params).await?;
            }
            report(
                w,
                30,
                start.elapsed().as_secs_f64(),
                (30 * 50_000 * 16) as f64,
            );
            Ok(())
        }
        "fixed_recv" => {
            let params = t.encode_params(|e| e.write_i32(50_000));
            repeat(w, t, "recvFixedSeq", params, 30, 50_000 * 16, |mut d| {
                let v = read_fixed_seq(&mut d)?;
                assert_eq!(v.len(), 50_000);
                Ok(())
            })
            .await
        }
        "strdbl_send" => {
            let seq = vec![
                StringDouble {
                    s: "hello".into(),
                    d: 3.14,
                };
                50_000
            ];
            let start = Instant::now();
            for _ in 0..30 {
                let params = t.encode_params(|e| write_string_double_seq(e, &seq));
                t.invoke("sendStringDoubleSeq", NORMAL, params).await?;
            }
            report(
                w,
                30,
                start.elapsed().as_secs_f64(),
                (30 * 50_000 * 14) as f64,
            );
            Ok(())
        }
        "strdbl_recv" => {
            let params = t.encode_params(|e| e.write_i32(50_000));
            repeat(
                w,
                t,
                "recvStringDoubleSeq",
                params,
                30,
                50_000 * 14,
                |mut d| {
                    let v = read_string_double_seq(&mut d)?;
                    assert_eq!(v.len(), 50_000);
                    Ok(())
                },
            )
            .await
        }
        _ => unreachable!(),
    }
}

async fn codac(c: &Ctx, w: &str) -> Result<()> {
    // codac_{bytes,floats,data}_{oneway,twoway}_{size}
    let parts: Vec<&str> = w.split('_').collect();
    let (kind, way, size) = (parts[1], parts[2], parts[3].parse::<usize>().unwrap_or(0));
    let reps = match size {
        10_000 | 100_000 => 500,
        1_000_000 => 50,
        _ => 10,
    };
    let m = if way == "oneway" {
        c.m.ice_oneway()
    } else {
        c.m.clone()
    };
    let suffix = if way == "oneway" { "OneWay" } else { "TwoWay" };
    let (op, params) = match kind {
        "bytes" => (
            format!("publishBytes{suffix}"),
            m.encode_params(|e| e.write_byte_seq(&pattern(size))),
        ),
        "floats" => {
            let v: Vec<f32> = (0..size / 4).map(|i| i as f32).collect();
            (
                format!("publishFloats{suffix}"),
                m.encode_params(|e| write_float_seq(e, &v)),
            )
        }
        _ => {
            let msg = make_data_message(size);
            (
                format!("publishData{suffix}"),
                m.encode_params(|e| write_data_message(e, &msg)),
            )
        }
    };
    repeat(w, &m, &op, params, reps, size, |mut d| {
        d.read_i32()?;
        Ok(())
    })
    .await
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
    w
}

async fn run(port: u16, workloads: Vec<String>, props: Properties) -> Result<()> {
    let communicator = Communicator::with_properties(props);
    let proxy =
        |id: &str| communicator.string_to_proxy(&format!("{id}:tcp -h 127.0.0.1 -p {port}"));
    let c = Ctx {
        a: proxy("a")?,
        t: proxy("t")?,
        m: proxy("m")?,
    };
    for w in workloads {
        match w.as_str() {
            "latency" => latency(&c).await?,
            "oneway" => oneway(&c, false).await?,
            "batch" => oneway(&c, true).await?,
            "shutdown" => {
                c.t.invoke("shutdown", NORMAL, c.t.empty_params()).await?;
            }
            w if w.starts_with("codac_") => codac(&c, w).await?,
            w => throughput(&c, w).await?,
        }
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
    if props.get("Ice.MessageSizeMax").is_none() {
        props.set("Ice.MessageSizeMax", "102400");
    }
    let rt = build_runtime(current_thread);
    // On the multi-thread runtime the workload runs as a spawned task, on a
    // worker thread: replies then wake it on the worker that read them
    // instead of unparking the main thread that `block_on` runs on.
    let result = rt.block_on(async move {
        tokio::spawn(run(port, workloads, props))
            .await
            .unwrap_or_else(|e| Err(floe::runtime::Error::Initialization(e.to_string())))
    });
    if let Err(e) = result {
        eprintln!("bench_client: {e}");
        std::process::exit(1)
    }
}
