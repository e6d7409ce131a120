//! The `IceStorm::TopicManager` servant (`I/TopicManager`): create,
//! retrieve, retrieveAll, getSliceChecksums (Ice 3.7), createOrRetrieve
//! (Ice 3.8), and topic destruction; [`TopicManagerServant`] implements
//! the generated servant traits, so one broker serves 3.7 and 3.8 clients.
//!
//! Checked against IceStorm 3.7.8: any topic name is accepted, including
//! the empty name and names with `/` or blanks; `retrieveAll` is a
//! dictionary sorted by name; `getSliceChecksums` returns an empty
//! dictionary; `ice_ids` includes `::IceStorm::TopicManagerInternal`, whose
//! `getReplicaNode` returns a null proxy on a non-replicated broker, and
//! the replica's node object on a replicated one.

use std::sync::Arc;

use floe::runtime::{Current, DispatchError};

use crate::command::Command;
use crate::instance::Instance;
use crate::slice::ice_storm;
use crate::topic::TopicError;
use crate::types::{NoSuchTopic, ProxyData, TopicExists};

/// `create(name)`: a new, empty, durable topic.
///
/// # Errors
///
/// `TopicExists`, or the commit's failure.
pub async fn create(inst: &Arc<Instance>, name: &str) -> Result<ProxyData, TopicError> {
    create_if(inst, name, true).await
}

/// `createOrRetrieve(name)` (Ice 3.8): the topic, created first if it does
/// not exist; atomic with other creations (the commit decides which one
/// creates it).
///
/// # Errors
///
/// The commit's failure.
pub async fn create_or_retrieve(inst: &Arc<Instance>, name: &str) -> Result<ProxyData, TopicError> {
    create_if(inst, name, false).await
}

/// Creates topic `name`; when it exists, `TopicExists` if `exclusive`,
/// else its proxy.
async fn create_if(
    inst: &Arc<Instance>,
    name: &str,
    exclusive: bool,
) -> Result<ProxyData, TopicError> {
    if inst.topic(name).is_some() {
        if !exclusive {
            return Ok(inst.topic_proxy(name));
        }
        return Err(TopicExists {
            name: name.to_owned(),
        }
        .into());
    }
    let created = inst
        .commit(Command::CreateTopic {
            name: name.to_owned(),
        })
        .await;
    match created {
        Ok(_) => Ok(inst.topic_proxy(name)),
        Err(TopicError::User(e)) if !exclusive && e.downcast_ref::<TopicExists>().is_some() => {
            Ok(inst.topic_proxy(name))
        }
        Err(e) => Err(e),
    }
}

/// `retrieve(name)`.
///
/// # Errors
///
/// `NoSuchTopic`.
pub fn retrieve(inst: &Instance, name: &str) -> Result<ProxyData, NoSuchTopic> {
    match inst.topic(name) {
        Some(_) => Ok(inst.topic_proxy(name)),
        None => Err(NoSuchTopic {
            name: name.to_owned(),
        }),
    }
}

/// Destroys topic `name`: its subscribers, links and stored state. A topic
/// that is already gone is not an error.
///
/// # Errors
///
/// The commit's failure (the topic then stays).
pub async fn destroy(inst: &Arc<Instance>, name: &str) -> Result<(), TopicError> {
    if inst.topic(name).is_none() {
        return Ok(());
    }
    inst.commit(Command::DestroyTopic {
        name: name.to_owned(),
    })
    .await?;
    Ok(())
}

/// The `IceStorm::TopicManagerInternal` servant (`I/TopicManager`),
/// dispatched by the generated `TopicManagerInternalDispatcher`.
pub struct TopicManagerServant {
    inst: Arc<Instance>,
}

impl TopicManagerServant {
    /// The topic manager of `inst`.
    pub fn new(inst: Arc<Instance>) -> TopicManagerServant {
        TopicManagerServant { inst }
    }
}

impl ice_storm::TopicManager for TopicManagerServant {
    async fn create(&self, name: String, _: &Current) -> Result<Option<ProxyData>, DispatchError> {
        Ok(Some(create(&self.inst, &name).await?))
    }

    async fn retrieve(
        &self,
        name: String,
        _: &Current,
    ) -> Result<Option<ProxyData>, DispatchError> {
        Ok(Some(retrieve(&self.inst, &name)?))
    }

    async fn create_or_retrieve(
        &self,
        name: String,
        _: &Current,
    ) -> Result<Option<ProxyData>, DispatchError> {
        Ok(Some(create_or_retrieve(&self.inst, &name).await?))
    }

    async fn retrieve_all(&self, _: &Current) -> Result<ice_storm::TopicDict, DispatchError> {
        let topics = self.inst.topics.read().unwrap_or_else(|p| p.into_inner());
        Ok(topics
            .keys()
            .map(|n| (n.clone(), Some(self.inst.topic_proxy(n))))
            .collect())
    }

    /// Empty, as IceStorm 3.7.8 answers.
    async fn get_slice_checksums(
        &self,
        _: &Current,
    ) -> Result<crate::slice::ice::SliceChecksumDict, DispatchError> {
        Ok(Default::default())
    }
}

impl ice_storm::TopicManagerInternal for TopicManagerServant {
    /// This replica's node object (`icestormadmin replica` asks it about
    /// every replica); null when the broker is not replicated.
    async fn get_replica_node(&self, _: &Current) -> Result<Option<ProxyData>, DispatchError> {
        Ok(self.inst.replica.get().and_then(|r| r.node_proxy()))
    }
}
