//! Publisher objects on the Publish adapter: `I/T.publish` (every
//! subscriber) and `I/topic.T.publish.<id>` (one subscriber). The link
//! target `I/T.link` is [`crate::link::LinkServant`].
//!
//! A publisher is a blob servant (§8.4): **any** operation, built-ins
//! included, becomes an event carrying the request's operation, mode,
//! context and params encapsulation verbatim. A twoway publisher gets a
//! status-0 reply with an empty encapsulation in the request's encoding as
//! soon as the event is admitted (at once unless a subscriber is over its
//! budget, see [`crate::admission`]), before delivery and whatever the
//! operation's signature.

use std::sync::Arc;

use floe::runtime::{Current, Dispatch, DispatchError};
use floe::wire::Encapsulation;

use crate::event::Event;
use crate::topic::Topic;

fn event_of(current: Current, params: Encapsulation) -> Arc<Event> {
    Event::new(current.operation, current.mode, current.ctx, params)
}

/// The reply once the event is admitted: at once, or after waiting for
/// room (the dispatch stays pending; see [`crate::admission`]). The
/// admission's future is moved into the dispatch's: one allocation.
fn reply_after(
    reply: bytes::Bytes,
    wait: Option<impl std::future::Future<Output = ()> + Send + 'static>,
) -> Dispatch {
    match wait {
        None => Dispatch::ready(Ok::<_, DispatchError>(reply)),
        Some(wait) => Dispatch::future(async move {
            wait.await;
            Ok::<_, DispatchError>(reply)
        }),
    }
}

/// `I/T.publish`: publishes the request to every subscriber and link.
pub fn publish(topic: &Arc<Topic>, current: Current, params: Encapsulation) -> Dispatch {
    let reply = current.empty_reply();
    reply_after(reply, topic.publish(&event_of(current, params)))
}

/// `I/topic.T.publish.<id>`: publishes to subscriber `<id>` only;
/// status 2 if it is not (or no longer) subscribed.
pub fn publish_to(
    topic: &Arc<Topic>,
    subscriber: &str,
    current: Current,
    params: Encapsulation,
) -> Dispatch {
    let reply = current.empty_reply();
    match topic.publish_to(subscriber, &event_of(current, params)) {
        Ok(wait) => reply_after(reply, wait),
        Err(()) => Dispatch::error(DispatchError::object_not_exist()),
    }
}
