//! Replicated floe-storm: 3 and 5 `floe-storm` processes on 127.0.0.1
//! (`IceStorm.NodeId`, `IceStorm.Nodes.<id>`), started, killed
//! (`SIGKILL`) and restarted by the tests; a floe client of the generated
//! IceStorm proxies for the updates and reads, real Ice 3.7 Python
//! publishers and subscribers (`tests/peers/failover.py`) for delivery.
//!
//! - topics, subscribers (with QoS) and links are the same on every
//!   replica, whichever replica took the update;
//! - a replica without a majority refuses updates with
//!   `UnknownLocalException` saying so, within `UpdateTimeout`, and still
//!   answers reads and delivers what is published to it;
//! - two replicas of three start and serve; the third catches up when it
//!   starts, from the log, or from a snapshot when the log was compacted;
//! - five replicas lose two and serve; a third loss stops updates;
//! - no acknowledged update is lost while leaders are killed.
//!
//! `FLOE_NO_INTEROP=1` skips the tests that need the Python peers.

mod support;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use floe::runtime::Error;
use support::cluster::{leader, settled, Client, Cluster};
use support::*;

/// Updates give up after this long without a majority.
const UPDATE_TIMEOUT: &str = "floe.Storm.Replica.UpdateTimeout=2000";

fn failover_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers/failover.py")
}

fn names(v: &[String]) -> BTreeSet<String> {
    v.iter().cloned().collect()
}

/// The message of an update that no majority took.
fn refused(e: &Error) -> bool {
    matches!(e, Error::UnknownLocalException(m)
        if m.contains("no leader") || m.contains("cannot reach a majority"))
}

#[test]
fn three_replicas_share_topics_subscribers_and_links() {
    let mut cluster = Cluster::new(3, &[]);
    cluster.start_all();
    let c = Client::new();
    let a = c.create(&cluster.tm_proxy_of(2), "a").unwrap();
    c.create(&cluster.tm_proxy_of(3), "b").unwrap();
    let a3 = c.retrieve(&cluster.tm_proxy_of(3), "a").unwrap();
    c.subscribe(&a3, &[], "s1 -o:tcp -h 127.0.0.1 -p 9")
        .unwrap();
    c.subscribe(
        &a,
        &[("reliability", "ordered")],
        "s2:tcp -h 127.0.0.1 -p 9",
    )
    .unwrap();
    let b = c.retrieve(&cluster.tm_proxy_of(1), "b").unwrap();
    let to = Some(b.to_data());
    c.block_on(async { a.link(&to, 3).await }).unwrap();

    for id in 1..=3 {
        let tm = cluster.tm_proxy_of(id);
        assert_eq!(c.topics(&tm), ["a", "b"], "replica {id}");
        let a = c.retrieve(&tm, "a").unwrap();
        assert_eq!(
            c.subscribers(&a),
            ["s1", "s2", "IceStorm/topic.b"],
            "replica {id}: subscribers in subscription order, then the link"
        );
        let links = c.block_on(async { a.get_link_info_seq().await }).unwrap();
        assert_eq!(
            links
                .iter()
                .map(|l| (l.name.as_str(), l.cost))
                .collect::<Vec<_>>(),
            [("b", 3)]
        );
    }

    // Ice 3.8's createOrRetrieve, through another replica: the existing
    // topic, then a new one everywhere.
    let m = c.manager(&cluster.tm_proxy_of(3));
    c.block_on(async { m.create_or_retrieve("a").await })
        .unwrap();
    c.block_on(async { m.create_or_retrieve("c").await })
        .unwrap();
    for id in 1..=3 {
        assert_eq!(c.topics(&cluster.tm_proxy_of(id)), ["a", "b", "c"]);
    }

    // Verdicts are IceStorm's, whichever replica is asked.
    let e = c.create(&cluster.tm_proxy_of(1), "a").unwrap_err();
    assert!(
        e.user_exception::<floe_storm::types::TopicExists>()
            .is_some(),
        "{e}"
    );
    let a1 = c.retrieve(&cluster.tm_proxy_of(1), "a").unwrap();
    let e = c
        .subscribe(&a1, &[], "s1:tcp -h 127.0.0.1 -p 9")
        .unwrap_err();
    assert!(
        e.user_exception::<floe_storm::types::AlreadySubscribed>()
            .is_some(),
        "{e}"
    );
    let s1 = Some(c.comm.string_to_proxy("s1").unwrap().to_data());
    c.block_on(async { a1.unsubscribe(&s1).await }).unwrap();
    for id in 1..=3 {
        let a = c.retrieve(&cluster.tm_proxy_of(id), "a").unwrap();
        assert_eq!(
            c.subscribers(&a),
            ["s2", "IceStorm/topic.b"],
            "replica {id}"
        );
    }

    // One leader; every replica at the same applied index.
    let statuses: Vec<_> = (1..=3)
        .map(|id| c.status(&cluster.node_proxy_of(id)).unwrap())
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| s.role == "leader").count(),
        1,
        "{statuses:?}"
    );
    let applied: BTreeSet<i64> = statuses.iter().map(|s| s.applied).collect();
    assert_eq!(applied.len(), 1, "{statuses:?}");
}

