//! The encoded form of the store's records (floe-wire, after a version
//! byte), and of a whole state (every topic with its subscribers and
//! links), which is what a replicated broker's snapshots hold.

use bytes::Bytes;
use floe::wire::{Decoder, Encoder};

use super::{LinkRecord, StoreError, SubscriberRecord, TopicRecord};
use crate::types::{read_proxy, QosDict};

/// Version byte at the start of every encoded record.
const RECORD_VERSION: u8 = 1;

/// Version byte at the start of an encoded state.
const STATE_VERSION: u8 = 1;

fn corrupt(table: &'static str) -> impl Fn(floe::wire::Error) -> StoreError {
    move |e| StoreError::Corrupt {
        table,
        reason: e.to_string(),
    }
}

fn check_version(dec: &mut Decoder, table: &'static str) -> Result<(), StoreError> {
    let v = dec.read_u8().map_err(corrupt(table))?;
    if v != RECORD_VERSION {
        return Err(StoreError::Corrupt {
            table,
            reason: format!("unknown record version {v}"),
        });
    }
    Ok(())
}

pub(super) fn encode_subscriber(r: &SubscriberRecord) -> Bytes {
    let mut enc = Encoder::new();
    enc.write_u8(RECORD_VERSION);
    enc.write_i64(r.seq as i64);
    enc.write(&r.qos);
    enc.write(&r.proxy);
    enc.finish()
}

pub(super) fn decode_subscriber(bytes: &[u8]) -> Result<SubscriberRecord, StoreError> {
    const T: &str = "subscribers";
    let mut dec = Decoder::new(Bytes::copy_from_slice(bytes));
    check_version(&mut dec, T)?;
    let seq = dec.read_i64().map_err(corrupt(T))? as u64;
    let qos: QosDict = dec.read().map_err(corrupt(T))?;
    let proxy = read_proxy(&mut dec)
        .map_err(corrupt(T))?
        .ok_or(StoreError::Corrupt {
            table: T,
            reason: "null subscriber proxy".into(),
        })?;
    Ok(SubscriberRecord { proxy, qos, seq })
}

pub(super) fn encode_link(r: &LinkRecord) -> Bytes {
    let mut enc = Encoder::new();
    enc.write_u8(RECORD_VERSION);
    enc.write_i64(r.seq as i64);
    enc.write_string(&r.name);
    enc.write_i32(r.cost);
    enc.write(&r.topic);
    enc.write(&r.link);
    enc.finish()
}

pub(super) fn decode_link(bytes: &[u8]) -> Result<LinkRecord, StoreError> {
    const T: &str = "links";
    let mut dec = Decoder::new(Bytes::copy_from_slice(bytes));
    check_version(&mut dec, T)?;
    let seq = dec.read_i64().map_err(corrupt(T))? as u64;
    let name = dec.read_string().map_err(corrupt(T))?;
    let cost = dec.read_i32().map_err(corrupt(T))?;
    let null = || StoreError::Corrupt {
        table: T,
        reason: "null proxy".into(),
    };
    let topic = read_proxy(&mut dec).map_err(corrupt(T))?.ok_or_else(null)?;
    let link = read_proxy(&mut dec).map_err(corrupt(T))?.ok_or_else(null)?;
    Ok(LinkRecord {
        name,
        cost,
        topic,
        link,
        seq,
    })
}

/// Every topic, subscriber and link of `topics` as one value (a snapshot's
/// data).
pub fn encode_topics(topics: &[TopicRecord]) -> Bytes {
    let mut enc = Encoder::new();
    enc.write_u8(STATE_VERSION);
    enc.write_size(topics.len());
    for t in topics {
        enc.write_string(&t.name);
        enc.write_i64(t.seq as i64);
        enc.write_size(t.subscribers.len());
        for s in &t.subscribers {
            enc.write(&encode_subscriber(s));
        }
        enc.write_size(t.links.len());
        for l in &t.links {
            enc.write(&encode_link(l));
        }
    }
    enc.finish()
}

/// Decodes what [`encode_topics`] wrote.
///
/// # Errors
///
/// `Corrupt` for truncated or malformed input.
pub fn decode_topics(bytes: &[u8]) -> Result<Vec<TopicRecord>, StoreError> {
    const T: &str = "snapshot";
    let mut dec = Decoder::new(Bytes::copy_from_slice(bytes));
    let v = dec.read_u8().map_err(corrupt(T))?;
    if v != STATE_VERSION {
        return Err(StoreError::Corrupt {
            table: T,
            reason: format!("unknown state version {v}"),
        });
    }
    let count = dec.read_size().map_err(corrupt(T))?;
    let mut topics = Vec::new();
    for _ in 0..count {
        let name = dec.read_string().map_err(corrupt(T))?;
        let seq = dec.read_i64().map_err(corrupt(T))? as u64;
        let mut subscribers = Vec::new();
        for _ in 0..dec.read_size().map_err(corrupt(T))? {
            let b: Bytes = dec.read().map_err(corrupt(T))?;
            subscribers.push(decode_subscriber(&b)?);
        }
        let mut links = Vec::new();
        for _ in 0..dec.read_size().map_err(corrupt(T))? {
            let b: Bytes = dec.read().map_err(corrupt(T))?;
            links.push(decode_link(&b)?);
        }
        topics.push(TopicRecord {
            name,
            seq,
            subscribers,
            links,
        });
    }
    Ok(topics)
}
