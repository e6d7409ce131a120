//! Changing the broker's durable state. [`Instance::commit`] makes a
//! [`Command`] durable (the store of a standalone broker, or a majority of
//! replicas) and [`apply`] then reflects it in the running topics: their
//! subscriber and link tasks start and stop here. [`reload`] makes the
//! running topics match a whole state (a replica installing a snapshot).
//! A replica's state machine does both through [`RunningTopics`]; the
//! topics start their tasks, and have a failed subscriber removed (a
//! committed [`Command::RemoveFailed`]), through [`TopicHost`]: the
//! broker's [`Instance`] implements both.

use std::collections::BTreeMap;
use std::sync::Arc;

use floe::wire::Identity;

use crate::command::{Command, Outcome};
use crate::instance::Instance;
use crate::qos::Qos;
use crate::replica::RunningTopics;
use crate::sink::SinkFactory;
use crate::store::TopicRecord;
use crate::subscriber::{identity_to_string, DeliveryConfig, RemovalReason};
use crate::topic::{Topic, TopicError, TopicHost};

/// How often a replica proposes a failed subscriber's removal again while
/// no majority takes it.
const REMOVAL_RETRY: std::time::Duration = std::time::Duration::from_secs(1);

impl Instance {
    /// Makes `cmd` durable and applies it to the running topics: on a
    /// standalone broker, in the store under [`Instance::mutation`]; on a
    /// replica, through the replicated log ([`crate::replica::Replica::propose`],
    /// applied by the state machine). The sequence number it was applied
    /// at.
    ///
    /// # Errors
    ///
    /// The command's rejection (`TopicExists`, ...), a store failure, or,
    /// on a replica, why no majority took it.
    pub async fn commit(self: &Arc<Self>, cmd: Command) -> Result<u64, TopicError> {
        if let Some(replica) = self.replica.get() {
            return replica.propose(cmd).await?.map_err(TopicError::from);
        }
        let _guard = self.mutation.lock().await;
        let c = cmd.clone();
        let outcome = self.with_store(move |s| s.apply(&c)).await?;
        apply(self, &cmd, &outcome);
        outcome.map_err(TopicError::from)
    }
}

impl TopicHost for Instance {
    fn sinks(&self) -> &dyn SinkFactory {
        &*self.sinks
    }

    fn delivery(&self) -> &DeliveryConfig {
        &self.delivery
    }

    /// Commits a [`Command::RemoveFailed`]: on a replica, the subscriber
    /// stops at once and the removal is proposed until a majority takes
    /// it; on a standalone broker, once.
    fn remove_failed(
        self: &Arc<Self>,
        topic: &Topic,
        id: &Identity,
        seq: u64,
        link: bool,
        reason: RemovalReason,
    ) {
        tracing::info!(
            topic = %topic.name(),
            subscriber = %identity_to_string(id),
            link,
            ?reason,
            "removing failed subscriber"
        );
        let cmd = Command::RemoveFailed {
            topic: topic.name().to_owned(),
            id: id.clone(),
            seq,
            link,
        };
        let replicated = self.replica.get().is_some();
        if replicated {
            // A replica stops delivering at once; every replica forgets
            // the subscriber once a majority commits the removal.
            topic.take(id, Some(seq), link, &self.detached);
        }
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            while let Some(inst) = weak.upgrade() {
                match inst.commit(cmd.clone()).await {
                    Ok(_) => return,
                    Err(e) if replicated => {
                        tracing::warn!(
                            error = %e,
                            "the removal of a failed subscriber is not committed yet; retrying"
                        );
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "cannot remove subscriber from the store");
                        return;
                    }
                }
                drop(inst);
                tokio::time::sleep(REMOVAL_RETRY).await;
            }
        });
    }
}

impl RunningTopics for Instance {
    fn is_empty(&self) -> bool {
        self.topics
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }

    fn apply(self: &Arc<Self>, cmd: &Command, outcome: &Outcome) {
        apply(self, cmd, outcome);
    }

    fn reload(self: &Arc<Self>, records: Vec<TopicRecord>) {
        reload(self, records);
    }
}

/// Reflects `cmd`, which the store applied with `outcome`, in the running
/// topics (nothing for a rejected command).
pub fn apply(inst: &Arc<Instance>, cmd: &Command, outcome: &Outcome) {
    let Ok(seq) = *outcome else { return };
    let topic = || inst.topic(cmd.topic());
    match cmd {
        Command::CreateTopic { name } => {
            inst.topics
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .entry(name.clone())
                .or_insert_with(|| Topic::new(name));
            if inst.config.trace_topic_manager > 0 {
                tracing::info!(topic = %name, "topic created");
            }
        }
        Command::DestroyTopic { name } => {
            let gone = inst
                .topics
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .remove(name);
            if let Some(t) = gone {
                inst.detached.topic(t.snapshot());
                t.shut_down();
            }
            if inst.config.trace_topic_manager > 0 {
                tracing::info!(topic = %name, "topic destroyed");
            }
        }
        Command::Subscribe { proxy, qos, .. } => {
            let Some(t) = topic() else { return };
            // Validated before it was committed; the defaults if the
            // rules changed since.
            let parsed = Qos::parse(qos, proxy).unwrap_or_default();
            if inst.config.trace_subscriber > 0 {
                tracing::info!(
                    topic = %t.name(),
                    subscriber = %identity_to_string(&proxy.identity),
                    mode = ?proxy.mode,
                    qos = ?parsed,
                    "subscribed"
                );
            }
            t.add_subscriber(inst, proxy.clone(), &parsed, seq);
        }
        Command::Unsubscribe { subscriber, .. } => {
            let Some(t) = topic() else { return };
            if t.take(subscriber, None, false, &inst.detached) && inst.config.trace_subscriber > 0 {
                tracing::info!(
                    topic = %t.name(),
                    subscriber = %identity_to_string(subscriber),
                    "unsubscribed"
                );
            }
        }
        Command::Link {
            name,
            cost,
            linked,
            link,
            ..
        } => {
            let Some(t) = topic() else { return };
            if inst.config.trace_topic > 0 {
                tracing::info!(topic = %t.name(), to = %name, cost, "linked");
            }
            t.add_link(inst, name.clone(), *cost, linked.clone(), link, seq);
        }
        Command::Unlink { linked, .. } => {
            if let Some(t) = topic() {
                t.take(linked, None, true, &inst.detached);
            }
        }
        Command::RemoveFailed { id, seq, link, .. } => {
            let Some(t) = topic() else { return };
            t.take(id, Some(*seq), *link, &inst.detached);
        }
    }
}

/// Makes the running topics match `records`: topics that are not there
/// stop, new ones start, and each kept topic keeps the subscribers and
/// links it already runs (same identity and sequence number), so their
/// delivery goes on.
pub fn reload(inst: &Arc<Instance>, records: Vec<TopicRecord>) {
    let mut wanted: BTreeMap<String, TopicRecord> =
        records.into_iter().map(|r| (r.name.clone(), r)).collect();
    let mut topics = inst.topics.write().unwrap_or_else(|p| p.into_inner());
    let stale: Vec<String> = topics
        .keys()
        .filter(|n| !wanted.contains_key(*n))
        .cloned()
        .collect();
    for name in stale {
        if let Some(t) = topics.remove(&name) {
            inst.detached.topic(t.snapshot());
            t.shut_down();
        }
    }
    for (name, rec) in std::mem::take(&mut wanted) {
        match topics.get(&name) {
            Some(t) => t.reconcile(inst, rec),
            None => {
                topics.insert(name, Topic::restore(inst, rec));
            }
        }
    }
}
