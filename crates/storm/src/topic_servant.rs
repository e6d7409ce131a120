//! [`TopicServant`]: the implementation of the generated `IceStorm::Topic`
//! and `IceStorm::TopicInternal` servant traits over a [`Topic`].

use std::sync::Arc;

use floe::runtime::{Current, DispatchError};
use floe::wire::Identity;

use crate::instance::Instance;
use crate::slice::ice_storm;
use crate::topic::Topic;
use crate::types::{LinkInfo, ProxyData, QosDict};

/// The `IceStorm::TopicInternal` servant of one topic (`I/topic.T`),
/// dispatched by the generated `TopicInternalDispatcher`.
pub struct TopicServant {
    inst: Arc<Instance>,
    topic: Arc<Topic>,
}

impl TopicServant {
    /// The servant of `topic`.
    pub fn new(inst: Arc<Instance>, topic: Arc<Topic>) -> TopicServant {
        TopicServant { inst, topic }
    }
}

impl ice_storm::Topic for TopicServant {
    async fn get_name(&self, _: &Current) -> Result<String, DispatchError> {
        Ok(self.topic.name().to_owned())
    }

    async fn get_publisher(&self, _: &Current) -> Result<Option<ProxyData>, DispatchError> {
        Ok(Some(self.inst.publisher_proxy(self.topic.name())))
    }

    async fn get_non_replicated_publisher(
        &self,
        _: &Current,
    ) -> Result<Option<ProxyData>, DispatchError> {
        Ok(Some(
            self.inst.non_replicated_publisher_proxy(self.topic.name()),
        ))
    }

    async fn subscribe_and_get_publisher(
        &self,
        qos: QosDict,
        subscriber: Option<ProxyData>,
        _: &Current,
    ) -> Result<Option<ProxyData>, DispatchError> {
        Ok(Some(
            self.topic.subscribe(&self.inst, qos, subscriber).await?,
        ))
    }

    async fn unsubscribe(
        &self,
        subscriber: Option<ProxyData>,
        _: &Current,
    ) -> Result<(), DispatchError> {
        Ok(self.topic.unsubscribe(&self.inst, subscriber).await?)
    }

    async fn link(
        &self,
        link_to: Option<ProxyData>,
        cost: i32,
        _: &Current,
    ) -> Result<(), DispatchError> {
        Ok(self.topic.link(&self.inst, link_to, cost).await?)
    }

    async fn unlink(&self, link_to: Option<ProxyData>, _: &Current) -> Result<(), DispatchError> {
        Ok(self.topic.unlink(&self.inst, link_to).await?)
    }

    async fn get_link_info_seq(&self, _: &Current) -> Result<Vec<LinkInfo>, DispatchError> {
        Ok(self.topic.link_infos())
    }

    async fn get_subscribers(&self, _: &Current) -> Result<Vec<Identity>, DispatchError> {
        Ok(self.topic.subscriber_ids())
    }

    /// Handled by the topic manager ([`crate::topic_manager::destroy`]),
    /// which owns the topic map.
    async fn destroy(&self, _: &Current) -> Result<(), DispatchError> {
        Ok(crate::topic_manager::destroy(&self.inst, self.topic.name()).await?)
    }
}

impl ice_storm::TopicInternal for TopicServant {
    /// Used by brokers linking to this topic.
    async fn get_link_proxy(&self, _: &Current) -> Result<Option<ProxyData>, DispatchError> {
        Ok(Some(self.inst.link_proxy(self.topic.name())))
    }
}
