//! Raw TCP baseline client: `raw_bench_client PORT [--spin|--tokio] [WORKLOAD...]`, with the
//! CLI and JSON lines of `bench_client` (`"impl":"raw"`). Workloads:
//! `latency`, `oneway`, `byteseq_send`, `byteseq_recv`, `shutdown` (all but
//! `shutdown` when none is named). Call counts are the floe client's, scaled
//! by the `BENCH_SCALE` environment variable (a factor, default 1).
//! `--spin` reads and writes in a busy loop, `--tokio` waits through a tokio
//! reactor (see [`floe_bench::raw::Mode`]).

use std::io::Write;
use std::net::TcpStream;
use std::time::Instant;

use floe_bench::raw::*;

/// The workloads this baseline has an equivalent for.
const WORKLOADS: &[&str] = &["latency", "oneway", "byteseq_send", "byteseq_recv"];

/// Prints one result line; `payload` is the payload bytes of one call.
fn report(workload: &str, calls: usize, seconds: f64, payload: usize) {
    let us = seconds * 1e6 / calls.max(1) as f64;
    let mbit = if seconds > 0.0 {
        (calls * payload) as f64 * 8.0 / seconds / 1e6
    } else {
        0.0
    };
    println!(
        "{{\"impl\":\"raw\",\"workload\":\"{workload}\",\"calls\":{calls},\"seconds\":{seconds:.6},\"us_per_call\":{us:.3},\"mbit_s\":{mbit:.3}}}"
    );
}

/// Untimed calls before each non-latency workload, as the floe and Ice C++
/// clients make.
const WARM_UP_CALLS: usize = 10;

/// 500,000-byte calls per `byteseq_*` run (the same in every bench client): enough
/// for a quarter second, so one scheduling hiccup does not decide the median.
const BYTESEQ_CALLS: usize = 2_000;

/// `calls` scaled by `BENCH_SCALE`, at least 1.
fn scaled(calls: usize) -> usize {
    let scale = std::env::var("BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(1.0);
    ((calls as f64 * scale) as usize).max(1)
}

struct Client {
    stream: Stream,
    reader: FrameReader,
    next_id: i32,
}

impl Client {
    /// Sends `request` (patched with a fresh request id) and reads the reply.
    fn twoway(&mut self, request: &mut [u8]) -> std::io::Result<usize> {
        self.next_id = self.next_id.wrapping_add(1).max(1);
        request[14..18].copy_from_slice(&self.next_id.to_le_bytes());
        self.stream.write_all(request)?;
        let frame = self.reader.next(&mut self.stream)?;
        let n = frame.len();
        if frame[14..18] != self.next_id.to_le_bytes() {
            return Err(std::io::Error::other("reply to another request"));
        }
        Ok(n)
    }
}

fn run(c: &mut Client, workload: &str) -> std::io::Result<()> {
    let mut o = frame(LATENCY_REQUEST, 0, OP_LATENCY, 1);
    match workload {
        "latency" => {
            for _ in 0..1000 {
                c.twoway(&mut o)?;
            }
            let n = scaled(100_000);
            let start = Instant::now();
            for _ in 0..n {
                c.twoway(&mut o)?;
            }
            report(workload, n, start.elapsed().as_secs_f64(), 0);
        }
        "oneway" => {
            let oneway = frame(LATENCY_REQUEST, 0, OP_LATENCY, 0);
            for _ in 0..WARM_UP_CALLS {
                c.stream.write_all(&oneway)?;
            }
            c.twoway(&mut o)?;
            let n = scaled(100_000);
            let start = Instant::now();
            for _ in 0..n {
                c.stream.write_all(&oneway)?;
            }
            c.twoway(&mut o)?;
            report(workload, n, start.elapsed().as_secs_f64(), 0);
        }
        "byteseq_send" => {
            let mut req = frame(SEND_HEAD + BYTESEQ_SIZE, 0, OP_SEND, 1);
            for (i, b) in req[SEND_HEAD..].iter_mut().enumerate() {
                *b = i as u8;
            }
            for _ in 0..WARM_UP_CALLS {
                c.twoway(&mut req)?;
            }
            let n = scaled(BYTESEQ_CALLS);
            let start = Instant::now();
            for _ in 0..n {
                c.twoway(&mut req)?;
            }
            report(workload, n, start.elapsed().as_secs_f64(), BYTESEQ_SIZE);
        }
        "byteseq_recv" => {
            let mut req = frame(RECV_REQUEST, 0, OP_RECV, 1);
            req[RECV_REQUEST - 4..].copy_from_slice(&(BYTESEQ_SIZE as u32).to_le_bytes());
            for _ in 0..WARM_UP_CALLS {
                c.twoway(&mut req)?;
            }
            let n = scaled(BYTESEQ_CALLS);
            let start = Instant::now();
            for _ in 0..n {
                let size = c.twoway(&mut req)?;
                if size != RECV_REPLY_HEAD + BYTESEQ_SIZE {
                    return Err(std::io::Error::other("short recvByteSeq reply"));
                }
            }
            report(workload, n, start.elapsed().as_secs_f64(), BYTESEQ_SIZE);
        }
        "shutdown" => {
            let mut x = frame(LATENCY_REQUEST, 0, OP_SHUTDOWN, 1);
            // The server may exit before or after the reply is read.
            let _ = c.twoway(&mut x);
        }
        _ => unreachable!("checked in main"),
    }
    Ok(())
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mode = Mode::take(&mut args);
    let Some(port) = args.first().and_then(|p| p.parse::<u16>().ok()) else {
        eprintln!("usage: raw_bench_client PORT [--spin|--tokio] [WORKLOAD...]");
        std::process::exit(2)
    };
    let mut workloads: Vec<&str> = args[1..].iter().map(String::as_str).collect();
    if workloads.is_empty() {
        workloads = WORKLOADS.to_vec();
    }
    if let Some(w) = workloads
        .iter()
        .find(|w| **w != "shutdown" && !WORKLOADS.contains(w))
    {
        eprintln!("raw_bench_client: unknown workload `{w}`");
        std::process::exit(2)
    }
    let stream = match TcpStream::connect(("127.0.0.1", port)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("raw_bench_client: cannot connect to 127.0.0.1:{port}: {e}");
            std::process::exit(1)
        }
    };
    let stream = match Stream::new(stream, mode) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("raw_bench_client: socket options: {e}");
            std::process::exit(1)
        }
    };
    let mut c = Client {
        stream,
        reader: FrameReader::new(RECV_REPLY_HEAD + BYTESEQ_SIZE),
        next_id: 0,
    };
    for w in workloads {
        if let Err(e) = run(&mut c, w) {
            eprintln!("raw_bench_client: {w}: {e}");
            std::process::exit(1)
        }
    }
}
