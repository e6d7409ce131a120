//! Three replicas under a real IceGrid node: floe-storm deployed with
//! `deploy/icegrid-replicated.xml`, then replicated IceStorm 3.7.8 (IceBox)
//! as the reference, on the same `icegridnode`/registry, each through the
//! same steps with real Ice parts (icegridadmin, icestormadmin, Ice 3.7
//! Python publishers and subscribers):
//!
//! 1. two of three replicas started: do updates work?
//! 2. the third started: does it catch up? `icestormadmin topics; replica`;
//! 3. the failover scenario (`tests/support/failover.rs`): four publishers
//!    and three subscribers while the leader, then a second replica, are
//!    `SIGKILL`ed; the killed replicas restarted: do they catch up?
//! 4. a partition: one replica stopped (`SIGSTOP`) while an update is made
//!    through another, then continued: does it catch up? Then the other
//!    two stopped: does an update on the lone replica fail cleanly, do its
//!    reads answer? Once they continue, how long until updates work?
//!
//! Both outcomes are printed side by side (`--nocapture`); floe-storm's are
//! checked. `FLOE_NO_INTEROP=1` skips the test when the Ice peers are
//! missing.

mod support;

use std::time::{Duration, Instant};

use floe_storm::slice::ice_storm_election::{NodePrx, NodeState};
use support::cluster::Client;
use support::failover::{self, Report, Schedule};
use support::grid::{Broker, Grid, GridApp};
use support::icestorm_ha::Replicated;
use support::*;

/// How long a client waits for one call here.
const CALL: Duration = Duration::from_secs(8);

/// What one broker did.
struct Outcome {
    name: &'static str,
    /// Two of three replicas up: the first update's result and time.
    two_of_three: (Result<(), String>, Duration),
    /// The third replica started: until it had every topic.
    third_caught_up: Option<Duration>,
    /// `icestormadmin replica` with three replicas up.
    replica_listing: String,
    failover: Report,
    /// The two killed replicas restarted: until both had every topic.
    killed_caught_up: Option<Duration>,
    /// An update through another replica while one is stopped.
    update_beside_stopped: (Result<(), String>, Duration),
    /// The stopped replica continued: until it had that update.
    stopped_caught_up: Option<Duration>,
    /// An update on a replica whose two peers are stopped.
    minority_update: (Result<(), String>, Duration),
    /// A read (`retrieveAll`) on it.
    minority_read: (Result<(), String>, Duration),
    /// The peers continued: until an update on it worked.
    healed: Option<Duration>,
}

fn timed(f: impl FnOnce() -> Result<(), String>) -> (Result<(), String>, Duration) {
    let t = Instant::now();
    let r = f();
    (r, t.elapsed())
}

