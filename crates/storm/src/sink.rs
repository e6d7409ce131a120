//! [`SubscriberSink`]: the seam between delivery logic and the network.
//!
//! The subscriber task (`subscriber`) decides *when* to send; a sink
//! decides *how*. The runtime-backed sink turns a call into requests on a
//! floe proxy; unit tests use fake sinks (slow, stalled, failing, dead).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::event::Event;
use crate::qos::Qos;
use crate::types::ProxyData;

/// Why a delivery failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryError {
    /// The subscriber object does not exist (reply status 2): a hard
    /// failure, the subscriber is removed at once.
    #[error("object does not exist")]
    ObjectNotExist,
    /// Any other local failure (connection refused/lost, timeout, reply
    /// statuses 3–7): the subscriber goes offline or, when its retry count
    /// is used up, is removed.
    #[error("delivery failed: {0}")]
    Failed(String),
}

/// The outcome of one delivery.
pub type DeliveryFuture = Pin<Box<dyn Future<Output = Result<(), DeliveryError>> + Send>>;

/// Sends events to one subscriber.
///
/// `deliver` is called with:
/// - one event for twoway and oneway subscribers (one request each; the
///   future resolves on the reply for twoway, once written for oneway);
/// - all events queued since the last flush for batch subscribers (one
///   BatchRequest frame);
/// - the queued events for links (one twoway `forward(EventDataSeq)` call).
///
/// Calls are made in event order, and each returned future is polled for
/// the first time before the next call is made; a sink must put requests on
/// the wire in that order. A user-exception reply counts as success.
pub trait SubscriberSink: Send + Sync + 'static {
    /// Starts delivering `events`.
    fn deliver(&self, events: Vec<Arc<Event>>) -> DeliveryFuture;

    /// Sends one event to a oneway subscriber **now**, from the publisher's
    /// dispatch, without waiting (a non-blocking write, or queued behind
    /// what the connection has not written yet); `None` when that is not
    /// possible (no established connection, not oneway), and the event
    /// goes through the subscriber's queue and task instead; also `None`
    /// when more than `max_queued` bytes already wait to be written to the
    /// subscriber (it reads slower than events come: the write queue must
    /// not become an unbounded queue behind the subscriber's bounded one).
    /// Only called when nothing of this subscriber is queued or in flight,
    /// so order is kept. The default never sends now.
    fn try_deliver_now(
        &self,
        event: &Event,
        max_queued: usize,
    ) -> Option<Result<(), DeliveryError>> {
        let _ = (event, max_queued);
        None
    }

    /// Bytes handed to the subscriber's connection (by
    /// [`SubscriberSink::try_deliver_now`] or a delivery) that it has not
    /// written yet. The default knows of none.
    fn backlog(&self) -> usize {
        0
    }
}

/// Makes sinks for subscribers and links (the runtime implements it).
pub trait SinkFactory: Send + Sync + 'static {
    /// A sink delivering to `subscriber` (the proxy given to
    /// `subscribeAndGetPublisher`, with the QoS proxy settings to apply).
    fn subscriber_sink(&self, subscriber: &ProxyData, qos: &Qos) -> Arc<dyn SubscriberSink>;

    /// A sink calling `forward` on a `TopicLink` object.
    fn link_sink(&self, link: &ProxyData) -> Arc<dyn SubscriberSink>;

    /// Asks a remote topic for its `TopicLink` proxy (`getLinkProxy`,
    /// mode Nonmutating, on `IceStorm::TopicInternal`); used when a topic is
    /// linked to a topic of another broker.
    fn resolve_link(&self, topic: &ProxyData) -> ResolveFuture;
}

/// The outcome of [`SinkFactory::resolve_link`]: the link proxy (`None` if
/// the remote returned a null proxy) or the failure's text.
pub type ResolveFuture = Pin<Box<dyn Future<Output = Result<Option<ProxyData>, String>> + Send>>;
