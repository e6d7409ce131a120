//! Publisher objects on the Publish adapter: `I/T.publish` (every
//! subscriber), `I/topic.T.publish.<id>` (one subscriber) and the link
//! target `I/T.link` (`TopicLink::forward`).
//!
//! A publisher is a blob servant (§8.4): **any** operation, built-ins
//! included, becomes an event carrying the request's operation, mode,
//! context and params encapsulation verbatim. A twoway publisher gets an
//! immediate status-0 reply with an empty encapsulation in the request's
//! encoding, before delivery and whatever the operation's signature.

use std::sync::Arc;

use crate::dispatch::{builtin, check_mode, Declared, Reply, Request};
use crate::event::Event;
use crate::link::decode_forward;
use crate::topic::Topic;
use crate::types::operation_mode;

/// Type ids of a `TopicLink` object, sorted.
pub const TOPIC_LINK_IDS: [&str; 2] = ["::Ice::Object", "::IceStorm::TopicLink"];

fn event_of(req: &Request) -> Result<Arc<Event>, Reply> {
    let mode = operation_mode(req.mode).map_err(|e| Reply::marshal_error(&e))?;
    Ok(Event::new(
        req.operation.clone(),
        mode,
        req.context.clone(),
        req.params.clone(),
    ))
}

/// `I/T.publish`: publishes the request to every subscriber and link.
pub fn publish(topic: &Topic, req: &Request) -> Reply {
    match event_of(req) {
        Ok(ev) => {
            topic.publish(&ev);
            Reply::ok_empty(req.encoding())
        }
        Err(r) => r,
    }
}

/// `I/topic.T.publish.<id>`: publishes to subscriber `<id>` only;
/// status 2 if it is not (or no longer) subscribed.
pub fn publish_to(topic: &Topic, subscriber: &str, req: &Request) -> Reply {
    match event_of(req) {
        Ok(ev) if topic.publish_to(subscriber, &ev) => Reply::ok_empty(req.encoding()),
        Ok(_) => Reply::ObjectNotExist,
        Err(r) => r,
    }
}

/// `I/T.link`: events forwarded by a linked topic, published here (and not
/// forwarded over this topic's own links).
pub fn forward(topic: &Topic, req: &Request) -> Reply {
    if let Some(r) = builtin(req, &TOPIC_LINK_IDS, "::IceStorm::TopicLink") {
        return r;
    }
    if req.operation != "forward" {
        return Reply::OperationNotExist;
    }
    if let Err(r) = check_mode(req, Declared::Normal) {
        return r;
    }
    match decode_forward(req) {
        Ok(events) => {
            for ev in &events {
                topic.publish(ev);
            }
            Reply::ok_empty(req.encoding())
        }
        Err(r) => r,
    }
}