/// Polls `check` for at most `limit`; how long it took.
fn until(limit: Duration, mut check: impl FnMut() -> bool) -> Option<Duration> {
    let t = Instant::now();
    while t.elapsed() < limit {
        if check() {
            return Some(t.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

/// Replica `id`'s own topic manager, through the registry.
fn replica_tm(app: &GridApp, id: usize) -> String {
    format!("{0}/TopicManager@{0}{id}.TopicManager", app.instance())
}

fn create(c: &Client, tm: &str, name: &str) -> Result<(), String> {
    let m = c.manager(tm);
    let m = floe_storm::slice::ice_storm::TopicManagerPrx::unchecked_cast(
        m.proxy().ice_invocation_timeout(Some(CALL)),
    );
    c.block_on(async { m.create(name).await })
        .map(|_| ())
        .or_else(|e| {
            if e.user_exception::<floe_storm::types::TopicExists>()
                .is_some()
            {
                Ok(())
            } else {
                Err(format!("{}: {e}", e.ice_name()))
            }
        })
}

fn topics(c: &Client, tm: &str) -> Result<Vec<String>, String> {
    let m = floe_storm::slice::ice_storm::TopicManagerPrx::unchecked_cast(
        c.manager(tm).proxy().ice_invocation_timeout(Some(CALL)),
    );
    c.block_on(async { m.retrieve_all().await })
        .map(|d| d.into_keys().collect())
        .map_err(|e| format!("{}: {e}", e.ice_name()))
}

fn has(c: &Client, tm: &str, names: &[&str]) -> bool {
    topics(c, tm).is_ok_and(|t| names.iter().all(|n| t.iter().any(|x| x == n)))
}

/// Every running replica reports `normal` with the same coordinator.
fn settled(app: &GridApp, c: &Client) -> bool {
    let mut coords = Vec::new();
    for id in (1..=3).filter(|id| app.running(*id)) {
        let node = NodePrx::unchecked_cast(
            c.comm
                .string_to_proxy(&app.node_proxy_of(id))
                .unwrap()
                .ice_invocation_timeout(Some(Duration::from_secs(3))),
        );
        match c.block_on(async { node.query().await }) {
            Ok(q) if q.state == NodeState::NodeStateNormal => coords.push(q.coord),
            _ => return false,
        }
    }
    coords.windows(2).all(|w| w[0] == w[1])
}

fn run(grid: &Grid, broker: Broker) -> Outcome {
    let mut app = GridApp::deploy(grid, broker);
    let c = Client::with_locator(Some(&grid.locator()));
    let tm = app.tm_proxy();
    app.start(1);
    app.start(2);
    let two_of_three = {
        let t = Instant::now();
        let mut last = Err(String::new());
        while t.elapsed() < Duration::from_secs(20) {
            last = create(&c, &tm, "t0");
            if last.is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        (last, t.elapsed())
    };
    app.start(3);
    let third_caught_up = until(Duration::from_secs(60), || {
        settled(&app, &c) && create(&c, &tm, "t0").is_ok() && has(&c, &replica_tm(&app, 3), &["t0"])
    });
    let (ok, listing, err) = grid.icestormadmin(&tm, "topics; replica");
    assert!(ok, "{}: icestormadmin: {err}", app.name());

    let schedule = Schedule {
        // 100 events/s per publisher: the Python subscribers keep up even
        // on a loaded machine, so what is lost is what was in flight.
        events: 700,
        interval_ms: 10,
        first_kill: Duration::from_millis(2000),
        second_kill: Duration::from_millis(4500),
    };
    let report = failover::run(&mut app, &c, &schedule);
    app.start(report.leader);
    app.start(report.second);
    let killed_caught_up = until(Duration::from_secs(60), || {
        settled(&app, &c)
            && [report.leader, report.second]
                .iter()
                .all(|id| has(&c, &replica_tm(&app, *id), &["t0", "failover"]))
    });

    // A partition: replica `a` stopped while `b` takes an update.
    let _ = until(Duration::from_secs(30), || settled(&app, &c));
    let (a, b, x) = (1, 2, 3);
    app.signal(a, "STOP");
    let update_beside_stopped = timed(|| create(&c, &replica_tm(&app, b), "while-stopped"));
    app.signal(a, "CONT");
    let stopped_caught_up = until(Duration::from_secs(60), || {
        has(&c, &replica_tm(&app, a), &["while-stopped"])
    });
    // Now `a` alone: its two peers stopped.
    let _ = until(Duration::from_secs(30), || settled(&app, &c));
    app.signal(b, "STOP");
    app.signal(x, "STOP");
    let lone = replica_tm(&app, a);
    let minority_update = timed(|| create(&c, &lone, "in-minority"));
    let minority_read = timed(|| topics(&c, &lone).map(|_| ()));
    app.signal(b, "CONT");
    app.signal(x, "CONT");
    let healed = until(Duration::from_secs(60), || {
        create(&c, &lone, "healed").is_ok()
    });
    Outcome {
        name: app.name(),
        two_of_three,
        third_caught_up,
        replica_listing: listing,
        failover: report,
        killed_caught_up,
        update_beside_stopped,
        stopped_caught_up,
        minority_update,
        minority_read,
        healed,
    }
}

fn show(r: &(Result<(), String>, Duration)) -> String {
    match &r.0 {
        Ok(()) => format!("ok after {:.2} s", r.1.as_secs_f64()),
        Err(e) => format!(
            "failed after {:.2} s: {}",
            r.1.as_secs_f64(),
            e.lines().next().unwrap_or("")
        ),
    }
}

fn within(d: Option<Duration>) -> String {
    d.map_or("not within the limit".into(), |d| {
        format!("{:.2} s", d.as_secs_f64())
    })
}

/// One cell of the side-by-side table.
type Cell = dyn Fn(&Outcome) -> String;

fn table(outcomes: &[&Outcome]) -> String {
    let mut out = String::from("| step |");
    for o in outcomes {
        out.push_str(&format!(" {} |", o.name));
    }
    out.push_str("\n|---|");
    for _ in outcomes {
        out.push_str("---|");
    }
    out.push('\n');
    let rows: [(&str, &Cell); 9] = [
        ("update with 2 of 3 started", &|o| show(&o.two_of_three)),
        ("third started: caught up", &|o| within(o.third_caught_up)),
        ("killed replicas restarted: caught up", &|o| {
            within(o.killed_caught_up)
        }),
        ("update while a replica is stopped", &|o| {
            show(&o.update_beside_stopped)
        }),
        ("stopped replica continued: caught up", &|o| {
            within(o.stopped_caught_up)
        }),
        ("update on a replica whose peers are stopped", &|o| {
            show(&o.minority_update)
        }),
        ("read on it", &|o| show(&o.minority_read)),
        ("peers continued: updates on it again", &|o| {
            within(o.healed)
        }),
        ("updates after the leader's death", &|o| {
            within(o.failover.update_recovery)
        }),
    ];
    for (step, f) in rows {
        out.push_str(&format!("| {step} |"));
        for o in outcomes {
            out.push_str(&format!(" {} |", f(o)));
        }
        out.push('\n');
    }
    out
}

#[test]
fn three_replicas_under_icegrid_with_icestorm_as_the_reference() {
    if !peers_available() {
        return;
    }
    let grid = Grid::start();
    let floe = run(&grid, Broker::Floe);
    println!("{}", floe.failover.table());
    println!("icestormadmin replica:\n{}", floe.replica_listing);
    let ice = run(&grid, Broker::IceStorm);
    println!("{}", ice.failover.table());
    println!("{}", table(&[&floe, &ice]));

    assert!(floe.two_of_three.0.is_ok(), "{}", show(&floe.two_of_three));
    assert!(floe.third_caught_up.is_some());
    assert!(
        floe.replica_listing.contains("replica count: 3"),
        "{}",
        floe.replica_listing
    );
    assert!(floe.killed_caught_up.is_some());
    assert!(floe.update_beside_stopped.0.is_ok());
    assert!(floe.stopped_caught_up.is_some());
    let refused = floe
        .minority_update
        .0
        .as_ref()
        .is_err_and(|e| e.starts_with("::Ice::UnknownLocalException"));
    assert!(
        refused && floe.minority_update.1 < CALL,
        "{}",
        show(&floe.minority_update)
    );
    assert!(
        floe.minority_read.0.is_ok(),
        "{}",
        show(&floe.minority_read)
    );
    assert!(floe.healed.is_some());
    let f = &floe.failover;
    for (sub, got) in &f.subscribers {
        for (id, g) in got {
            assert_eq!(g.highest, 699, "{sub} lost the end of publisher {id}");
            assert_eq!(g.backwards, 0, "{sub} from publisher {id}: {g:?}");
            assert!(g.missing <= 10, "{sub} from publisher {id}: {g:?}");
        }
    }
}
