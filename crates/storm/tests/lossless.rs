//! Lossless delivery under bursts, bounded by back-pressure: the `floe-storm`
//! binary against real Ice 3.7 peers (`tests/peers/burst.py`: Python
//! publishers, each its own process and connection, and Python subscribers
//! that are slower than the publishers on purpose).
//!
//! What is checked (the real IceStorm 3.7.8 is the reference for the first):
//!
//! - a subscriber that is alive and reading gets every event of a burst far
//!   larger than any per-subscriber budget, in order per publisher, none
//!   missing, none duplicated; with the default budget and a 1 MiB one;
//! - a subscriber that stops reading is removed `IceStorm.Send.Timeout` after
//!   it stalls, visibly (icestormadmin, log, `removed=` statistics), the
//!   healthy one still gets everything, and the broker's peak RSS stays
//!   bounded by the byte budgets;
//! - `IceStorm.Send.QueueSizeMax=-1` is unbounded with either
//!   `IceStorm.Send.QueueSizeMaxPolicy`;
//! - with a small `QueueSizeMax`, `DropEvents` drops the oldest events, counts
//!   every drop (`dropped=` at shutdown equals sent − received) and keeps
//!   the subscriber; `RemoveSubscriber` removes it, visibly.
//!
//! Every process (broker, IceBox, peers) listens on 127.0.0.1 only and is
//! killed when its handle drops. Set `FLOE_NO_INTEROP=1` to skip when the
//! Ice peers are missing. `FLOE_STORM_BIN` runs another `floe-storm` build.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use support::*;

/// Size of every event's params (an encapsulation of 10 KB).
const EVENT_SIZE: usize = 10 * 1024;

/// The topic every test uses.
const TOPIC: &str = "burst";

fn burst_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/burst.py")
}

/// A broker under test: the `floe-storm` binary or a real IceStorm in IceBox.
struct Broker {
    proc: Proc,
    port: u16,
    /// VmHWM (kB) once ready, before any event.
    idle_hwm_kb: u64,
    _dir: tempfile::TempDir,
}

impl Broker {
    /// `floe-storm` with `args` (`--Name=value` properties) on free ports.
    fn floe(args: &[&str]) -> Broker {
        let dir = tempfile::tempdir().unwrap();
        let (proc, port) = start_floe_storm(args, dir.path());
        let idle_hwm_kb = proc.status_kb("VmHWM");
        Broker {
            proc,
            port,
            idle_hwm_kb,
            _dir: dir,
        }
    }

    /// A real IceStorm 3.7 (IceBox service) with `props` (`Name=value` lines).
    fn icestorm(props: &[&str]) -> Broker {
        let dir = tempfile::tempdir().unwrap();
        let (tm, publish) = (free_port(), free_port());
        let service = dir.path().join("config.service");
        std::fs::write(
            &service,
            format!(
                "IceStorm.InstanceName=IceStorm\n\
                 IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {tm}\n\
                 IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p {publish}\n\
                 IceStorm.LMDB.Path={}\n{}\n",
                dir.path().display(),
                props.join("\n")
            ),
        )
        .unwrap();
        let mut cmd = Command::new("icebox");
        cmd.arg(format!(
            "--IceBox.Service.IceStorm=IceStormService,37:createIceStorm --Ice.Config={}",
            service.display()
        ));
        let proc = Proc::spawn("icebox", cmd);
        proc.wait_until(
            Duration::from_secs(30),
            Duration::from_millis(50),
            "IceStorm did not start",
            || std::net::TcpStream::connect(("127.0.0.1", tm)).is_ok(),
        );
        let idle_hwm_kb = proc.status_kb("VmHWM");
        Broker {
            proc,
            port: tm,
            idle_hwm_kb,
            _dir: dir,
        }
    }

    fn hwm_kb(&self) -> u64 {
        self.proc.status_kb("VmHWM")
    }

