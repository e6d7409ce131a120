//! Applying [`Command`]s to the store's tables: the verdict is decided
//! from the tables inside the write transaction that makes the change.

use floe::wire::Identity;
use redb::{ReadableTable, WriteTransaction};

use super::records::{decode_link, decode_subscriber, encode_link, encode_subscriber};
use super::{dberr, raft, LinkRecord, Store, StoreError, SubscriberRecord, LINKS, META};
use super::{SUBSCRIBERS, TOPICS};
use crate::command::{Command, Outcome, Rejection};
use crate::link::linked_topic_name;

impl Store {
    /// Applies `cmd` in a transaction of its own (a standalone broker);
    /// a record it creates gets the next sequence number of the `meta`
    /// table.
    ///
    /// # Errors
    ///
    /// Database failures (nothing was changed then).
    pub fn apply(&self, cmd: &Command) -> Result<Outcome, StoreError> {
        let txn = self.db.begin_write().map_err(dberr)?;
        let seq = if creates_record(cmd) {
            next_seq(&txn)?
        } else {
            0
        };
        let outcome = apply_in(&txn, seq, cmd)?;
        txn.commit().map_err(dberr)?;
        Ok(outcome)
    }

    /// Applies a batch of a replicated log in one transaction: each
    /// command at its log index (the sequence number of what it
    /// creates), then the replica layer's `meta` entries (the applied log
    /// id, ...) in the same transaction.
    ///
    /// The transaction is not made durable by itself (no fsync): the
    /// entries are already durable in the log of the same database, and
    /// the next durable commit (a log append, a vote, a snapshot) makes
    /// this one durable too, as redb commits form one history. After a
    /// crash the tables and the applied log id go back together to an
    /// earlier consistent point, and Raft applies the entries after it
    /// again from the log (which keeps them until a durable snapshot
    /// covers them).
    ///
    /// # Errors
    ///
    /// Database failures (nothing was changed then).
    pub fn apply_logged(
        &self,
        commands: &[(u64, &Command)],
        meta: &[(&str, &[u8])],
    ) -> Result<Vec<Outcome>, StoreError> {
        let mut txn = self.db.begin_write().map_err(dberr)?;
        txn.set_durability(redb::Durability::None).map_err(dberr)?;
        let mut outcomes = Vec::with_capacity(commands.len());
        for (index, cmd) in commands {
            outcomes.push(apply_in(&txn, *index, cmd)?);
        }
        raft::put_meta_in(&txn, meta)?;
        txn.commit().map_err(dberr)?;
        Ok(outcomes)
    }
}

/// Whether `cmd` adds a record (which takes a sequence number).
fn creates_record(cmd: &Command) -> bool {
    matches!(
        cmd,
        Command::CreateTopic { .. } | Command::Subscribe { .. } | Command::Link { .. }
    )
}

/// The next sequence number (persisted with the record that uses it).
fn next_seq(txn: &WriteTransaction) -> Result<u64, StoreError> {
    let mut meta = txn.open_table(META).map_err(dberr)?;
    let seq = meta.get("seq").map_err(dberr)?.map_or(1, |v| v.value());
    meta.insert("seq", seq + 1).map_err(dberr)?;
    Ok(seq)
}

fn topic_exists(txn: &WriteTransaction, name: &str) -> Result<bool, StoreError> {
    Ok(txn
        .open_table(TOPICS)
        .map_err(dberr)?
        .get(name)
        .map_err(dberr)?
        .is_some())
}

/// The (topic, category, name) key of a subscriber or link.
fn key<'a>(topic: &'a str, id: &'a Identity) -> (&'a str, &'a str, &'a str) {
    (topic, id.category.as_str(), id.name.as_str())
}

/// Applies `cmd` inside `txn`; `seq` numbers what it creates.
pub(super) fn apply_in(
    txn: &WriteTransaction,
    seq: u64,
    cmd: &Command,
) -> Result<Outcome, StoreError> {
    let gone = || Ok(Err(Rejection::Gone(cmd.topic().to_owned())));
    match cmd {
        Command::CreateTopic { name } => {
            if topic_exists(txn, name)? {
                return Ok(Err(Rejection::TopicExists(name.clone())));
            }
            txn.open_table(TOPICS)
                .map_err(dberr)?
                .insert(name.as_str(), seq)
                .map_err(dberr)?;
        }
        Command::DestroyTopic { name } => {
            txn.open_table(TOPICS)
                .map_err(dberr)?
                .remove(name.as_str())
                .map_err(dberr)?;
            let name = name.as_str();
            for def in [SUBSCRIBERS, LINKS] {
                let mut t = txn.open_table(def).map_err(dberr)?;
                t.extract_from_if((name, "", "").., |k, _| k.0 == name)
                    .map_err(dberr)?
                    .for_each(drop);
            }
        }
        Command::Subscribe { topic, proxy, qos } => {
            if !topic_exists(txn, topic)? {
                return gone();
            }
            let k = key(topic, &proxy.identity);
            let mut subs = txn.open_table(SUBSCRIBERS).map_err(dberr)?;
            let taken = subs.get(k).map_err(dberr)?.is_some()
                || txn
                    .open_table(LINKS)
                    .map_err(dberr)?
                    .get(k)
                    .map_err(dberr)?
                    .is_some();
            if taken {
                return Ok(Err(Rejection::AlreadySubscribed));
            }
            let value = encode_subscriber(&SubscriberRecord {
                proxy: proxy.clone(),
                qos: qos.clone(),
                seq,
            });
            subs.insert(k, &value[..]).map_err(dberr)?;
        }
        Command::Unsubscribe { topic, subscriber } => {
            txn.open_table(SUBSCRIBERS)
                .map_err(dberr)?
                .remove(key(topic, subscriber))
                .map_err(dberr)?;
        }
        Command::Link {
            topic,
            name,
            cost,
            linked,
            link,
        } => {
            if !topic_exists(txn, topic)? {
                return gone();
            }
            let k = key(topic, &linked.identity);
            let mut links = txn.open_table(LINKS).map_err(dberr)?;
            if links.get(k).map_err(dberr)?.is_some() {
                return Ok(Err(Rejection::LinkExists(name.clone())));
            }
            let value = encode_link(&LinkRecord {
                name: name.clone(),
                cost: *cost,
                topic: linked.clone(),
                link: link.clone(),
                seq,
            });
            links.insert(k, &value[..]).map_err(dberr)?;
        }
        Command::Unlink { topic, linked } => {
            if !topic_exists(txn, topic)? {
                return gone();
            }
            let found = txn
                .open_table(LINKS)
                .map_err(dberr)?
                .remove(key(topic, linked))
                .map_err(dberr)?
                .is_some();
            if !found {
                return Ok(Err(Rejection::NoSuchLink(linked_topic_name(linked))));
            }
        }
        Command::RemoveFailed {
            topic,
            id,
            seq: at,
            link,
        } => {
            let k = key(topic, id);
            let def = if *link { LINKS } else { SUBSCRIBERS };
            let mut table = txn.open_table(def).map_err(dberr)?;
            let stored = match table.get(k).map_err(dberr)? {
                None => None,
                Some(v) if *link => Some(decode_link(v.value())?.seq),
                Some(v) => Some(decode_subscriber(v.value())?.seq),
            };
            if stored == Some(*at) {
                table.remove(k).map_err(dberr)?;
            }
        }
    }
    Ok(Ok(seq))
}
