//! [`ReplicaConfig`]: a replicated broker's settings. IceStorm's property
//! names where IceStorm has the setting, floe's own (`floe.Storm.Raft.*`,
//! `floe.Storm.Replica.*`) for Raft's.
//!
//! | property | default | meaning |
//! |---|---|---|
//! | `IceStorm.NodeId` | unset: not replicated | this replica's id (an integer ≥ 0) |
//! | `IceStorm.Nodes.<id>` | – | every replica's node object, `<instance>/node<id>:<endpoints of its IceStorm.Node adapter>` (or an indirect proxy); the same on every replica |
//! | `IceStorm.Node.Endpoints` | – | the adapter of this replica's node object (Raft traffic between replicas) |
//! | `IceStorm.ReplicatedTopicManagerEndpoints` | this replica's | the endpoints the topic manager and topic proxies handed out carry: every replica's TopicManager endpoints |
//! | `IceStorm.ReplicatedPublishEndpoints` | this replica's | the same for publisher and link proxies (every replica's Publish endpoints) |
//! | `floe.Storm.Raft.HeartbeatInterval` | 100 ms | how often the leader reaches every replica |
//! | `floe.Storm.Raft.ElectionTimeout` | 500 ms | a follower that hears no leader for a random time between this and 1.5 times this starts an election; a replica grants no vote while it heard from a leader within 1.5 times this (so a new leader is elected 0.75–1.5 s after the leader dies) |
//! | `floe.Storm.Raft.SnapshotLogs` | 1000 | a snapshot is taken after this many log entries |
//! | `floe.Storm.Raft.KeepLogs` | 200 | entries kept in the log behind a snapshot (a replica further behind gets the snapshot) |
//! | `floe.Storm.Replica.UpdateTimeout` | 5000 ms | how long an update waits for a leader and a majority before it fails |
//! | `floe.Storm.Replica.SyncTimeout` | 500 ms | how long the leader waits for the up-to-date replicas to apply an update before answering |
//!
//! Under IceGrid, the adapters' replica groups (`<adapter>.ReplicaGroupId`,
//! set by the node from the descriptor) take the place of the replicated
//! endpoint properties.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use crate::config_error::ConfigError;

/// A replicated broker's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicaConfig {
    /// `IceStorm.NodeId`.
    pub node_id: u64,
    /// `IceStorm.Nodes.<id>`: each replica's node proxy, as text.
    pub nodes: BTreeMap<u64, String>,
    /// `IceStorm.ReplicatedTopicManagerEndpoints`, if set.
    pub replicated_topic_manager_endpoints: Option<String>,
    /// `IceStorm.ReplicatedPublishEndpoints`, if set.
    pub replicated_publish_endpoints: Option<String>,
    /// `floe.Storm.Raft.HeartbeatInterval`.
    pub heartbeat: Duration,
    /// `floe.Storm.Raft.ElectionTimeout` (the lower bound).
    pub election_timeout: Duration,
    /// `floe.Storm.Raft.SnapshotLogs`.
    pub snapshot_logs: u64,
    /// `floe.Storm.Raft.KeepLogs`.
    pub keep_logs: u64,
    /// `floe.Storm.Replica.UpdateTimeout`.
    pub update_timeout: Duration,
    /// `floe.Storm.Replica.SyncTimeout`.
    pub sync_timeout: Duration,
}

fn bad(key: &str, value: &str) -> ConfigError {
    ConfigError::BadValue {
        key: key.to_owned(),
        value: value.to_owned(),
    }
}

fn number(props: &HashMap<String, String>, key: &str, default: u64) -> Result<u64, ConfigError> {
    match props.get(key).map(|v| v.trim()).filter(|v| !v.is_empty()) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| bad(key, v)),
    }
}

fn millis(
    props: &HashMap<String, String>,
    key: &str,
    default: u64,
) -> Result<Duration, ConfigError> {
    Ok(Duration::from_millis(number(props, key, default)?))
}

