//! A publisher for an IceStorm topic: publishes sensor readings
//! (`Sensors::Monitor::report`, `Sensors.ice`) to the topic `readings`,
//! through floe-storm or a real IceStorm 3.7, unchanged.
//!
//! It waits for the broker if it is not up yet (retry on connect), creates
//! the topic if needed, and calls the topic's publisher object like any
//! `Monitor`: the broker forwards each call to every subscriber.
//!
//! ```sh
//! cargo run --example storm_publisher -- --count 10
//! cargo run --example storm_publisher -- \
//!     --TopicManager.Proxy="IceStorm/TopicManager:tcp -h 127.0.0.1 -p 10000" \
//!     --topic readings --sensor probe-2 --count 100 --interval-ms 10 --oneway
//! ```

#[path = "../icestorm/mod.rs"]
mod icestorm;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Parser;
use floe::runtime::Communicator;

floe::slice!("examples/storm_pubsub/Sensors.ice");

use sensors::{MonitorPrx, Reading};

/// Command-line options besides Ice properties (`--Name=value`, such as
/// `--TopicManager.Proxy`).
#[derive(Parser, Debug)]
#[command(about = "Publishes sensor readings to an IceStorm topic")]
struct Cli {
    /// The topic.
    #[arg(long, default_value = "readings")]
    topic: String,
    /// This sensor's name.
    #[arg(long, default_value = "probe-1")]
    sensor: String,
    /// Readings to publish (0: until Ctrl-C).
    #[arg(long, default_value_t = 10)]
    count: u64,
    /// Pause between readings, in milliseconds.
    #[arg(long, default_value_t = 200)]
    interval_ms: u64,
    /// Publish oneway (the default is twoway: each call returns once the
    /// broker has taken the reading).
    #[arg(long)]
    oneway: bool,
    /// Tries to reach the broker, 500 ms apart.
    #[arg(long, default_value_t = 20)]
    connect_attempts: u32,
}

fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// Publishes `cli.count` readings; `sent` counts them.
async fn publish(
    communicator: &Communicator,
    cli: &Cli,
    sent: &AtomicU64,
) -> Result<(), Box<dyn std::error::Error>> {
    let text = communicator.properties().get_or(
        "TopicManager.Proxy",
        "IceStorm/TopicManager:tcp -h 127.0.0.1 -p 10000",
    );
    let manager = icestorm::connect(
        communicator,
        &text,
        cli.connect_attempts,
        Duration::from_millis(500),
    )
    .await?;
    let topic = icestorm::topic(&manager, &cli.topic).await?;
    // The topic's publisher object: calls on it go to every subscriber.
    let publisher = topic.get_publisher().await?.ok_or("null publisher")?;
    let mut monitor = MonitorPrx::unchecked_cast(publisher);
    if cli.oneway {
        monitor = monitor.ice_oneway();
    }
    println!("publishing to `{}` as {}", cli.topic, cli.sensor);

    let mut seq = 0;
    while cli.count == 0 || seq < cli.count {
        let reading = Reading {
            sensor: cli.sensor.clone(),
            seq: seq as i64,
            time_micros: now_micros(),
            value: (seq as f64 * 0.1).sin(),
        };
        monitor.report(&reading).await?;
        seq += 1;
        sent.store(seq, Ordering::Relaxed);
        if cli.interval_ms > 0 {
            tokio::time::sleep(Duration::from_millis(cli.interval_ms)).await;
        }
    }
    // No `ice_ping` to wait for oneways: the broker would forward it to
    // the subscribers. Destroying the communicator sends what is queued.
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().collect();
    let communicator = Communicator::from_args(&mut args)?;
    let cli = Cli::parse_from(args);
    let sent = AtomicU64::new(0);
    let result = tokio::select! {
        r = publish(&communicator, &cli, &sent) => r,
        _ = tokio::signal::ctrl_c() => Ok(()),
    };
    communicator.destroy().await;
    println!("published {} readings", sent.load(Ordering::Relaxed));
    result
}
