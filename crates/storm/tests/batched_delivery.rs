//! Events that wait for a oneway subscriber leave as BatchRequests
//! (`floe.OnewayBatchSize`, 1 MB by default in `floe-storm`), and a real
//! Ice 3.7 subscriber (`tests/peers/burst.py`, Python, one dispatch
//! thread) dispatches every event once and in order. Ice's own protocol
//! trace on the subscriber's side shows what arrived: batch requests and
//! their number of requests. With `floe.OnewayBatchSize=0` it is one
//! request message per event, as IceStorm sends them.
//!
//! Every process listens on 127.0.0.1 only and is killed when its handle
//! drops. Set `FLOE_NO_INTEROP=1` to skip when the Ice peers are missing.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::*;

const TOPIC: &str = "batched";
const EVENTS: u32 = 2_000;
const EVENT_SIZE: usize = 10_000;

fn burst_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/burst.py")
}

/// What the subscriber's protocol trace shows.
#[derive(Debug, Default)]
struct Trace {
    /// Request messages (one event each).
    requests: u64,
    /// Per batch request: its size and number of requests.
    batches: Vec<(u64, u64)>,
}

/// Reads Ice's protocol trace entries ("received request" /
/// "received batch request", then indented `name = value` lines).
fn trace(lines: &[String]) -> Trace {
    let mut t = Trace::default();
    let mut size = 0;
    let mut in_batch = false;
    for line in lines {
        let l = line.trim();
        if l.contains("Protocol: received batch request") {
            in_batch = true;
        } else if l.contains("Protocol: received request") {
            in_batch = false;
            t.requests += 1;
        } else if let Some(v) = l.strip_prefix("message size = ") {
            size = v.parse().unwrap_or(0);
        } else if let Some(v) = l.strip_prefix("number of requests = ") {
            if in_batch {
                t.batches.push((size, v.parse().unwrap_or(0)));
                in_batch = false;
            }
        }
    }
    t
}

/// A burst of [`EVENTS`] oneway events of [`EVENT_SIZE`] bytes (20 MB,
/// more than the sockets' buffers hold) from one Python publisher,
/// through `floe-storm` with `args`, to a Python subscriber that sleeps
/// 200 µs per event (so events wait for it in the broker); checks
/// that every event arrived once, in order, and returns the trace.
fn burst(args: &[&str]) -> Trace {
    let dir = tempfile::tempdir().unwrap();
    let (_broker, port) = start_floe_storm(args, dir.path());

    let mut cmd = Command::new(PYTHON);
    cmd.arg(burst_script())
        .args(["sub", &port.to_string(), TOPIC, "sub"])
        .arg(EVENTS.to_string())
        .arg("200")
        .env("BURST_SETTLE", "3")
        .env("BURST_TRACE", "1");
    let mut sub = Proc::spawn("subscriber", cmd);
    sub.expect_line("ready", Duration::from_secs(60));

    let mut cmd = Command::new(PYTHON);
    cmd.arg(burst_script())
        .args(["pub", &port.to_string(), TOPIC, "0"])
        .arg(EVENTS.to_string())
        .arg(EVENT_SIZE.to_string());
    let mut publisher = Proc::spawn("publisher", cmd);
    assert!(publisher.wait_exit(Duration::from_secs(60)).success());

    drop(sub.stdin.take());
    let summary = sub.expect_line("summary ", Duration::from_secs(120));
    let from = sub.expect_line("publisher id=0 ", Duration::from_secs(5));
    let f = fields(&from);
    assert_eq!(
        fields(&summary)["received"],
        EVENTS.to_string(),
        "{summary}"
    );
    assert_eq!(f["runs"], format!("0-{}", EVENTS - 1), "{from}");
    assert_eq!(f["violations"], "", "{from}");
    sub.wait_exit(Duration::from_secs(30));
    trace(&sub.err.snapshot())
}

/// By default, events that queue up for the subscriber reach it as batch
/// requests of at most 1 MB, and the subscriber dispatches each event
/// once, in order.
#[test]
fn waiting_events_reach_an_ice_subscriber_as_batch_requests() {
    if !peers_available() {
        return;
    }
    let t = burst(&[]);
    let batched: u64 = t.batches.iter().map(|(_, n)| n).sum();
    println!(
        "{} request messages, {} batch requests holding {batched} events",
        t.requests,
        t.batches.len()
    );
    assert_eq!(t.requests + batched, u64::from(EVENTS), "{t:?}");
    assert!(batched > u64::from(EVENTS) / 2, "{t:?}");
    assert!(
        t.batches.iter().all(|(size, n)| *size <= 1 << 20 && *n > 1),
        "{t:?}"
    );
}

/// With `floe.OnewayBatchSize=0`, each event is a request message of its
/// own, as IceStorm sends them.
#[test]
fn without_batches_each_event_is_its_own_request() {
    if !peers_available() {
        return;
    }
    let t = burst(&["--floe.OnewayBatchSize=0"]);
    assert_eq!(t.requests, u64::from(EVENTS), "{t:?}");
    assert!(t.batches.is_empty(), "{t:?}");
}