impl ReplicaConfig {
    /// The replica settings, `None` when `IceStorm.NodeId` is not set (a
    /// standalone broker).
    ///
    /// # Errors
    ///
    /// `BadValue` for a non-numeric id or setting, `IceStorm.Nodes.*`
    /// without `IceStorm.NodeId`, or an id that is not among the nodes.
    pub fn from_properties(
        props: &HashMap<String, String>,
    ) -> Result<Option<ReplicaConfig>, ConfigError> {
        const NODES: &str = "IceStorm.Nodes.";
        let mut nodes = BTreeMap::new();
        for (k, v) in props {
            if let Some(id) = k.strip_prefix(NODES) {
                let id = id.trim().parse::<u64>().map_err(|_| bad(k, v))?;
                if i64::try_from(id).is_err() {
                    return Err(bad(k, v));
                }
                nodes.insert(id, v.trim().to_owned());
            }
        }
        let id = props
            .get("IceStorm.NodeId")
            .map(|v| v.trim())
            .filter(|v| !v.is_empty());
        let Some(id) = id else {
            if let Some((k, v)) = nodes.iter().next() {
                return Err(bad(&format!("{NODES}{k} (without IceStorm.NodeId)"), v));
            }
            return Ok(None);
        };
        let node_id: u64 = id.parse().map_err(|_| bad("IceStorm.NodeId", id))?;
        if !nodes.contains_key(&node_id) {
            return Err(bad("IceStorm.NodeId (no IceStorm.Nodes.<id> for it)", id));
        }
        let opt = |k: &str| {
            props
                .get(k)
                .map(|v| v.trim())
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let heartbeat = millis(props, "floe.Storm.Raft.HeartbeatInterval", 100)?;
        let election_timeout = millis(props, "floe.Storm.Raft.ElectionTimeout", 500)?;
        if heartbeat.is_zero() || election_timeout <= heartbeat * 2 {
            return Err(bad(
                "floe.Storm.Raft.ElectionTimeout (must exceed twice HeartbeatInterval > 0)",
                &format!("{election_timeout:?}"),
            ));
        }
        Ok(Some(ReplicaConfig {
            node_id,
            nodes,
            replicated_topic_manager_endpoints: opt("IceStorm.ReplicatedTopicManagerEndpoints"),
            replicated_publish_endpoints: opt("IceStorm.ReplicatedPublishEndpoints"),
            heartbeat,
            election_timeout,
            snapshot_logs: number(props, "floe.Storm.Raft.SnapshotLogs", 1000)?.max(1),
            keep_logs: number(props, "floe.Storm.Raft.KeepLogs", 200)?,
            update_timeout: millis(props, "floe.Storm.Replica.UpdateTimeout", 5000)?,
            sync_timeout: millis(props, "floe.Storm.Replica.SyncTimeout", 500)?,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn standalone_without_node_id() {
        assert_eq!(ReplicaConfig::from_properties(&props(&[])).unwrap(), None);
    }

    #[test]
    fn nodes_and_defaults() {
        let c = ReplicaConfig::from_properties(&props(&[
            ("IceStorm.NodeId", "2"),
            ("IceStorm.Nodes.1", "S/node1:tcp -p 1"),
            ("IceStorm.Nodes.2", " S/node2:tcp -p 2 "),
            ("floe.Storm.Raft.ElectionTimeout", "800"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(c.node_id, 2);
        assert_eq!(c.nodes[&2], "S/node2:tcp -p 2");
        assert_eq!(c.election_timeout, Duration::from_millis(800));
        assert_eq!(c.heartbeat, Duration::from_millis(100));
        assert_eq!(c.update_timeout, Duration::from_secs(5));
    }

    #[test]
    fn inconsistent_settings_are_refused() {
        for bad in [
            &[("IceStorm.Nodes.1", "x")][..],
            &[("IceStorm.NodeId", "3"), ("IceStorm.Nodes.1", "x")][..],
            &[("IceStorm.NodeId", "one"), ("IceStorm.Nodes.1", "x")][..],
            &[("IceStorm.NodeId", "1"), ("IceStorm.Nodes.x", "x")][..],
            &[
                ("IceStorm.NodeId", "1"),
                ("IceStorm.Nodes.1", "x"),
                ("floe.Storm.Raft.ElectionTimeout", "100"),
            ][..],
        ] {
            assert!(
                ReplicaConfig::from_properties(&props(bad)).is_err(),
                "{bad:?}"
            );
        }
    }
}
