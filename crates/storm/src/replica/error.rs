//! Why an update could not be made on a replica ([`ReplicaError`]), and
//! what leading one can fail with ([`LeadError`]).

use std::time::Duration;

use super::NodeId;

/// Why an update could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaError {
    /// No leader is known or reachable: this replica cannot reach a
    /// majority.
    #[error(
        "floe-storm replica {id}: no leader reachable within {waited:?} (no majority of the \
         {count} replicas); the update was not applied"
    )]
    NoLeader {
        /// This replica.
        id: NodeId,
        /// The replicas.
        count: usize,
        /// How long it waited.
        waited: Duration,
    },
    /// This replica leads but cannot reach a majority.
    #[error(
        "floe-storm replica {id} leads but cannot reach a majority of the {count} replicas \
         ({detail}); the update was not applied"
    )]
    NoQuorum {
        /// This replica.
        id: NodeId,
        /// The replicas.
        count: usize,
        /// What failed.
        detail: String,
    },
    /// The update was sent but not confirmed in time: a majority may
    /// still take it.
    #[error(
        "floe-storm replica {id}: the update was not confirmed by a majority within {waited:?} \
         ({detail}); it may still take effect if the leader reaches a majority"
    )]
    Unconfirmed {
        /// This replica.
        id: NodeId,
        /// How long it waited.
        waited: Duration,
        /// What happened.
        detail: String,
    },
    /// The leader failed to handle the update.
    #[error("floe-storm replica {leader} (the leader) failed the update: {reason}")]
    Leader {
        /// The leader.
        leader: NodeId,
        /// Its reason.
        reason: String,
    },
    /// The Raft node stopped (shutdown, or a fatal store error).
    #[error("floe-storm replica {id} is stopped: {reason}")]
    Stopped {
        /// This replica.
        id: NodeId,
        /// Why.
        reason: String,
    },
    /// The replica could not start.
    #[error("floe-storm replica cannot start: {0}")]
    Start(String),
}

/// What [`Replica::lead`](super::Replica::lead) answers besides a verdict.
#[derive(Debug)]
pub enum LeadError {
    /// This replica does not lead; the leader it knows.
    NotLeader(Option<NodeId>),
    /// The update failed.
    Failed(ReplicaError),
}
