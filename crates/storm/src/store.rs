//! [`Store`]: durable topics, subscribers and links in a redb database.
//!
//! Every mutation is its own write transaction committed with redb's default
//! durability (fsync before `commit` returns), so a reply sent after a
//! mutation returned describes state that survives a crash or `SIGKILL`.
//!
//! Tables (keys are strings so the file is inspectable; values are encoded
//! with floe-wire and start with a format version byte):
//!
//! | table | key | value |
//! |---|---|---|
//! | `topics` | topic name | creation sequence number |
//! | `subscribers` | (topic, category, name) of the subscriber identity | seq, QoS, proxy |
//! | `links` | (topic, category, name) of the linked topic's identity | seq, name, cost, topic proxy, link proxy |
//! | `meta` | `"seq"` | next sequence number |

use std::path::{Path, PathBuf};

use bytes::Bytes;
use floe::wire::{Decoder, Encoder, Identity};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};

use crate::types::{read_proxy, ProxyData, QosDict};

const TOPICS: TableDefinition<&str, u64> = TableDefinition::new("topics");
const SUBSCRIBERS: TableDefinition<(&str, &str, &str), &[u8]> = TableDefinition::new("subscribers");
const LINKS: TableDefinition<(&str, &str, &str), &[u8]> = TableDefinition::new("links");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

/// Version byte at the start of every encoded record.
const RECORD_VERSION: u8 = 1;

/// Errors of the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database failed (I/O, corruption, lock held by another process).
    #[error("database error: {0}")]
    Database(#[from] redb::Error),
    /// The data directory could not be created.
    #[error("cannot create data directory {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A stored record does not decode.
    #[error("corrupt record in table {table}: {reason}")]
    Corrupt {
        /// The table.
        table: &'static str,
        /// What was wrong.
        reason: String,
    },
}

fn dberr<E: Into<redb::Error>>(e: E) -> StoreError {
    StoreError::Database(e.into())
}

/// A persisted subscriber.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriberRecord {
    /// The subscriber proxy (its identity is the key).
    pub proxy: ProxyData,
    /// The QoS as given to `subscribeAndGetPublisher`.
    pub qos: QosDict,
    /// Creation order (restores `getSubscribers` order after a restart).
    pub seq: u64,
}

/// A persisted link from a topic to another topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkRecord {
    /// The linked topic's name.
    pub name: String,
    /// The link's cost.
    pub cost: i32,
    /// The linked `Topic` proxy (its identity is the key).
    pub topic: ProxyData,
    /// The linked topic's `TopicLink` object.
    pub link: ProxyData,
    /// Creation order.
    pub seq: u64,
}

/// A topic with everything that belongs to it, as loaded at start-up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopicRecord {
    /// The topic name.
    pub name: String,
    /// Subscribers, in creation order.
    pub subscribers: Vec<SubscriberRecord>,
    /// Links, in creation order.
    pub links: Vec<LinkRecord>,
}

/// The broker's database.
pub struct Store {
    db: Database,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

impl Store {
    /// Opens (creating if needed) the database `floe-storm.redb` in `dir`.
    ///
    /// # Errors
    ///
    /// If the directory cannot be created or the database cannot be opened
    /// (including when another process holds it).
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = dir.join("floe-storm.redb");
        let db = Database::create(&path).map_err(dberr)?;
        let txn = db.begin_write().map_err(dberr)?;
        {
            txn.open_table(TOPICS).map_err(dberr)?;
            txn.open_table(SUBSCRIBERS).map_err(dberr)?;
            txn.open_table(LINKS).map_err(dberr)?;
            txn.open_table(META).map_err(dberr)?;
        }
        txn.commit().map_err(dberr)?;
        Ok(Store { db, path })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every topic with its subscribers and links, topics sorted by name.
    ///
    /// # Errors
    ///
    /// Database failures and undecodable records.
    pub fn load(&self) -> Result<Vec<TopicRecord>, StoreError> {
        let txn = self.db.begin_read().map_err(dberr)?;
        let topics = txn.open_table(TOPICS).map_err(dberr)?;
        let mut out: Vec<TopicRecord> = Vec::new();
        for row in topics.iter().map_err(dberr)? {
            let (name, _) = row.map_err(dberr)?;
            out.push(TopicRecord {
                name: name.value().to_owned(),
                ..TopicRecord::default()
            });
        }
        let find = |out: &mut Vec<TopicRecord>, name: &str| -> Option<usize> {
            out.iter().position(|t| t.name == name)
        };
        let subs = txn.open_table(SUBSCRIBERS).map_err(dberr)?;
        for row in subs.iter().map_err(dberr)? {
            let (key, value) = row.map_err(dberr)?;
            let (topic, _, _) = key.value();
            let rec = decode_subscriber(value.value())?;
            if let Some(i) = find(&mut out, topic) {
                out[i].subscribers.push(rec);
            }
        }
        let links = txn.open_table(LINKS).map_err(dberr)?;
        for row in links.iter().map_err(dberr)? {
            let (key, value) = row.map_err(dberr)?;
            let (topic, _, _) = key.value();
            let rec = decode_link(value.value())?;
            if let Some(i) = find(&mut out, topic) {
                out[i].links.push(rec);
            }
        }
        for t in &mut out {
            t.subscribers.sort_by_key(|s| s.seq);
            t.links.sort_by_key(|l| l.seq);
        }
        Ok(out)
    }

