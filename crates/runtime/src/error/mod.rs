//! [`Error`]: what a floe-runtime call can fail with, named after Ice's
//! local exceptions, and the retry rules of §7.2 that depend on it.

use floe_wire::protocol::{ReplyStatus, RequestFailed};

pub(crate) mod user;

/// A `Result` whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors of the runtime. Reply statuses 2–7 become the variants of the same
/// name, statuses 8–255 (Ice 3.8) [`Error::DispatchException`]; encoding
/// and protocol errors are wrapped as [`Error::Protocol`].
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Encoding, framing or protocol error (`floe_wire::Error`).
    #[error(transparent)]
    Protocol(#[from] floe_wire::Error),
    /// Reply status 2.
    #[error("object does not exist: {}", describe(.0))]
    ObjectNotExist(RequestFailed),
    /// Reply status 3.
    #[error("facet does not exist: {}", describe(.0))]
    FacetNotExist(RequestFailed),
    /// Reply status 4.
    #[error("operation does not exist: {}", describe(.0))]
    OperationNotExist(RequestFailed),
    /// Reply status 5 (the peer's text).
    #[error("unknown local exception: {0}")]
    UnknownLocalException(String),
    /// Reply status 1 with a user exception the operation declares: view
    /// it with [`Error::user_exception`].
    #[error("user exception {0}")]
    UserException(user::UserError),
    /// Reply status 6, or status 1 with an exception the caller does not
    /// know or the operation does not declare.
    #[error("unknown user exception: {0}")]
    UnknownUserException(String),
    /// Reply status 7.
    #[error("unknown exception: {0}")]
    UnknownException(String),
    /// Reply statuses 8–255: Ice 3.8's `DispatchException` with a status
    /// of its own (`InvalidData` = 8, `Unauthorized` = 9, or any value a
    /// dispatch answers with) and the peer's message. Only this call
    /// fails; the connection stays up.
    #[error("dispatch failed with reply status {status}: {message}")]
    DispatchException {
        /// The reply status.
        status: ReplyStatus,
        /// The message the peer sent.
        message: String,
    },
    /// TCP connection refused.
    #[error("connection refused: {0}")]
    ConnectionRefused(String),
    /// Connecting failed for another reason (unreachable, DNS, ...).
    #[error("connect failed: {0}")]
    ConnectFailed(String),
    /// Connecting took longer than the endpoint timeout.
    #[error("connect timed out")]
    ConnectTimeout,
    /// The peer closed or reset the connection.
    #[error("connection lost: {0}")]
    ConnectionLost(String),
    /// The peer closed the connection gracefully (CloseConnection) before
    /// answering; always retried.
    #[error("connection closed by the peer (CloseConnection)")]
    CloseConnection,
    /// The connection was closed locally.
    #[error("connection manually closed")]
    ConnectionManuallyClosed,
    /// ACM closed a connection that still had requests pending.
    #[error("connection timed out (ACM)")]
    ConnectionTimeout,
    /// The connection was aborted: Ice 3.8's idle check found the peer
    /// silent for the idle timeout (`Ice.Connection.*.IdleTimeout`).
    #[error("connection aborted: {0}")]
    ConnectionAborted(String),
    /// A write made no progress within the timeout (the peer stopped
    /// reading).
    #[error("timeout: the peer does not read")]
    Timeout,
    /// `ice_invocation_timeout` elapsed.
    #[error("invocation timed out")]
    InvocationTimeout,
    /// A value-returning operation invoked on a oneway proxy.
    #[error("twoway-only operation invoked on a oneway or datagram proxy")]
    TwowayOnly,
    /// The communicator was destroyed.
    #[error("communicator destroyed")]
    CommunicatorDestroyed,
    /// The object adapter was deactivated.
    #[error("object adapter deactivated")]
    ObjectAdapterDeactivated,
    /// An object adapter or servant registration conflict.
    #[error("already registered: {0}")]
    AlreadyRegistered(String),
    /// A configuration or argument error (bad property, bad proxy string...).
    #[error("initialization error: {0}")]
    Initialization(String),
    /// A proxy has no usable endpoint.
    #[error("no endpoint: {0}")]
    NoEndpoint(String),
    /// Other I/O error.
    #[error("socket error: {0}")]
    Socket(String),
    /// A TLS (`ssl`, `wss`) handshake or peer verification failed: a bad
    /// or expired certificate, a name that does not match, an untrusted
    /// CA, a peer refused by `IceSSL.TrustOnly`, or a peer that does not
    /// speak TLS (Ice's `SecurityException`).
    #[error("security exception: {0}")]
    Security(String),

    /// The locator does not know the object adapter, replica group or
    /// well-known object an indirect proxy names (or the registry does
    /// not know an adapter that tries to register).
    #[error("no {kind} with id `{id}` is registered")]
    NotRegistered {
        /// `object adapter`, `replica group` or `object`.
        kind: String,
        /// The adapter id, replica group id or stringified identity.
        id: String,
    },
    /// Another server is active with this object adapter id.
    #[error("object adapter id `{0}` is in use")]
    AdapterIdInUse(String),
}

