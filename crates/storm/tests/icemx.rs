//! IceStorm's IceMX maps read by a real Ice 3.7 client: the `floe-storm`
//! binary runs with `Ice.Admin.Endpoints` and
//! `IceMX.Metrics.Debug.GroupBy=id`, real Ice 3.7 Python publishers and
//! subscribers (`tests/peers/burst.py`) run counted events through a
//! topic, then `tests/peers/icemx.py` (Ice for Python's
//! `IceMX.MetricsAdminPrx`) reads `getMetricsView("Debug")`:
//!
//! - `Topic`: one `::IceMX::TopicMetrics` entry, id the topic name,
//!   `published` = the events the publishers sent, `forwarded` 0,
//!   `total` = `current` = 1;
//! - `Subscriber`: one `::IceMX::SubscriberMetrics` entry per subscriber,
//!   id its proxy, `delivered` = the events it counted, nothing queued or
//!   outstanding.
//!
//! Then `beta` is unsubscribed (by floe's `TopicPrx`, as any client
//! would) and the view read again: its entry stays, detached (`current`
//! 0, `total` 1, its `delivered`), as the maps keep `RetainDetached`
//! (default 10) detached entries; grouped by topic, the entry counts both
//! subscribers and one current.
//!
//! When `icebox` and IceStorm 3.7 are installed, the same run against a
//! real IceStorm (its metrics are facet `IceBox.Service.IceStorm.Metrics`
//! of the IceBox admin object) is the reference: both outputs are printed
//! side by side and must agree. Every process listens on 127.0.0.1 and is
//! killed when its handle drops; `FLOE_NO_INTEROP=1` skips when the Ice
//! peers are missing.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::*;

/// The topic of the run.
const TOPIC: &str = "mx";
/// Publisher processes.
const PUBLISHERS: u32 = 2;
/// Events each publisher sends.
const EVENTS: u32 = 300;
/// The subscribers' identities.
const SUBSCRIBERS: [&str; 2] = ["alpha", "beta"];
/// The metrics view the brokers configure, grouping by `id`.
const VIEW: &str = "Debug";
/// A second view with only the `Subscriber` map, grouped by topic.
const BY_TOPIC: [&str; 2] = [
    "IceMX.Metrics.ByTopic.Map.Subscriber.GroupBy=topic",
    "IceMX.Metrics.ByTopic.Map.Subscriber.Accept.identity=^(alpha|beta)$",
];

fn peer(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(name)
}

/// A broker with an admin object: its process, TopicManager port, and
/// the admin proxy and facet of its `MetricsAdmin`.
struct Broker {
    proc: Proc,
    port: u16,
    admin: String,
    facet: &'static str,
    _dir: tempfile::TempDir,
}

impl Broker {
    fn floe() -> Broker {
        let dir = tempfile::tempdir().unwrap();
        let admin_port = free_port();
        let mut cmd = Command::new(floe_storm_binary());
        cmd.args([
            "--IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p 0",
            "--IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p 0",
            "--Ice.Admin.InstanceName=storm",
            "--IceMX.Metrics.Debug.GroupBy=id",
        ])
        .args(BY_TOPIC.map(|p| format!("--{p}")))
        .arg(format!(
            "--Ice.Admin.Endpoints=tcp -h 127.0.0.1 -p {admin_port}"
        ))
        .arg("--data-dir")
        .arg(dir.path())
        .env("NO_COLOR", "1");
        let proc = Proc::spawn("floe-storm", cmd);
        let line = proc.expect_line("floe-storm ready ", Duration::from_secs(60));
        let port = topic_manager_port(&line);
        Broker {
            proc,
            port,
            admin: format!("storm/admin:tcp -h 127.0.0.1 -p {admin_port}"),
            facet: "Metrics",
            _dir: dir,
        }
    }

    /// IceStorm 3.7 in IceBox; the view is the service communicator's.
    fn icestorm() -> Broker {
        let dir = tempfile::tempdir().unwrap();
        let (tm, publish, admin_port) = (free_port(), free_port(), free_port());
        let service = dir.path().join("config.service");
        std::fs::write(
            &service,
            format!(
                "IceStorm.InstanceName=IceStorm\n\
                 IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {tm}\n\
                 IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p {publish}\n\
                 IceStorm.LMDB.Path={}\n\
                 IceMX.Metrics.{VIEW}.GroupBy=id\n{}\n",
                dir.path().display(),
                BY_TOPIC.join("\n"),
            ),
        )
        .unwrap();
        let mut cmd = Command::new("icebox");
        cmd.arg(format!(
            "--IceBox.Service.IceStorm=IceStormService,37:createIceStorm --Ice.Config={}",
            service.display()
        ))
        .arg(format!(
            "--Ice.Admin.Endpoints=tcp -h 127.0.0.1 -p {admin_port}"
        ))
        .arg("--Ice.Admin.InstanceName=icebox");
        let proc = Proc::spawn("icebox", cmd);
        proc.wait_until(
            Duration::from_secs(30),
            Duration::from_millis(50),
            "IceStorm did not start",
            || std::net::TcpStream::connect(("127.0.0.1", tm)).is_ok(),
        );
        Broker {
            proc,
            port: tm,
            admin: format!("icebox/admin:tcp -h 127.0.0.1 -p {admin_port}"),
            facet: "IceBox.Service.IceStorm.Metrics",
            _dir: dir,
        }
    }

