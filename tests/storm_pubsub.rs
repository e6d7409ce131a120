//! The storm_pubsub example as its README runs it: `storm_subscriber` and
//! `storm_publisher`, unchanged, through floe-storm (the `floe-storm`
//! binary, a separate process) and through a real IceStorm 3.7 (IceBox);
//! and a subscriber started before its broker, which waits for it.
//!
//! The example binaries must be built (`cargo test` builds examples; alone:
//! `cargo build --example storm_publisher --example storm_subscriber`).
//! The real IceStorm test is skipped with `FLOE_NO_INTEROP=1`.

#[path = "../examples/storm_process/mod.rs"]
mod storm_process;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use storm_process::StormProcess;

/// Kills and reaps a child process when dropped.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn example(name: &str) -> PathBuf {
    // target/<profile>/deps/storm_pubsub-<hash> → target/<profile>/examples
    let exe = std::env::current_exe().expect("current exe");
    let path = exe
        .parent()
        .and_then(Path::parent)
        .expect("target dir")
        .join("examples")
        .join(name);
    assert!(
        path.is_file(),
        "{} missing: run `cargo build --example storm_publisher --example storm_subscriber`",
        path.display()
    );
    path
}

/// Starts a program; its stdout lines come through the channel.
fn spawn(mut cmd: Command) -> (Child, Receiver<String>) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let out = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (Child(child), rx)
}

/// The next line starting with `prefix`, within 30 s.
fn expect_line(rx: &Receiver<String>, prefix: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.starts_with(prefix) => return line,
            Ok(_) => {}
            Err(e) => panic!("no line `{prefix}...`: {e}"),
        }
    }
}

/// Waits up to 30 s for `child` to exit 0.
fn expect_success(mut child: Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.0.try_wait().expect("wait") {
            assert!(status.success(), "exited with {status}");
            return;
        }
        assert!(Instant::now() < deadline, "still running after 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn subscriber(topic_manager: &str, topic: &str, count: u32) -> Command {
    let mut cmd = Command::new(example("storm_subscriber"));
    cmd.arg(format!("--TopicManager.Proxy={topic_manager}"))
        .args(["--topic", topic, "--count", &count.to_string()]);
    cmd
}

fn publisher(topic_manager: &str, topic: &str, sensor: &str, count: u32) -> Command {
    let mut cmd = Command::new(example("storm_publisher"));
    cmd.arg(format!("--TopicManager.Proxy={topic_manager}"))
        .args(["--topic", topic, "--sensor", sensor])
        .args(["--count", &count.to_string(), "--interval-ms", "0"]);
    cmd
}

/// The README's pair through the broker at `topic_manager`: an ordered
/// subscriber (QoS reliability=ordered, retryCount=3), a twoway and a
/// oneway publisher; every reading arrives, each sensor's in order.
fn pair(topic_manager: &str) {
    let (sub, lines) = spawn(subscriber(topic_manager, "readings", 50));
    let subscribed = expect_line(&lines, "subscribed ");
    assert!(
        subscribed.contains("\"reliability\": \"ordered\""),
        "{subscribed}"
    );
    assert!(subscribed.contains("\"retryCount\": \"3\""), "{subscribed}");
    let twoway = spawn(publisher(topic_manager, "readings", "probe-1", 30));
    let mut oneway = publisher(topic_manager, "readings", "probe-2", 20);
    oneway.arg("--oneway");
    let oneway = spawn(oneway);
    for (child, lines, n) in [(twoway.0, twoway.1, 30), (oneway.0, oneway.1, 20)] {
        assert_eq!(
            expect_line(&lines, "published "),
            format!("published {n} readings")
        );
        expect_success(child);
    }
    assert_eq!(
        expect_line(&lines, "received "),
        "received 50 readings, in order"
    );
    expect_success(sub);
}

#[test]
fn pair_through_floe_storm() {
    let broker = StormProcess::start(&[]).expect("floe-storm starts");
    pair(&broker.topic_manager);
    broker.stop().expect("floe-storm stops cleanly");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

#[test]
fn subscriber_started_before_the_broker_waits_for_it() {
    let port = free_port();
    let topic_manager = format!("IceStorm/TopicManager:tcp -h 127.0.0.1 -p {port}");
    let (sub, lines) = spawn(subscriber(&topic_manager, "early", 5));
    std::thread::sleep(Duration::from_millis(800));
    let broker = StormProcess::start(&[&format!(
        "--IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {port}"
    )])
    .expect("floe-storm starts");
    expect_line(&lines, "subscribed ");
    let (publisher, out) = spawn(publisher(&topic_manager, "early", "probe-1", 5));
    expect_line(&out, "published 5 readings");
    expect_success(publisher);
    assert_eq!(
        expect_line(&lines, "received "),
        "received 5 readings, in order"
    );
    expect_success(sub);
    broker.stop().expect("floe-storm stops cleanly");
}

/// Whether the real IceStorm is there; panics if not, unless
/// `FLOE_NO_INTEROP=1`.
fn icebox_available() -> bool {
    if Command::new("icebox").arg("--version").output().is_ok() {
        return true;
    }
    if std::env::var("FLOE_NO_INTEROP").as_deref() == Ok("1") {
        println!("FLOE_NO_INTEROP=1: icebox missing, skipping");
        return false;
    }
    panic!("icebox missing: install zeroc-icebox libzeroc-icestorm3.7, or set FLOE_NO_INTEROP=1");
}

#[test]
fn pair_through_real_icestorm() {
    if !icebox_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let (tm, publish) = (free_port(), free_port());
    let config = dir.path().join("config.service");
    std::fs::write(
        &config,
        format!(
            "IceStorm.InstanceName=IceStorm\n\
             IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {tm}\n\
             IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p {publish}\n\
             IceStorm.LMDB.Path={}\n",
            dir.path().display()
        ),
    )
    .expect("config written");
    let _icebox = Child(
        Command::new("icebox")
            .arg(format!(
                "--IceBox.Service.IceStorm=IceStormService,37:createIceStorm --Ice.Config={}",
                config.display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("icebox starts"),
    );
    // No wait for IceStorm: the programs retry until it answers.
    pair(&format!("IceStorm/TopicManager:tcp -h 127.0.0.1 -p {tm}"));
}
