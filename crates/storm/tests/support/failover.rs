//! The failover scenario, the same for floe-storm and replicated IceStorm:
//! three Python subscribers (oneway, twoway, ordered twoway) and four
//! Python publishers (twoway and oneway, two starting on the leader, two on
//! another replica; `tests/peers/failover.py`); the leader is `SIGKILL`ed,
//! then the other replica the publishers started on. What each subscriber
//! received from each publisher, each publisher's outages, and how long
//! updates took to work again after the first kill.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use super::cluster::Client;
use super::icestorm_ha::{coordinator, Replicated};
use super::{fields, Proc, PYTHON};

/// When things happen.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// Events per publisher.
    pub events: usize,
    /// Between two events of a publisher.
    pub interval_ms: u64,
    /// After the publishers start: the leader dies.
    pub first_kill: Duration,
    /// After the publishers start: the second replica dies.
    pub second_kill: Duration,
}

/// What one subscriber got from one publisher.
#[derive(Clone, Debug, Default)]
pub struct Received {
    pub count: u64,
    pub distinct: u64,
    pub highest: i64,
    pub missing: u64,
    pub ranges: String,
    pub duplicates: u64,
    pub backwards: u64,
}

/// A publisher's run.
#[derive(Clone, Debug)]
pub struct Published {
    pub id: u32,
    pub mode: &'static str,
    /// The replica it started on.
    pub first: usize,
    pub retries: u64,
    /// (seconds since its start, seconds until a call succeeded, error).
    pub outages: Vec<(f64, f64, String)>,
}

/// The scenario's outcome.
#[derive(Clone, Debug)]
pub struct Report {
    pub broker: &'static str,
    pub leader: usize,
    pub second: usize,
    pub publishers: Vec<Published>,
    /// Subscriber mode to publisher id to what it got.
    pub subscribers: BTreeMap<&'static str, BTreeMap<u32, Received>>,
    /// From the leader's death to the first update that succeeded (none
    /// within 30 s: `None`).
    pub update_recovery: Option<Duration>,
}

const TOPIC: &str = "failover";
const SUBSCRIBERS: [&str; 3] = ["oneway", "twoway", "ordered"];
const MODES: [&str; 4] = ["twoway", "oneway", "twoway", "oneway"];

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers/failover.py")
}

/// The Python interpreter with Ice 3.7, told the brokers' locator.
fn python(brokers: &dyn Replicated) -> Command {
    let mut cmd = Command::new(PYTHON);
    if let Some(l) = brokers.locator() {
        cmd.env("FAILOVER_LOCATOR", l).env(
            "FAILOVER_PUBLISH_ADAPTERS",
            brokers.publish_adapters().join(","),
        );
    }
    cmd
}