    /// The next sequence number (persisted with the record that uses it).
    fn next_seq(txn: &redb::WriteTransaction) -> Result<u64, StoreError> {
        let mut meta = txn.open_table(META).map_err(dberr)?;
        let seq = meta.get("seq").map_err(dberr)?.map_or(1, |v| v.value());
        meta.insert("seq", seq + 1).map_err(dberr)?;
        Ok(seq)
    }

    /// Records a new topic.
    ///
    /// # Errors
    ///
    /// Database failures.
    pub fn create_topic(&self, name: &str) -> Result<(), StoreError> {
        let txn = self.db.begin_write().map_err(dberr)?;
        {
            let seq = Self::next_seq(&txn)?;
            txn.open_table(TOPICS)
                .map_err(dberr)?
                .insert(name, seq)
                .map_err(dberr)?;
        }
        txn.commit().map_err(dberr)
    }

    /// Removes a topic with its subscribers and links.
    ///
    /// # Errors
    ///
    /// Database failures.
    pub fn destroy_topic(&self, name: &str) -> Result<(), StoreError> {
        let txn = self.db.begin_write().map_err(dberr)?;
        {
            txn.open_table(TOPICS)
                .map_err(dberr)?
                .remove(name)
                .map_err(dberr)?;
            for def in [SUBSCRIBERS, LINKS] {
                let mut t = txn.open_table(def).map_err(dberr)?;
                t.extract_from_if((name, "", "").., |k, _| k.0 == name)
                    .map_err(dberr)?
                    .for_each(drop);
            }
        }
        txn.commit().map_err(dberr)
    }

    /// Adds (or replaces) a subscriber of `topic`; returns its sequence number.
    ///
    /// # Errors
    ///
    /// Database failures.
    pub fn put_subscriber(
        &self,
        topic: &str,
        proxy: &ProxyData,
        qos: &QosDict,
    ) -> Result<u64, StoreError> {
        let txn = self.db.begin_write().map_err(dberr)?;
        let seq;
        {
            seq = Self::next_seq(&txn)?;
            let id = &proxy.identity;
            let value = encode_subscriber(&SubscriberRecord {
                proxy: proxy.clone(),
                qos: qos.clone(),
                seq,
            });
            txn.open_table(SUBSCRIBERS)
                .map_err(dberr)?
                .insert((topic, id.category.as_str(), id.name.as_str()), &value[..])
                .map_err(dberr)?;
        }
        txn.commit().map_err(dberr)?;
        Ok(seq)
    }

    /// Removes a subscriber; returns whether it was there.
    ///
    /// # Errors
    ///
    /// Database failures.
    pub fn remove_subscriber(&self, topic: &str, id: &Identity) -> Result<bool, StoreError> {
        let txn = self.db.begin_write().map_err(dberr)?;
        let found = txn
            .open_table(SUBSCRIBERS)
            .map_err(dberr)?
            .remove((topic, id.category.as_str(), id.name.as_str()))
            .map_err(dberr)?
            .is_some();
        txn.commit().map_err(dberr)?;
        Ok(found)
    }

    /// Adds a link from `topic`; returns its sequence number.
    ///
    /// # Errors
    ///
    /// Database failures.
    pub fn put_link(
        &self,
        topic: &str,
        name: &str,
        cost: i32,
        linked: &ProxyData,
        link: &ProxyData,
    ) -> Result<u64, StoreError> {
        let txn = self.db.begin_write().map_err(dberr)?;
        let seq;
        {
            seq = Self::next_seq(&txn)?;
            let id = &linked.identity;
            let value = encode_link(&LinkRecord {
                name: name.to_owned(),
                cost,
                topic: linked.clone(),
                link: link.clone(),
                seq,
            });
            txn.open_table(LINKS)
                .map_err(dberr)?
                .insert((topic, id.category.as_str(), id.name.as_str()), &value[..])
                .map_err(dberr)?;
        }
        txn.commit().map_err(dberr)?;
        Ok(seq)
    }

