//! tonic (gRPC) bench server: `tonic_bench_server PORT [--multi-thread |
//! --current-thread]`. Listens on `127.0.0.1:PORT` (TCP_NODELAY), prints
//! `Bench ready`, serves `floe.bench.Bench` and exits on `Shutdown`.
//!
//! Runtime flavour: tokio's multi-thread runtime is the default, as it was
//! the faster for `latency` when both were tried against the current-thread
//! client (2 loaded cores, BENCH_SCALE=0.1, alternating runs: multi-thread
//! 277 and 296 µs/call, current-thread 309 and 341 µs/call).
//! `--current-thread` selects the other flavour.

#[path = "../messages.rs"]
mod messages;

use std::io::Write;
use std::time::Duration;

use bytes::Bytes;
use messages::bench::bench_server::{Bench, BenchServer};
use messages::{ByteSeq, Empty, RecvByteSeq};
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

/// The servant; holds the last `recvByteSeq` payload so replies of the same
/// size share one buffer (as the raw server reuses its reply frame).
struct Servant {
    recv: std::sync::Mutex<Bytes>,
}

#[tonic::async_trait]
impl Bench for Servant {
    async fn o(&self, _: Request<Empty>) -> Result<Response<Empty>, Status> {
        Ok(Response::new(Empty {}))
    }

    async fn send_byte_seq(&self, _: Request<ByteSeq>) -> Result<Response<Empty>, Status> {
        Ok(Response::new(Empty {}))
    }

    async fn recv_byte_seq(&self, req: Request<RecvByteSeq>) -> Result<Response<ByteSeq>, Status> {
        let n = (req.into_inner().size as usize).min(64 << 20);
        let mut cached = self.recv.lock().map_err(|_| Status::internal("poisoned"))?;
        if cached.len() != n {
            *cached = (0..n).map(|i| i as u8).collect::<Vec<u8>>().into();
        }
        Ok(Response::new(ByteSeq {
            seq: cached.clone(),
        }))
    }

    async fn shutdown(&self, _: Request<Empty>) -> Result<Response<Empty>, Status> {
        // Exits once the reply has had a moment to leave.
        tokio::spawn(async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            std::process::exit(0);
        });
        Ok(Response::new(Empty {}))
    }
}

async fn serve(port: u16) -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    println!("Bench ready");
    let _ = std::io::stdout().flush();
    let servant = Servant {
        recv: std::sync::Mutex::new(Bytes::new()),
    };
    tonic::transport::Server::builder()
        .add_service(BenchServer::new(servant))
        .serve_with_incoming(incoming)
        .await?;
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(port) = args.first().and_then(|p| p.parse::<u16>().ok()) else {
        eprintln!("usage: tonic_bench_server PORT [--multi-thread | --current-thread]");
        std::process::exit(2)
    };
    let current_thread = args[1..].iter().any(|a| a == "--current-thread");
    let runtime = if current_thread {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    };
    let runtime = match runtime {
        Ok(r) => r,
        Err(e) => {
            eprintln!("tonic_bench_server: runtime: {e}");
            std::process::exit(1)
        }
    };
    if let Err(e) = runtime.block_on(serve(port)) {
        eprintln!("tonic_bench_server: {e}");
        std::process::exit(1)
    }
}
