//! The `IceStorm::TopicManager` servant (`I/TopicManager`): create,
//! retrieve, retrieveAll, getSliceChecksums, and topic destruction.
//!
//! Checked against IceStorm 3.7.8: any topic name is accepted, including
//! the empty name and names with `/` or blanks; `retrieveAll` is a
//! dictionary sorted by name; `getSliceChecksums` returns an empty
//! dictionary; `ice_ids` includes `::IceStorm::TopicManagerInternal`, whose
//! `getReplicaNode` returns a null proxy on a non-replicated broker.

use std::sync::Arc;

use crate::dispatch::{
    builtin, check_mode, close_params, no_params, open_params, Declared, Reply, Request,
};
use crate::instance::Instance;
use crate::topic::{Topic, TopicError};
use crate::types::{encode_proxy, ProxyData, StormException};
use floe::wire::Encode;

/// Type ids of the topic manager, sorted.
pub const TOPIC_MANAGER_IDS: [&str; 3] = [
    "::Ice::Object",
    "::IceStorm::TopicManager",
    "::IceStorm::TopicManagerInternal",
];

/// `create(name)`: a new, empty, durable topic.
///
/// # Errors
///
/// `TopicExists`, or a store failure.
pub async fn create(inst: &Arc<Instance>, name: &str) -> Result<ProxyData, TopicError> {
    let _guard = inst.mutation.lock().await;
    if inst.topic(name).is_some() {
        return Err(StormException::TopicExists(name.to_owned()).into());
    }
    let n = name.to_owned();
    inst.with_store(move |s| s.create_topic(&n)).await?;
    inst.topics
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .insert(name.to_owned(), Topic::new(name));
    if inst.config.trace_topic_manager > 0 {
        tracing::info!(topic = name, "topic created");
    }
    Ok(inst.topic_proxy(name))
}

/// `retrieve(name)`.
///
/// # Errors
///
/// `NoSuchTopic`.
pub fn retrieve(inst: &Instance, name: &str) -> Result<ProxyData, StormException> {
    match inst.topic(name) {
        Some(_) => Ok(inst.topic_proxy(name)),
        None => Err(StormException::NoSuchTopic(name.to_owned())),
    }
}

/// Destroys topic `name`: its subscribers, links and stored state. A topic
/// that is already gone is not an error.
///
/// # Errors
///
/// A store failure (the topic then stays).
pub async fn destroy(inst: &Arc<Instance>, name: &str) -> Result<(), TopicError> {
    let _guard = inst.mutation.lock().await;
    if inst.topic(name).is_none() {
        return Ok(());
    }
    let n = name.to_owned();
    inst.with_store(move |s| s.destroy_topic(&n)).await?;
    let topic = inst
        .topics
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .remove(name);
    if let Some(t) = topic {
        t.shut_down();
    }
    if inst.config.trace_topic_manager > 0 {
        tracing::info!(topic = name, "topic destroyed");
    }
    Ok(())
}

/// The TopicManager servant.
pub async fn dispatch(inst: &Arc<Instance>, req: &Request) -> Reply {
    if let Some(r) = builtin(req, &TOPIC_MANAGER_IDS, "::IceStorm::TopicManagerInternal") {
        return r;
    }
    let r: Result<Reply, Reply> = async {
        let enc = req.encoding();
        match req.operation.as_str() {
            "create" => {
                check_mode(req, Declared::Normal)?;
                let mut dec = open_params(req)?;
                let name = dec.read_string().map_err(|e| Reply::marshal_error(&e))?;
                close_params(&mut dec)?;
                match create(inst, &name).await {
                    Ok(p) => Ok(Reply::ok_with(enc, |e| p.encode(e))),
                    Err(e) => Err(e.to_reply(req)),
                }
            }
            "retrieve" => {
                check_mode(req, Declared::Idempotent)?;
                let mut dec = open_params(req)?;
                let name = dec.read_string().map_err(|e| Reply::marshal_error(&e))?;
                close_params(&mut dec)?;
                match retrieve(inst, &name) {
                    Ok(p) => Ok(Reply::ok_with(enc, |e| p.encode(e))),
                    Err(e) => Err(Reply::user_exception(enc, &e)),
                }
            }
            "retrieveAll" => {
                check_mode(req, Declared::Idempotent)?;
                no_params(req)?;
                let names: Vec<String> = inst
                    .topics
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .keys()
                    .cloned()
                    .collect();
                Ok(Reply::ok_with(enc, |e| {
                    e.write_size(names.len());
                    for n in &names {
                        e.write_string(n);
                        inst.topic_proxy(n).encode(e);
                    }
                }))
            }
            "getSliceChecksums" => {
                check_mode(req, Declared::Idempotent)?;
                no_params(req)?;
                Ok(Reply::ok_with(enc, |e| e.write_size(0)))
            }
            "getReplicaNode" => {
                check_mode(req, Declared::Idempotent)?;
                no_params(req)?;
                Ok(Reply::ok_with(enc, |e| encode_proxy(e, None)))
            }
            _ => Err(Reply::OperationNotExist),
        }
    }
    .await;
    match r {
        Ok(r) | Err(r) => r,
    }
}