#[test]
fn a_minority_refuses_updates_and_still_delivers() {
    if !peers_available() {
        return;
    }
    let mut cluster = Cluster::new(3, &[UPDATE_TIMEOUT]);
    cluster.start_all();
    let c = Client::new();
    let tm = cluster.tm_proxy();
    let mut sub = Command::new(PYTHON);
    sub.arg(failover_script())
        .args(["sub", &tm, "t", "sub-1", "oneway"]);
    let mut sub = Proc::spawn("subscriber", sub);
    sub.expect_line("ready", Duration::from_secs(30));
    // Replica 3 applied the subscription (it may have been catching up
    // when it was made).
    c.eventually(
        Duration::from_secs(10),
        "replica 3 knows the subscriber",
        || {
            c.retrieve(&cluster.tm_proxy_of(3), "t")
                .is_ok_and(|t| c.subscribers(&t).len() == 1)
        },
    );

    cluster.kill(1);
    cluster.kill(2);
    let alone = cluster.tm_proxy_of(3);
    let t = Instant::now();
    let e = c.create(&alone, "x").unwrap_err();
    let took = t.elapsed();
    assert!(refused(&e), "{e}");
    assert!(took < Duration::from_secs(4), "refused after {took:?}");
    println!("a minority refused an update after {took:?}: {e}");
    // Reads are served, and what is published reaches the subscribers the
    // replica knows.
    assert_eq!(c.topics(&alone), ["t"]);
    c.retrieve(&alone, "t").unwrap();
    let mut publisher = Command::new(PYTHON);
    publisher
        .arg(failover_script())
        .args(["pub", &tm, "t", "7", "100", "oneway", "1", "2"]);
    let out = Proc::spawn("publisher", publisher);
    out.expect_line("published", Duration::from_secs(30));
    std::thread::sleep(Duration::from_millis(500));
    drop(sub.stdin.take());
    let report = sub.expect_line("publisher=7", Duration::from_secs(10));
    let f = fields(&report);
    assert_eq!(
        (
            f["count"].as_str(),
            f["distinct"].as_str(),
            f["missing"].as_str()
        ),
        ("100", "100", "0"),
        "{report}"
    );

    // With a majority back, updates go through.
    cluster.start(1);
    c.eventually(
        Duration::from_secs(15),
        "an update after the majority is back",
        || c.create(&alone, "x").is_ok(),
    );
    for id in [1, 3] {
        assert_eq!(c.topics(&cluster.tm_proxy_of(id)), ["t", "x"]);
    }
}

#[test]
fn a_majority_starts_and_a_late_replica_catches_up() {
    let mut cluster = Cluster::new(3, &[]);
    cluster.start(1);
    cluster.start(2);
    let c = Client::new();
    let tm = cluster.tm_proxy();
    let want: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
    for name in &want {
        c.create(&tm, name).unwrap();
    }
    cluster.start(3);
    let late = cluster.tm_proxy_of(3);
    c.eventually(Duration::from_secs(15), "replica 3 has every topic", || {
        names(&c.topics(&late)) == names(&want)
    });
}

