//! Between openraft's types and their Slice form (`slice/Replica.ice`,
//! module `FloeStorm`), which is both what replicas send each other and
//! what the store keeps (encoded with floe-wire).
//!
//! Node ids are `u64` in openraft and `long` in Slice: an id above
//! `i64::MAX` cannot be configured (`IceStorm.NodeId` is an `int` in
//! IceStorm).

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use floe::wire::{Decoder, Encoder};
use openraft::{
    BasicNode, CommittedLeaderId, EntryPayload, LogId, Membership, SnapshotMeta, StoredMembership,
    Vote,
};

use super::{NodeId, TypeConfig};
use crate::command::Command;
use crate::slice::floe_storm as s;

/// A Slice value that does not convert (bad input from a peer, or a
/// corrupt store).
#[derive(Debug, thiserror::Error)]
#[error("invalid replica message: {0}")]
pub struct ConvertError(pub String);

fn id(n: i64) -> Result<NodeId, ConvertError> {
    u64::try_from(n).map_err(|_| ConvertError(format!("negative node id {n}")))
}

fn index(n: i64) -> Result<u64, ConvertError> {
    u64::try_from(n).map_err(|_| ConvertError(format!("negative log index {n}")))
}

/// A node id as Slice carries it.
pub fn slice_id(n: NodeId) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// An optional index as [`s::ReplicaStatus`] carries it (-1: none).
pub fn opt_index(n: Option<u64>) -> i64 {
    n.map_or(-1, |i| i64::try_from(i).unwrap_or(i64::MAX))
}

/// A vote.
pub fn vote(v: &Vote<NodeId>) -> s::Vote {
    s::Vote {
        leader: s::LeaderId {
            term: slice_id(v.leader_id.term),
            node: slice_id(v.leader_id.node_id),
        },
        committed: v.committed,
    }
}

/// A vote from Slice.
///
/// # Errors
///
/// A negative term or node id.
pub fn from_vote(v: &s::Vote) -> Result<Vote<NodeId>, ConvertError> {
    let term = index(v.leader.term)?;
    let node = id(v.leader.node)?;
    Ok(if v.committed {
        Vote::new_committed(term, node)
    } else {
        Vote::new(term, node)
    })
}

/// A log id.
pub fn log_id(l: &LogId<NodeId>) -> s::LogId {
    s::LogId {
        leader: s::LeaderId {
            term: slice_id(l.leader_id.term),
            node: slice_id(l.leader_id.node_id),
        },
        index: slice_id(l.index),
    }
}

/// A log id from Slice.
///
/// # Errors
///
/// Negative numbers.
pub fn from_log_id(l: &s::LogId) -> Result<LogId<NodeId>, ConvertError> {
    Ok(LogId::new(
        CommittedLeaderId::new(index(l.leader.term)?, id(l.leader.node)?),
        index(l.index)?,
    ))
}

/// An optional log id (empty sequence or one element).
pub fn opt_log_id(l: &Option<LogId<NodeId>>) -> s::OptLogId {
    l.iter().map(log_id).collect()
}

/// An optional log id from Slice.
///
/// # Errors
///
/// More than one element, or negative numbers.
pub fn from_opt_log_id(l: &s::OptLogId) -> Result<Option<LogId<NodeId>>, ConvertError> {
    match l.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(from_log_id(one)?)),
        _ => Err(ConvertError(format!("{} log ids for one", l.len()))),
    }
}

/// A membership.
pub fn membership(m: &Membership<NodeId, BasicNode>) -> s::Membership {
    s::Membership {
        configs: m
            .get_joint_config()
            .iter()
            .map(|c| c.iter().copied().map(slice_id).collect())
            .collect(),
        nodes: m
            .nodes()
            .map(|(n, node)| (slice_id(*n), node.addr.clone()))
            .collect(),
    }
}

/// A membership from Slice.
///
/// # Errors
///
/// Negative ids, no voter set, or a voter without an address.
pub fn from_membership(m: &s::Membership) -> Result<Membership<NodeId, BasicNode>, ConvertError> {
    let mut configs = Vec::with_capacity(m.configs.len());
    for c in &m.configs {
        configs.push(
            c.iter()
                .map(|n| id(*n))
                .collect::<Result<BTreeSet<_>, _>>()?,
        );
    }
    let mut nodes = BTreeMap::new();
    for (n, addr) in &m.nodes {
        nodes.insert(id(*n)?, BasicNode::new(addr));
    }
    if configs.is_empty() {
        return Err(ConvertError("membership without voters".into()));
    }
    if let Some(v) = configs.iter().flatten().find(|v| !nodes.contains_key(v)) {
        return Err(ConvertError(format!("voter {v} has no address")));
    }
    Ok(Membership::new(configs, nodes))
}

