//! [`Network`]: openraft's transport (`RaftNetworkFactory`/`RaftNetwork`)
//! over floe's RPC: each Raft message is a call on the peer's `Replica`
//! object (`slice/Replica.ice`), whose proxy is the peer's
//! `IceStorm.Nodes.<id>` property (a direct proxy, or an indirect one
//! resolved through IceGrid's locator).
//!
//! A peer that cannot be connected to is `Unreachable` (openraft backs off
//! before trying it again); any other failure, including the peer's
//! `RaftFailure`, is a network error that openraft retries.

use std::time::Duration;

use floe::runtime::{Communicator, Error as RtError};
use openraft::error::{
    InstallSnapshotError, NetworkError, RPCError, RaftError, RemoteError, SnapshotMismatch,
    Unreachable,
};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::{AnyError, BasicNode, SnapshotSegmentId};

use super::convert::{self, ConvertError};
use super::{NodeId, TypeConfig};
use crate::slice::floe_storm::{self as s, ReplicaPrx};

/// Makes [`Peer`]s.
pub struct Network {
    communicator: Communicator,
}

impl Network {
    /// Peers reached with `communicator`.
    pub fn new(communicator: Communicator) -> Network {
        Network { communicator }
    }
}

/// The connection to one other replica.
pub struct Peer {
    target: NodeId,
    /// `None` when the configured proxy does not parse.
    proxy: Result<ReplicaPrx, String>,
}

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = Peer;

    async fn new_client(&mut self, target: NodeId, node: &BasicNode) -> Peer {
        let proxy = self
            .communicator
            .string_to_proxy(&node.addr)
            .map(ReplicaPrx::unchecked_cast)
            .map_err(|e| format!("replica {target}: bad proxy `{}': {e}", node.addr));
        Peer { target, proxy }
    }
}

type Rpc<T, E = RaftError<NodeId>> = Result<T, RPCError<NodeId, BasicNode, E>>;

fn network<E: std::error::Error>(
    e: impl std::error::Error + 'static,
) -> RPCError<NodeId, BasicNode, E> {
    RPCError::Network(NetworkError::new(&e))
}

fn call_error<E: std::error::Error>(e: RtError) -> RPCError<NodeId, BasicNode, E> {
    match e {
        RtError::ConnectionRefused(_)
        | RtError::ConnectFailed(_)
        | RtError::ConnectTimeout
        | RtError::NoEndpoint(_)
        | RtError::NotRegistered { .. } => RPCError::Unreachable(Unreachable::new(&e)),
        e => network(e),
    }
}

impl Peer {
    /// The peer's proxy with the call's time limit.
    fn proxy(&self, option: &RPCOption) -> Result<ReplicaPrx, Unreachable> {
        let ttl: Duration = option.hard_ttl();
        match &self.proxy {
            Ok(p) => Ok(ReplicaPrx::unchecked_cast(
                p.proxy().ice_invocation_timeout(Some(ttl)),
            )),
            Err(e) => Err(Unreachable::new(&AnyError::error(e))),
        }
    }
}

fn bad_reply<E: std::error::Error>(e: ConvertError) -> RPCError<NodeId, BasicNode, E> {
    network(e)
}

impl RaftNetwork<TypeConfig> for Peer {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Rpc<AppendEntriesResponse<NodeId>> {
        let request = s::AppendRequest {
            vote: convert::vote(&rpc.vote),
            prev_log_id: convert::opt_log_id(&rpc.prev_log_id),
            entries: rpc.entries.iter().map(convert::entry).collect(),
            leader_commit: convert::opt_log_id(&rpc.leader_commit),
        };
        let reply = self
            .proxy(&option)?
            .append_entries(&request)
            .await
            .map_err(call_error)?;
        Ok(match reply.outcome {
            s::AppendOutcome::Success => AppendEntriesResponse::Success,
            s::AppendOutcome::PartialSuccess => AppendEntriesResponse::PartialSuccess(
                convert::from_opt_log_id(&reply.matching).map_err(bad_reply)?,
            ),
            s::AppendOutcome::Conflict => AppendEntriesResponse::Conflict,
            s::AppendOutcome::HigherVote => AppendEntriesResponse::HigherVote(
                convert::from_vote(&reply.vote).map_err(bad_reply)?,
            ),
        })
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> Rpc<InstallSnapshotResponse<NodeId>, RaftError<NodeId, InstallSnapshotError>> {
        let chunk = s::SnapshotChunk {
            vote: convert::vote(&rpc.vote),
            meta: convert::snapshot_meta(&rpc.meta),
            offset: convert::slice_id(rpc.offset),
            data: rpc.data.into(),
            done: rpc.done,
        };
        match self.proxy(&option)?.install_snapshot(&chunk).await {
            Ok(vote) => Ok(InstallSnapshotResponse {
                vote: convert::from_vote(&vote).map_err(bad_reply)?,
            }),
            Err(RtError::UserException(e)) if e.downcast_ref::<s::SnapshotMismatch>().is_some() => {
                let m = e
                    .downcast_ref::<s::SnapshotMismatch>()
                    .cloned()
                    .unwrap_or_default();
                let segment = |id: String, offset: i64| SnapshotSegmentId {
                    id,
                    offset: u64::try_from(offset).unwrap_or(0),
                };
                let mismatch = SnapshotMismatch {
                    expect: segment(m.expect_id, m.expect_offset),
                    got: segment(m.got_id, m.got_offset),
                };
                Err(RPCError::RemoteError(RemoteError::new(
                    self.target,
                    RaftError::APIError(InstallSnapshotError::SnapshotMismatch(mismatch)),
                )))
            }
            Err(e) => Err(call_error(e)),
        }
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Rpc<VoteResponse<NodeId>> {
        let request = s::VoteRequest {
            vote: convert::vote(&rpc.vote),
            last_log_id: convert::opt_log_id(&rpc.last_log_id),
        };
        let reply = self
            .proxy(&option)?
            .request_vote(&request)
            .await
            .map_err(call_error)?;
        Ok(VoteResponse {
            vote: convert::from_vote(&reply.vote).map_err(bad_reply)?,
            vote_granted: reply.granted,
            last_log_id: convert::from_opt_log_id(&reply.last_log_id).map_err(bad_reply)?,
        })
    }
}
