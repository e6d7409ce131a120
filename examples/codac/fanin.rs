//! Fan-in through a broker: `publishers` publishers, each with its own
//! communicator (its own connection, as separate processes would have),
//! send a workload to an IceStorm topic; one subscriber, a `Messages`
//! servant behind a oneway proxy, receives it. Every message carries its
//! publisher's number in the request context, which the broker forwards:
//! the subscriber counts each publisher's messages, and a run checks that
//! every one arrived.
//!
//! Publishers call the `void` operations (`publish*OneWay`) whether their
//! proxy is twoway or oneway: a broker answers a twoway publish with an
//! empty reply once it has taken the event, as it cannot know what the
//! subscribers would return.
//!
//! Only the IceStorm contract is used (`TopicManager`, `Topic`), so the
//! same code runs against floe-storm and IceStorm 3.7.

use std::sync::Arc;
use std::time::Duration;

use floe::runtime::Communicator;
use floe::Identity;

use super::{
    properties, publisher_context, BoxError, Counter, Kind, MessagesDispatcher, MessagesPrx,
    Payload, Received, Row,
};
use crate::icestorm::{self, QoS, TopicManagerPrx};

/// One fan-in run.
#[derive(Clone, Copy, Debug)]
pub struct FanIn {
    /// The payload type.
    pub kind: Kind,
    /// Payload bytes per message.
    pub size: usize,
    /// Twoway publishers (the broker replies once it has taken the event)
    /// or oneway ones (as IceStorm publishers usually are).
    pub twoway: bool,
    /// Publishers sending at the same time.
    pub publishers: usize,
    /// Messages each publisher sends.
    pub per_publisher: usize,
}

/// Runs `run` through the broker whose TopicManager is `topic_manager`.
/// The row's `received` is what the subscriber got; `received < sent`
/// means messages were lost (none are, with floe-storm).
///
/// # Errors
///
/// Broker or connection failures.
pub async fn run(topic_manager: &str, run: FanIn) -> Result<Row, BoxError> {
    let subscriber = Communicator::with_properties(properties());
    let mut publishers = Vec::new();
    let result = fan_in(&subscriber, &mut publishers, topic_manager, run).await;
    for c in publishers {
        c.destroy().await;
    }
    subscriber.destroy().await;
    result
}

async fn fan_in(
    comm: &Communicator,
    publishers: &mut Vec<Communicator>,
    topic_manager: &str,
    run: FanIn,
) -> Result<Row, BoxError> {
    let manager = TopicManagerPrx::unchecked_cast(comm.string_to_proxy(topic_manager)?);
    let mode = if run.twoway { "twoway" } else { "oneway" };
    let name = format!(
        "codac-{}-{}-{mode}-{}",
        run.kind.name(),
        run.size,
        std::process::id()
    );
    let topic = icestorm::topic(&manager, &name).await?;

    // The subscriber: a oneway proxy to a counting servant.
    let adapter = comm
        .create_object_adapter_with_endpoints("Codac.Subscriber", "tcp -h 127.0.0.1 -p 0")
        .await?;
    let received = Arc::new(Received::new(run.publishers));
    let subscriber = adapter
        .add(
            Identity::from_name("subscriber"),
            MessagesDispatcher::new(Counter(received.clone())),
        )?
        .ice_oneway();
    adapter.activate();
    topic
        .subscribe_and_get_publisher(&QoS::new(), &Some(subscriber))
        .await?;

    // The publishers, each on its own communicator and connection.
    let publisher = topic.get_publisher().await?.ok_or("null publisher")?;
    let mut proxies = Vec::new();
    for n in 0..run.publishers {
        let c = Communicator::with_properties(properties());
        let p = MessagesPrx::unchecked_cast(c.string_to_proxy(&publisher.to_string())?)
            .ice_context(publisher_context(n));
        // Connected before timing (an `ice_ping` would be forwarded as an event).
        p.ice_get_connection().await?;
        proxies.push(if run.twoway { p } else { p.ice_oneway() });
        publishers.push(c);
    }

    let payload = Arc::new(Payload::new(run.kind, run.size));
    let idle = Duration::from_secs(10);
    // Warm-up: one message each, all delivered before timing starts.
    for p in &proxies {
        payload.send(p, false).await?;
    }
    let warm = run.publishers as u64;
    if received.wait_for(warm, idle).await < warm {
        return Err("warm-up messages did not arrive".into());
    }

    let start = received.reset();
    let tasks: Vec<_> = proxies
        .iter()
        .map(|p| {
            let (p, payload, count) = (p.clone(), payload.clone(), run.per_publisher);
            tokio::spawn(async move {
                for _ in 0..count {
                    payload.send(&p, false).await?;
                }
                Ok::<_, floe::runtime::Error>(())
            })
        })
        .collect();
    for t in tasks {
        t.await??;
    }
    let sent = (run.publishers * run.per_publisher) as u64;
    let got = received.wait_for(sent, idle).await;
    let seconds = received.since(start);
    let per = received.by_publisher();
    if got == sent && per.iter().any(|&n| n != run.per_publisher as u64) {
        return Err(format!("uneven deliveries per publisher: {per:?}").into());
    }
    topic.destroy().await?;
    adapter.deactivate().await;
    adapter.wait_for_deactivate().await;
    Ok(Row {
        kind: run.kind,
        size: run.size,
        mode,
        sent,
        received: got,
        seconds,
    })
}
