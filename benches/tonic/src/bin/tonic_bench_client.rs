//! tonic (gRPC) bench client: `tonic_bench_client PORT [WORKLOAD...]`, with
//! the CLI and JSON lines of `bench_client` (`"impl":"tonic"`). Workloads:
//! `latency` (unary `O`, like `o()`), `byteseq_send`, `byteseq_recv`
//! (500,000 bytes) and `shutdown` (all but `shutdown` when none is named).
//! Call counts are the floe client's, scaled by `BENCH_SCALE` (default 1).
//! Runs on tokio's current-thread runtime, as floe's `--current-thread`
//! client: one connection, one call at a time.

#[path = "../messages.rs"]
mod messages;

use std::time::Instant;

use bytes::Bytes;
use messages::bench::bench_client::BenchClient;
use messages::{ByteSeq, Empty, RecvByteSeq, BYTESEQ_SIZE};
use tonic::transport::{Channel, Endpoint};

/// The workloads this peer has an equivalent for.
const WORKLOADS: &[&str] = &["latency", "byteseq_send", "byteseq_recv"];

/// Untimed calls before each byte-sequence workload, as the other clients make.
const WARM_UP_CALLS: usize = 10;

/// 500,000-byte calls per `byteseq_*` run (the same in every bench client): enough
/// for a quarter second, so one scheduling hiccup does not decide the median.
const BYTESEQ_CALLS: usize = 2_000;

type DynError = Box<dyn std::error::Error>;

/// Prints one result line; `payload` is the payload bytes of one call.
fn report(workload: &str, calls: usize, seconds: f64, payload: usize) {
    let us = seconds * 1e6 / calls.max(1) as f64;
    let mbit = if seconds > 0.0 {
        (calls * payload) as f64 * 8.0 / seconds / 1e6
    } else {
        0.0
    };
    println!(
        "{{\"impl\":\"tonic\",\"workload\":\"{workload}\",\"calls\":{calls},\"seconds\":{seconds:.6},\"us_per_call\":{us:.3},\"mbit_s\":{mbit:.3}}}"
    );
}

/// `calls` scaled by `BENCH_SCALE`, at least 1.
fn scaled(calls: usize) -> usize {
    let scale = std::env::var("BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(1.0);
    ((calls as f64 * scale) as usize).max(1)
}

async fn run(c: &mut BenchClient<Channel>, workload: &str) -> Result<(), DynError> {
    match workload {
        "latency" => {
            for _ in 0..1000 {
                c.o(Empty {}).await?;
            }
            let n = scaled(100_000);
            let start = Instant::now();
            for _ in 0..n {
                c.o(Empty {}).await?;
            }
            report(workload, n, start.elapsed().as_secs_f64(), 0);
        }
        "byteseq_send" => {
            let seq: Bytes = (0..BYTESEQ_SIZE)
                .map(|i| i as u8)
                .collect::<Vec<u8>>()
                .into();
            for _ in 0..WARM_UP_CALLS {
                c.send_byte_seq(ByteSeq { seq: seq.clone() }).await?;
            }
            let n = scaled(BYTESEQ_CALLS);
            let start = Instant::now();
            for _ in 0..n {
                c.send_byte_seq(ByteSeq { seq: seq.clone() }).await?;
            }
            report(workload, n, start.elapsed().as_secs_f64(), BYTESEQ_SIZE);
        }
        "byteseq_recv" => {
            let req = RecvByteSeq {
                size: BYTESEQ_SIZE as u32,
            };
            for _ in 0..WARM_UP_CALLS {
                c.recv_byte_seq(req.clone()).await?;
            }
            let n = scaled(BYTESEQ_CALLS);
            let start = Instant::now();
            for _ in 0..n {
                let reply = c.recv_byte_seq(req.clone()).await?.into_inner();
                if reply.seq.len() != BYTESEQ_SIZE {
                    return Err("short recvByteSeq reply".into());
                }
            }
            report(workload, n, start.elapsed().as_secs_f64(), BYTESEQ_SIZE);
        }
        "shutdown" => {
            // The server may exit before or after the reply arrives.
            let _ = c.shutdown(Empty {}).await;
        }
        _ => unreachable!("checked in main"),
    }
    Ok(())
}

async fn connect(port: u16) -> Result<BenchClient<Channel>, DynError> {
    let channel = Endpoint::from_shared(format!("http://127.0.0.1:{port}"))?
        .tcp_nodelay(true)
        .connect()
        .await?;
    Ok(BenchClient::new(channel))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(port) = args.first().and_then(|p| p.parse::<u16>().ok()) else {
        eprintln!("usage: tonic_bench_client PORT [WORKLOAD...]");
        std::process::exit(2)
    };
    // Flags (a pair's extra arguments) are the server's business.
    let mut workloads: Vec<&str> = args[1..]
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if workloads.is_empty() {
        workloads = WORKLOADS.to_vec();
    }
    if let Some(w) = workloads
        .iter()
        .find(|w| **w != "shutdown" && !WORKLOADS.contains(w))
    {
        eprintln!("tonic_bench_client: unknown workload `{w}`");
        std::process::exit(2)
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("tonic_bench_client: runtime: {e}");
            std::process::exit(1)
        }
    };
    let result = runtime.block_on(async {
        let mut c = connect(port)
            .await
            .map_err(|e| format!("cannot connect to 127.0.0.1:{port}: {e}"))?;
        for w in workloads {
            run(&mut c, w).await.map_err(|e| format!("{w}: {e}"))?;
        }
        Ok::<(), String>(())
    });
    if let Err(e) = result {
        eprintln!("tonic_bench_client: {e}");
        std::process::exit(1)
    }
}
