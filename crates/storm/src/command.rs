//! [`Command`]: every change to a broker's durable state (topics,
//! subscribers with their QoS, links) as a value.
//!
//! A standalone broker applies a command to its store and memory at once
//! ([`crate::state`]); a replicated one appends it to the Raft log and
//! every replica applies it when a majority holds it
//! ([`crate::replica`]). Either way the verdict ([`Outcome`]) comes from
//! the store's content when the command is applied, so every replica
//! reaches the same one.
//!
//! The encoding (in the Raft log and between replicas) is floe-wire's,
//! after a version byte and a kind byte, as the store's records.

use bytes::Bytes;
use floe::wire::{Decoder, Encoder, Identity};

use crate::types::{
    read_proxy, AlreadySubscribed, LinkExists, NoSuchLink, NoSuchTopic, ProxyData, QosDict,
    TopicExists,
};

/// Version byte at the start of an encoded command.
const COMMAND_VERSION: u8 = 1;

/// A change to the broker's durable state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `TopicManager::create`.
    CreateTopic {
        /// The new topic.
        name: String,
    },
    /// `Topic::destroy`: the topic with its subscribers and links.
    DestroyTopic {
        /// The topic.
        name: String,
    },
    /// `Topic::subscribeAndGetPublisher`, QoS already validated.
    Subscribe {
        /// The topic.
        topic: String,
        /// The subscriber proxy (its identity is the key).
        proxy: ProxyData,
        /// The QoS as given.
        qos: QosDict,
    },
    /// `Topic::unsubscribe`.
    Unsubscribe {
        /// The topic.
        topic: String,
        /// The subscriber's identity.
        subscriber: Identity,
    },
    /// `Topic::link`, the linked topic's link object already resolved.
    Link {
        /// The topic events come from.
        topic: String,
        /// The linked topic's name.
        name: String,
        /// The link's cost.
        cost: i32,
        /// The linked topic (its identity is the key).
        linked: ProxyData,
        /// The linked topic's `TopicLink` object.
        link: ProxyData,
    },
    /// `Topic::unlink`.
    Unlink {
        /// The topic.
        topic: String,
        /// The linked topic's identity.
        linked: Identity,
    },
    /// A subscriber (or link) that failed and is removed: only the
    /// subscription made at `seq`, not a later one with the same identity.
    RemoveFailed {
        /// The topic.
        topic: String,
        /// The subscriber's (or linked topic's) identity.
        id: Identity,
        /// The subscription's sequence number.
        seq: u64,
        /// Whether it is a link.
        link: bool,
    },
}

/// Why a command was refused when applied (an IceStorm user exception,
/// or, for `Gone`, `ObjectNotExistException` on the topic).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// `create` of a name in use.
    TopicExists(String),
    /// The topic no longer exists (destroyed meanwhile).
    Gone(String),
    /// The subscriber's identity already subscribes (or is linked).
    AlreadySubscribed,
    /// `link` to a topic already linked.
    LinkExists(String),
    /// `unlink` of a topic not linked.
    NoSuchLink(String),
}

/// A command's verdict: the sequence number it was applied at (which
/// orders a topic's subscribers), or why it was refused.
pub type Outcome = Result<u64, Rejection>;

impl Rejection {
    /// The IceStorm user exception this rejection is raised as (`Gone` as
    /// `NoSuchTopic` between replicas).
    pub fn to_user_error(&self) -> floe::runtime::UserError {
        use floe::runtime::UserError;
        match self {
            Rejection::TopicExists(name) => UserError::new(TopicExists { name: name.clone() }),
            Rejection::Gone(name) => UserError::new(NoSuchTopic { name: name.clone() }),
            Rejection::AlreadySubscribed => UserError::new(AlreadySubscribed {}),
            Rejection::LinkExists(name) => UserError::new(LinkExists { name: name.clone() }),
            Rejection::NoSuchLink(name) => UserError::new(NoSuchLink { name: name.clone() }),
        }
    }

    /// The rejection a replica raised as `e` (see [`Rejection::to_user_error`]).
    pub fn from_user_error(e: &floe::runtime::UserError) -> Option<Rejection> {
        if let Some(e) = e.downcast_ref::<TopicExists>() {
            Some(Rejection::TopicExists(e.name.clone()))
        } else if let Some(e) = e.downcast_ref::<NoSuchTopic>() {
            Some(Rejection::Gone(e.name.clone()))
        } else if e.downcast_ref::<AlreadySubscribed>().is_some() {
            Some(Rejection::AlreadySubscribed)
        } else if let Some(e) = e.downcast_ref::<LinkExists>() {
            Some(Rejection::LinkExists(e.name.clone()))
        } else {
            e.downcast_ref::<NoSuchLink>()
                .map(|e| Rejection::NoSuchLink(e.name.clone()))
        }
    }
}

/// A command that does not decode.
#[derive(Debug, thiserror::Error)]
#[error("undecodable broker command: {0}")]
pub struct CommandDecodeError(String);

impl Command {
    /// The topic the command is about.
    pub fn topic(&self) -> &str {
        match self {
            Command::CreateTopic { name } | Command::DestroyTopic { name } => name,
            Command::Subscribe { topic, .. }
            | Command::Unsubscribe { topic, .. }
            | Command::Link { topic, .. }
            | Command::Unlink { topic, .. }
            | Command::RemoveFailed { topic, .. } => topic,
        }
    }

