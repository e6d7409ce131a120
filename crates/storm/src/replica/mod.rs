//! Replication: a floe-storm replica ([`Replica`]) among N, with no single
//! point of failure, on openraft.
//!
//! - **State**: the broker's durable state (topics, subscribers with their
//!   QoS, links) changes only by [`Command`]s appended to a Raft log and
//!   applied by every replica once a majority holds them
//!   (`state_machine.rs`: the broker is the state machine). The log, the
//!   vote and snapshots live in the broker's redb store (`log_store.rs`).
//! - **Updates** (create, destroy, subscribe, unsubscribe, link, unlink,
//!   and the removal of a failed subscriber) reach any replica; a follower
//!   forwards them to the leader (`Replica::propose` of
//!   `slice/Replica.ice`). The leader answers once a majority has the
//!   entry and it is applied, after the replicas that were up to date
//!   applied it too (at most `floe.Storm.Replica.SyncTimeout`), and the
//!   replica that took the request answers its client once it applied the
//!   entry itself: a subscription is active on every live replica when
//!   `subscribeAndGetPublisher` returns.
//! - **No majority**: an update fails with `UnknownLocalException` and a
//!   message saying why ([`ReplicaError`]) after at most
//!   `floe.Storm.Replica.UpdateTimeout`; a leader first confirms with a
//!   round of heartbeats that a majority still follows it, and refuses
//!   without writing the update to its log when none does. Reads and publishing go on with what the
//!   replica knows.
//! - **Committed updates are never rolled back**: Raft elects only a
//!   replica whose log holds every committed entry, and a replica's vote
//!   and log are durable (fsync) before it answers.
//! - **Start-up**: the first start of each replica initializes the cluster
//!   with the configured `IceStorm.Nodes.<id>` (the same on every
//!   replica); any majority then elects a leader and serves. A replica
//!   that was down catches up by itself: from the log, or from a snapshot
//!   when the entries it lacks were compacted away.
//! - **Events** are not replicated: a replica delivers what publishers send
//!   it to every subscriber it knows (as IceStorm does).
//!
//! `network.rs` carries Raft over floe's RPC; [`ReplicaServant`] serves
//! the peers, and `icestormadmin replica` (`nodes`, `query`).

mod bootstrap;
pub(crate) mod config;
mod convert;
mod error;
mod log_store;
mod network;
mod servant;
mod state_machine;
mod status;

use std::collections::BTreeMap;
use std::io::Cursor;
use std::sync::Arc;
use std::time::{Duration, Instant};

use floe::runtime::{Communicator, Error as RtError};
use openraft::error::{CheckIsLeaderError, ClientWriteError, RaftError};
use openraft::{BasicNode, Raft, ServerState, SnapshotPolicy};

pub use config::ReplicaConfig;
pub use convert::ConvertError;
pub use error::{LeadError, ReplicaError};
pub use servant::ReplicaServant;
pub use state_machine::RunningTopics;

use crate::command::{Command, Outcome, Rejection};
use crate::slice::floe_storm::{NotLeader, RaftFailure, ReplicaPrx};
use crate::store::Store;
use crate::types::ProxyData;

/// A replica's id (`IceStorm.NodeId`).
pub type NodeId = u64;

openraft::declare_raft_types!(
    /// floe-storm's Raft types: broker [`Command`]s in, [`Outcome`]s out,
    /// nodes addressed by their `Replica` proxy.
    pub TypeConfig:
        D = Command,
        R = Outcome,
        NodeId = NodeId,
        Node = BasicNode,
        SnapshotData = Cursor<Vec<u8>>,
);

/// The largest snapshot chunk, well below the default `Ice.MessageSizeMax`.
const SNAPSHOT_CHUNK: u64 = 256 * 1024;

/// How long a replica waits before asking again when the leader moved.
const RETRY_PAUSE: Duration = Duration::from_millis(50);

/// One replica: its Raft node, its peers and settings.
pub struct Replica {
    id: NodeId,
    raft: Raft<TypeConfig>,
    config: ReplicaConfig,
    /// Every other replica's `Replica` object.
    peers: BTreeMap<NodeId, ReplicaPrx>,
    /// Every replica's node proxy (this one's included), for `nodes`.
    nodes: BTreeMap<NodeId, ProxyData>,
    /// This replica's own topic manager (IceStorm's `QueryInfo::replica`).
    topic_manager: ProxyData,
}