    /// `icemx.py` on `view`: the output lines.
    fn read_view(&self, view: &str) -> Vec<String> {
        let out = Command::new(PYTHON)
            .arg(peer("icemx.py"))
            .args([&self.admin, self.facet, view])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "icemx.py: {}\n{stdout}\n{}\nbroker: {:?}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            self.proc.err.snapshot()
        );
        stdout.lines().map(str::to_owned).collect()
    }
}

/// A `burst.py sub` subscriber expecting `expected` events.
fn subscriber(port: u16, name: &str, expected: u64) -> Proc {
    let mut cmd = Command::new(PYTHON);
    cmd.arg(peer("burst.py"))
        .args(["sub", &port.to_string(), TOPIC, name])
        .arg(expected.to_string())
        .arg("0");
    let proc = Proc::spawn(&format!("subscriber {name}"), cmd);
    proc.expect_line("ready", Duration::from_secs(60));
    proc
}

/// Runs the publishers to completion: the events they sent.
fn publish(port: u16) -> u64 {
    let mut pubs: Vec<Proc> = (0..PUBLISHERS)
        .map(|i| {
            let mut cmd = Command::new(PYTHON);
            cmd.arg(peer("burst.py"))
                .args(["pub", &port.to_string(), TOPIC])
                .arg(i.to_string())
                .arg(EVENTS.to_string())
                .arg("64");
            Proc::spawn(&format!("publisher {i}"), cmd)
        })
        .collect();
    pubs.iter_mut()
        .map(|p| {
            let status = p.wait_exit(Duration::from_secs(120));
            assert!(status.success(), "{}: {status}", p.name);
            let line = p.expect_line("sent ", Duration::from_secs(10));
            fields(&line)["count"].parse::<u64>().unwrap()
        })
        .sum()
}

/// Closes a subscriber's stdin and reads its `summary received=N`.
fn received(mut sub: Proc) -> u64 {
    drop(sub.stdin.take());
    let line = sub.expect_line("summary ", Duration::from_secs(60));
    fields(&line)["received"].parse().unwrap()
}

/// Unsubscribes the subscriber with identity `name` from the topic,
/// through the broker's TopicManager on `port`.
fn unsubscribe(port: u16, name: &str) {
    use floe::runtime::{Communicator, Proxy};
    use floe_storm::slice::ice_storm::{TopicManagerPrx, TopicPrx};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let comm = Communicator::new();
        let manager = TopicManagerPrx::unchecked_cast(
            comm.string_to_proxy(&format!("IceStorm/TopicManager:tcp -h 127.0.0.1 -p {port}"))
                .unwrap(),
        );
        let topic = manager.retrieve(TOPIC).await.unwrap().unwrap();
        let topic = TopicPrx::unchecked_cast(Proxy::from_data(&comm, topic));
        // IceStorm finds the subscriber by its identity only.
        let subscriber = comm
            .string_to_proxy(&format!("{name}:tcp -h 127.0.0.1 -p 9"))
            .unwrap();
        topic
            .unsubscribe(&Some(subscriber.to_data()))
            .await
            .unwrap();
        comm.destroy().await;
    });
}

/// An entry line of `icemx.py`: its map, id and numeric fields.
struct Entry {
    map: String,
    id: String,
    class: String,
    values: std::collections::BTreeMap<String, i64>,
}

fn entries(lines: &[String]) -> Vec<Entry> {
    lines
        .iter()
        .filter_map(|l| {
            let (map, rest) = l.split_once(" id=[")?;
            let (id, rest) = rest.split_once("] ")?;
            let f = fields(rest);
            Some(Entry {
                map: map.to_owned(),
                id: id.to_owned(),
                class: f.get("class")?.clone(),
                values: f
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.parse().ok()?)))
                    .collect(),
            })
        })
        .collect()
}