    /// `icestormadmin -e COMMAND`: stdout; panics on failure or after 30 s.
    fn admin(&self, command: &str) -> String {
        let mut cmd = Command::new("icestormadmin");
        cmd.arg(format!(
            "--IceStormAdmin.TopicManager.Default=IceStorm/TopicManager:tcp -h 127.0.0.1 -p {}",
            self.port
        ))
        .args(["-e", command]);
        let mut p = Proc::spawn("icestormadmin", cmd);
        let status = p.wait_exit(Duration::from_secs(30));
        let out = p.out.wait_end(Duration::from_secs(5));
        assert!(
            status.success(),
            "icestormadmin -e {command:?}: {status}: {:?}",
            p.err.wait_end(Duration::from_secs(5))
        );
        out.join("\n")
    }

    /// The identities `icestormadmin subscribers TOPIC` lists.
    fn subscribers(&self) -> Vec<String> {
        self.admin(&format!("subscribers {TOPIC}"))
            .lines()
            .filter_map(|l| l.strip_prefix('\t'))
            .map(str::to_owned)
            .collect()
    }

    /// Sends SIGTERM: floe-storm logs its statistics and stops gracefully.
    fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.proc.pid().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// The broker's log lines so far (without colours).
    fn log(&self) -> Vec<String> {
        let mut lines = self.proc.err.snapshot();
        lines.extend(self.proc.out.snapshot());
        lines.iter().map(|l| strip_ansi(l)).collect()
    }

    /// Waits for the broker to exit after [`Broker::terminate`]; panics
    /// unless it exits cleanly within 30 s. Every line it logged.
    fn wait_stopped(mut self) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = self.proc.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "floe-storm still running 30 s after SIGTERM; its log:\n{}",
                self.log().join("\n")
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "floe-storm exit status {status}");
        self.proc.err.wait_end(Duration::from_secs(10));
        self.proc.out.wait_end(Duration::from_secs(10));
        self.log()
    }

    /// SIGTERM, waits for a clean exit; every line the broker logged
    /// (without colours).
    fn stop(self) -> Vec<String> {
        self.terminate();
        self.wait_stopped()
    }
}

/// The fields of the `topic statistics` line `floe-storm` logs for
/// [`TOPIC`] at shutdown.
fn statistics(log: &[String]) -> BTreeMap<String, u64> {
    let line = log
        .iter()
        .rev()
        .find(|l| {
            l.contains("topic statistics")
                && fields(l).get("topic").map(String::as_str) == Some(TOPIC)
        })
        .unwrap_or_else(|| {
            panic!(
                "no `topic statistics` line for {TOPIC} in the log:\n{}",
                log.join("\n")
            )
        });
    fields(line)
        .into_iter()
        .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
        .collect()
}

/// A `burst.py sub` process.
struct Subscriber {
    proc: Proc,
    name: String,
}

/// What a subscriber received from one publisher.
#[derive(Debug, Default, Clone)]
struct FromPublisher {
    count: u64,
    /// Runs of consecutive sequence numbers, in arrival order.
    runs: Vec<(u64, u64)>,
    /// (previous, next) pairs where next was not above previous.
    violations: Vec<String>,
}

/// A subscriber's summary.
#[derive(Debug, Default)]
struct Received {
    total: u64,
    seconds: f64,
    publishers: BTreeMap<u32, FromPublisher>,
}

impl Subscriber {
    /// Subscribes `name` (oneway, default QoS) to [`TOPIC`]; its servant
    /// sleeps `delay_us` per event, or stalls for good after `stall_after`
    /// events.
    fn start(
        broker: &Broker,
        name: &str,
        expected: u64,
        delay_us: u32,
        stall_after: Option<u32>,
        settle_secs: f64,
    ) -> Subscriber {
        let mut cmd = Command::new(PYTHON);
        cmd.arg(burst_script())
            .args(["sub", &broker.port.to_string(), TOPIC, name])
            .arg(expected.to_string())
            .arg(delay_us.to_string())
            .env("BURST_SETTLE", settle_secs.to_string());
        if let Some(k) = stall_after {
            cmd.arg(k.to_string());
        }
        let proc = Proc::spawn(&format!("subscriber {name}"), cmd);
        proc.expect_line("ready", Duration::from_secs(60));
        Subscriber {
            proc,
            name: name.to_owned(),
        }
    }