impl std::fmt::Debug for Replica {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replica").field("id", &self.id).finish()
    }
}

impl Replica {
    /// Starts the Raft node of a broker: `store` holds the log and the
    /// state, `running` are the broker's running topics, which follow
    /// what the log commits, and `topic_manager` is the broker's own topic
    /// manager (`I/TopicManager` at its own endpoints; its category, the
    /// instance name, names the cluster). Reaches the peers with
    /// `communicator`; initializes the cluster on the first start.
    ///
    /// # Errors
    ///
    /// A node proxy that does not parse, a store that holds a standalone
    /// broker's topics, or a store or Raft failure.
    pub async fn start<R: RunningTopics>(
        config: ReplicaConfig,
        communicator: &Communicator,
        store: Arc<Store>,
        topic_manager: ProxyData,
        running: &Arc<R>,
    ) -> Result<Arc<Replica>, ReplicaError> {
        let start = |e: &dyn std::fmt::Display| ReplicaError::Start(e.to_string());
        let mut nodes = BTreeMap::new();
        let mut peers = BTreeMap::new();
        for (id, text) in &config.nodes {
            let p = communicator
                .string_to_proxy(text)
                .map_err(|e| start(&format!("IceStorm.Nodes.{id}=`{text}': {e}")))?;
            nodes.insert(*id, p.to_data());
            if *id != config.node_id {
                peers.insert(*id, ReplicaPrx::unchecked_cast(p));
            }
        }
        let raft_config = openraft::Config {
            cluster_name: topic_manager.identity.category.to_string(),
            heartbeat_interval: millis(config.heartbeat),
            election_timeout_min: millis(config.election_timeout),
            election_timeout_max: millis(config.election_timeout) * 3 / 2,
            install_snapshot_timeout: millis(config.election_timeout).max(2000),
            snapshot_policy: SnapshotPolicy::LogsSinceLast(config.snapshot_logs),
            max_in_snapshot_log_to_keep: config.keep_logs,
            snapshot_max_chunk_size: SNAPSHOT_CHUNK,
            ..Default::default()
        }
        .validate()
        .map_err(|e| start(&e))?;
        // A replica's topics come from its log: a store with topics and no
        // applied log position is a standalone broker's.
        let standalone = !running.is_empty()
            && state_machine::applied_position(&store)
                .await
                .map_err(|e| start(&e))?
                .is_none();
        if standalone {
            return Err(start(&format!(
                "{} holds a standalone broker's topics; a replica starts with an empty data \
                 directory and gets them from its peers",
                store.path().display()
            )));
        }
        let log = log_store::LogStore::new(store.clone());
        let sm = state_machine::StateMachine::open(store, running)
            .await
            .map_err(|e| start(&e))?;
        let raft = Raft::new(
            config.node_id,
            Arc::new(raft_config),
            network::Network::new(communicator.clone()),
            log,
            sm,
        )
        .await
        .map_err(|e| start(&e))?;
        if !raft.is_initialized().await.map_err(|e| start(&e))? {
            let members: BTreeMap<NodeId, BasicNode> = config
                .nodes
                .iter()
                .map(|(id, text)| (*id, BasicNode::new(text)))
                .collect();
            tokio::spawn(bootstrap::initialize(
                raft.clone(),
                peers.values().cloned().collect(),
                members,
                config.election_timeout,
            ));
        }
        tokio::spawn(bootstrap::log_changes(raft.clone()));
        tracing::info!(
            node = config.node_id,
            replicas = config.nodes.len(),
            "replica started"
        );
        Ok(Arc::new(Replica {
            id: config.node_id,
            raft,
            config,
            peers,
            nodes,
            topic_manager,
        }))
    }

    /// This replica's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The Raft node.
    pub fn raft(&self) -> &Raft<TypeConfig> {
        &self.raft
    }

    /// This replica's node proxy (`IceStorm.Nodes.<own id>`).
    pub fn node_proxy(&self) -> Option<ProxyData> {
        self.nodes.get(&self.id).cloned()
    }