/// Runs the events through `broker` and checks its view against what the
/// clients counted; returns the view's lines.
fn run(broker: &Broker) -> Vec<String> {
    let expected = u64::from(PUBLISHERS) * u64::from(EVENTS);
    let subs: Vec<Proc> = SUBSCRIBERS
        .iter()
        .map(|n| subscriber(broker.port, n, expected))
        .collect();
    let sent = publish(broker.port);
    let counted: Vec<u64> = subs.into_iter().map(received).collect();
    assert_eq!(sent, expected);
    let lines = broker.read_view(VIEW);
    let maps = lines.first().cloned().unwrap_or_default();
    assert!(
        maps.contains("Topic") && maps.contains("Subscriber"),
        "{lines:?}"
    );
    let all = entries(&lines);
    let topics: Vec<&Entry> = all.iter().filter(|e| e.map == "Topic").collect();
    assert_eq!(topics.len(), 1, "{lines:?}");
    let t = topics[0];
    assert_eq!(t.id, TOPIC);
    assert_eq!(t.class, "::IceMX::TopicMetrics");
    assert_eq!(t.values["published"], sent as i64, "{lines:?}");
    assert_eq!(t.values["forwarded"], 0);
    assert_eq!((t.values["total"], t.values["current"]), (1, 1));
    let subscribers: Vec<&Entry> = all.iter().filter(|e| e.map == "Subscriber").collect();
    assert_eq!(subscribers.len(), SUBSCRIBERS.len(), "{lines:?}");
    for (name, got) in SUBSCRIBERS.iter().zip(&counted) {
        let s = subscribers
            .iter()
            .find(|s| s.id.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no Subscriber entry for {name}: {lines:?}"));
        assert_eq!(s.class, "::IceMX::SubscriberMetrics");
        assert_eq!(s.values["delivered"], *got as i64, "{name}: {lines:?}");
        assert_eq!(*got, expected, "{name} counted");
        assert_eq!((s.values["queued"], s.values["outstanding"]), (0, 0));
        assert_eq!((s.values["total"], s.values["current"]), (1, 1));
    }
    // `Map.Subscriber.*` selects that map only; grouped by topic, the
    // subscribers' counters add up.
    let by_topic = broker.read_view("ByTopic");
    assert_eq!(
        by_topic.first().map(String::as_str),
        Some("maps Subscriber")
    );
    let grouped = entries(&by_topic);
    assert_eq!(grouped.len(), 1, "{by_topic:?}");
    let g = &grouped[0];
    assert_eq!(g.id, TOPIC);
    let n = SUBSCRIBERS.len() as i64;
    assert_eq!((g.values["total"], g.values["current"]), (n, n));
    assert_eq!(g.values["delivered"], counted.iter().sum::<u64>() as i64);

    // A removed subscriber's entry stays, detached.
    let (gone, kept) = (SUBSCRIBERS[1], SUBSCRIBERS[0]);
    unsubscribe(broker.port, gone);
    let after = broker.read_view(VIEW);
    let all = entries(&after);
    let of = |name: &str| {
        all.iter()
            .find(|e| e.map == "Subscriber" && e.id.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no Subscriber entry for {name}: {after:?}"))
    };
    assert_eq!(
        (of(kept).values["total"], of(kept).values["current"]),
        (1, 1)
    );
    let detached = of(gone);
    assert_eq!(
        (detached.values["total"], detached.values["current"]),
        (1, 0),
        "{after:?}"
    );
    assert_eq!(detached.values["delivered"], counted[1] as i64, "{after:?}");
    let by_topic_after = broker.read_view("ByTopic");
    let g = &entries(&by_topic_after)[0];
    assert_eq!(
        (g.values["total"], g.values["current"]),
        (n, n - 1),
        "{by_topic_after:?}"
    );
    lines
        .into_iter()
        .chain(by_topic)
        .chain(after)
        .chain(by_topic_after)
        .collect()
}

fn icebox_available() -> bool {
    let found = Command::new("icebox")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        println!("icebox (zeroc-icebox) is missing: no IceStorm reference");
    }
    found
}

#[test]
fn ice_client_reads_topic_and_subscriber_maps() {
    if !peers_available() {
        return;
    }
    let floe = run(&Broker::floe());
    let reference = icebox_available().then(|| run(&Broker::icestorm()));
    println!("{:<70} | IceStorm 3.7", "floe-storm");
    let width = floe.len().max(reference.as_ref().map_or(0, Vec::len));
    for i in 0..width {
        let left = floe.get(i).map_or("", String::as_str);
        let right = reference
            .as_ref()
            .and_then(|r| r.get(i))
            .map_or("", String::as_str);
        println!("{left:<70} | {right}");
    }
}
