//! [`ReplicaServant`]: a replica's node object (`<instance>/node<id>` on
//! the `IceStorm.Node` adapter), implementing the generated `Replica`
//! servant trait (`slice/Replica.ice`): the Raft messages of the peers,
//! updates forwarded to the leader, status, and IceStorm's `nodes`/`query`.
//!
//! Peers are trusted no more than any client: a message that does not
//! convert is answered with `RaftFailure` and changes nothing, and a
//! snapshot is at most [`MAX_SNAPSHOT_BYTES`]. What a well-formed message
//! says is believed, as IceStorm's replicas believe theirs: the
//! `IceStorm.Node` endpoints are for the replicas only (a firewall or a
//! private network, as for IceStorm's).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use floe::runtime::{Current, DispatchError, UserError};
use openraft::error::{InstallSnapshotError, RaftError};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, VoteRequest,
};

use super::convert::{self, opt_index, slice_id, ConvertError};
use super::{LeadError, Replica};
use crate::command::Command;
use crate::slice::floe_storm::{self as s, NotLeader, RaftFailure, SnapshotMismatch};
use crate::slice::ice_storm_election::{self as election, NodeInfo, QueryInfo};

/// The longest `awaitApplied` waits, whatever a peer asks.
const MAX_AWAIT: Duration = Duration::from_secs(10);

/// The largest snapshot a replica receives (a chunk past it is refused, so
/// that a peer cannot make it allocate more): every topic, subscriber and
/// link, at about 100 bytes a subscriber.
pub const MAX_SNAPSHOT_BYTES: u64 = 256 << 20;

/// The node object of a replica.
pub struct ReplicaServant {
    replica: Arc<Replica>,
}

impl ReplicaServant {
    /// The servant of `replica`.
    pub fn new(replica: Arc<Replica>) -> ReplicaServant {
        ReplicaServant { replica }
    }
}

fn failure(reason: impl std::fmt::Display) -> DispatchError {
    RaftFailure {
        reason: reason.to_string(),
    }
    .into()
}

fn bad(e: ConvertError) -> DispatchError {
    failure(e)
}

impl election::Node for ReplicaServant {
    async fn nodes(&self, _: &Current) -> Result<Vec<NodeInfo>, DispatchError> {
        Ok(self.replica.nodes())
    }

    async fn query(&self, _: &Current) -> Result<QueryInfo, DispatchError> {
        Ok(self.replica.query())
    }
}

impl s::Replica for ReplicaServant {
    async fn append_entries(
        &self,
        request: s::AppendRequest,
        _: &Current,
    ) -> Result<s::AppendReply, DispatchError> {
        let entries = request
            .entries
            .iter()
            .map(convert::from_entry)
            .collect::<Result<Vec<_>, _>>()
            .map_err(bad)?;
        let rpc = AppendEntriesRequest {
            vote: convert::from_vote(&request.vote).map_err(bad)?,
            prev_log_id: convert::from_opt_log_id(&request.prev_log_id).map_err(bad)?,
            entries,
            leader_commit: convert::from_opt_log_id(&request.leader_commit).map_err(bad)?,
        };
        let reply = self
            .replica
            .raft()
            .append_entries(rpc)
            .await
            .map_err(failure)?;
        let mut out = s::AppendReply::default();
        match reply {
            AppendEntriesResponse::Success => out.outcome = s::AppendOutcome::Success,
            AppendEntriesResponse::PartialSuccess(matching) => {
                out.outcome = s::AppendOutcome::PartialSuccess;
                out.matching = convert::opt_log_id(&matching);
            }
            AppendEntriesResponse::Conflict => out.outcome = s::AppendOutcome::Conflict,
            AppendEntriesResponse::HigherVote(v) => {
                out.outcome = s::AppendOutcome::HigherVote;
                out.vote = convert::vote(&v);
            }
        }
        Ok(out)
    }

    async fn request_vote(
        &self,
        request: s::VoteRequest,
        _: &Current,
    ) -> Result<s::VoteReply, DispatchError> {
        let rpc = VoteRequest {
            vote: convert::from_vote(&request.vote).map_err(bad)?,
            last_log_id: convert::from_opt_log_id(&request.last_log_id).map_err(bad)?,
        };
        let reply = self.replica.raft().vote(rpc).await.map_err(failure)?;
        Ok(s::VoteReply {
            vote: convert::vote(&reply.vote),
            granted: reply.vote_granted,
            last_log_id: convert::opt_log_id(&reply.last_log_id),
        })
    }

    async fn install_snapshot(
        &self,
        chunk: s::SnapshotChunk,
        _: &Current,
    ) -> Result<s::Vote, DispatchError> {
        let offset =
            u64::try_from(chunk.offset).map_err(|_| failure("negative snapshot offset"))?;
        if offset.saturating_add(chunk.data.len() as u64) > MAX_SNAPSHOT_BYTES {
            return Err(failure(format!(
                "snapshot chunk past {MAX_SNAPSHOT_BYTES} bytes"
            )));
        }
        let req = InstallSnapshotRequest {
            vote: convert::from_vote(&chunk.vote).map_err(bad)?,
            meta: convert::from_snapshot_meta(&chunk.meta).map_err(bad)?,
            offset,
            data: chunk.data.to_vec(),
            done: chunk.done,
        };
        match self.replica.raft().install_snapshot(req).await {
            Ok(r) => Ok(convert::vote(&r.vote)),
            Err(RaftError::APIError(InstallSnapshotError::SnapshotMismatch(m))) => {
                Err(SnapshotMismatch {
                    expect_id: m.expect.id,
                    expect_offset: slice_id(m.expect.offset),
                    got_id: m.got.id,
                    got_offset: slice_id(m.got.offset),
                }
                .into())
            }
            Err(e) => Err(failure(e)),
        }
    }

    async fn propose(&self, command: Bytes, _: &Current) -> Result<i64, DispatchError> {
        let cmd = Command::decode(&command).map_err(failure)?;
        match self.replica.lead(cmd).await {
            Ok((index, Ok(_))) => Ok(slice_id(index)),
            Ok((_, Err(rejection))) => Err(DispatchError::UserException(rejection.to_user_error())),
            Err(LeadError::NotLeader(leader)) => {
                Err(DispatchError::UserException(UserError::new(NotLeader {
                    leader: leader.map_or(-1, slice_id),
                })))
            }
            Err(LeadError::Failed(e)) => Err(failure(e)),
        }
    }

    async fn await_applied(
        &self,
        index: i64,
        timeout_ms: i32,
        _: &Current,
    ) -> Result<i64, DispatchError> {
        let timeout = Duration::from_millis(u64::try_from(timeout_ms).unwrap_or(0)).min(MAX_AWAIT);
        let index = u64::try_from(index).unwrap_or(0);
        Ok(opt_index(self.replica.await_applied(index, timeout).await))
    }

    async fn status(&self, _: &Current) -> Result<s::ReplicaStatus, DispatchError> {
        Ok(self.replica.status())
    }
}