    /// Tells the subscriber the publishers are done; waits for its summary.
    fn finish(mut self) -> Received {
        drop(self.proc.stdin.take());
        self.proc.expect_line("summary ", Duration::from_secs(120));
        let mut r = Received::default();
        for line in self.proc.out.snapshot() {
            let f = fields(&line);
            if line.starts_with("summary ") {
                r.total = f["received"].parse().unwrap();
                r.seconds = f["seconds"].parse().unwrap();
            } else if line.starts_with("publisher ") {
                let runs = f["runs"]
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(|s| {
                        let (a, b) = s.split_once('-').unwrap();
                        (a.parse().unwrap(), b.parse().unwrap())
                    })
                    .collect();
                let violations = f["violations"]
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
                r.publishers.insert(
                    f["id"].parse().unwrap(),
                    FromPublisher {
                        count: f["count"].parse().unwrap(),
                        runs,
                        violations,
                    },
                );
            }
        }
        println!(
            "subscriber {}: received {} events in {:.2} s",
            self.name, r.total, r.seconds
        );
        r
    }
}

/// The burst publishers: `publishers` processes × `events` events each.
struct Publishers(Vec<Proc>);

impl Publishers {
    /// `publishers` processes, each sending `events` events of `size` bytes.
    fn start(broker: &Broker, publishers: u32, events: u32, size: usize) -> Publishers {
        Publishers(
            (0..publishers)
                .map(|i| {
                    let mut cmd = Command::new(PYTHON);
                    cmd.arg(burst_script())
                        .args(["pub", &broker.port.to_string(), TOPIC])
                        .arg(i.to_string())
                        .arg(events.to_string())
                        .arg(size.to_string());
                    Proc::spawn(&format!("publisher {i}"), cmd)
                })
                .collect(),
        )
    }

    /// Waits for every publisher to have sent everything and exited;
    /// the longest time one took to send.
    fn wait(self) -> f64 {
        self.wait_at_most(Duration::from_secs(180))
    }

    fn wait_at_most(mut self, timeout: Duration) -> f64 {
        let mut slowest = 0f64;
        for p in &mut self.0 {
            let status = p.wait_exit(timeout);
            assert!(
                status.success(),
                "{}: {status}: {:?}",
                p.name,
                p.err.snapshot()
            );
            let line = p.expect_line("sent ", Duration::from_secs(10));
            slowest = slowest.max(fields(&line)["seconds"].parse().unwrap());
        }
        slowest
    }
}

/// Shows the runs of a publisher's sequence numbers briefly.
fn runs_text(runs: &[(u64, u64)]) -> String {
    let shown: Vec<String> = runs
        .iter()
        .take(8)
        .map(|(a, b)| format!("{a}-{b}"))
        .collect();
    let more = runs.len().saturating_sub(8);
    if more > 0 {
        format!("{} … (+{more} runs)", shown.join(","))
    } else {
        shown.join(",")
    }
}

/// Every publisher's events 0..events arrived once each and in order.
fn assert_complete(r: &Received, publishers: u32, events: u32, what: &str) {
    let sent = u64::from(publishers) * u64::from(events);
    let mut problems = Vec::new();
    for i in 0..publishers {
        let p = r.publishers.get(&i).cloned().unwrap_or_default();
        let ok = p.count == u64::from(events)
            && p.runs == [(0, u64::from(events) - 1)]
            && p.violations.is_empty();
        if !ok {
            problems.push(format!(
                "publisher {i}: {} of {events} received, runs {}, order violations {:?}",
                p.count,
                runs_text(&p.runs),
                p.violations
            ));
        }
    }
    assert!(
        problems.is_empty() && r.total == sent,
        "{what}: received {} of {sent} events ({} lost)\n{}",
        r.total,
        sent.saturating_sub(r.total),
        problems.join("\n")
    );
}

