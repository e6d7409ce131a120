//! CODAC: the fusion data-acquisition workloads of ITER's Ice studies
//! (`Bench::Messages` of `benches/Bench.ice`), measured two ways.
//!
//! 1. Client to server: `ByteSeq`, `FloatSeq` and `DataMessage{name, id,
//!    signalCount, sampleCount, times, signals}` messages, oneway and
//!    twoway, at 10 KB, 100 KB, 1 MB and 10 MB.
//! 2. Publish/subscribe: the same through `floe-storm`, started as its own
//!    process, with 4 publishers and 1 subscriber; the subscriber counts
//!    every message of every publisher (none may be lost).
//!
//! Each prints a table of messages/s and MB/s (payload bytes, 10⁶ per MB).
//!
//! ```sh
//! cargo build --release -p floe-storm       # the broker (else built on first use)
//! cargo run --release --example codac                        # ~200 MB per row
//! cargo run --release --example codac -- --scale 0.1 --sizes 10000,1000000
//! cargo run --release --example codac -- --no-storm
//! ```

#[path = "codac/mod.rs"]
mod codac;
#[path = "icestorm/mod.rs"]
mod icestorm;
#[path = "storm_process/mod.rs"]
mod storm_process;

use clap::Parser;
use codac::{fanin, print_header, print_row, BoxError, Kind, Row};
use storm_process::StormProcess;

/// Command-line options.
#[derive(Parser, Debug, Clone)]
#[command(about = "CODAC data-acquisition workloads, direct and through floe-storm")]
struct Cli {
    /// Multiplies the data sent per row (about 200 MB at 1).
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Message sizes in bytes (default 10000,100000,1000000,10000000).
    #[arg(long, value_delimiter = ',')]
    sizes: Vec<usize>,
    /// Publishers sending to the topic at the same time.
    #[arg(long, default_value_t = 4)]
    publishers: usize,
    /// Skip the floe-storm table.
    #[arg(long)]
    no_storm: bool,
}

/// Payload bytes per row at scale 1.
const BUDGET: f64 = 200e6;

/// Runs both tables; returns their rows.
async fn run(cli: &Cli) -> Result<(Vec<Row>, Vec<Row>), BoxError> {
    let sizes = if cli.sizes.is_empty() {
        codac::SIZES.to_vec()
    } else {
        cli.sizes.clone()
    };
    let budget = BUDGET * cli.scale;

    print_header("client -> server, one connection");
    let direct = codac::direct::run(&Kind::ALL, &sizes, budget, 2, print_row).await?;

    let mut storm = Vec::new();
    if !cli.no_storm {
        let broker = StormProcess::start(&[&format!(
            "--Ice.MessageSizeMax={}",
            codac::MESSAGE_SIZE_MAX_KB
        )])?;
        println!();
        print_header(&format!(
            "{} publishers -> floe-storm (pid {}) -> 1 subscriber",
            cli.publishers,
            broker.id().unwrap_or(0)
        ));
        for kind in Kind::ALL {
            for &size in &sizes {
                for twoway in [false, true] {
                    let per_publisher = codac::messages(size, budget / cli.publishers as f64, 2);
                    let row = fanin::run(
                        &broker.topic_manager,
                        fanin::FanIn {
                            kind,
                            size,
                            twoway,
                            publishers: cli.publishers,
                            per_publisher,
                        },
                    )
                    .await?;
                    print_row(&row);
                    storm.push(row);
                }
            }
        }
        broker.stop()?;
        let lost: u64 = storm.iter().map(|r| r.sent - r.received).sum();
        if lost > 0 {
            return Err(format!("the subscriber missed {lost} messages").into());
        }
        println!("the subscriber got every message of every publisher");
    }
    Ok((direct, storm))
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let cli = Cli::parse();
    // Ctrl-C drops the run, and with it the broker process.
    tokio::select! {
        result = run(&cli) => result.map(drop),
        _ = tokio::signal::ctrl_c() => Err("interrupted".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CI runs the example to completion (`test = true` in Cargo.toml):
    /// every workload and size, two messages each (per publisher through
    /// floe-storm), all of them received.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_to_completion() {
        let cli = Cli {
            scale: 1e-9,
            sizes: codac::SIZES.to_vec(),
            publishers: 4,
            no_storm: false,
        };
        let (direct, storm) = run(&cli).await.expect("the example runs");
        assert_eq!(direct.len(), 3 * 4 * 2);
        assert_eq!(storm.len(), 3 * 4 * 2);
        assert!(storm.iter().all(|r| r.received == r.sent && r.sent == 8));
    }
}
