//! `floe-storm --metrics` scraped by a real Prometheus: the `floe-storm`
//! binary serves `GET /metrics`, Debian's `prometheus` scrapes it every
//! second, real Ice 3.7 peers (`tests/peers/burst.py`: Python publishers,
//! each its own process, and Python subscribers) run a fan-in of counted
//! events, and the series read back through Prometheus's HTTP API
//! (`/api/v1/query`) must equal what the clients counted:
//!
//! - `icestorm_topic_published_total{topic}` = the events the publishers sent;
//! - `icestorm_subscriber_delivered_total{topic,subscriber}` = the events
//!   each subscriber received;
//! - `icestorm_topic_subscribers` = 2, `icestorm_topic_forwarded_total` = 0,
//!   and nothing `queued` or `outstanding` once the run is over.
//!
//! The values are read from a scrape taken after the run ended (the
//! sample's timestamp is checked). Every process listens on 127.0.0.1 and
//! is killed when its handle drops. Skipped when the `prometheus` binary is
//! absent (`apt-get install prometheus`; `cargo xtask test` installs it);
//! `FLOE_NO_INTEROP=1` skips when the Ice peers are missing.

mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use floe_testkit::prometheus::{self, http_get, now_secs, Prometheus};
use support::*;

/// The topic of the run.
const TOPIC: &str = "metrics";
/// Publisher processes.
const PUBLISHERS: u32 = 3;
/// Events each publisher sends.
const EVENTS: u32 = 2_000;
/// Bytes of each event's params.
const EVENT_SIZE: usize = 1024;
/// The subscribers' identities.
const SUBSCRIBERS: [&str; 2] = ["alpha", "beta"];

fn burst_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/burst.py")
}

/// `floe-storm --metrics 127.0.0.1:0` on free ports: the process, the
/// TopicManager port and the metrics address from its ready line.
fn floe_storm(dir: &Path) -> (Proc, u16, SocketAddr) {
    let mut cmd = Command::new(floe_storm_binary());
    cmd.args([
        "--IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p 0",
        "--IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p 0",
        "--metrics",
        "127.0.0.1:0",
    ])
    .arg("--data-dir")
    .arg(dir)
    .env("NO_COLOR", "1");
    let proc = Proc::spawn("floe-storm", cmd);
    let line = proc.expect_line("floe-storm ready ", Duration::from_secs(60));
    let port = topic_manager_port(&line);
    let metrics = fields(&line)
        .get("Metrics")
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no Metrics= in {line}"));
    (proc, port, metrics)
}

/// A `burst.py sub` subscriber expecting `expected` events.
fn subscriber(port: u16, name: &str, expected: u64) -> Proc {
    let mut cmd = Command::new(PYTHON);
    cmd.arg(burst_script())
        .args(["sub", &port.to_string(), TOPIC, name])
        .arg(expected.to_string())
        .arg("0");
    let proc = Proc::spawn(&format!("subscriber {name}"), cmd);
    proc.expect_line("ready", Duration::from_secs(60));
    proc
}

/// Runs the publishers to completion: what each says it sent.
fn publish(port: u16) -> Vec<u64> {
    let mut pubs: Vec<Proc> = (0..PUBLISHERS)
        .map(|i| {
            let mut cmd = Command::new(PYTHON);
            cmd.arg(burst_script())
                .args(["pub", &port.to_string(), TOPIC])
                .arg(i.to_string())
                .arg(EVENTS.to_string())
                .arg(EVENT_SIZE.to_string());
            Proc::spawn(&format!("publisher {i}"), cmd)
        })
        .collect();
    pubs.iter_mut()
        .map(|p| {
            let status = p.wait_exit(Duration::from_secs(180));
            assert!(
                status.success(),
                "{}: {status}: {:?}",
                p.name,
                p.err.snapshot()
            );
            let line = p.expect_line("sent ", Duration::from_secs(10));
            fields(&line)["count"].parse().unwrap()
        })
        .collect()
}

/// Closes a subscriber's stdin and reads its `summary received=N`.
fn received(mut sub: Proc) -> u64 {
    drop(sub.stdin.take());
    let line = sub.expect_line("summary ", Duration::from_secs(120));
    fields(&line)["received"].parse().unwrap()
}

#[test]
fn prometheus_reads_what_the_clients_counted() {
    if !prometheus::available() || !peers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_broker, port, metrics) = floe_storm(dir.path());
    let (status, text) = http_get(metrics, "/metrics").unwrap();
    assert_eq!(status, 200, "{text}");
    assert!(text.ends_with("# EOF\n"), "{text}");
    let prometheus = Prometheus::start("floe-storm", metrics);

    let expected = u64::from(PUBLISHERS) * u64::from(EVENTS);
    let subs: Vec<Proc> = SUBSCRIBERS
        .iter()
        .map(|name| subscriber(port, name, expected))
        .collect();
    let started = Instant::now();
    let sent: u64 = publish(port).iter().sum();
    let received: Vec<u64> = subs.into_iter().map(received).collect();
    let run_end = now_secs();
    println!(
        "fan-in: {PUBLISHERS} Ice publishers sent {sent} events of {EVENT_SIZE} B in {:.2} s; \
         subscribers received {received:?}",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(sent, expected);

    // The latest samples of the topic's series, from a scrape that
    // started after the run ended.
    let at = |query: &str| {
        prometheus
            .latest(&format!("{query}{{topic=\"{TOPIC}\"}}"), run_end)
            .into_iter()
            .map(|s| (s.labels, s.value))
            .collect::<Vec<_>>()
    };
    let one = |query: &str| -> f64 {
        let samples = at(query);
        assert_eq!(samples.len(), 1, "{query}: {samples:?}");
        samples[0].1
    };
    assert_eq!(one("icestorm_topic_published_total"), sent as f64);
    assert_eq!(one("icestorm_topic_forwarded_total"), 0.0);
    assert_eq!(one("icestorm_topic_subscribers"), SUBSCRIBERS.len() as f64);
    let delivered = at("icestorm_subscriber_delivered_total");
    assert_eq!(delivered.len(), SUBSCRIBERS.len(), "{delivered:?}");
    for (name, got) in SUBSCRIBERS.iter().zip(&received) {
        let series = delivered
            .iter()
            .find(|(labels, _)| labels["subscriber"] == *name)
            .unwrap_or_else(|| panic!("no delivered series for {name}: {delivered:?}"));
        assert_eq!(
            series.1, *got as f64,
            "{name}: Prometheus says delivered {}, the subscriber counted {got}",
            series.1
        );
    }
    for gauge in [
        "icestorm_subscriber_queued",
        "icestorm_subscriber_outstanding",
    ] {
        let samples = at(gauge);
        assert_eq!(samples.len(), SUBSCRIBERS.len(), "{gauge}: {samples:?}");
        assert!(samples.iter().all(|s| s.1 == 0.0), "{gauge}: {samples:?}");
    }
    assert_eq!(received, vec![expected; SUBSCRIBERS.len()]);
}
