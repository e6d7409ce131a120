//! How long IceStorm updates take: `cargo run --release -p floe-bench
//! --bin storm_update_latency -- TOPIC_MANAGER IMPL [COUNT]`. Through the broker
//! whose TopicManager proxy is `TOPIC_MANAGER` (a replicated one lists every
//! replica's endpoints), subscribes `COUNT` (default 200) subscribers to a
//! topic one after the other, then unsubscribes them, timing each call, and
//! prints one JSON object per line, labelled `IMPL`, for `subscribe` and
//! `unsubscribe`: `us_per_call` is the median, `p99_us` the 99th
//! percentile. `cargo xtask compare --fanin --replicated` runs it against
//! floe-storm and IceStorm 3.7, single and replicated.
//!
//! The subscribers are proxies nobody serves (nothing is published), so
//! the calls measure the broker's update path: for a replicated floe-storm,
//! the Raft round to a majority and the wait for the up-to-date replicas to
//! apply it; for a replicated IceStorm, its master's update of every
//! replica.

use std::time::{Duration, Instant};

use floe::runtime::{Communicator, Proxy};
use floe_storm::slice::ice_storm::{TopicManagerPrx, TopicPrx};
use floe_storm::types::{QosDict, TopicExists};

/// The median and 99th percentile of `samples`, in µs.
fn stats(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| {
        let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples[i].as_secs_f64() * 1e6
    };
    (at(0.5), at(0.99))
}

fn line(label: &str, workload: &str, samples: Vec<Duration>) -> String {
    let calls = samples.len();
    let seconds: f64 = samples.iter().map(Duration::as_secs_f64).sum();
    let (p50, p99) = stats(samples);
    format!(
        "{{\"impl\":\"{label}\",\"workload\":\"{workload}\",\"calls\":{calls},\"seconds\":{seconds:.6},\"us_per_call\":{p50:.1},\"p99_us\":{p99:.1}}}"
    )
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(tm), Some(label)) = (args.first(), args.get(1)) else {
        eprintln!("usage: storm_update_latency TOPIC_MANAGER IMPL [COUNT]");
        std::process::exit(2)
    };
    let count: usize = match args.get(2).map(|c| c.parse()) {
        None => 200,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("storm_update_latency: COUNT must be a count ≥ 1");
            std::process::exit(2)
        }
    };
    let comm = Communicator::new();
    let manager = TopicManagerPrx::unchecked_cast(
        comm.string_to_proxy(tm)?
            .ice_invocation_timeout(Some(Duration::from_secs(30))),
    );
    let topic = match manager.create("update-latency").await {
        Ok(t) => t,
        Err(e) if e.user_exception::<TopicExists>().is_some() => {
            manager.retrieve("update-latency").await?
        }
        Err(e) => return Err(e.into()),
    };
    let topic = TopicPrx::unchecked_cast(Proxy::from_data(&comm, topic.ok_or("null topic proxy")?));
    let subscribers: Vec<_> = (0..count)
        .map(|i| {
            comm.string_to_proxy(&format!("latency-{i} -o:tcp -h 127.0.0.1 -p 9"))
                .map(|p| Some(p.to_data()))
        })
        .collect::<Result<_, _>>()?;
    let qos = QosDict::new();
    let mut subscribe = Vec::with_capacity(count);
    for s in &subscribers {
        let t = Instant::now();
        topic.subscribe_and_get_publisher(&qos, s).await?;
        subscribe.push(t.elapsed());
    }
    let mut unsubscribe = Vec::with_capacity(count);
    for s in &subscribers {
        let t = Instant::now();
        topic.unsubscribe(s).await?;
        unsubscribe.push(t.elapsed());
    }
    println!("{}", line(label, "subscribe", subscribe));
    println!("{}", line(label, "unsubscribe", unsubscribe));
    topic.destroy().await?;
    comm.destroy().await;
    Ok(())
}