/// Runs the scenario on `brokers` (every replica running).
pub fn run(brokers: &mut dyn Replicated, client: &Client, s: &Schedule) -> Report {
    let tm = brokers.tm_proxy();
    let deadline = Instant::now() + Duration::from_secs(90);
    let leader = loop {
        if let Some(l) = coordinator(brokers, client) {
            break l;
        }
        assert!(Instant::now() < deadline, "{}: no leader", brokers.name());
        std::thread::sleep(Duration::from_millis(200));
    };
    let second = (1..=brokers.size()).find(|id| *id != leader).unwrap();
    let mut subs: Vec<(&'static str, Proc)> = SUBSCRIBERS
        .iter()
        .map(|mode| {
            let mut cmd = python(brokers);
            cmd.arg(script())
                .args(["sub", &tm, TOPIC, &format!("sub-{mode}"), mode]);
            let p = Proc::spawn(&format!("subscriber {mode}"), cmd);
            p.expect_line("ready", Duration::from_secs(60));
            (*mode, p)
        })
        .collect();
    let firsts = [leader, leader, second, second];
    let pubs: Vec<Proc> = MODES
        .iter()
        .zip(firsts)
        .enumerate()
        .map(|(i, (mode, first))| {
            let mut cmd = python(brokers);
            cmd.arg(script()).args([
                "pub",
                &tm,
                TOPIC,
                &(i + 1).to_string(),
                &s.events.to_string(),
                mode,
                &s.interval_ms.to_string(),
                &(first - 1).to_string(),
            ]);
            Proc::spawn(&format!("publisher {}", i + 1), cmd)
        })
        .collect();
    let started = Instant::now();
    std::thread::sleep(s.first_kill);
    brokers.kill(leader);
    let killed = Instant::now();
    // Updates through a client of its own while the publishers run.
    let probe_tm = tm.clone();
    let locator = brokers.locator();
    let probe = std::thread::spawn(move || {
        let c = Client::with_locator(locator.as_deref());
        let mut n = 0;
        while killed.elapsed() < Duration::from_secs(30) {
            n += 1;
            if c.create(&probe_tm, &format!("probe-{n}")).is_ok() {
                return Some(killed.elapsed());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    });
    std::thread::sleep(s.second_kill.saturating_sub(started.elapsed()));
    let update_recovery = probe.join().unwrap();
    brokers.kill(second);
    let publishers: Vec<Published> = pubs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let line = p.expect_line("published", Duration::from_secs(180));
            let f = fields(&line);
            let outages = match f["outages"].as_str() {
                "-" => Vec::new(),
                o => o
                    .split(',')
                    .map(|o| {
                        let mut parts = o.splitn(3, ':');
                        let at = parts.next().unwrap().parse().unwrap();
                        let seconds = parts.next().unwrap().parse().unwrap();
                        (at, seconds, parts.next().unwrap_or("").to_owned())
                    })
                    .collect(),
            };
            Published {
                id: (i + 1) as u32,
                mode: MODES[i],
                first: firsts[i],
                retries: f["retries"].parse().unwrap(),
                outages,
            }
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    let mut subscribers = BTreeMap::new();
    for (mode, p) in &mut subs {
        drop(p.stdin.take());
        p.expect_line("report received", Duration::from_secs(30));
        let mut got = BTreeMap::new();
        for line in p.out.snapshot() {
            if !line.starts_with("publisher=") {
                continue;
            }
            let f = fields(&line);
            let n = |k: &str| f[k].parse::<u64>().unwrap();
            got.insert(
                f["publisher"].parse().unwrap(),
                Received {
                    count: n("count"),
                    distinct: n("distinct"),
                    highest: f["highest"].parse().unwrap(),
                    missing: n("missing"),
                    ranges: f["ranges"].clone(),
                    duplicates: n("duplicates"),
                    backwards: n("backwards"),
                },
            );
        }
        subscribers.insert(*mode, got);
    }
    Report {
        broker: brokers.name(),
        leader,
        second,
        publishers,
        subscribers,
        update_recovery,
    }
}

impl Report {
    /// The report as a Markdown table, a row per publisher.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{}: leader {} killed, then replica {}; updates worked again {} after the first kill\n\n\
             | publisher | started on | outages (at s: lasted s, error) | lost oneway / twoway / ordered sub | duplicates | out of order |\n\
             |---|---|---|---|---|---|\n",
            self.broker,
            self.leader,
            self.second,
            self.update_recovery
                .map_or("not within 30 s".to_owned(), |d| format!("{:.2} s", d.as_secs_f64())),
        );
        for p in &self.publishers {
            let outages = p
                .outages
                .iter()
                .map(|(at, s, e)| format!("{at:.2}: {s:.2} {e}"))
                .collect::<Vec<_>>()
                .join("; ");
            let per = |f: &dyn Fn(&Received) -> String| {
                SUBSCRIBERS
                    .iter()
                    .map(|m| self.subscribers[m].get(&p.id).map_or("none".to_owned(), f))
                    .collect::<Vec<_>>()
                    .join(" / ")
            };
            out.push_str(&format!(
                "| {} {} | {} | {} | {} | {} | {} |\n",
                p.id,
                p.mode,
                p.first,
                if outages.is_empty() {
                    "-".into()
                } else {
                    outages
                },
                per(&|r| r.missing.to_string()),
                per(&|r| r.duplicates.to_string()),
                per(&|r| r.backwards.to_string()),
            ));
        }
        out
    }
}
