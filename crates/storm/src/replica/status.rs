//! What a replica reports about itself: [`Replica::status`] for
//! `floe-storm admin replica`, and IceStorm's `nodes`/`query` for
//! `icestormadmin replica`.
//!
//! Raft roles map onto IceStorm's node states: a leader, and a follower
//! that knows its leader, are `normal`; a candidate is `election`; a
//! replica that knows no leader is `inactive`. IceStorm's coordinator is
//! the leader, its group name `<leader>:term-<term>`, and the leader's
//! `up` list gives every other replica with the last log index it is known
//! to hold (as `LogUpdate { generation: term, iteration: index }`).

use openraft::ServerState;

use super::convert::{opt_index, slice_id};
use super::Replica;
use crate::slice::floe_storm::{PeerStatus, ReplicaStatus};
use crate::slice::ice_storm_election::{GroupInfo, LogUpdate, NodeInfo, NodeState, QueryInfo};

fn role(state: ServerState) -> &'static str {
    match state {
        ServerState::Leader => "leader",
        ServerState::Follower => "follower",
        ServerState::Candidate => "candidate",
        ServerState::Learner => "learner",
        ServerState::Shutdown => "shutdown",
    }
}

impl Replica {
    /// This replica's role, term, log position and (on the leader) peers.
    pub fn status(&self) -> ReplicaStatus {
        let m = self.raft.metrics().borrow().clone();
        let peers = m
            .replication
            .iter()
            .flatten()
            .filter(|(n, _)| **n != self.id)
            .map(|(n, matched)| PeerStatus {
                id: slice_id(*n),
                matched: opt_index(matched.map(|l| l.index)),
            })
            .collect();
        ReplicaStatus {
            id: slice_id(self.id),
            role: role(m.state).to_owned(),
            term: slice_id(m.current_term),
            leader: m.current_leader.map_or(-1, slice_id),
            last_log_index: opt_index(m.last_log_index),
            applied: opt_index(m.last_applied.map(|l| l.index)),
            snapshot: opt_index(m.snapshot.map(|l| l.index)),
            purged: opt_index(m.purged.map(|l| l.index)),
            peers,
        }
    }

    /// Every replica's node object (IceStorm's `Node::nodes`).
    pub fn nodes(&self) -> Vec<NodeInfo> {
        self.nodes
            .iter()
            .map(|(id, p)| NodeInfo {
                id: int(*id),
                n: Some(p.clone()),
            })
            .collect()
    }

    /// This replica as IceStorm's `Node::query` reports it.
    pub fn query(&self) -> QueryInfo {
        let m = self.raft.metrics().borrow().clone();
        let state = match (m.state, m.current_leader) {
            (ServerState::Leader, _) | (ServerState::Follower, Some(_)) => {
                NodeState::NodeStateNormal
            }
            (ServerState::Candidate, _) => NodeState::NodeStateElection,
            _ => NodeState::NodeStateInactive,
        };
        let up = m
            .replication
            .iter()
            .flatten()
            .filter(|(n, _)| **n != self.id)
            .map(|(n, matched)| GroupInfo {
                id: int(*n),
                llu: LogUpdate {
                    generation: slice_id(m.current_term),
                    iteration: opt_index(matched.map(|l| l.index)),
                },
            })
            .collect();
        QueryInfo {
            id: int(self.id),
            coord: m.current_leader.map_or(-1, int),
            group: m
                .current_leader
                .map(|l| format!("{l}:term-{}", m.current_term))
                .unwrap_or_default(),
            replica: Some(self.topic_manager.clone()),
            state,
            up,
            max: i32::try_from(self.nodes.len()).unwrap_or(i32::MAX),
        }
    }
}

/// A node id as IceStorm's `int`.
fn int(id: u64) -> i32 {
    i32::try_from(id).unwrap_or(i32::MAX)
}