/// Every publisher's events arrived in increasing order, none twice.
fn assert_in_order(r: &Received, what: &str) {
    for (i, p) in &r.publishers {
        assert!(
            p.violations.is_empty(),
            "{what}: publisher {i} out of order or duplicated: {:?}",
            p.violations
        );
    }
}

/// One slow subscriber, `publishers` × `events` events of [`EVENT_SIZE`]
/// at once; what it got.
fn burst(broker: &Broker, publishers: u32, events: u32, delay_us: u32) -> Received {
    burst_of(broker, (publishers, events, EVENT_SIZE), delay_us)
}

/// One slow subscriber, `publishers` × `events` events of `size` bytes at
/// once; what it got.
fn burst_of(
    broker: &Broker,
    (publishers, events, size): (u32, u32, usize),
    delay_us: u32,
) -> Received {
    let expected = u64::from(publishers) * u64::from(events);
    let sub = Subscriber::start(broker, "slow", expected, delay_us, None, 3.0);
    let started = Instant::now();
    let pubs = Publishers::start(broker, publishers, events, size);
    let publish_secs = pubs.wait();
    let published = started.elapsed();
    let r = sub.finish();
    println!(
        "burst of {expected} × {size} B: publishers done after {:.2} s (slowest sent in {publish_secs:.2} s), \
         subscriber done after {:.2} s; broker VmHWM {} MiB (idle {} MiB)",
        published.as_secs_f64(),
        started.elapsed().as_secs_f64(),
        broker.hwm_kb() / 1024,
        broker.idle_hwm_kb / 1024,
    );
    r
}

/// What floe-storm's peak RSS may grow by besides its subscribers' queued
/// events: read buffers and pending dispatches of 4 publisher connections,
/// write buffers, allocator slack. A oneway subscriber holds about its
/// byte budget (its queue and its connection's write queue together:
/// `src/subscriber/mod.rs`), so the bound is the budget per subscriber +
/// this. Measured growth of VmHWM from idle (dev build): 64 MiB budget,
/// one slow subscriber: 71–73 MiB; 1 MiB budget: 3.4 MiB; 900 KB events,
/// 4 MiB budget: 14 MiB; two 4 MiB budgets, one subscriber stalled:
/// 11 MiB. So up to 10 MiB over the budgets; 32 MiB leaves room for
/// allocator variance and still catches a broker that buffers a whole
/// burst (IceStorm grows by ~370 MiB on the 400 MB one) or holds twice its
/// budget (before the write queue counted in the budget, it could hold as
/// much again: 71–140 MiB with the 64 MiB budget).
const RSS_SLACK: u64 = 32 << 20;

/// The broker's peak RSS (VmHWM, kB) grew by less than `budgets` +
/// [`RSS_SLACK`] since it was idle (kB).
fn assert_rss_bounded_kb((hwm, idle): (u64, u64), budgets: u64, what: &str) {
    let bound_kb = (budgets + RSS_SLACK) / 1024;
    println!(
        "{what}: broker VmHWM {hwm} kB = idle {idle} kB + {} kB (bound: + {bound_kb} kB)",
        hwm - idle
    );
    assert!(
        hwm - idle < bound_kb,
        "{what}: broker VmHWM {hwm} kB, idle {idle} kB: grew {} kB, bound {bound_kb} kB",
        hwm - idle
    );
}