    /// Makes `cmd` durable on a majority and applies it here: leads it, or
    /// forwards it to the leader; answers once this replica applied it,
    /// with the command's [`Outcome`] (its sequence number, or its
    /// rejection).
    ///
    /// # Errors
    ///
    /// Why no majority took it.
    pub async fn propose(&self, cmd: Command) -> Result<Outcome, ReplicaError> {
        let began = Instant::now();
        let deadline = began + self.config.update_timeout;
        let encoded = cmd.encode();
        loop {
            if Instant::now() >= deadline {
                return Err(self.no_leader(began));
            }
            let leader = self.wait_for_leader(deadline, began).await?;
            let (index, outcome) = if leader == self.id {
                match self.lead(cmd.clone()).await {
                    Ok(done) => done,
                    Err(LeadError::NotLeader(_)) => {
                        self.pause(deadline).await;
                        continue;
                    }
                    Err(LeadError::Failed(e)) => return Err(e),
                }
            } else {
                match self.forward(leader, &encoded, deadline, began).await? {
                    Some(done) => done,
                    None => {
                        self.pause(deadline).await;
                        continue;
                    }
                }
            };
            if outcome.is_ok() {
                self.await_applied(
                    index,
                    self.config.sync_timeout.max(self.config.update_timeout),
                )
                .await;
            }
            return Ok(outcome);
        }
    }

    async fn pause(&self, deadline: Instant) {
        let now = Instant::now();
        if now < deadline {
            tokio::time::sleep(RETRY_PAUSE.min(deadline - now)).await;
        }
    }

    /// The leader, once one is known (until `deadline`).
    async fn wait_for_leader(
        &self,
        deadline: Instant,
        began: Instant,
    ) -> Result<NodeId, ReplicaError> {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let known = self
            .raft
            .wait(Some(remaining))
            .metrics(|m| m.current_leader.is_some(), "a leader")
            .await;
        match known.ok().and_then(|m| m.current_leader) {
            Some(l) => Ok(l),
            None if self.raft.metrics().borrow().state == ServerState::Shutdown => {
                Err(ReplicaError::Stopped {
                    id: self.id,
                    reason: "shut down".into(),
                })
            }
            None => Err(self.no_leader(began)),
        }
    }

    fn no_leader(&self, began: Instant) -> ReplicaError {
        ReplicaError::NoLeader {
            id: self.id,
            count: self.config.nodes.len(),
            waited: began.elapsed(),
        }
    }

    /// Sends `cmd` to `leader`: its index and verdict, `None` to try again
    /// (the leader moved, or could not be reached: nothing was sent).
    async fn forward(
        &self,
        leader: NodeId,
        cmd: &bytes::Bytes,
        deadline: Instant,
        began: Instant,
    ) -> Result<Option<(u64, Outcome)>, ReplicaError> {
        let Some(peer) = self.peers.get(&leader) else {
            return Ok(None);
        };
        // A leader that does not answer within an election timeout (dead,
        // stopped, cut off) is not sent the update, which would then be in
        // doubt: this replica waits for another leader instead.
        let probe = ReplicaPrx::unchecked_cast(
            peer.proxy()
                .ice_invocation_timeout(Some(self.config.election_timeout)),
        );
        if probe.status().await.is_err() {
            return Ok(None);
        }
        let limit = deadline.saturating_duration_since(Instant::now()) + self.config.sync_timeout;
        let peer = ReplicaPrx::unchecked_cast(peer.proxy().ice_invocation_timeout(Some(limit)));
        match peer.propose(cmd.clone()).await {
            Ok(index) => {
                let index = u64::try_from(index).unwrap_or(0);
                Ok(Some((index, Ok(index))))
            }
            Err(RtError::UserException(e)) => {
                if let Some(r) = Rejection::from_user_error(&e) {
                    Ok(Some((0, Err(r))))
                } else if e.downcast_ref::<NotLeader>().is_some() {
                    Ok(None)
                } else {
                    let reason = e
                        .downcast_ref::<RaftFailure>()
                        .map_or_else(|| e.ice_id().to_owned(), |f| f.reason.clone());
                    Err(ReplicaError::Leader { leader, reason })
                }
            }
            // Not sent: ask again (until the deadline), the leader may be
            // moving.
            Err(
                RtError::ConnectionRefused(_)
                | RtError::ConnectFailed(_)
                | RtError::ConnectTimeout
                | RtError::NotRegistered { .. },
            ) => Ok(None),
            Err(e) => Err(ReplicaError::Unconfirmed {
                id: self.id,
                waited: began.elapsed(),
                detail: format!("forwarded to replica {leader}: {e}"),
            }),
        }
    }

