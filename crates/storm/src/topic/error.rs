//! [`TopicError`]: why a topic or topic manager operation failed, and how
//! a servant answers it ([`DispatchError`]).

use floe::runtime::{DispatchError, UserError};

use crate::command::Rejection;
use crate::replica::ReplicaError;
use crate::store::StoreError;
use crate::types::{
    AlreadySubscribed, BadQoS, InvalidSubscriber, LinkExists, NoSuchLink, NoSuchTopic, TopicExists,
};

/// Errors of topic operations.
#[derive(Debug, thiserror::Error)]
pub enum TopicError {
    /// An IceStorm user exception (a generated exception type).
    #[error("{0}")]
    User(UserError),
    /// The store failed; nothing was changed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A local failure (status 5 text), e.g. resolving a remote link.
    #[error("{0}")]
    Local(String),
    /// A failure reported as status 7, as IceStorm does for a null link.
    #[error("{0}")]
    Unknown(String),
    /// The topic was destroyed meanwhile (`ObjectNotExistException`).
    #[error("topic `{0}' no longer exists")]
    Gone(String),
    /// A replicated broker could not make the change (no majority).
    #[error(transparent)]
    Replica(#[from] ReplicaError),
}

impl From<Rejection> for TopicError {
    fn from(r: Rejection) -> Self {
        match r {
            Rejection::Gone(name) => TopicError::Gone(name),
            r => TopicError::User(r.to_user_error()),
        }
    }
}

macro_rules! user_exceptions {
    ($($t:ty),*) => {
        $(impl From<$t> for TopicError {
            fn from(e: $t) -> Self {
                TopicError::User(UserError::new(e))
            }
        })*
    };
}
user_exceptions!(
    AlreadySubscribed,
    BadQoS,
    InvalidSubscriber,
    LinkExists,
    NoSuchLink,
    NoSuchTopic,
    TopicExists
);

impl From<TopicError> for DispatchError {
    /// A user exception is sent as one (status 1), even one the operation
    /// does not declare (IceStorm raises `InvalidSubscriber` from
    /// `unsubscribe`); store failures are status 7.
    fn from(e: TopicError) -> Self {
        match e {
            TopicError::User(e) => DispatchError::UserException(e),
            TopicError::Store(e) => DispatchError::UnknownException(e.to_string()),
            TopicError::Local(m) => DispatchError::UnknownLocalException(m),
            TopicError::Unknown(m) => DispatchError::UnknownException(m),
            TopicError::Gone(_) => DispatchError::object_not_exist(),
            TopicError::Replica(e) => DispatchError::UnknownLocalException(e.to_string()),
        }
    }
}
