use super::*;
use crate::command::{Command, Rejection};
use crate::types::{direct_proxy, tcp_endpoint, ProxyMode, MODE_ONEWAY};
use floe::wire::Identity;

fn sub(name: &str, mode: ProxyMode) -> ProxyData {
    let mut p = direct_proxy(
        Identity::from_name(name),
        vec![tcp_endpoint("127.0.0.1", 5000, 60000)],
    );
    p.mode = mode;
    p
}

fn create(name: &str) -> Command {
    Command::CreateTopic { name: name.into() }
}

fn subscribe(topic: &str, proxy: ProxyData, qos: &QosDict) -> Command {
    Command::Subscribe {
        topic: topic.into(),
        proxy,
        qos: qos.clone(),
    }
}

fn link_news2() -> Command {
    Command::Link {
        topic: "news".into(),
        name: "news2".into(),
        cost: 5,
        linked: direct_proxy(Identity::new("topic.news2", "IceStorm"), vec![]),
        link: direct_proxy(Identity::new("news2.link", "IceStorm"), vec![]),
    }
}

#[test]
fn everything_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let mut qos = QosDict::new();
    qos.insert("reliability".into(), "ordered".into());
    let none = QosDict::new();
    {
        let store = Store::open(dir.path()).unwrap();
        for c in [
            create("news"),
            create("news2"),
            create("gone"),
            subscribe("news", sub("z", ProxyMode::Twoway), &qos),
            subscribe("news", sub("a", MODE_ONEWAY), &none),
            subscribe("gone", sub("x", ProxyMode::Twoway), &none),
            link_news2(),
            Command::DestroyTopic {
                name: "gone".into(),
            },
        ] {
            assert!(store.apply(&c).unwrap().is_ok(), "{c:?}");
        }
    }
    let store = Store::open(dir.path()).unwrap();
    let topics = store.load().unwrap();
    assert_eq!(
        topics.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["news", "news2"]
    );
    let news = &topics[0];
    // Creation order, not key order.
    assert_eq!(news.subscribers[0].proxy, sub("z", ProxyMode::Twoway));
    assert_eq!(news.subscribers[0].qos, qos);
    assert_eq!(news.subscribers[1].proxy, sub("a", MODE_ONEWAY));
    assert_eq!(news.links.len(), 1);
    assert_eq!(news.links[0].name, "news2");
    assert_eq!(news.links[0].cost, 5);
    assert_eq!(
        news.links[0].link.identity,
        Identity::new("news2.link", "IceStorm")
    );
    assert!(topics[1].subscribers.is_empty());

    let unsubscribe = Command::Unsubscribe {
        topic: "news".into(),
        subscriber: Identity::from_name("z"),
    };
    assert!(store.apply(&unsubscribe).unwrap().is_ok());
    assert!(store.apply(&unsubscribe).unwrap().is_ok(), "not an error");
    let unlink = Command::Unlink {
        topic: "news".into(),
        linked: Identity::new("topic.news2", "IceStorm"),
    };
    assert!(store.apply(&unlink).unwrap().is_ok());
    drop(store);
    let topics = Store::open(dir.path()).unwrap().load().unwrap();
    assert_eq!(topics[0].subscribers.len(), 1);
    assert!(topics[0].links.is_empty());
}

#[test]
fn verdicts_come_from_the_tables() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let none = QosDict::new();
    store.apply(&create("news")).unwrap().unwrap();
    assert_eq!(
        store.apply(&create("news")).unwrap(),
        Err(Rejection::TopicExists("news".into()))
    );
    store
        .apply(&subscribe("news", sub("s", MODE_ONEWAY), &none))
        .unwrap()
        .unwrap();
    // The same identity with another mode or endpoint is the same subscriber.
    assert_eq!(
        store
            .apply(&subscribe("news", sub("s", ProxyMode::Twoway), &none))
            .unwrap(),
        Err(Rejection::AlreadySubscribed)
    );
    assert_eq!(
        store
            .apply(&subscribe("nope", sub("s", MODE_ONEWAY), &none))
            .unwrap(),
        Err(Rejection::Gone("nope".into()))
    );
    store.apply(&link_news2()).unwrap().unwrap();
    assert_eq!(
        store.apply(&link_news2()).unwrap(),
        Err(Rejection::LinkExists("news2".into()))
    );
    let unlink = Command::Unlink {
        topic: "news".into(),
        linked: Identity::new("topic.other", "IceStorm"),
    };
    assert_eq!(
        store.apply(&unlink).unwrap(),
        Err(Rejection::NoSuchLink("other".into()))
    );
}

#[test]
fn a_failed_subscriber_is_removed_only_at_its_sequence_number() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let none = QosDict::new();
    store.apply(&create("t")).unwrap().unwrap();
    let first = store
        .apply(&subscribe("t", sub("s", MODE_ONEWAY), &none))
        .unwrap()
        .unwrap();
    let remove = |seq| Command::RemoveFailed {
        topic: "t".into(),
        id: Identity::from_name("s"),
        seq,
        link: false,
    };
    store.apply(&remove(first + 100)).unwrap().unwrap();
    assert_eq!(
        store.load().unwrap()[0].subscribers.len(),
        1,
        "another subscription"
    );
    store.apply(&remove(first)).unwrap().unwrap();
    assert!(store.load().unwrap()[0].subscribers.is_empty());
}

#[test]
fn a_logged_batch_numbers_records_by_log_index_and_keeps_meta() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let (a, b, c) = (create("a"), create("a"), create("b"));
    let outcomes = store
        .apply_logged(&[(7, &a), (8, &b), (9, &c)], &[("applied", b"9")])
        .unwrap();
    assert_eq!(
        outcomes,
        [Ok(7), Err(Rejection::TopicExists("a".into())), Ok(9)]
    );
    let topics = store.load().unwrap();
    assert_eq!((topics[0].seq, topics[1].seq), (7, 9));
    assert_eq!(store.raft_meta("applied").unwrap().unwrap(), b"9");

    // A snapshot's state replaces everything, and round-trips.
    let encoded = encode_topics(&topics);
    let mut other = decode_topics(&encoded).unwrap();
    assert_eq!(other, topics);
    other.remove(0);
    store.replace_state(&other, &[("applied", b"12")]).unwrap();
    assert_eq!(store.load().unwrap(), other);
    assert_eq!(store.raft_meta("applied").unwrap().unwrap(), b"12");
    assert!(decode_topics(&encoded[..encoded.len() - 1]).is_err());
}

#[test]
fn the_raft_log_appends_truncates_and_purges() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let rows: Vec<(u64, Vec<u8>)> = (1..=5).map(|i| (i, vec![i as u8])).collect();
    store.append_log(&rows).unwrap();
    assert_eq!(store.read_log(2..4).unwrap(), rows[1..3]);
    assert_eq!(store.last_log().unwrap(), Some((5, vec![5])));
    store.truncate_log(4).unwrap();
    assert_eq!(store.last_log().unwrap(), Some((3, vec![3])));
    store.purge_log(2, &[("purged", b"2")]).unwrap();
    assert_eq!(store.read_log(..).unwrap(), rows[2..3]);
    assert_eq!(store.raft_meta("purged").unwrap().unwrap(), b"2");
    store.put_raft_meta(&[("purged", b"")]).unwrap();
    assert_eq!(store.raft_meta("purged").unwrap(), None, "empty removes");
}

#[test]
fn a_second_open_of_the_same_directory_fails() {
    let dir = tempfile::tempdir().unwrap();
    let _first = Store::open(dir.path()).unwrap();
    assert!(Store::open(dir.path()).is_err());
}
