//! Ice 3.8 clients through floe-storm, beside Ice 3.7 ones on the same
//! broker: an Ice 3.8 publisher and subscriber find their topic with
//! `createOrRetrieve` (the operation Ice 3.8 added), Ice 3.7 ones with
//! `create`/`retrieve`, and every subscriber gets every event of both
//! publishers, in order.
//!
//! Ice 3.8 for Python comes from `cargo xtask test` (see
//! `floe_testkit::ice38`); this target runs once it is installed.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

mod slice_contract;

use floe::runtime::Communicator;
use floe_storm::{Server, StormConfig};
use serde_json::Value;

const PYTHON37: &str = "/usr/bin/python3";
const EVENTS: usize = 100;

/// Killed and reaped when dropped.
struct Peer(Child, BufReader<ChildStdout>);

impl Peer {
    fn spawn(python: &Path, args: &[String]) -> Peer {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/ice38.py");
        let mut child = Command::new(python)
            .arg(script)
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", python.display()));
        let out = BufReader::new(child.stdout.take().expect("piped"));
        Peer(child, out)
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.1.read_line(&mut line).expect("read the peer's output");
        line
    }

    /// The JSON line a peer prints last.
    fn json(mut self) -> Value {
        let line = self.line();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn args(port: u16, role: &str) -> Vec<String> {
    vec![
        port.to_string(),
        role.into(),
        "news38".into(),
        (2 * EVENTS).to_string(),
    ]
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.expect("blocking task")
}

/// The (Ice version, sequence number) of each event a subscriber printed.
fn events(sub: &Value) -> Vec<(u32, u32)> {
    sub["received"]
        .as_array()
        .expect("received")
        .iter()
        .map(|e| {
            let hex = e["params"].as_str().expect("params");
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                .collect();
            let word = |at: usize| {
                u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
            };
            // 6-byte encapsulation header, then the version and the number.
            (word(6), word(10))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ice38_and_ice37_clients_share_topics() {
    let Some(py38) = floe_testkit::ice38::python("ice38_and_ice37_clients_share_topics") else {
        return;
    };
    let py37 = PathBuf::from(PYTHON37);
    let dir = tempfile::tempdir().unwrap();
    let config = StormConfig {
        topic_manager_endpoints: "tcp -h 127.0.0.1 -p 0".into(),
        publish_endpoints: "tcp -h 127.0.0.1 -p 0".into(),
        flush_timeout: Duration::from_millis(100),
        data_dir: dir.path().to_path_buf(),
        ..StormConfig::default()
    };
    let server = Server::start(config, Communicator::new()).await.unwrap();
    let port = server.topic_manager_endpoints()[0].port;

    // Subscribers first: Ice 3.8's creates the topic with createOrRetrieve.
    let (sub38, sub37) = {
        let (py38, py37) = (py38.clone(), py37.clone());
        blocking(move || {
            let mut sub38 = Peer::spawn(&py38, &args(port, "sub"));
            assert_eq!(sub38.line().trim(), "READY");
            let mut sub37 = Peer::spawn(&py37, &args(port, "sub"));
            assert_eq!(sub37.line().trim(), "READY");
            (sub38, sub37)
        })
        .await
    };
    let mut pub_args = args(port, "pub");
    pub_args[3] = EVENTS.to_string();
    for python in [py38.clone(), py37.clone()] {
        let pub_args = pub_args.clone();
        let out = blocking(move || Peer::spawn(&python, &pub_args).json()).await;
        assert_eq!(out["published"], EVENTS, "{out}");
    }
    let (sub38, sub37) = blocking(move || (sub38.json(), sub37.json())).await;
    assert_eq!(sub38["create_or_retrieve_same"], true, "{sub38}");
    assert_eq!(sub38["create_after"], "TopicExists", "{sub38}");
    let expected: Vec<(u32, u32)> = [308, 307]
        .into_iter()
        .flat_map(|v| (0..EVENTS as u32).map(move |i| (v, i)))
        .collect();
    for (name, sub) in [
        ("Ice 3.8 subscriber", &sub38),
        ("Ice 3.7 subscriber", &sub37),
    ] {
        assert_eq!(events(sub), expected, "{name}");
        println!(
            "{name} ({}): {} events from an Ice 3.8 and an Ice 3.7 publisher, in order",
            sub["version"],
            expected.len()
        );
    }
    server.shutdown().await;
}

/// floe-storm's Slice serves every operation of Ice 3.8's `IceStorm.ice`
/// with the same wire contract (types, parameters, its exceptions): Ice 3.8
/// dropped `nonmutating` (its idempotent operations are sent as
/// `Idempotent`, which floe-storm's `["nonmutating"]` operations accept)
/// and `subscribe`/`getSliceChecksums` (which floe-storm keeps for 3.7
/// clients).
#[test]
fn own_slice_serves_every_ice38_operation() {
    let Some(py38) = floe_testkit::ice38::python("own_slice_serves_every_ice38_operation") else {
        return;
    };
    let out = Command::new(&py38)
        .args(["-c", "import Ice; print(Ice.getSliceDir())"])
        .output()
        .expect("run Ice 3.8 for Python");
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let file = Path::new(&dir).join("IceStorm/IceStorm.ice");
    assert!(file.is_file(), "{} missing", file.display());
    let theirs = slice_contract::contract(&slice_contract::compile(&file, Some(&dir)));
    let ours = slice_contract::contract(&slice_contract::compile(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("slice/IceStorm.ice"),
        None,
    ));
    let mut checked = 0;
    for (name, text) in &theirs {
        let mine = ours.get(name).unwrap_or_else(|| panic!("{name} missing"));
        if !text.starts_with("ids ") {
            assert_eq!(mine, text, "{name}");
            continue;
        }
        // Same signature; the exceptions Ice 3.8 declares are among ours
        // (3.8 dropped `InvalidSubscriber` from `subscribeAndGetPublisher`,
        // which only a null subscriber gets).
        let mine: Vec<String> = mine
            .lines()
            .map(|l| l.replace(" nonmutating", ""))
            .collect();
        for line in text.lines() {
            let (signature, throws) = line.split_once(" throws ").unwrap_or((line, "[]"));
            let found = mine
                .iter()
                .find(|m| m.split(" throws ").next() == Some(signature));
            let found = found.unwrap_or_else(|| panic!("{name}: {line}\nours: {mine:#?}"));
            for exception in throws
                .trim_matches(['[', ']'])
                .split(", ")
                .filter(|e| !e.is_empty())
            {
                assert!(found.contains(exception), "{name}: {line}\nours: {found}");
            }
            checked += 1;
        }
    }
    println!("{checked} interface lines of Ice 3.8's IceStorm.ice found in floe-storm's");
    assert!(checked >= 15);
}
