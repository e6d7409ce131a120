//! Publisher objects on the Publish adapter: `I/T.publish` (every
//! subscriber) and `I/topic.T.publish.<id>` (one subscriber). The link
//! target `I/T.link` is [`crate::link::LinkServant`].
//!
//! A publisher is a blob servant (§8.4): **any** operation, built-ins
//! included, becomes an event carrying the request's operation, mode,
//! context and params encapsulation verbatim. A twoway publisher gets an
//! immediate status-0 reply with an empty encapsulation in the request's
//! encoding, before delivery and whatever the operation's signature.

use std::sync::Arc;

use floe::runtime::{Current, DispatchError, DispatchResult};
use floe::wire::Encapsulation;

use crate::event::Event;
use crate::topic::Topic;

fn event_of(current: Current, params: Encapsulation) -> Arc<Event> {
    Event::new(current.operation, current.mode, current.ctx, params)
}

/// `I/T.publish`: publishes the request to every subscriber and link.
pub fn publish(topic: &Topic, current: Current, params: Encapsulation) -> DispatchResult {
    let reply = current.empty_reply();
    topic.publish(&event_of(current, params));
    Ok(reply.into())
}

/// `I/topic.T.publish.<id>`: publishes to subscriber `<id>` only;
/// status 2 if it is not (or no longer) subscribed.
pub fn publish_to(
    topic: &Topic,
    subscriber: &str,
    current: Current,
    params: Encapsulation,
) -> DispatchResult {
    let reply = current.empty_reply();
    if topic.publish_to(subscriber, &event_of(current, params)) {
        Ok(reply.into())
    } else {
        Err(DispatchError::object_not_exist())
    }
}