    /// Appends `cmd` as the leader and waits until a majority holds it and
    /// it is applied here, then until the replicas that were up to date
    /// applied it (at most `floe.Storm.Replica.SyncTimeout`). Its index
    /// and verdict.
    ///
    /// # Errors
    ///
    /// [`LeadError::NotLeader`] when this replica does not lead;
    /// `NoQuorum` when a majority does not confirm its leadership within
    /// an election timeout (nothing is appended then); `Unconfirmed` when
    /// the entry was appended but not committed within `UpdateTimeout`.
    pub async fn lead(&self, cmd: Command) -> Result<(u64, Outcome), LeadError> {
        let m = self.raft.metrics().borrow().clone();
        if m.state != ServerState::Leader {
            return Err(LeadError::NotLeader(m.current_leader));
        }
        // A leader cut off from the majority refuses before appending
        // anything: it confirms its leadership with a round of heartbeats.
        let asked = Instant::now();
        let confirmed = tokio::time::timeout(
            self.config.election_timeout,
            self.raft.ensure_linearizable(),
        )
        .await;
        let confirm_us = asked.elapsed().as_micros();
        match confirmed {
            Ok(Ok(_)) => {}
            Ok(Err(RaftError::APIError(CheckIsLeaderError::ForwardToLeader(f)))) => {
                return Err(LeadError::NotLeader(f.leader_id))
            }
            Ok(Err(e)) => {
                return Err(LeadError::Failed(ReplicaError::NoQuorum {
                    id: self.id,
                    count: self.config.nodes.len(),
                    detail: e.to_string(),
                }))
            }
            Err(_) => {
                return Err(LeadError::Failed(ReplicaError::NoQuorum {
                    id: self.id,
                    count: self.config.nodes.len(),
                    detail: format!("no answer within {:?}", self.config.election_timeout),
                }))
            }
        }
        let before = m.last_log_index;
        let began = Instant::now();
        let written =
            tokio::time::timeout(self.config.update_timeout, self.raft.client_write(cmd)).await;
        match written {
            Err(_) => Err(LeadError::Failed(ReplicaError::Unconfirmed {
                id: self.id,
                waited: began.elapsed(),
                detail: "appended to the leader's log, no majority answered".into(),
            })),
            Ok(Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f)))) => {
                Err(LeadError::NotLeader(f.leader_id))
            }
            Ok(Err(e)) => Err(LeadError::Failed(ReplicaError::Stopped {
                id: self.id,
                reason: e.to_string(),
            })),
            Ok(Ok(r)) => {
                let write_us = began.elapsed().as_micros();
                self.sync_followers(r.log_id.index, before).await;
                tracing::debug!(
                    index = r.log_id.index,
                    confirm_us,
                    write_us,
                    sync_us = began.elapsed().as_micros() - write_us,
                    "replica: update led"
                );
                Ok((r.log_id.index, r.data))
            }
        }
    }

    /// Waits (at most `SyncTimeout`) until every follower that held the
    /// whole log before `index` was appended has applied `index`.
    async fn sync_followers(&self, index: u64, before: Option<u64>) {
        let Some(before) = before else { return };
        let replication = self.raft.metrics().borrow().replication.clone();
        let Some(replication) = replication else {
            return;
        };
        let timeout = self.config.sync_timeout;
        let timeout_ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        let mut calls = tokio::task::JoinSet::new();
        for (node, matched) in replication {
            let up_to_date = matched.is_some_and(|l| l.index >= before);
            let Some(peer) = self.peers.get(&node).filter(|_| up_to_date) else {
                continue;
            };
            let peer = ReplicaPrx::unchecked_cast(
                peer.proxy()
                    .ice_invocation_timeout(Some(timeout + Duration::from_millis(250))),
            );
            let index = i64::try_from(index).unwrap_or(i64::MAX);
            calls.spawn(async move { peer.await_applied(index, timeout_ms).await });
        }
        while calls.join_next().await.is_some() {}
    }

    /// Waits until this replica applied `index` (at most `timeout`); the
    /// last applied index.
    pub async fn await_applied(&self, index: u64, timeout: Duration) -> Option<u64> {
        let m = self
            .raft
            .wait(Some(timeout))
            .applied_index_at_least(Some(index), "applied")
            .await;
        match m {
            Ok(m) => m.last_applied.map(|l| l.index),
            Err(_) => self.raft.metrics().borrow().last_applied.map(|l| l.index),
        }
    }

    /// Stops the Raft node.
    pub async fn shutdown(&self) {
        if let Err(e) = self.raft.shutdown().await {
            tracing::warn!(error = %e, "replica: Raft did not stop cleanly");
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
