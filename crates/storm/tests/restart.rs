//! Restarting the `floe-storm` binary under load, with real Ice 3.7 peers
//! (`tests/peers/restart.py`): a Python publisher publishing numbered
//! events twoway, each after the previous one was acknowledged, and a
//! Python subscriber with `reliability=ordered`, slower than the publisher
//! so that events wait in the broker's queue.
//!
//! The broker gets SIGTERM mid-stream (as from systemd or an IceGrid node)
//! and is started again on the same ports and database. The publisher
//! retries through the restart; the subscriber stays subscribed (the
//! subscription is persistent). Checked: every event the broker
//! acknowledged reaches the subscriber, in order; an event is received
//! twice only if its publish failed during the restart and was retried
//! (the broker may have taken the failed attempt: Ice's at-most-once
//! applies to one attempt).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::*;

const TOPIC: &str = "restart";

/// Events the publisher sends.
const EVENTS: u32 = 3000;

/// The subscriber's time per event (µs): about 1,000 events/s, slower
/// than a Python twoway publisher.
const SUBSCRIBER_DELAY_US: u32 = 1000;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/restart.py")
}

/// `floe-storm` on fixed ports and database directory.
fn broker(dir: &Path, tm: u16, publish: u16) -> Proc {
    let mut cmd = Command::new(floe_storm_binary());
    cmd.arg(format!(
        "--IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {tm}"
    ))
    .arg(format!(
        "--IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p {publish}"
    ))
    .arg("--data-dir")
    .arg(dir)
    .env("RUST_LOG", "info")
    .env("NO_COLOR", "1");
    let proc = Proc::spawn("floe-storm", cmd);
    proc.expect_line("floe-storm ready ", Duration::from_secs(60));
    proc
}

fn peer(name: &str, args: &[String]) -> Proc {
    let mut cmd = Command::new(PYTHON);
    cmd.arg(script()).args(args);
    Proc::spawn(name, cmd)
}

/// The comma-separated numbers after `key=` in `line`.
fn numbers(line: &str, key: &str) -> Vec<u32> {
    fields(line)
        .get(key)
        .map(|v| v.split(',').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_default()
}

#[test]
fn a_graceful_restart_under_load_loses_and_reorders_nothing_acknowledged() {
    if !peers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (tm, publish) = (free_port(), free_port());
    let mut first = broker(dir.path(), tm, publish);

    let mut subscriber = peer(
        "subscriber",
        &[
            "sub".into(),
            tm.to_string(),
            TOPIC.into(),
            "ordered-sub".into(),
            EVENTS.to_string(),
            SUBSCRIBER_DELAY_US.to_string(),
        ],
    );
    subscriber.expect_line("ready", Duration::from_secs(30));
    let publisher = peer(
        "publisher",
        &[
            "pub".into(),
            tm.to_string(),
            TOPIC.into(),
            EVENTS.to_string(),
        ],
    );
    publisher.expect_line("acked 1000", Duration::from_secs(60));

    // SIGTERM while events wait in the queue of the (slower) subscriber.
    let status = Command::new("kill")
        .args(["-TERM", &first.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = first.wait_exit(Duration::from_secs(30));
    assert!(exit.success(), "floe-storm exited with {exit}");
    let log = first.err.snapshot();
    assert!(
        !log.iter().any(|l| l.contains("floe.Storm.DrainTimeout")),
        "the drain gave up: {log:#?}"
    );

    let second = broker(dir.path(), tm, publish);
    let done = publisher.expect_line("done ", Duration::from_secs(120));
    let retried = numbers(&done, "retried");

    // The publisher is done: the subscriber reports once it has them all
    // (or when nothing more comes).
    drop(subscriber.stdin.take());
    let report = subscriber.expect_line("received ", Duration::from_secs(60));
    let missing = numbers(&report, "missing");
    let repeats = numbers(&report, "repeats");
    assert!(
        missing.is_empty(),
        "acknowledged events lost: {missing:?}\n{report}\nretried: {retried:?}\nfirst broker: {log:#?}"
    );
    assert!(
        fields(&report)
            .get("backwards")
            .is_none_or(|v| v.is_empty()),
        "events out of order: {report}"
    );
    for r in &repeats {
        assert!(
            retried.contains(r),
            "event {r} received twice but its publish never failed: {report}, retried {retried:?}"
        );
    }
    println!("{report}; retried {retried:?}");
    drop(second);
}
