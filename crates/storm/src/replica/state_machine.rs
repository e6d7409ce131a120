//! [`StateMachine`]: openraft's state machine (`RaftStateMachine`) is the
//! broker itself. A committed command is applied to the store's tables
//! (with the applied log id, in one transaction that the next log append
//! makes durable: the log already holds the command) and then to the
//! running topics ([`RunningTopics::apply`]); a snapshot is the store's
//! topics, subscribers and links ([`crate::store::encode_topics`]), and
//! installing one replaces them and reconciles the running topics
//! ([`RunningTopics::reload`]), keeping the delivery of subscribers that
//! stay.

use std::io::Cursor;
use std::sync::{Arc, Weak};

use openraft::storage::{RaftStateMachine, Snapshot};
use openraft::{
    AnyError, BasicNode, Entry, EntryPayload, LogId, RaftSnapshotBuilder, SnapshotMeta,
    StorageError, StorageIOError, StoredMembership,
};

use super::convert::{self, from_bytes, to_bytes};
use super::{NodeId, TypeConfig};
use crate::command::{Command, Outcome};
use crate::slice::floe_storm as s;
use crate::store::{blocking, decode_topics, encode_topics, Store, TopicRecord};

/// Store keys: what the state machine holds (a snapshot meta without id),
/// and the current snapshot (its meta and data).
const APPLIED: &str = "applied";
const SNAPSHOT_META: &str = "snapshot_meta";
const SNAPSHOT: &str = "snapshot";

type Meta = SnapshotMeta<NodeId, BasicNode>;

fn sm_err(e: impl std::error::Error + 'static) -> StorageError<NodeId> {
    StorageIOError::write_state_machine(AnyError::new(&e)).into()
}

fn snapshot_err(e: impl std::error::Error + 'static) -> StorageError<NodeId> {
    StorageIOError::read_snapshot(None, AnyError::new(&e)).into()
}

/// The running topics of a replica, as its state machine drives them:
/// they follow every command the store applied and every snapshot it
/// installed (the broker implements it, `state.rs`).
pub trait RunningTopics: Send + Sync + 'static {
    /// Whether no topic runs (a replica starts with none: its topics come
    /// from its log).
    fn is_empty(&self) -> bool;

    /// Reflects `cmd`, which the store applied with `outcome`, in the
    /// running topics (nothing for a rejected command).
    fn apply(self: &Arc<Self>, cmd: &Command, outcome: &Outcome);

    /// Makes the running topics match `records`, a snapshot's, keeping
    /// the delivery of the subscribers and links that stay.
    fn reload(self: &Arc<Self>, records: Vec<TopicRecord>);
}

/// The broker as a Raft state machine: its store, and its running topics.
pub struct StateMachine<R> {
    store: Arc<Store>,
    /// The running topics (weak: the broker owns the Raft node that owns
    /// this).
    running: Weak<R>,
    /// What the store holds: last applied log id and membership.
    applied: Meta,
}

/// What `store` holds as a replica's state machine: the applied log id and
/// membership (`None` for a store no replica has applied anything to).
///
/// # Errors
///
/// If the store cannot be read or the value does not decode.
pub async fn applied_position(store: &Arc<Store>) -> Result<Option<Meta>, StorageError<NodeId>> {
    let bytes = blocking(store, |s| s.raft_meta(APPLIED))
        .await
        .map_err(sm_err)?;
    let Some(b) = bytes else {
        return Ok(None);
    };
    let meta = from_bytes::<s::SnapshotMeta>(&b)
        .and_then(|m| convert::from_snapshot_meta(&m))
        .map_err(sm_err)?;
    Ok(Some(meta))
}

impl<R: RunningTopics> StateMachine<R> {
    /// The state machine of `store` and `running`, positioned where the
    /// store is.
    ///
    /// # Errors
    ///
    /// If the store cannot be read.
    pub async fn open(
        store: Arc<Store>,
        running: &Arc<R>,
    ) -> Result<StateMachine<R>, StorageError<NodeId>> {
        let applied = applied_position(&store).await?.unwrap_or_default();
        Ok(StateMachine {
            store,
            running: Arc::downgrade(running),
            applied,
        })
    }
}