/// The statistics say `sent` events came in, all went out, none dropped or
/// removed.
fn assert_clean_statistics(log: &[String], sent: u64) {
    let s = statistics(log);
    println!("statistics {s:?}");
    assert_eq!(s.get("events_in"), Some(&sent), "{s:?}");
    assert_eq!(s.get("events_out"), Some(&sent), "{s:?}");
    assert_eq!(s.get("dropped"), Some(&0), "{s:?}");
    assert_eq!(s.get("removed"), Some(&0), "{s:?}");
}

/// The reference: a real IceStorm 3.7.8 (default settings: unbounded
/// queues) delivers every event of a 4 × 10,000 × 10 KB oneway burst to a
/// oneway subscriber that takes its time (~50 µs of sleep per event on top
/// of Python's dispatch), in order per publisher. The burst script and its
/// checks are the ones the floe-storm tests below use.
#[test]
fn burst_reference_icestorm() {
    if !peers_available() {
        return;
    }
    let broker = Broker::icestorm(&[]);
    let r = burst(&broker, 4, 10_000, 50);
    assert_complete(&r, 4, 10_000, "IceStorm");
}

/// floe-storm with default settings delivers the same burst losslessly:
/// 400 MB of events against a 64 MiB per-subscriber budget, so the broker
/// holds publishers back instead of dropping. Its statistics at shutdown
/// agree: 40,000 in, 40,000 out, nothing dropped or removed; its peak RSS
/// stays within the budget and a constant ([`RSS_SLACK`]).
#[test]
fn burst_floe_storm() {
    if !peers_available() {
        return;
    }
    let broker = Broker::floe(&[]);
    let r = burst(&broker, 4, 10_000, 50);
    let hwm = (broker.hwm_kb(), broker.idle_hwm_kb);
    let log = broker.stop();
    assert_complete(&r, 4, 10_000, "floe-storm, default settings");
    assert_clean_statistics(&log, 40_000);
    assert_rss_bounded_kb(hwm, 64 << 20, "default budget");
}

/// The same burst with a 1 MiB byte budget (about 100 events of the
/// subscriber's): back-pressure engages all the time, and still nothing is
/// lost or reordered; the peak RSS follows the smaller budget.
#[test]
fn burst_floe_storm_small_byte_budget() {
    if !peers_available() {
        return;
    }
    let broker = Broker::floe(&["--floe.Storm.Send.QueueBytesMax=1048576"]);
    let r = burst(&broker, 4, 10_000, 50);
    let hwm = (broker.hwm_kb(), broker.idle_hwm_kb);
    let log = broker.stop();
    assert_complete(&r, 4, 10_000, "floe-storm, 1 MiB budget");
    assert_clean_statistics(&log, 40_000);
    assert_rss_bounded_kb(hwm, 1 << 20, "1 MiB budget");
}

/// Large events: 4 × 100 events of 900 KB to a slow subscriber with a
/// 4 MiB budget. While the subscriber is congested, each publisher
/// connection has at most `IceStorm.Publish.MaxDispatchBytes` (1 MiB) of
/// events waiting for admission before the broker stops reading it, not
/// `IceStorm.Publish.MaxDispatches` (32) events: the peak RSS stays within
/// the budgets and the constant, which 32 waiting events of 900 KB per
/// connection (115 MB in all) would not.
#[test]
fn large_events_wait_within_the_byte_bound() {
    if !peers_available() {
        return;
    }
    const SIZE: usize = 900_000;
    let broker = Broker::floe(&["--floe.Storm.Send.QueueBytesMax=4194304"]);
    let r = burst_of(&broker, (4, 100, SIZE), 2_000);
    let hwm = (broker.hwm_kb(), broker.idle_hwm_kb);
    let log = broker.stop();
    assert_complete(&r, 4, 100, "floe-storm, 900 KB events, 4 MiB budget");
    assert_clean_statistics(&log, 400);
    assert_rss_bounded_kb(hwm, 4 << 20, "900 KB events, 4 MiB budget");
}