/// A stored membership with its log id, and what the state machine has
/// applied, as a snapshot's meta data carries them.
pub fn snapshot_meta(m: &SnapshotMeta<NodeId, BasicNode>) -> s::SnapshotMeta {
    s::SnapshotMeta {
        last_log_id: opt_log_id(&m.last_log_id),
        membership_log_id: opt_log_id(m.last_membership.log_id()),
        membership: membership(m.last_membership.membership()),
        snapshot_id: m.snapshot_id.clone(),
    }
}

/// A snapshot's meta data from Slice.
///
/// # Errors
///
/// As the parts.
pub fn from_snapshot_meta(
    m: &s::SnapshotMeta,
) -> Result<SnapshotMeta<NodeId, BasicNode>, ConvertError> {
    Ok(SnapshotMeta {
        last_log_id: from_opt_log_id(&m.last_log_id)?,
        last_membership: StoredMembership::new(
            from_opt_log_id(&m.membership_log_id)?,
            from_membership(&m.membership)?,
        ),
        snapshot_id: m.snapshot_id.clone(),
    })
}

/// A log entry.
pub fn entry(e: &openraft::Entry<TypeConfig>) -> s::Entry {
    let (kind, command, membership) = match &e.payload {
        EntryPayload::Blank => (s::EntryKind::Blank, Bytes::new(), s::Membership::default()),
        EntryPayload::Normal(c) => (s::EntryKind::Command, c.encode(), s::Membership::default()),
        EntryPayload::Membership(m) => (
            s::EntryKind::MembershipChange,
            Bytes::new(),
            self::membership(m),
        ),
    };
    s::Entry {
        id: log_id(&e.log_id),
        kind,
        command,
        membership,
    }
}

/// A log entry from Slice.
///
/// # Errors
///
/// A bad log id, command or membership.
pub fn from_entry(e: &s::Entry) -> Result<openraft::Entry<TypeConfig>, ConvertError> {
    let payload = match e.kind {
        s::EntryKind::Blank => EntryPayload::Blank,
        s::EntryKind::Command => EntryPayload::Normal(
            Command::decode(&e.command).map_err(|x| ConvertError(x.to_string()))?,
        ),
        s::EntryKind::MembershipChange => EntryPayload::Membership(from_membership(&e.membership)?),
    };
    Ok(openraft::Entry {
        log_id: from_log_id(&e.id)?,
        payload,
    })
}

/// A Slice value encoded on its own (what the store keeps).
pub fn to_bytes<T: floe::wire::Encode>(value: &T) -> Vec<u8> {
    let mut enc = Encoder::new();
    enc.write(value);
    enc.finish().to_vec()
}

/// A Slice value decoded from what [`to_bytes`] wrote.
///
/// # Errors
///
/// Malformed or trailing bytes.
pub fn from_bytes<T: floe::wire::Decode>(bytes: &[u8]) -> Result<T, ConvertError> {
    let mut dec = Decoder::new(Bytes::copy_from_slice(bytes));
    let v = dec.read().map_err(|e| ConvertError(e.to_string()))?;
    if dec.remaining() != 0 {
        return Err(ConvertError(format!(
            "{} bytes after the value",
            dec.remaining()
        )));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip() {
        let nodes: BTreeMap<u64, BasicNode> = [(1, BasicNode::new("a")), (2, BasicNode::new("b"))]
            .into_iter()
            .collect();
        let m = Membership::new(vec![[1, 2].into_iter().collect()], nodes);
        let lid = LogId::new(CommittedLeaderId::new(3, 2), 7);
        for payload in [
            EntryPayload::Blank,
            EntryPayload::Normal(Command::CreateTopic { name: "t".into() }),
            EntryPayload::Membership(m),
        ] {
            let e = openraft::Entry::<TypeConfig> {
                log_id: lid,
                payload,
            };
            let bytes = to_bytes(&entry(&e));
            let back = from_entry(&from_bytes(&bytes).unwrap()).unwrap();
            assert_eq!(back, e);
        }
    }

    #[test]
    fn bad_values_are_errors() {
        assert!(from_opt_log_id(&vec![s::LogId::default(); 2]).is_err());
        let mut v = vote(&Vote::new(1, 2));
        v.leader.node = -1;
        assert!(from_vote(&v).is_err());
        let m = s::Membership {
            configs: vec![vec![1]],
            nodes: Default::default(),
        };
        assert!(from_membership(&m).is_err(), "voter without address");
        assert!(from_bytes::<s::Vote>(&[1, 2]).is_err());
    }
}