fn describe(f: &RequestFailed) -> String {
    let id = if f.identity.category.is_empty() {
        f.identity.name.to_string()
    } else {
        format!("{}/{}", f.identity.category, f.identity.name)
    };
    if f.facet.is_empty() {
        format!("{id} operation {}", f.operation)
    } else {
        format!("{id} -f {} operation {}", f.facet, f.operation)
    }
}

impl Error {
    /// The user exception this error carries, viewed as `E` (its own type
    /// or one of its bases); `None` for any other error. See
    /// [`UserError`](crate::UserError) for an example.
    pub fn user_exception<E: floe_wire::exception::UserException>(&self) -> Option<&E> {
        match self {
            Error::UserException(e) => e.downcast_ref::<E>(),
            _ => None,
        }
    }

    /// The Ice type id of the exception this error stands for.
    pub fn ice_name(&self) -> &'static str {
        match self {
            Error::Protocol(e) => e.ice_name(),
            Error::ObjectNotExist(_) => "::Ice::ObjectNotExistException",
            Error::FacetNotExist(_) => "::Ice::FacetNotExistException",
            Error::OperationNotExist(_) => "::Ice::OperationNotExistException",
            Error::UnknownLocalException(_) => "::Ice::UnknownLocalException",
            Error::UserException(e) => e.ice_id(),
            Error::UnknownUserException(_) => "::Ice::UnknownUserException",
            Error::UnknownException(_) => "::Ice::UnknownException",
            Error::DispatchException { .. } => "::Ice::DispatchException",
            Error::ConnectionRefused(_) => "::Ice::ConnectionRefusedException",
            Error::ConnectFailed(_) => "::Ice::ConnectFailedException",
            Error::ConnectTimeout => "::Ice::ConnectTimeoutException",
            Error::ConnectionLost(_) => "::Ice::ConnectionLostException",
            Error::CloseConnection => "::Ice::CloseConnectionException",
            Error::ConnectionManuallyClosed => "::Ice::ConnectionManuallyClosedException",
            Error::ConnectionTimeout => "::Ice::ConnectionTimeoutException",
            Error::ConnectionAborted(_) => "::Ice::ConnectionAbortedException",
            Error::Timeout => "::Ice::TimeoutException",
            Error::InvocationTimeout => "::Ice::InvocationTimeoutException",
            Error::TwowayOnly => "::Ice::TwowayOnlyException",
            Error::CommunicatorDestroyed => "::Ice::CommunicatorDestroyedException",
            Error::ObjectAdapterDeactivated => "::Ice::ObjectAdapterDeactivatedException",
            Error::AlreadyRegistered(_) => "::Ice::AlreadyRegisteredException",
            Error::Initialization(_) => "::Ice::InitializationException",
            Error::NoEndpoint(_) => "::Ice::NoEndpointException",
            Error::Socket(_) => "::Ice::SocketException",
            Error::Security(_) => "::Ice::SecurityException",

            Error::NotRegistered { .. } => "::Ice::NotRegisteredException",
            Error::AdapterIdInUse(_) => "::Ice::ObjectAdapterIdInUseException",
        }
    }

    /// The reply status of an error that a reply carried (statuses 1–255:
    /// a user exception, 2–4, 5–7 or [`Error::DispatchException`]); `None`
    /// for local errors.
    ///
    /// ```
    /// use floe_runtime::{Error, ReplyStatus};
    ///
    /// let e = Error::DispatchException {
    ///     status: ReplyStatus::UNAUTHORIZED,
    ///     message: "no token".into(),
    /// };
    /// assert_eq!(e.reply_status(), Some(ReplyStatus::UNAUTHORIZED));
    /// assert_eq!(Error::ConnectTimeout.reply_status(), None);
    /// ```
    pub fn reply_status(&self) -> Option<ReplyStatus> {
        Some(match self {
            Error::UserException(_) => ReplyStatus::USER_EXCEPTION,
            Error::ObjectNotExist(_) => ReplyStatus::OBJECT_NOT_EXIST,
            Error::FacetNotExist(_) => ReplyStatus::FACET_NOT_EXIST,
            Error::OperationNotExist(_) => ReplyStatus::OPERATION_NOT_EXIST,
            Error::UnknownLocalException(_) => ReplyStatus::UNKNOWN_LOCAL_EXCEPTION,
            Error::UnknownUserException(_) => ReplyStatus::UNKNOWN_USER_EXCEPTION,
            Error::UnknownException(_) => ReplyStatus::UNKNOWN_EXCEPTION,
            Error::DispatchException { status, .. } => *status,
            _ => return None,
        })
    }

    /// Whether a request that failed with this error may be sent again
    /// (§7.2). `sent` says whether the request had been written;
    /// `idempotent` whether its mode is Idempotent or Nonmutating.
    pub fn is_retryable(&self, sent: bool, idempotent: bool) -> bool {
        match self {
            // Always retried: the closer promises it did not dispatch.
            Error::CloseConnection => true,
            // Never retried.
            Error::Protocol(e) if !e.is_protocol_error() => false,
            Error::Protocol(floe_wire::Error::MemoryLimit { .. }) => false,
            Error::UserException(_)
            | Error::ObjectNotExist(_)
            | Error::FacetNotExist(_)
            | Error::OperationNotExist(_)
            | Error::DispatchException { .. }
            | Error::CommunicatorDestroyed
            | Error::ObjectAdapterDeactivated
            | Error::ConnectionManuallyClosed
            | Error::InvocationTimeout
            | Error::TwowayOnly
            | Error::AlreadyRegistered(_)
            | Error::Initialization(_)
            | Error::NotRegistered { .. }
            | Error::AdapterIdInUse(_)
            | Error::NoEndpoint(_)
            | Error::Security(_) => false,
            // Statuses 5-7 and connection failures: retried when nothing
            // was sent or the operation is idempotent.
            _ => !sent || idempotent,
        }
    }

    pub(crate) fn from_io(e: &std::io::Error) -> Error {
        use std::io::ErrorKind::*;
        match e.kind() {
            ConnectionRefused => Error::ConnectionRefused(e.to_string()),
            ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof => {
                Error::ConnectionLost(e.to_string())
            }
            TimedOut => Error::ConnectTimeout,
            _ => Error::Socket(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_rules() {
        assert!(Error::CloseConnection.is_retryable(true, false));
        assert!(Error::ConnectionRefused("x".into()).is_retryable(false, false));
        assert!(!Error::ConnectionLost("x".into()).is_retryable(true, false));
        assert!(Error::ConnectionLost("x".into()).is_retryable(true, true));
        assert!(Error::UnknownLocalException("x".into()).is_retryable(true, true));
        assert!(!Error::UnknownLocalException("x".into()).is_retryable(true, false));
        assert!(!Error::ObjectNotExist(RequestFailed::default()).is_retryable(true, true));
        assert!(!Error::InvocationTimeout.is_retryable(false, true));
        assert!(!Error::Security("bad certificate".into()).is_retryable(false, true));
        assert!(
            !Error::Protocol(floe_wire::Error::MemoryLimit { size: 2, max: 1 })
                .is_retryable(true, true)
        );
    }
}