/// A subscriber that stops reading (its only dispatch thread blocks for
/// good after 100 events, so the process no longer reads its connection)
/// is removed about `IceStorm.Send.Timeout` (2 s) after it stalls: it
/// disappears from `icestormadmin subscribers`, the broker logs it and
/// counts it (`removed=1`). Meanwhile the publishers were held back, not
/// dropped: the healthy subscriber gets all 20,000 events in order. The
/// broker's peak RSS stays within its idle peak + 2 subscribers × 4 MiB
/// budget + a constant. SIGTERM then stops the broker within 30 s even
/// though the stalled process still holds its connection, unread.
#[test]
fn stalled_subscriber_is_removed_and_the_healthy_one_gets_everything() {
    if !peers_available() {
        return;
    }
    const BUDGET: u64 = 4 << 20;
    let broker = Broker::floe(&[
        "--IceStorm.Send.Timeout=2000",
        "--floe.Storm.Send.QueueBytesMax=4194304",
    ]);
    let (publishers, events) = (4u32, 5_000u32);
    let sent = u64::from(publishers) * u64::from(events);
    let healthy = Subscriber::start(&broker, "healthy", sent, 0, None, 3.0);
    let stalled = Subscriber::start(&broker, "stalled", sent, 0, Some(100), 3.0);
    assert_eq!(broker.subscribers(), ["healthy", "stalled"]);
    let started = Instant::now();
    let pubs = Publishers::start(&broker, publishers, events, EVENT_SIZE);
    stalled.proc.expect_line("stalled", Duration::from_secs(60));
    let stalled_at = Instant::now();
    // Removed: gone from the topic's subscribers (None: still there 20 s
    // after the stall; the healthy subscriber's side is reported first).
    let removed_after = loop {
        let subs = broker.subscribers();
        let elapsed = stalled_at.elapsed();
        if !subs.iter().any(|s| s == "stalled") {
            assert_eq!(subs, ["healthy"]);
            break Some(elapsed);
        }
        if elapsed > Duration::from_secs(20) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let publish_secs = pubs.wait_at_most(Duration::from_secs(60));
    let published = started.elapsed();
    let r = healthy.finish();
    let hwm = broker.hwm_kb();
    let idle = broker.idle_hwm_kb;
    println!(
        "stalled subscriber removed {removed_after:.2?} after it stalled; publishers done \
         after {:.2} s (slowest sent in {publish_secs:.2} s); broker VmHWM {hwm} kB = idle \
         {idle} kB + {} kB",
        published.as_secs_f64(),
        hwm - idle
    );
    assert_complete(&r, publishers, events, "healthy subscriber");
    let removed_after = removed_after.unwrap_or_else(|| {
        panic!(
            "the stalled subscriber is still subscribed 20 s after it stalled \
             (IceStorm.Send.Timeout=2000); broker log:\n{}",
            broker.log().join("\n")
        )
    });
    // Not before the timeout (allowing for when the stall was noticed),
    // and within a few seconds after it.
    assert!(
        removed_after >= Duration::from_millis(1000) && removed_after < Duration::from_secs(15),
        "removed {removed_after:?} after the stall, Send.Timeout is 2 s"
    );
    // Two subscribers × the byte budget + RSS_SLACK.
    assert_rss_bounded_kb((hwm, idle), 2 * BUDGET, "stalled + healthy, 4 MiB budgets");
    // Stop the broker while the stalled process still holds its connection
    // (it never reads again): the statistics come first, then the exit.
    broker.terminate();
    broker
        .proc
        .err
        .wait_for(Duration::from_secs(30), |l| l.contains("topic statistics"));
    let log = broker.log();
    let s = statistics(&log);
    println!("statistics {s:?}");
    assert_eq!(s.get("removed"), Some(&1), "{s:?}");
    assert_eq!(s.get("events_in"), Some(&sent), "{s:?}");
    let logged: Vec<&String> = log
        .iter()
        .filter(|l| l.contains("stalled") && (l.contains(" INFO ") || l.contains(" WARN ")))
        .collect();
    assert!(
        !logged.is_empty(),
        "removal not logged:\n{}",
        log.join("\n")
    );
    let stopping = Instant::now();
    broker.wait_stopped();
    println!(
        "floe-storm exited {:.2} s after SIGTERM",
        stopping.elapsed().as_secs_f64()
    );
    drop(stalled);
}

/// `IceStorm.Send.QueueSizeMax=-1` means no limit in events (only the byte
/// budget applies, by back-pressure), whatever the policy: a burst to a slow
/// subscriber is lossless with `RemoveSubscriber` and with `DropEvents`.
#[test]
fn queue_size_max_minus_one_is_lossless_with_either_policy() {
    if !peers_available() {
        return;
    }
    for policy in ["RemoveSubscriber", "DropEvents"] {
        let broker = Broker::floe(&[
            "--IceStorm.Send.QueueSizeMax=-1",
            &format!("--IceStorm.Send.QueueSizeMaxPolicy={policy}"),
        ]);
        let r = burst(&broker, 4, 5_000, 50);
        let subs = broker.subscribers();
        let hwm = (broker.hwm_kb(), broker.idle_hwm_kb);
        let log = broker.stop();
        assert_complete(&r, 4, 5_000, &format!("QueueSizeMax=-1, {policy}"));
        assert_eq!(subs, ["slow"], "{policy}");
        assert_clean_statistics(&log, 20_000);
        assert_rss_bounded_kb(hwm, 64 << 20, policy);
    }
}

/// Events of the `DropEvents` and `RemoveSubscriber` bursts: one
/// publisher, so the order the broker takes events in is their sequence.
/// 200 MB: more than a subscriber's budget can hold besides its queue (a
/// oneway subscriber's connection may hold a budget's worth before the
/// queue, hence `QueueSizeMax`, sees an event), so the policies engage
/// even if a loaded machine slows the publisher down.
const POLICY_EVENTS: u32 = 20_000;

/// `IceStorm.Send.QueueSizeMax` of the policy tests.
const POLICY_QUEUE: u64 = 100;

/// One publisher bursts [`POLICY_EVENTS`] to a slow subscriber (200 µs per
/// event); what it received and the topic's subscribers afterwards.
fn policy_burst(broker: &Broker, settle_secs: f64) -> (Received, Vec<String>) {
    let sub = Subscriber::start(
        broker,
        "slow",
        u64::from(POLICY_EVENTS),
        200,
        None,
        settle_secs,
    );
    let publish_secs = Publishers::start(broker, 1, POLICY_EVENTS, EVENT_SIZE).wait();
    let r = sub.finish();
    println!(
        "policy burst: publisher sent {POLICY_EVENTS} in {publish_secs:.2} s; \
         broker VmHWM {} kB (idle {} kB)",
        broker.hwm_kb(),
        broker.idle_hwm_kb
    );
    (r, broker.subscribers())
}

/// `DropEvents`: in order with gaps, still subscribed, and the newest
/// events (at least the last `QueueSizeMax` taken in) delivered.
fn assert_dropped_oldest(r: &Received, subs: &[String], what: &str) {
    let sent = u64::from(POLICY_EVENTS);
    assert_in_order(r, what);
    assert!(
        r.total < sent,
        "{what}: nothing dropped, the subscriber kept up"
    );
    assert_eq!(subs, ["slow"], "{what}: DropEvents removed the subscriber");
    let runs = &r.publishers[&0].runs;
    let last = *runs.last().unwrap();
    assert!(
        last.1 == sent - 1 && last.1 + 1 - last.0 >= POLICY_QUEUE,
        "{what}: the newest events were dropped, not the oldest: received {}",
        runs_text(runs)
    );
}

/// `RemoveSubscriber`: what arrived is in order, and the subscriber is gone.
fn assert_removed(r: &Received, subs: &[String], what: &str) {
    assert_in_order(r, what);
    assert!(
        r.total < u64::from(POLICY_EVENTS),
        "{what}: the slow subscriber kept up: nothing to check"
    );
    assert!(subs.is_empty(), "{what}: not removed: {subs:?}");
}

/// The reference for the two policy tests below: a real IceStorm with
/// `QueueSizeMax=100` and `DropEvents` drops the oldest events of a slow
/// subscriber and keeps it; with `RemoveSubscriber` it removes it.
#[test]
fn queue_size_max_policies_reference_icestorm() {
    if !peers_available() {
        return;
    }
    let broker = Broker::icestorm(&[
        "IceStorm.Send.QueueSizeMax=100",
        "IceStorm.Send.QueueSizeMaxPolicy=DropEvents",
    ]);
    let (r, subs) = policy_burst(&broker, 3.0);
    println!(
        "IceStorm DropEvents: received {} of {POLICY_EVENTS}",
        r.total
    );
    assert_dropped_oldest(&r, &subs, "IceStorm DropEvents");
    drop(broker);
    let broker = Broker::icestorm(&["IceStorm.Send.QueueSizeMax=100"]);
    let (r, subs) = policy_burst(&broker, 1.0);
    println!(
        "IceStorm RemoveSubscriber: received {} of {POLICY_EVENTS}",
        r.total
    );
    assert_removed(&r, &subs, "IceStorm RemoveSubscriber");
}

/// `QueueSizeMax=100` with `DropEvents` and a slow subscriber: the
/// subscriber gets the events in order with gaps, keeps its subscription,
/// and the newest events are delivered (the oldest queued ones are those
/// dropped). Every drop is counted: the `dropped=` statistics at shutdown
/// equal sent − received, and drops are logged.
#[test]
fn drop_events_drops_the_oldest_and_counts_every_drop() {
    if !peers_available() {
        return;
    }
    let broker = Broker::floe(&[
        "--IceStorm.Send.QueueSizeMax=100",
        "--IceStorm.Send.QueueSizeMaxPolicy=DropEvents",
    ]);
    let (r, subs) = policy_burst(&broker, 3.0);
    let log = broker.stop();
    let s = statistics(&log);
    let sent = u64::from(POLICY_EVENTS);
    println!(
        "DropEvents: received {} of {sent}; statistics {s:?}",
        r.total
    );
    assert_dropped_oldest(&r, &subs, "floe-storm DropEvents");
    assert_eq!(s.get("dropped"), Some(&(sent - r.total)), "{s:?}");
    assert_eq!(s.get("removed"), Some(&0), "{s:?}");
    assert_eq!(s.get("events_in"), Some(&sent), "{s:?}");
    assert!(
        log.iter()
            .any(|l| !l.contains("topic statistics") && l.to_lowercase().contains("drop")),
        "the drops are not logged:\n{}",
        log.join("\n")
    );
}

/// `QueueSizeMax=100` with the default policy (`RemoveSubscriber`) and a
/// slow subscriber: the subscriber is removed, visibly (icestormadmin,
/// log, `removed=1`), not silently starved; what it got before is in order.
#[test]
fn queue_size_max_removes_the_slow_subscriber_by_default() {
    if !peers_available() {
        return;
    }
    let broker = Broker::floe(&["--IceStorm.Send.QueueSizeMax=100"]);
    let (r, subs) = policy_burst(&broker, 1.0);
    let log = broker.stop();
    let s = statistics(&log);
    println!(
        "RemoveSubscriber: received {} of {POLICY_EVENTS}; statistics {s:?}",
        r.total
    );
    assert_removed(&r, &subs, "floe-storm RemoveSubscriber");
    assert_eq!(s.get("removed"), Some(&1), "{s:?}");
    assert!(
        log.iter().any(|l| l.contains("slow")
            && !l.contains("topic statistics")
            && (l.contains(" INFO ") || l.contains(" WARN "))),
        "the removal is not logged:\n{}",
        log.join("\n")
    );
}
