//! [`Store`]: durable topics, subscribers and links in a redb database.
//!
//! Every change is a [`Command`](crate::command::Command) applied in its own
//! write transaction committed with redb's default durability (fsync before
//! `commit` returns), so a reply sent after a change returned describes
//! state that survives a crash or `SIGKILL`. The verdict (`TopicExists`,
//! `AlreadySubscribed`, ...) is decided from the tables inside that
//! transaction (`apply.rs`), so replicas applying the same log reach the
//! same one.
//!
//! Tables (keys are strings so the file is inspectable; values are encoded
//! with floe-wire and start with a format version byte, `records.rs`):
//!
//! | table | key | value |
//! |---|---|---|
//! | `topics` | topic name | creation sequence number |
//! | `subscribers` | (topic, category, name) of the subscriber identity | seq, QoS, proxy |
//! | `links` | (topic, category, name) of the linked topic's identity | seq, name, cost, topic proxy, link proxy |
//! | `meta` | `"seq"` | next sequence number (standalone broker) |
//!
//! A replicated broker keeps its Raft log and state beside them
//! (`raft.rs`): `raft_log` (index → entry) and `raft` (vote, applied log
//! id, snapshot, ...), the replica layer's bytes; a replica's sequence
//! numbers are the log indexes of its commands.

use std::path::{Path, PathBuf};

mod apply;
mod raft;
mod records;

use redb::{Database, ReadTransaction, ReadableDatabase, ReadableTable, TableDefinition};

use crate::types::{ProxyData, QosDict};

use records::{decode_link, decode_subscriber};
pub use records::{decode_topics, encode_topics};

const TOPICS: TableDefinition<&str, u64> = TableDefinition::new("topics");
const SUBSCRIBERS: TableDefinition<(&str, &str, &str), &[u8]> = TableDefinition::new("subscribers");
const LINKS: TableDefinition<(&str, &str, &str), &[u8]> = TableDefinition::new("links");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

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
    /// Creation order.
    pub seq: u64,
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
            raft::create_tables(&txn)?;
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
        load_in(&txn)
    }
}

/// Runs `f` on `store` off the async threads (redb blocks while it syncs).
///
/// # Errors
///
/// `f`'s error, or a `Corrupt` error if the blocking task died.
pub async fn blocking<T, F>(store: &std::sync::Arc<Store>, f: F) -> Result<T, StoreError>
where
    T: Send + 'static,
    F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
{
    let store = store.clone();
    tokio::task::spawn_blocking(move || f(&store))
        .await
        .unwrap_or_else(|e| {
            Err(StoreError::Corrupt {
                table: "-",
                reason: format!("store task failed: {e}"),
            })
        })
}

/// Every topic as [`Store::load`] returns it, read in `txn`.
fn load_in(txn: &ReadTransaction) -> Result<Vec<TopicRecord>, StoreError> {
    let topics = txn.open_table(TOPICS).map_err(dberr)?;
    let mut out: Vec<TopicRecord> = Vec::new();
    for row in topics.iter().map_err(dberr)? {
        let (name, seq) = row.map_err(dberr)?;
        out.push(TopicRecord {
            name: name.value().to_owned(),
            seq: seq.value(),
            ..TopicRecord::default()
        });
    }
    // Topic names are sorted (the table's key order).
    let find = |out: &mut Vec<TopicRecord>, name: &str| -> Option<usize> {
        out.binary_search_by(|t| t.name.as_str().cmp(name)).ok()
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

#[cfg(test)]
mod tests;