#[test]
fn a_replica_that_was_down_catches_up_from_the_log_and_from_a_snapshot() {
    // A snapshot every 20 entries, 5 kept behind it: a replica 60 entries
    // behind needs the snapshot.
    let mut cluster = Cluster::new(
        3,
        &[
            "floe.Storm.Raft.SnapshotLogs=20",
            "floe.Storm.Raft.KeepLogs=5",
        ],
    );
    cluster.start_all();
    let c = Client::new();
    let tm = cluster.tm_proxy();
    let mut want = vec!["base".to_string()];
    c.create(&tm, "base").unwrap();

    // A few entries behind: the log.
    cluster.kill(3);
    for i in 0..5 {
        want.push(format!("log{i}"));
        c.create(&cluster.tm_proxy_of(1), &want[want.len() - 1])
            .unwrap();
    }
    cluster.start(3);
    let three = cluster.tm_proxy_of(3);
    c.eventually(
        Duration::from_secs(15),
        "replica 3 caught up from the log",
        || names(&c.topics(&three)) == names(&want),
    );

    // Far behind: a snapshot, then the log after it.
    cluster.kill(3);
    // Through replica 1: a call through the replicated proxy could have
    // been on its way to replica 3.
    let one = cluster.tm_proxy_of(1);
    for i in 0..60 {
        let name = format!("snap{i:02}");
        let t = c.create(&one, &name).unwrap();
        c.subscribe(
            &t,
            &[("reliability", "ordered")],
            &format!("s{i}:tcp -h 127.0.0.1 -p 9"),
        )
        .unwrap();
        want.push(name);
    }
    // The leader purges what the snapshot covers once no append to a
    // follower holds those entries in flight: the one to the dead replica
    // 3 has to fail first, so this is awaited, not read at once.
    let node = cluster.node_proxy_of(1);
    c.eventually(Duration::from_secs(15), "the log was compacted", || {
        c.status(&node).is_ok_and(|s| s.purged > 0)
    });
    cluster.start(3);
    c.eventually(
        Duration::from_secs(20),
        "replica 3 caught up from a snapshot",
        || names(&c.topics(&three)) == names(&want),
    );
    assert!(
        cluster
            .log(3)
            .iter()
            .any(|l| l.contains("snapshot installed")),
        "{:?}",
        cluster.log(3)
    );
    let t = c.retrieve(&three, "snap59").unwrap();
    assert_eq!(c.subscribers(&t), ["s59"]);
    c.eventually(
        Duration::from_secs(10),
        "every replica at the same index",
        || {
            let applied: BTreeSet<i64> = (1..=3)
                .map(|id| c.status(&cluster.node_proxy_of(id)).unwrap().applied)
                .collect();
            applied.len() == 1
        },
    );
}

#[test]
fn five_replicas_survive_two_failures() {
    let mut cluster = Cluster::new(5, &[UPDATE_TIMEOUT]);
    cluster.start_all();
    let c = Client::new();
    let tm = cluster.tm_proxy();
    c.create(&tm, "before").unwrap();
    let first = leader(&cluster, &c).expect("a leader");
    cluster.kill(first);
    let other = (1..=5).find(|id| *id != first).unwrap();
    cluster.kill(other);
    c.eventually(Duration::from_secs(15), "an update with 3 of 5", || {
        c.create(&tm, "after").is_ok()
    });
    let live: Vec<usize> = (1..=5).filter(|id| ![first, other].contains(id)).collect();
    for id in &live {
        c.eventually(Duration::from_secs(5), "every live replica has it", || {
            c.topics(&cluster.tm_proxy_of(*id)) == ["after", "before"]
        });
    }
    cluster.kill(live[0]);
    let e = c.create(&cluster.tm_proxy_of(live[1]), "lost").unwrap_err();
    assert!(refused(&e), "{e}");
}

#[test]
fn acknowledged_updates_survive_leader_failures() {
    let mut cluster = Cluster::new(3, &[]);
    cluster.start_all();
    let c = Client::new();
    let tm = cluster.tm_proxy();
    let mut acked = Vec::new();
    let mut failed = Vec::new();
    let mut next = 0;
    let mut create = |c: &Client, n: usize| {
        for _ in 0..n {
            let name = format!("k{next:03}");
            next += 1;
            match c.create(&tm, &name) {
                Ok(_) => acked.push(name),
                Err(e) => failed.push((name, e.to_string())),
            }
        }
    };
    create(&c, 10);
    for _ in 0..2 {
        let l = leader(&cluster, &c).expect("a leader");
        cluster.kill(l);
        create(&c, 10);
        cluster.start(l);
        create(&c, 5);
    }
    assert!(acked.len() >= 30, "acked {acked:?}, failed {failed:?}");
    for id in 1..=3 {
        let tm = cluster.tm_proxy_of(id);
        c.eventually(Duration::from_secs(15), "every acknowledged topic", || {
            names(&acked).is_subset(&names(&c.topics(&tm)))
        });
    }
    // And after every replica restarts.
    for id in 1..=3 {
        cluster.kill(id);
    }
    cluster.start_all();
    for id in 1..=3 {
        let tm = cluster.tm_proxy_of(id);
        c.eventually(
            Duration::from_secs(15),
            "every acknowledged topic after a restart",
            || names(&acked).is_subset(&names(&c.topics(&tm))),
        );
    }
    println!("acked {}, failed {:?}", acked.len(), failed);
}

