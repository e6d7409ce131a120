//! [`TopicServant`]: the implementation of the generated `IceStorm::Topic`
//! and `IceStorm::TopicInternal` servant traits over a [`Topic`].
//!
//! The operations that change durable state (`subscribeAndGetPublisher`,
//! `unsubscribe`, `link`, `unlink`) are validated here as IceStorm 3.7
//! does, then committed as [`Command`]s ([`Instance::commit`]), which start
//! and stop the topic's delivery tasks.

use std::sync::Arc;

use floe::runtime::{Current, DispatchError};
use floe::wire::Identity;

use crate::command::Command;
use crate::instance::Instance;
use crate::link::linked_topic_name;
use crate::qos::Qos;
use crate::slice::ice_storm;
use crate::topic::{Topic, TopicError};
use crate::types::{
    AlreadySubscribed, InvalidSubscriber, LinkExists, LinkInfo, NoSuchLink, ProxyData, QosDict,
};

/// `subscribeAndGetPublisher`: validates, commits the subscription (which
/// starts delivery), and returns the per-subscriber publisher proxy.
///
/// # Errors
///
/// `InvalidSubscriber`, `AlreadySubscribed`, `BadQoS`, or the commit's
/// failure.
pub async fn subscribe(
    inst: &Arc<Instance>,
    topic: &Topic,
    qos: QosDict,
    subscriber: Option<ProxyData>,
) -> Result<ProxyData, TopicError> {
    let proxy = subscriber.ok_or_else(null_subscriber)?;
    // IceStorm answers AlreadySubscribed before looking at the QoS;
    // the commit checks again against the durable state.
    if topic.is_taken(&proxy.identity) {
        return Err(AlreadySubscribed {}.into());
    }
    Qos::parse(&qos, &proxy)?;
    let publisher = inst.subscriber_publisher_proxy(topic.name(), &proxy.identity);
    inst.commit(Command::Subscribe {
        topic: topic.name().to_owned(),
        proxy,
        qos,
    })
    .await?;
    Ok(publisher)
}

/// `unsubscribe`.
///
/// # Errors
///
/// `InvalidSubscriber` for a null proxy, or the commit's failure.
pub async fn unsubscribe(
    inst: &Arc<Instance>,
    topic: &Topic,
    subscriber: Option<ProxyData>,
) -> Result<(), TopicError> {
    let proxy = subscriber.ok_or_else(null_subscriber)?;
    let id = proxy.identity;
    if !topic.is_subscribed(&id) {
        return Ok(());
    }
    inst.commit(Command::Unsubscribe {
        topic: topic.name().to_owned(),
        subscriber: id,
    })
    .await?;
    Ok(())
}

/// `link`.
///
/// # Errors
///
/// `LinkExists`, a failure resolving a remote topic's link object, a null
/// `link_to` (status 7), or the commit's failure.
pub async fn link(
    inst: &Arc<Instance>,
    topic: &Topic,
    link_to: Option<ProxyData>,
    cost: i32,
) -> Result<(), TopicError> {
    let to = link_to.ok_or_else(|| TopicError::Unknown("link: null topic proxy".into()))?;
    let name = linked_topic_name(&to.identity);
    if topic.is_linked_to(&to.identity) {
        return Err(LinkExists { name }.into());
    }
    let link = match inst.local_topic_name(&to) {
        Some(local) => inst.link_proxy(&local),
        None => inst
            .sinks
            .resolve_link(&to)
            .await
            .map_err(TopicError::Local)?
            .ok_or_else(|| TopicError::Unknown("getLinkProxy returned a null proxy".into()))?,
    };
    inst.commit(Command::Link {
        topic: topic.name().to_owned(),
        name,
        cost,
        linked: to,
        link,
    })
    .await?;
    Ok(())
}

/// `unlink`.
///
/// # Errors
///
/// `NoSuchLink`, a null `link_to` (status 7), or the commit's failure.
pub async fn unlink(
    inst: &Arc<Instance>,
    topic: &Topic,
    link_to: Option<ProxyData>,
) -> Result<(), TopicError> {
    let to = link_to.ok_or_else(|| TopicError::Unknown("unlink: null topic proxy".into()))?;
    let id = to.identity;
    if !topic.is_linked_to(&id) {
        return Err(NoSuchLink {
            name: linked_topic_name(&id),
        }
        .into());
    }
    inst.commit(Command::Unlink {
        topic: topic.name().to_owned(),
        linked: id,
    })
    .await?;
    Ok(())
}

fn null_subscriber() -> InvalidSubscriber {
    InvalidSubscriber {
        reason: "subscriber is a null proxy".into(),
    }
}

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
            subscribe(&self.inst, &self.topic, qos, subscriber).await?,
        ))
    }

    async fn unsubscribe(
        &self,
        subscriber: Option<ProxyData>,
        _: &Current,
    ) -> Result<(), DispatchError> {
        Ok(unsubscribe(&self.inst, &self.topic, subscriber).await?)
    }

    async fn link(
        &self,
        link_to: Option<ProxyData>,
        cost: i32,
        _: &Current,
    ) -> Result<(), DispatchError> {
        Ok(link(&self.inst, &self.topic, link_to, cost).await?)
    }

    async fn unlink(&self, link_to: Option<ProxyData>, _: &Current) -> Result<(), DispatchError> {
        Ok(unlink(&self.inst, &self.topic, link_to).await?)
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