    /// The encoded command.
    pub fn encode(&self) -> Bytes {
        let mut enc = Encoder::new();
        enc.write_u8(COMMAND_VERSION);
        match self {
            Command::CreateTopic { name } => {
                enc.write_u8(0);
                enc.write_string(name);
            }
            Command::DestroyTopic { name } => {
                enc.write_u8(1);
                enc.write_string(name);
            }
            Command::Subscribe { topic, proxy, qos } => {
                enc.write_u8(2);
                enc.write_string(topic);
                enc.write(proxy);
                enc.write(qos);
            }
            Command::Unsubscribe { topic, subscriber } => {
                enc.write_u8(3);
                enc.write_string(topic);
                enc.write(subscriber);
            }
            Command::Link {
                topic,
                name,
                cost,
                linked,
                link,
            } => {
                enc.write_u8(4);
                enc.write_string(topic);
                enc.write_string(name);
                enc.write_i32(*cost);
                enc.write(linked);
                enc.write(link);
            }
            Command::Unlink { topic, linked } => {
                enc.write_u8(5);
                enc.write_string(topic);
                enc.write(linked);
            }
            Command::RemoveFailed {
                topic,
                id,
                seq,
                link,
            } => {
                enc.write_u8(6);
                enc.write_string(topic);
                enc.write(id);
                enc.write_i64(*seq as i64);
                enc.write_bool(*link);
            }
        }
        enc.finish()
    }

    /// Decodes an encoded command.
    ///
    /// # Errors
    ///
    /// Truncated or malformed input, an unknown version or kind, a null proxy.
    pub fn decode(bytes: &[u8]) -> Result<Command, CommandDecodeError> {
        let mut dec = Decoder::new(Bytes::copy_from_slice(bytes));
        Self::read(&mut dec).map_err(|e| CommandDecodeError(e.to_string()))
    }

    fn read(dec: &mut Decoder) -> Result<Command, Box<dyn std::error::Error>> {
        let version = dec.read_u8()?;
        if version != COMMAND_VERSION {
            return Err(format!("unknown command version {version}").into());
        }
        let proxy = |dec: &mut Decoder| -> Result<ProxyData, Box<dyn std::error::Error>> {
            read_proxy(dec)?.ok_or_else(|| "null proxy".into())
        };
        let cmd = match dec.read_u8()? {
            0 => Command::CreateTopic {
                name: dec.read_string()?,
            },
            1 => Command::DestroyTopic {
                name: dec.read_string()?,
            },
            2 => Command::Subscribe {
                topic: dec.read_string()?,
                proxy: proxy(dec)?,
                qos: dec.read()?,
            },
            3 => Command::Unsubscribe {
                topic: dec.read_string()?,
                subscriber: dec.read()?,
            },
            4 => Command::Link {
                topic: dec.read_string()?,
                name: dec.read_string()?,
                cost: dec.read_i32()?,
                linked: proxy(dec)?,
                link: proxy(dec)?,
            },
            5 => Command::Unlink {
                topic: dec.read_string()?,
                linked: dec.read()?,
            },
            6 => Command::RemoveFailed {
                topic: dec.read_string()?,
                id: dec.read()?,
                seq: dec.read_i64()? as u64,
                link: dec.read_bool()?,
            },
            kind => return Err(format!("unknown command kind {kind}").into()),
        };
        if dec.remaining() != 0 {
            return Err(format!("{} bytes after the command", dec.remaining()).into());
        }
        Ok(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{direct_proxy, tcp_endpoint};

    fn proxy(name: &str) -> ProxyData {
        direct_proxy(
            Identity::from_name(name),
            vec![tcp_endpoint("127.0.0.1", 5000, 60000)],
        )
    }

    #[test]
    fn every_command_round_trips() {
        let mut qos = QosDict::new();
        qos.insert("reliability".into(), "ordered".into());
        let commands = [
            Command::CreateTopic { name: "a b".into() },
            Command::DestroyTopic { name: "".into() },
            Command::Subscribe {
                topic: "t".into(),
                proxy: proxy("s"),
                qos,
            },
            Command::Unsubscribe {
                topic: "t".into(),
                subscriber: Identity::new("s", "c"),
            },
            Command::Link {
                topic: "t".into(),
                name: "u".into(),
                cost: -3,
                linked: proxy("topic.u"),
                link: proxy("u.link"),
            },
            Command::Unlink {
                topic: "t".into(),
                linked: Identity::from_name("topic.u"),
            },
            Command::RemoveFailed {
                topic: "t".into(),
                id: Identity::from_name("s"),
                seq: 42,
                link: true,
            },
        ];
        for c in commands {
            assert_eq!(Command::decode(&c.encode()).unwrap(), c);
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let good = Command::CreateTopic { name: "t".into() }.encode();
        for bad in [&[][..], &[2, 0][..], &[1, 9][..], &good[..good.len() - 1]] {
            assert!(Command::decode(bad).is_err(), "{bad:?}");
        }
        let mut trailing = good.to_vec();
        trailing.push(0);
        assert!(Command::decode(&trailing).is_err());
    }
}