/// `args` run by `icestormadmin`, or by `floe-storm admin` when `floe`.
fn admin(floe: bool, tm: &str, commands: &str) -> String {
    let mut cmd = if floe {
        let mut c = Command::new(floe_storm_binary());
        c.arg("admin");
        c
    } else {
        Command::new("icestormadmin")
    };
    let out = cmd
        .arg(format!("--IceStormAdmin.TopicManager.Default={tm}"))
        .args(["-e", commands])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{commands}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn admin_shows_replicas_roles_and_log_positions() {
    if !peers_available() {
        return;
    }
    let mut cluster = Cluster::new(3, &[]);
    cluster.start_all();
    let c = Client::new();
    c.create(&cluster.tm_proxy(), "t").unwrap();
    // Kill a replica only once all three are caught-up voters: a replica
    // still joining as a learner would not count towards the majority.
    settled(&cluster, &c, Duration::from_secs(30));
    let l = leader(&cluster, &c).expect("a leader");
    let down = (1..=3).find(|id| *id != l).unwrap();
    cluster.kill(down);
    let live = (1..=3).find(|id| *id != l && *id != down).unwrap();
    let tm = cluster.tm_proxy_of(live);
    // Real icestormadmin reads floe-storm's replicas as IceStorm's.
    let ice = admin(false, &tm, "replica");
    let floe = admin(true, &tm, "replica");
    println!("icestormadmin replica:\n{ice}\nfloe-storm admin replica:\n{floe}");
    assert!(ice.starts_with("replica count: 3\n"), "{ice}");
    assert!(
        ice.contains(&format!("{down}: ::Ice::ConnectionRefusedException")),
        "{ice}"
    );
    for id in [l, live] {
        assert!(ice.contains(&format!("{id}: coord:      {l}\n")), "{ice}");
        assert!(
            ice.contains(&format!("{id}: state:      normal\n")),
            "{ice}"
        );
    }
    // floe-storm admin prints the same, and each replica's role and log.
    for line in ice.lines() {
        assert!(floe.contains(line), "{line:?} missing from\n{floe}");
    }
    assert!(
        floe.contains(&format!("{l}: role:       leader (term ")),
        "{floe}"
    );
    assert!(
        floe.contains(&format!("{live}: role:       follower (term ")),
        "{floe}"
    );
    let last = c.status(&cluster.node_proxy_of(l)).unwrap().last_log_index;
    assert!(
        floe.contains(&format!(
            "{live}: log:        last {last}, applied {last}, snapshot"
        )),
        "{floe}"
    );
    assert!(
        floe.contains(&format!("{l}: follower:   replica {live} holds {last}")),
        "{floe}"
    );
}

#[test]
fn a_standalone_store_does_not_become_a_replica() {
    let cluster = Cluster::new(3, &[]);
    let data = cluster.dir.path().join("db1");
    let port = support::cluster::fixed_port();
    let mut standalone = Command::new(floe_storm_binary());
    standalone
        .arg(format!(
            "--IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {port}"
        ))
        .arg("--IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p 0")
        .arg(format!("--data-dir={}", data.display()));
    let p = Proc::spawn("standalone", standalone);
    p.expect_line("floe-storm ready", Duration::from_secs(30));
    let c = Client::new();
    c.create(
        &format!("IceStorm/TopicManager:tcp -h 127.0.0.1 -p {port}"),
        "t",
    )
    .unwrap();
    drop(p);
    let mut replica = Proc::spawn("replica 1", cluster.command(1));
    let status = replica.wait_exit(Duration::from_secs(30));
    assert!(!status.success());
    let err = replica.err.wait_end(Duration::from_secs(5)).join("\n");
    assert!(err.contains("holds a standalone broker's topics"), "{err}");
}
