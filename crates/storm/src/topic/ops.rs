//! The topic operations that change durable state (`subscribeAndGetPublisher`,
//! `unsubscribe`, `link`, `unlink`): validated here as IceStorm 3.7 does,
//! then committed as [`Command`]s ([`Instance::commit`]), which start and
//! stop the delivery tasks; and the reconciliation of a topic with a
//! replicated snapshot.

use std::sync::Arc;

use floe::wire::Identity;

use super::{Topic, TopicError};
use crate::command::Command;
use crate::instance::Instance;
use crate::link::linked_topic_name;
use crate::qos::Qos;
use crate::store::TopicRecord;
use crate::types::{
    AlreadySubscribed, InvalidSubscriber, LinkExists, NoSuchLink, ProxyData, QosDict,
};

impl Topic {
    /// Whether a subscriber or a link has this identity.
    fn is_taken(&self, id: &Identity) -> bool {
        let state = self.read();
        state.subscribers.iter().any(|s| &s.proxy.identity == id)
            || state.links.iter().any(|l| &l.topic.identity == id)
    }

    /// `subscribeAndGetPublisher`: validates, commits the subscription
    /// (which starts delivery), and returns the per-subscriber publisher
    /// proxy.
    ///
    /// # Errors
    ///
    /// `InvalidSubscriber`, `AlreadySubscribed`, `BadQoS`, or the commit's
    /// failure.
    pub async fn subscribe(
        self: &Arc<Topic>,
        inst: &Arc<Instance>,
        qos: QosDict,
        subscriber: Option<ProxyData>,
    ) -> Result<ProxyData, TopicError> {
        let proxy = subscriber.ok_or_else(null_subscriber)?;
        // IceStorm answers AlreadySubscribed before looking at the QoS;
        // the commit checks again against the durable state.
        if self.is_taken(&proxy.identity) {
            return Err(AlreadySubscribed {}.into());
        }
        Qos::parse(&qos, &proxy)?;
        let publisher = inst.subscriber_publisher_proxy(&self.name, &proxy.identity);
        inst.commit(Command::Subscribe {
            topic: self.name.clone(),
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
        self: &Arc<Topic>,
        inst: &Arc<Instance>,
        subscriber: Option<ProxyData>,
    ) -> Result<(), TopicError> {
        let proxy = subscriber.ok_or_else(null_subscriber)?;
        let id = proxy.identity;
        if !self
            .read()
            .subscribers
            .iter()
            .any(|s| s.proxy.identity == id)
        {
            return Ok(());
        }
        inst.commit(Command::Unsubscribe {
            topic: self.name.clone(),
            subscriber: id,
        })
        .await?;
        Ok(())
    }

    /// `link`.
    ///
    /// # Errors
    ///
    /// `LinkExists`, a failure resolving a remote topic's link object, a
    /// null `link_to` (status 7), or the commit's failure.
    pub async fn link(
        self: &Arc<Topic>,
        inst: &Arc<Instance>,
        link_to: Option<ProxyData>,
        cost: i32,
    ) -> Result<(), TopicError> {
        let to = link_to.ok_or_else(|| TopicError::Unknown("link: null topic proxy".into()))?;
        let name = linked_topic_name(&to.identity);
        if self
            .read()
            .links
            .iter()
            .any(|l| l.topic.identity == to.identity)
        {
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
            topic: self.name.clone(),
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
        self: &Arc<Topic>,
        inst: &Arc<Instance>,
        link_to: Option<ProxyData>,
    ) -> Result<(), TopicError> {
        let to = link_to.ok_or_else(|| TopicError::Unknown("unlink: null topic proxy".into()))?;
        let id = to.identity;
        if !self.read().links.iter().any(|l| l.topic.identity == id) {
            return Err(NoSuchLink {
                name: linked_topic_name(&id),
            }
            .into());
        }
        inst.commit(Command::Unlink {
            topic: self.name.clone(),
            linked: id,
        })
        .await?;
        Ok(())
    }

    /// Makes the running subscribers and links match `record` (a replica
    /// installing a snapshot): those not in it stop, new ones start, those
    /// that stay (same identity and sequence number) keep delivering.
    pub(crate) fn reconcile(self: &Arc<Topic>, inst: &Arc<Instance>, record: TopicRecord) {
        {
            let mut state = self.write();
            state.subscribers.retain(|s| {
                record
                    .subscribers
                    .iter()
                    .any(|r| r.seq == s.seq && r.proxy.identity == s.proxy.identity)
            });
            state.links.retain(|l| {
                record
                    .links
                    .iter()
                    .any(|r| r.seq == l.seq && r.topic.identity == l.topic.identity)
            });
        }
        for s in record.subscribers {
            let running = self
                .read()
                .subscribers
                .iter()
                .any(|e| e.seq == s.seq && e.proxy.identity == s.proxy.identity);
            if !running {
                let qos = Qos::parse(&s.qos, &s.proxy).unwrap_or_default();
                self.add_subscriber(inst, s.proxy, &qos, s.seq);
            }
        }
        for l in record.links {
            let running = self
                .read()
                .links
                .iter()
                .any(|e| e.seq == l.seq && e.topic.identity == l.topic.identity);
            if !running {
                self.add_link(inst, l.name, l.cost, l.topic, &l.link, l.seq);
            }
        }
    }
}

fn null_subscriber() -> InvalidSubscriber {
    InvalidSubscriber {
        reason: "subscriber is a null proxy".into(),
    }
}
