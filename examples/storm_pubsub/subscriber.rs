//! A subscriber to an IceStorm topic: receives the sensor readings of
//! `storm_publisher` (`Sensors::Monitor`, `Sensors.ice`) from floe-storm or
//! a real IceStorm 3.7, unchanged.
//!
//! It waits for the broker if it is not up yet (retry on connect),
//! subscribes a `Monitor` servant with a quality of service (by default
//! `reliability=ordered`: one reading at a time, in publishing order, to a
//! twoway subscriber; and `retryCount=3`: the broker retries a failed
//! delivery three times before it drops the subscriber), checks that each
//! sensor's readings arrive in order, and unsubscribes when done.
//!
//! ```sh
//! cargo run --example storm_subscriber -- --count 10
//! cargo run --example storm_subscriber -- \
//!     --TopicManager.Proxy="IceStorm/TopicManager:tcp -h 127.0.0.1 -p 10000" \
//!     --Monitor.Subscriber.Endpoints="tcp -h 127.0.0.1 -p 10003" \
//!     --topic readings --count 0 --oneway
//! ```

#[path = "../icestorm/mod.rs"]
mod icestorm;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser;
use floe::runtime::{Communicator, Current, DispatchError};
use floe::Identity;
use icestorm::QoS;
use tokio::sync::Notify;

floe::slice!("examples/storm_pubsub/Sensors.ice");

use sensors::{MonitorDispatcher, Reading};

/// Command-line options besides Ice properties (`--Name=value`, such as
/// `--TopicManager.Proxy` and `--Monitor.Subscriber.Endpoints`).
#[derive(Parser, Debug)]
#[command(about = "Subscribes to sensor readings on an IceStorm topic")]
struct Cli {
    /// The topic.
    #[arg(long, default_value = "readings")]
    topic: String,
    /// Readings to receive before unsubscribing (0: until Ctrl-C).
    #[arg(long, default_value_t = 10)]
    count: u64,
    /// The subscriber's identity (default: `monitor-<pid>`).
    #[arg(long)]
    id: Option<String>,
    /// A oneway subscriber: readings as fast as they come, no ordering
    /// guarantee (IceStorm refuses `reliability=ordered` for it).
    #[arg(long)]
    oneway: bool,
    /// QoS `reliability`: `ordered`, or empty (default: `ordered` for a
    /// twoway subscriber, empty for a oneway one).
    #[arg(long)]
    reliability: Option<String>,
    /// QoS `retryCount`: delivery retries before the broker drops this
    /// subscriber (-1: for ever).
    #[arg(long, default_value_t = 3, allow_hyphen_values = true)]
    retry_count: i32,
    /// Print every reading.
    #[arg(long)]
    verbose: bool,
    /// Tries to reach the broker, 500 ms apart.
    #[arg(long, default_value_t = 20)]
    connect_attempts: u32,
}

/// The subscriber's servant.
struct MonitorI {
    received: AtomicU64,
    /// Readings whose `seq` was not the sensor's next one.
    out_of_order: AtomicU64,
    /// Each sensor's next expected `seq`.
    next: Mutex<HashMap<String, i64>>,
    /// Stop after this many readings (0: never).
    count: u64,
    done: Notify,
    verbose: bool,
}

impl sensors::Monitor for MonitorI {
    async fn report(&self, r: Reading, _: &Current) -> Result<(), DispatchError> {
        {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let expected = next.entry(r.sensor.clone()).or_insert(0);
            if r.seq != *expected {
                self.out_of_order.fetch_add(1, Ordering::Relaxed);
            }
            *expected = r.seq + 1;
        }
        if self.verbose {
            println!("{} #{}: {:+.4}", r.sensor, r.seq, r.value);
        }
        let n = self.received.fetch_add(1, Ordering::Relaxed) + 1;
        if n == self.count {
            self.done.notify_one();
        }
        Ok(())
    }
}

async fn subscribe(
    communicator: &Communicator,
    cli: &Cli,
    servant: Arc<MonitorI>,
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

    let props = communicator.properties();
    if props.get("Monitor.Subscriber.Endpoints").is_none() {
        props.set("Monitor.Subscriber.Endpoints", "tcp -h 127.0.0.1");
    }
    let adapter = communicator
        .create_object_adapter("Monitor.Subscriber")
        .await?;
    let id = cli
        .id
        .clone()
        .unwrap_or_else(|| format!("monitor-{}", std::process::id()));
    let proxy = adapter.add(
        Identity::from_name(&id),
        Arc::new(MonitorDispatcher(servant.clone())),
    )?;
    adapter.activate();
    let subscriber = if cli.oneway {
        proxy.ice_oneway()
    } else {
        proxy
    };

    let reliability = cli
        .reliability
        .clone()
        .unwrap_or_else(|| if cli.oneway { "" } else { "ordered" }.to_owned());
    let qos = QoS::from([
        ("reliability".to_owned(), reliability),
        ("retryCount".to_owned(), cli.retry_count.to_string()),
    ]);
    let subscriber = Some(subscriber);
    match topic.subscribe_and_get_publisher(&qos, &subscriber).await {
        // Left over from an earlier run with the same identity: replace it.
        Err(e)
            if e.user_exception::<icestorm::ice_storm::AlreadySubscribed>()
                .is_some() =>
        {
            topic.unsubscribe(&subscriber).await?;
            topic.subscribe_and_get_publisher(&qos, &subscriber).await?;
        }
        other => {
            other?;
        }
    }
    println!("subscribed `{id}` to `{}` with QoS {qos:?}", cli.topic);

    // Until `count` readings, or Ctrl-C; then unsubscribe either way.
    tokio::select! {
        _ = servant.done.notified(), if cli.count > 0 => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    topic.unsubscribe(&subscriber).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().collect();
    let communicator = Communicator::from_args(&mut args)?;
    let cli = Cli::parse_from(args);
    let servant = Arc::new(MonitorI {
        received: AtomicU64::new(0),
        out_of_order: AtomicU64::new(0),
        next: Mutex::new(HashMap::new()),
        count: cli.count,
        done: Notify::new(),
        verbose: cli.verbose,
    });
    let result = subscribe(&communicator, &cli, servant.clone()).await;
    communicator.destroy().await;
    let (received, late) = (
        servant.received.load(Ordering::Relaxed),
        servant.out_of_order.load(Ordering::Relaxed),
    );
    match late {
        0 => println!("received {received} readings, in order"),
        n => println!("received {received} readings, {n} out of order"),
    }
    result
}