impl<R: RunningTopics> RaftStateMachine<TypeConfig> for StateMachine<R> {
    type SnapshotBuilder = SnapshotBuilder;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<LogId<NodeId>>, StoredMembership<NodeId, BasicNode>), StorageError<NodeId>>
    {
        Ok((
            self.applied.last_log_id,
            self.applied.last_membership.clone(),
        ))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<Outcome>, StorageError<NodeId>>
    where
        I: IntoIterator<Item = Entry<TypeConfig>> + Send,
        I::IntoIter: Send,
    {
        let entries: Vec<Entry<TypeConfig>> = entries.into_iter().collect();
        let Some(last) = entries.last().map(|e| e.log_id) else {
            return Ok(Vec::new());
        };
        let mut applied = self.applied.clone();
        applied.last_log_id = Some(last);
        let mut commands: Vec<(u64, Command)> = Vec::new();
        for e in &entries {
            match &e.payload {
                EntryPayload::Normal(c) => commands.push((e.log_id.index, c.clone())),
                EntryPayload::Membership(m) => {
                    applied.last_membership = StoredMembership::new(Some(e.log_id), m.clone());
                }
                EntryPayload::Blank => {}
            }
        }
        let meta = to_bytes(&convert::snapshot_meta(&applied));
        let batch = commands.clone();
        let began = std::time::Instant::now();
        let outcomes = blocking(&self.store, move |s| {
            let refs: Vec<(u64, &Command)> = batch.iter().map(|(i, c)| (*i, c)).collect();
            s.apply_logged(&refs, &[(APPLIED, &meta)])
        })
        .await
        .map_err(sm_err)?;
        tracing::debug!(apply_us = began.elapsed().as_micros(), "replica: applied");
        self.applied = applied;
        if let Some(running) = self.running.upgrade() {
            for ((_, cmd), outcome) in commands.iter().zip(&outcomes) {
                running.apply(cmd, outcome);
            }
        }
        let mut outcomes = outcomes.into_iter();
        Ok(entries
            .iter()
            .map(|e| match e.payload {
                EntryPayload::Normal(_) => outcomes.next().unwrap_or(Ok(e.log_id.index)),
                _ => Ok(e.log_id.index),
            })
            .collect())
    }

    async fn get_snapshot_builder(&mut self) -> SnapshotBuilder {
        SnapshotBuilder {
            store: self.store.clone(),
        }
    }

    async fn begin_receiving_snapshot(
        &mut self,
    ) -> Result<Box<Cursor<Vec<u8>>>, StorageError<NodeId>> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    async fn install_snapshot(
        &mut self,
        meta: &Meta,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> Result<(), StorageError<NodeId>> {
        let data = snapshot.into_inner();
        let topics = decode_topics(&data).map_err(snapshot_err)?;
        let mut applied = meta.clone();
        applied.snapshot_id = String::new();
        let applied_bytes = to_bytes(&convert::snapshot_meta(&applied));
        let meta_bytes = to_bytes(&convert::snapshot_meta(meta));
        let records = topics.clone();
        blocking(&self.store, move |s| {
            s.replace_state(
                &records,
                &[
                    (APPLIED, &applied_bytes),
                    (SNAPSHOT_META, &meta_bytes),
                    (SNAPSHOT, &data),
                ],
            )
        })
        .await
        .map_err(sm_err)?;
        self.applied = applied;
        if let Some(running) = self.running.upgrade() {
            running.reload(topics);
        }
        tracing::info!(snapshot = %meta, "replica: snapshot installed");
        Ok(())
    }

    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<Snapshot<TypeConfig>>, StorageError<NodeId>> {
        let (meta, data) = blocking(&self.store, |s| {
            Ok((s.raft_meta(SNAPSHOT_META)?, s.raft_meta(SNAPSHOT)?))
        })
        .await
        .map_err(snapshot_err)?;
        let (Some(meta), Some(data)) = (meta, data) else {
            return Ok(None);
        };
        let meta = from_bytes::<s::SnapshotMeta>(&meta)
            .and_then(|m| convert::from_snapshot_meta(&m))
            .map_err(snapshot_err)?;
        Ok(Some(Snapshot {
            meta,
            snapshot: Box::new(Cursor::new(data)),
        }))
    }
}

/// Builds a snapshot from the store.
pub struct SnapshotBuilder {
    store: Arc<Store>,
}

impl RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder {
    async fn build_snapshot(&mut self) -> Result<Snapshot<TypeConfig>, StorageError<NodeId>> {
        // The topics and the applied position, read in one transaction.
        let (topics, applied) = blocking(&self.store, |s| s.state_with_meta(APPLIED))
            .await
            .map_err(snapshot_err)?;
        let mut meta = match applied {
            Some(b) => from_bytes::<s::SnapshotMeta>(&b)
                .and_then(|m| convert::from_snapshot_meta(&m))
                .map_err(snapshot_err)?,
            None => Meta::default(),
        };
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        meta.snapshot_id = match meta.last_log_id {
            Some(l) => format!(
                "{}-{}-{}-{stamp:x}",
                l.leader_id.term, l.leader_id.node_id, l.index
            ),
            None => format!("empty-{stamp:x}"),
        };
        let data = encode_topics(&topics).to_vec();
        let meta_bytes = to_bytes(&convert::snapshot_meta(&meta));
        let stored = data.clone();
        blocking(&self.store, move |s| {
            s.put_raft_meta(&[(SNAPSHOT_META, &meta_bytes), (SNAPSHOT, &stored)])
        })
        .await
        .map_err(sm_err)?;
        tracing::debug!(snapshot = %meta, bytes = data.len(), "replica: snapshot built");
        Ok(Snapshot {
            meta,
            snapshot: Box::new(Cursor::new(data)),
        })
    }
}
