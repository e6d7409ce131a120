//! A replicated broker's Raft log and state, beside the broker's tables in
//! the same database. The store keeps the replica layer's bytes as they
//! come ([`crate::replica`] encodes them); every write is durable when it
//! returns.
//!
//! | table | key | value |
//! |---|---|---|
//! | `raft_log` | log index | an encoded log entry |
//! | `raft` | `vote`, `committed`, `purged`, `applied`, `membership`, `snapshot_meta`, `snapshot` | encoded values |

use std::ops::RangeBounds;

use redb::{ReadableDatabase, ReadableTable, TableDefinition, WriteTransaction};

use super::records::{encode_link, encode_subscriber};
use super::{dberr, load_in, Store, StoreError, TopicRecord, LINKS, SUBSCRIBERS, TOPICS};

const RAFT_LOG: TableDefinition<u64, &[u8]> = TableDefinition::new("raft_log");
const RAFT: TableDefinition<&str, &[u8]> = TableDefinition::new("raft");

/// Creates the tables (at open).
pub(super) fn create_tables(txn: &WriteTransaction) -> Result<(), StoreError> {
    txn.open_table(RAFT_LOG).map_err(dberr)?;
    txn.open_table(RAFT).map_err(dberr)?;
    Ok(())
}

/// Writes `meta` entries in `txn` (an empty value removes the key).
pub(super) fn put_meta_in(
    txn: &WriteTransaction,
    meta: &[(&str, &[u8])],
) -> Result<(), StoreError> {
    let mut t = txn.open_table(RAFT).map_err(dberr)?;
    for (k, v) in meta {
        if v.is_empty() {
            t.remove(*k).map_err(dberr)?;
        } else {
            t.insert(*k, *v).map_err(dberr)?;
        }
    }
    Ok(())
}

impl Store {
    /// The replica value stored under `key`.
    ///
    /// # Errors
    ///
    /// Database failures.
    pub fn raft_meta(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = self.db.begin_read().map_err(dberr)?;
        let t = txn.open_table(RAFT).map_err(dberr)?;
        Ok(t.get(key).map_err(dberr)?.map(|v| v.value().to_vec()))
    }

    /// Stores replica values (an empty value removes the key), durably.
    ///
    /// # Errors
    ///
    /// Database failures.
    pub fn put_raft_meta(&self, meta: &[(&str, &[u8])]) -> Result<(), StoreError> {
        let txn = self.db.begin_write().map_err(dberr)?;
        put_meta_in(&txn, meta)?;
        txn.commit().map_err(dberr)
    }

    /// Appends (or overwrites) log entries, durably.
    ///
    /// # Errors
    ///
    /// Database failures.
    pub fn append_log(&self, entries: &[(u64, Vec<u8>)]) -> Result<(), StoreError> {
        let txn = self.db.begin_write().map_err(dberr)?;
        {
            let mut t = txn.open_table(RAFT_LOG).map_err(dberr)?;
            for (index, bytes) in entries {
                t.insert(*index, &bytes[..]).map_err(dberr)?;
            }
        }
        txn.commit().map_err(dberr)
    }

    /// The log entries in `range`, in order.
    ///
    /// # Errors
    ///
    /// Database failures.
    pub fn read_log(
        &self,
        range: impl RangeBounds<u64>,
    ) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        let txn = self.db.begin_read().map_err(dberr)?;
        let t = txn.open_table(RAFT_LOG).map_err(dberr)?;
        let mut out = Vec::new();
        for row in t.range(range).map_err(dberr)? {
            let (k, v) = row.map_err(dberr)?;
            out.push((k.value(), v.value().to_vec()));
        }
        Ok(out)
    }

    /// The last log entry.
    ///
    /// # Errors
    ///
    /// Database failures.
    pub fn last_log(&self) -> Result<Option<(u64, Vec<u8>)>, StoreError> {
        let txn = self.db.begin_read().map_err(dberr)?;
        let t = txn.open_table(RAFT_LOG).map_err(dberr)?;
        let last = t
            .last()
            .map_err(dberr)?
            .map(|(k, v)| (k.value(), v.value().to_vec()));
        Ok(last)
    }

    /// Removes the log entries from `index` on, durably.
    ///
    /// # Errors
    ///
    /// Database failures.
    pub fn truncate_log(&self, index: u64) -> Result<(), StoreError> {
        let txn = self.db.begin_write().map_err(dberr)?;
        {
            let mut t = txn.open_table(RAFT_LOG).map_err(dberr)?;
            t.retain_in(index.., |_, _| false).map_err(dberr)?;
        }
        txn.commit().map_err(dberr)
    }

    /// Removes the log entries up to `index` and stores `meta` (the purged
    /// log id) in the same transaction, durably.
    ///
    /// # Errors
    ///
    /// Database failures.
    pub fn purge_log(&self, index: u64, meta: &[(&str, &[u8])]) -> Result<(), StoreError> {
        let txn = self.db.begin_write().map_err(dberr)?;
        {
            let mut t = txn.open_table(RAFT_LOG).map_err(dberr)?;
            t.retain_in(..=index, |_, _| false).map_err(dberr)?;
        }
        put_meta_in(&txn, meta)?;
        txn.commit().map_err(dberr)
    }

    /// The topics and the replica value under `key`, read together (what a
    /// snapshot is built from).
    ///
    /// # Errors
    ///
    /// Database failures and undecodable records.
    pub fn state_with_meta(
        &self,
        key: &str,
    ) -> Result<(Vec<TopicRecord>, Option<Vec<u8>>), StoreError> {
        let txn = self.db.begin_read().map_err(dberr)?;
        let topics = load_in(&txn)?;
        let t = txn.open_table(RAFT).map_err(dberr)?;
        let value = t.get(key).map_err(dberr)?.map(|v| v.value().to_vec());
        Ok((topics, value))
    }

    /// Replaces every topic, subscriber and link by `topics` and stores
    /// `meta` in the same transaction, durably (a snapshot installed).
    ///
    /// # Errors
    ///
    /// Database failures (nothing was changed then).
    pub fn replace_state(
        &self,
        topics: &[TopicRecord],
        meta: &[(&str, &[u8])],
    ) -> Result<(), StoreError> {
        let txn = self.db.begin_write().map_err(dberr)?;
        {
            let mut tt = txn.open_table(TOPICS).map_err(dberr)?;
            let mut st = txn.open_table(SUBSCRIBERS).map_err(dberr)?;
            let mut lt = txn.open_table(LINKS).map_err(dberr)?;
            tt.retain(|_, _| false).map_err(dberr)?;
            st.retain(|_, _| false).map_err(dberr)?;
            lt.retain(|_, _| false).map_err(dberr)?;
            for t in topics {
                let name = t.name.as_str();
                tt.insert(name, t.seq).map_err(dberr)?;
                for s in &t.subscribers {
                    let id = &s.proxy.identity;
                    st.insert(
                        (name, id.category.as_str(), id.name.as_str()),
                        &encode_subscriber(s)[..],
                    )
                    .map_err(dberr)?;
                }
                for l in &t.links {
                    let id = &l.topic.identity;
                    lt.insert(
                        (name, id.category.as_str(), id.name.as_str()),
                        &encode_link(l)[..],
                    )
                    .map_err(dberr)?;
                }
            }
        }
        put_meta_in(&txn, meta)?;
        txn.commit().map_err(dberr)
    }
}
