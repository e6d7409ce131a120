//! A replica's first steps: initializing the cluster (or joining it), and
//! logging who leads as it changes.

use std::collections::BTreeMap;
use std::time::Duration;

use openraft::{BasicNode, Raft, ServerState};

use super::{NodeId, TypeConfig};
use crate::slice::floe_storm::ReplicaPrx;

/// Initializes the cluster with `members` (the same on every replica)
/// unless a peer already holds a log: a replica that joins a running
/// cluster (first start, or a lost disk) waits for the leader instead of
/// calling an election. Several replicas initializing together is safe.
pub(super) async fn initialize(
    raft: Raft<TypeConfig>,
    peers: Vec<ReplicaPrx>,
    members: BTreeMap<NodeId, BasicNode>,
    election_timeout: Duration,
) {
    loop {
        match raft.is_initialized().await {
            Ok(false) => {}
            Ok(true) | Err(_) => return,
        }
        let mut asks = tokio::task::JoinSet::new();
        for p in &peers {
            let p = ReplicaPrx::unchecked_cast(
                p.proxy().ice_invocation_timeout(Some(election_timeout)),
            );
            asks.spawn(async move { p.status().await.is_ok_and(|s| s.last_log_index >= 0) });
        }
        let mut running = false;
        while let Some(r) = asks.join_next().await {
            running |= r.unwrap_or(false);
        }
        if !running {
            if let Err(e) = raft.initialize(members.clone()).await {
                tracing::debug!(error = %e, "replica: cluster already initialized");
            }
            return;
        }
        tracing::info!("replica: joining the running cluster; waiting for its leader");
        tokio::time::sleep(election_timeout * 2).await;
    }
}

/// Logs who leads, as it changes.
pub(super) async fn log_changes(raft: Raft<TypeConfig>) {
    let mut metrics = raft.metrics();
    let mut last = (None, 0, ServerState::Learner);
    loop {
        let now = {
            let m = metrics.borrow_and_update();
            (m.current_leader, m.current_term, m.state)
        };
        if now != last {
            let (leader, term, state) = now;
            match (state, leader) {
                (ServerState::Shutdown, _) => return,
                (ServerState::Leader, _) => tracing::info!(term, "replica: this replica leads"),
                (_, Some(leader)) => tracing::info!(leader, term, "replica: following"),
                (_, None) => tracing::info!(term, ?state, "replica: no leader"),
            }
            last = now;
        }
        if metrics.changed().await.is_err() {
            return;
        }
    }
}
