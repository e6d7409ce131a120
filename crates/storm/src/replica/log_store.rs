//! [`LogStore`]: openraft's log storage (`RaftLogStorage`) on the broker's
//! redb store: entries, the vote and the committed and purged log ids, in
//! the Slice form of `convert.rs`. Every write is durable (fsync) before
//! it is reported done, so a vote or an entry a replica acknowledged
//! survives its crash.

use std::fmt::Debug;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{AnyError, Entry, LogId, RaftLogReader, StorageError, StorageIOError, Vote};

use super::convert::{self, from_bytes, to_bytes};
use super::{NodeId, TypeConfig};
use crate::slice::floe_storm as s;
use crate::store::{blocking, Store};

/// Store keys of the log's state.
const VOTE: &str = "vote";
const COMMITTED: &str = "committed";
const PURGED: &str = "purged";

/// The Raft log of one replica.
#[derive(Clone)]
pub struct LogStore {
    store: Arc<Store>,
}

impl LogStore {
    /// The log kept in `store`.
    pub fn new(store: Arc<Store>) -> LogStore {
        LogStore { store }
    }
}

fn read_err(e: impl std::error::Error + 'static) -> StorageError<NodeId> {
    StorageIOError::read_logs(AnyError::new(&e)).into()
}

fn write_err(e: impl std::error::Error + 'static) -> StorageError<NodeId> {
    StorageIOError::write_logs(AnyError::new(&e)).into()
}

/// A stored log id (`committed`, `purged`).
async fn read_log_id(
    store: &Arc<Store>,
    key: &'static str,
) -> Result<Option<LogId<NodeId>>, StorageError<NodeId>> {
    let bytes = blocking(store, move |s| s.raft_meta(key))
        .await
        .map_err(read_err)?;
    bytes
        .map(|b| from_bytes::<s::LogId>(&b).and_then(|l| convert::from_log_id(&l)))
        .transpose()
        .map_err(read_err)
}

async fn write_meta(
    store: &Arc<Store>,
    key: &'static str,
    value: Vec<u8>,
) -> Result<(), StorageError<NodeId>> {
    blocking(store, move |s| s.put_raft_meta(&[(key, &value)]))
        .await
        .map_err(write_err)
}

fn decode_entry(bytes: &[u8]) -> Result<Entry<TypeConfig>, convert::ConvertError> {
    convert::from_entry(&from_bytes::<s::Entry>(bytes)?)
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + Send>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry<TypeConfig>>, StorageError<NodeId>> {
        let bounds: (Bound<u64>, Bound<u64>) =
            (range.start_bound().cloned(), range.end_bound().cloned());
        let rows = blocking(&self.store, move |s| s.read_log(bounds))
            .await
            .map_err(read_err)?;
        rows.iter()
            .map(|(_, b)| decode_entry(b))
            .collect::<Result<_, _>>()
            .map_err(read_err)
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError<NodeId>> {
        let purged = read_log_id(&self.store, PURGED).await?;
        let last = blocking(&self.store, |s| s.last_log())
            .await
            .map_err(read_err)?;
        let last = match last {
            Some((_, b)) => Some(decode_entry(&b).map_err(read_err)?.log_id),
            None => purged,
        };
        Ok(LogState {
            last_purged_log_id: purged,
            last_log_id: last,
        })
    }

    async fn get_log_reader(&mut self) -> LogStore {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote<NodeId>) -> Result<(), StorageError<NodeId>> {
        write_meta(&self.store, VOTE, to_bytes(&convert::vote(vote))).await
    }

    async fn read_vote(&mut self) -> Result<Option<Vote<NodeId>>, StorageError<NodeId>> {
        let bytes = blocking(&self.store, |s| s.raft_meta(VOTE))
            .await
            .map_err(read_err)?;
        bytes
            .map(|b| from_bytes::<s::Vote>(&b).and_then(|v| convert::from_vote(&v)))
            .transpose()
            .map_err(read_err)
    }

    async fn save_committed(
        &mut self,
        committed: Option<LogId<NodeId>>,
    ) -> Result<(), StorageError<NodeId>> {
        let value = committed
            .map(|c| to_bytes(&convert::log_id(&c)))
            .unwrap_or_default();
        write_meta(&self.store, COMMITTED, value).await
    }

    async fn read_committed(&mut self) -> Result<Option<LogId<NodeId>>, StorageError<NodeId>> {
        read_log_id(&self.store, COMMITTED).await
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError<NodeId>>
    where
        I: IntoIterator<Item = Entry<TypeConfig>> + Send,
        I::IntoIter: Send,
    {
        let rows: Vec<(u64, Vec<u8>)> = entries
            .into_iter()
            .map(|e| (e.log_id.index, to_bytes(&convert::entry(&e))))
            .collect();
        // Written and synced before returning: readable at once, and
        // durable when the callback says so. Timed for `RUST_LOG=floe_storm::replica=debug`: the whole append
        // and the database commit inside it (the rest is the hand-over to
        // the blocking pool and back).
        let began = std::time::Instant::now();
        let appended = blocking(&self.store, move |s| {
            let commit = std::time::Instant::now();
            s.append_log(&rows).map(|()| commit.elapsed())
        })
        .await;
        match appended {
            Ok(commit) => {
                tracing::debug!(
                    append_us = began.elapsed().as_micros(),
                    commit_us = commit.as_micros(),
                    "replica: log appended"
                );
                callback.log_io_completed(Ok(()));
                Ok(())
            }
            Err(e) => {
                callback.log_io_completed(Err(std::io::Error::other(e.to_string())));
                Err(write_err(e))
            }
        }
    }

    async fn truncate(&mut self, log_id: LogId<NodeId>) -> Result<(), StorageError<NodeId>> {
        blocking(&self.store, move |s| s.truncate_log(log_id.index))
            .await
            .map_err(write_err)
    }

    async fn purge(&mut self, log_id: LogId<NodeId>) -> Result<(), StorageError<NodeId>> {
        let purged = to_bytes(&convert::log_id(&log_id));
        blocking(&self.store, move |s| {
            s.purge_log(log_id.index, &[(PURGED, &purged)])
        })
        .await
        .map_err(write_err)
    }
}