    /// Removes the link from `topic` to the topic with identity `linked`.
    ///
    /// # Errors
    ///
    /// Database failures.
    pub fn remove_link(&self, topic: &str, linked: &Identity) -> Result<bool, StoreError> {
        let txn = self.db.begin_write().map_err(dberr)?;
        let found = txn
            .open_table(LINKS)
            .map_err(dberr)?
            .remove((topic, linked.category.as_str(), linked.name.as_str()))
            .map_err(dberr)?
            .is_some();
        txn.commit().map_err(dberr)?;
        Ok(found)
    }
}

fn corrupt(table: &'static str) -> impl Fn(floe::wire::Error) -> StoreError {
    move |e| StoreError::Corrupt {
        table,
        reason: e.to_string(),
    }
}

fn check_version(dec: &mut Decoder, table: &'static str) -> Result<(), StoreError> {
    let v = dec.read_u8().map_err(corrupt(table))?;
    if v != RECORD_VERSION {
        return Err(StoreError::Corrupt {
            table,
            reason: format!("unknown record version {v}"),
        });
    }
    Ok(())
}

fn encode_subscriber(r: &SubscriberRecord) -> Bytes {
    let mut enc = Encoder::new();
    enc.write_u8(RECORD_VERSION);
    enc.write_i64(r.seq as i64);
    enc.write(&r.qos);
    enc.write(&r.proxy);
    enc.finish()
}

fn decode_subscriber(bytes: &[u8]) -> Result<SubscriberRecord, StoreError> {
    const T: &str = "subscribers";
    let mut dec = Decoder::new(Bytes::copy_from_slice(bytes));
    check_version(&mut dec, T)?;
    let seq = dec.read_i64().map_err(corrupt(T))? as u64;
    let qos: QosDict = dec.read().map_err(corrupt(T))?;
    let proxy = read_proxy(&mut dec)
        .map_err(corrupt(T))?
        .ok_or(StoreError::Corrupt {
            table: T,
            reason: "null subscriber proxy".into(),
        })?;
    Ok(SubscriberRecord { proxy, qos, seq })
}

fn encode_link(r: &LinkRecord) -> Bytes {
    let mut enc = Encoder::new();
    enc.write_u8(RECORD_VERSION);
    enc.write_i64(r.seq as i64);
    enc.write_string(&r.name);
    enc.write_i32(r.cost);
    enc.write(&r.topic);
    enc.write(&r.link);
    enc.finish()
}

fn decode_link(bytes: &[u8]) -> Result<LinkRecord, StoreError> {
    const T: &str = "links";
    let mut dec = Decoder::new(Bytes::copy_from_slice(bytes));
    check_version(&mut dec, T)?;
    let seq = dec.read_i64().map_err(corrupt(T))? as u64;
    let name = dec.read_string().map_err(corrupt(T))?;
    let cost = dec.read_i32().map_err(corrupt(T))?;
    let null = || StoreError::Corrupt {
        table: T,
        reason: "null proxy".into(),
    };
    let topic = read_proxy(&mut dec).map_err(corrupt(T))?.ok_or_else(null)?;
    let link = read_proxy(&mut dec).map_err(corrupt(T))?.ok_or_else(null)?;
    Ok(LinkRecord {
        name,
        cost,
        topic,
        link,
        seq,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{direct_proxy, tcp_endpoint, ProxyMode, MODE_ONEWAY};

    fn sub(name: &str, mode: ProxyMode) -> ProxyData {
        let mut p = direct_proxy(
            Identity::from_name(name),
            vec![tcp_endpoint("127.0.0.1", 5000, 60000)],
        );
        p.mode = mode;
        p
    }

    #[test]
    fn everything_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let mut qos = QosDict::new();
        qos.insert("reliability".into(), "ordered".into());
        {
            let store = Store::open(dir.path()).unwrap();
            store.create_topic("news").unwrap();
            store.create_topic("news2").unwrap();
            store.create_topic("gone").unwrap();
            store
                .put_subscriber("news", &sub("z", ProxyMode::Twoway), &qos)
                .unwrap();
            store
                .put_subscriber("news", &sub("a", MODE_ONEWAY), &QosDict::new())
                .unwrap();
            store
                .put_subscriber("gone", &sub("x", ProxyMode::Twoway), &QosDict::new())
                .unwrap();
            let t2 = direct_proxy(Identity::new("topic.news2", "IceStorm"), vec![]);
            let l2 = direct_proxy(Identity::new("news2.link", "IceStorm"), vec![]);
            store.put_link("news", "news2", 5, &t2, &l2).unwrap();
            store.destroy_topic("gone").unwrap();
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

        assert!(store
            .remove_subscriber("news", &Identity::from_name("z"))
            .unwrap());
        assert!(!store
            .remove_subscriber("news", &Identity::from_name("z"))
            .unwrap());
        assert!(store
            .remove_link("news", &Identity::new("topic.news2", "IceStorm"))
            .unwrap());
        drop(store);
        let topics = Store::open(dir.path()).unwrap().load().unwrap();
        assert_eq!(topics[0].subscribers.len(), 1);
        assert!(topics[0].links.is_empty());
    }

    #[test]
    fn a_second_open_of_the_same_directory_fails() {
        let dir = tempfile::tempdir().unwrap();
        let _first = Store::open(dir.path()).unwrap();
        assert!(Store::open(dir.path()).is_err());
    }
}
