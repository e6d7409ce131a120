//! What a dispatch produces: [`Dispatch`] (ready now or a future),
//! [`DispatchResult`], the reply's [`ReplyData`] and the [`DispatchError`]
//! that becomes a reply status. The connection's protocol core and the
//! object adapter both speak in these types; they know nothing of
//! servants, so this module depends on nothing but floe-wire and the
//! runtime's [`Error`](crate::error::Error).
//!
//! A dispatch is either [`Dispatch::Ready`] (a synchronous servant: no
//! allocation, the reply is written before the connection reads on) or
//! [`Dispatch::Pending`] (a boxed future the connection task polls beside
//! its other dispatches, so one slow dispatch never blocks the others on
//! the connection and no task is spawned per request).

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use floe_wire::protocol::RequestFailed;

/// What a servant answers: the results encapsulation (6-byte header
/// included, in the request's encoding, see [`Current::encode_reply`](crate::Current::encode_reply)) or
/// an error that becomes reply status 1–7.
pub type DispatchResult = Result<ReplyData, DispatchError>;

/// A results encapsulation (6-byte header included) as the connection
/// sends it: one buffer, or a head and a large payload written after it
/// without being copied ([`Current::encode_reply_with_payload`](crate::Current::encode_reply_with_payload), e.g. a
/// `sequence<byte>` result the servant returned as `Bytes`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplyData {
    head: Bytes,
    payload: Bytes,
}

impl ReplyData {
    /// A whole encapsulation in one buffer.
    pub fn new(encapsulation: Bytes) -> Self {
        ReplyData {
            head: encapsulation,
            payload: Bytes::new(),
        }
    }

    /// An encapsulation made of `head` (its 6-byte header, whose size
    /// counts `payload` too, and the data before the payload) then
    /// `payload`.
    pub(crate) fn split(head: Bytes, payload: Bytes) -> Self {
        ReplyData { head, payload }
    }

    /// Bytes of the whole encapsulation.
    pub fn len(&self) -> usize {
        self.head.len() + self.payload.len()
    }

    /// Whether it holds no bytes at all (not a valid encapsulation).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The head and the payload (empty unless split).
    pub fn parts(&self) -> (&Bytes, &Bytes) {
        (&self.head, &self.payload)
    }

    /// The whole encapsulation in one buffer (copied when split).
    pub fn to_bytes(&self) -> Bytes {
        if self.payload.is_empty() {
            return self.head.clone();
        }
        let mut b = bytes::BytesMut::with_capacity(self.len());
        b.extend_from_slice(&self.head);
        b.extend_from_slice(&self.payload);
        b.freeze()
    }
}

impl From<Bytes> for ReplyData {
    fn from(encapsulation: Bytes) -> Self {
        ReplyData::new(encapsulation)
    }
}

/// A boxed dispatch future.
pub type DispatchFuture = Pin<Box<dyn Future<Output = DispatchResult> + Send + 'static>>;

/// The outcome of [`Servant::dispatch`](crate::Servant::dispatch): ready now, or a future.
pub enum Dispatch {
    /// Done synchronously.
    Ready(DispatchResult),
    /// Still running; the connection task polls it.
    Pending(DispatchFuture),
}

impl Dispatch {
    /// A ready result (the encapsulation as `Bytes` or [`ReplyData`]).
    pub fn ready<R: Into<ReplyData>>(result: Result<R, DispatchError>) -> Self {
        Dispatch::Ready(result.map(Into::into))
    }

    /// A failed dispatch (reply status 1–7).
    pub fn error(e: DispatchError) -> Self {
        Dispatch::Ready(Err(e))
    }

    /// An asynchronous dispatch.
    pub fn future<R: Into<ReplyData>>(
        f: impl Future<Output = Result<R, DispatchError>> + Send + 'static,
    ) -> Self {
        Dispatch::Pending(Box::pin(async move { f.await.map(Into::into) }))
    }

    /// An asynchronous dispatch whose future already yields a
    /// [`DispatchResult`]: boxed as it is, with no adapter around it (what
    /// generated dispatchers use: one move of the future fewer than
    /// [`Dispatch::future`]).
    ///
    /// ```
    /// use floe_runtime::{Dispatch, ReplyData};
    /// let reply = bytes::Bytes::from_static(&[6, 0, 0, 0, 1, 1]);
    /// let d = Dispatch::pending(async move { Ok(ReplyData::from(reply)) });
    /// assert!(matches!(d, Dispatch::Pending(_)));
    /// ```
    pub fn pending(f: impl Future<Output = DispatchResult> + Send + 'static) -> Self {
        Dispatch::Pending(Box::pin(f))
    }

    /// Calls `f` with the result once the dispatch is done: at once when
    /// it is ready, else when its future completes (not when the future
    /// panics or is dropped unfinished, e.g. with its connection). What a
    /// middleware uses to time or count dispatches.
    ///
    /// ```
    /// use floe_runtime::{Dispatch, DispatchError};
    /// let d = Dispatch::error(DispatchError::operation_not_exist())
    ///     .inspect(|result| assert!(result.is_err()));
    /// # drop(d);
    /// ```
    pub fn inspect(self, f: impl FnOnce(&DispatchResult) + Send + 'static) -> Self {
        match self {
            Dispatch::Ready(result) => {
                f(&result);
                Dispatch::Ready(result)
            }
            Dispatch::Pending(fut) => Dispatch::Pending(Box::pin(async move {
                let result = fut.await;
                f(&result);
                result
            })),
        }
    }
}

impl std::fmt::Debug for Dispatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dispatch::Ready(r) => f.debug_tuple("Ready").field(r).finish(),
            Dispatch::Pending(_) => f.write_str("Pending(..)"),
        }
    }
}

/// A failed dispatch, mapped onto reply statuses 1–255 (§3.1).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DispatchError {
    /// Status 1: a user exception the servant raised (generated code
    /// implements `From<E>` for every Slice exception `E`). The generated
    /// dispatcher encodes it in its operation's format; the runtime encodes
    /// one that reaches it in the compact format.
    #[error("user exception {0}")]
    UserException(crate::error::user::UserError),
    /// Status 1: a user exception already encoded as an encapsulation
    /// (6-byte header included).
    #[error("user exception (encoded)")]
    EncodedUserException(Bytes),
    /// Status 2. Fields left empty (identity, facet and operation all
    /// empty) are filled from the request, as Ice does.
    #[error("object does not exist")]
    ObjectNotExist(RequestFailed),
    /// Status 3. Empty fields are filled from the request.
    #[error("facet does not exist")]
    FacetNotExist(RequestFailed),
    /// Status 4. Empty fields are filled from the request.
    #[error("operation does not exist")]
    OperationNotExist(RequestFailed),
    /// Status 5: an Ice local exception (text).
    #[error("unknown local exception: {0}")]
    UnknownLocalException(String),
    /// Status 6 (text).
    #[error("unknown user exception: {0}")]
    UnknownUserException(String),
    /// Status 7: any other failure (text).
    #[error("unknown exception: {0}")]
    UnknownException(String),
    /// Statuses 8–255 (Ice 3.8's `DispatchException`): `InvalidData`,
    /// `Unauthorized` or any other status, with a message. Build it with
    /// [`DispatchError::with_status`], which keeps statuses 2–7 in their
    /// own variants. Ice 3.7 peers raise `UnknownReplyStatusException` for
    /// it (and keep the connection), as they do for a 3.8 server.
    #[error("dispatch exception (reply status {status}): {message}")]
    DispatchException {
        /// The reply status, 8–255.
        status: floe_wire::protocol::ReplyStatus,
        /// The message sent with it.
        message: String,
    },
}

impl DispatchError {
    /// Status 2; the runtime fills identity, facet and operation from the
    /// request.
    pub fn object_not_exist() -> Self {
        DispatchError::ObjectNotExist(RequestFailed::default())
    }

    /// Status 3; the runtime fills the fields from the request.
    pub fn facet_not_exist() -> Self {
        DispatchError::FacetNotExist(RequestFailed::default())
    }

    /// Status 4 (an operation the servant does not implement); the runtime
    /// fills the fields from the request.
    pub fn operation_not_exist() -> Self {
        DispatchError::OperationNotExist(RequestFailed::default())
    }

    /// A failure with reply status `status` and `message`, as Ice 3.8's
    /// `DispatchException(replyStatus, message)`: statuses 2–4 become
    /// their own variants (with the request's identity, facet and
    /// operation; the message is not sent), 5–7 theirs, 8–255
    /// [`DispatchError::DispatchException`]. Statuses 0 and 1 are not
    /// failures; they become status 7 with the message.
    ///
    /// ```
    /// use floe_runtime::{DispatchError, ReplyStatus};
    ///
    /// let e = DispatchError::with_status(ReplyStatus::from_u8(42), "custom");
    /// assert_eq!(e.reply_status(), ReplyStatus::from_u8(42));
    /// let e = DispatchError::with_status(ReplyStatus::UNKNOWN_EXCEPTION, "x");
    /// assert_eq!(e, DispatchError::UnknownException("x".into()));
    /// ```
    pub fn with_status(
        status: floe_wire::protocol::ReplyStatus,
        message: impl Into<String>,
    ) -> Self {
        use floe_wire::protocol::ReplyStatus as S;
        let message = message.into();
        match status {
            S::OBJECT_NOT_EXIST => Self::object_not_exist(),
            S::FACET_NOT_EXIST => Self::facet_not_exist(),
            S::OPERATION_NOT_EXIST => Self::operation_not_exist(),
            S::UNKNOWN_LOCAL_EXCEPTION => DispatchError::UnknownLocalException(message),
            S::UNKNOWN_USER_EXCEPTION => DispatchError::UnknownUserException(message),
            S::OK | S::USER_EXCEPTION | S::UNKNOWN_EXCEPTION => {
                DispatchError::UnknownException(message)
            }
            status => DispatchError::DispatchException { status, message },
        }
    }

    /// Ice 3.8's `InvalidData` (status 8): the request's data was invalid.
    pub fn invalid_data(message: impl Into<String>) -> Self {
        Self::with_status(floe_wire::protocol::ReplyStatus::INVALID_DATA, message)
    }

    /// Ice 3.8's `Unauthorized` (status 9): the caller may not do this.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::with_status(floe_wire::protocol::ReplyStatus::UNAUTHORIZED, message)
    }

    /// The reply status this error is sent with.
    pub fn reply_status(&self) -> floe_wire::protocol::ReplyStatus {
        use floe_wire::protocol::ReplyStatus as S;
        match self {
            DispatchError::UserException(_) | DispatchError::EncodedUserException(_) => {
                S::USER_EXCEPTION
            }
            DispatchError::ObjectNotExist(_) => S::OBJECT_NOT_EXIST,
            DispatchError::FacetNotExist(_) => S::FACET_NOT_EXIST,
            DispatchError::OperationNotExist(_) => S::OPERATION_NOT_EXIST,
            DispatchError::UnknownLocalException(_) => S::UNKNOWN_LOCAL_EXCEPTION,
            DispatchError::UnknownUserException(_) => S::UNKNOWN_USER_EXCEPTION,
            DispatchError::UnknownException(_) => S::UNKNOWN_EXCEPTION,
            DispatchError::DispatchException { status, .. } => *status,
        }
    }

    /// Status 7 from any error (the servant's own failures).
    pub fn unknown(e: impl std::fmt::Display) -> Self {
        DispatchError::UnknownException(e.to_string())
    }

    /// A raised [`DispatchError::UserException`] encoded in encoding 1.1
    /// and the compact format (what the runtime does with one that a
    /// hand-written servant returns; generated dispatchers encode in the
    /// request's encoding and the operation's format instead, with
    /// [`Current::encode_reply`](crate::Current::encode_reply)(crate::Current::encode_reply)). Other
    /// errors are returned as they are.
    pub fn encoded(self) -> Self {
        match self {
            DispatchError::UserException(e) => {
                DispatchError::EncodedUserException(crate::encapsulation::encode_encapsulation(
                    floe_wire::version::ENCODING_1_1,
                    64,
                    |enc| enc.write_user_exception(e.as_dyn()),
                ))
            }
            other => other,
        }
    }
}

/// Status 7 for a servant that panicked, with the panic's message.
pub(crate) fn panic_error(payload: Box<dyn std::any::Any + Send>) -> DispatchError {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    tracing::error!("servant panicked: {what}");
    DispatchError::UnknownException(format!("servant panicked: {what}"))
}

impl From<floe_wire::Error> for DispatchError {
    /// Decoding errors of the parameters become status 5 with Ice's
    /// exception name in the text, as a C++ server sends it.
    fn from(e: floe_wire::Error) -> Self {
        DispatchError::UnknownLocalException(format!("{}:\n{}", e.ice_name(), e))
    }
}

impl From<crate::error::Error> for DispatchError {
    /// Runtime errors raised inside a dispatch (e.g. a nested call failed).
    fn from(e: crate::error::Error) -> Self {
        match e {
            crate::error::Error::ObjectNotExist(f) => DispatchError::ObjectNotExist(f),
            crate::error::Error::FacetNotExist(f) => DispatchError::FacetNotExist(f),
            crate::error::Error::OperationNotExist(f) => DispatchError::OperationNotExist(f),
            crate::error::Error::UnknownUserException(s) => DispatchError::UnknownUserException(s),
            // Ice 3.8 sends a nested call's DispatchException on with its
            // own status, as it does for statuses 2-4.
            crate::error::Error::DispatchException { status, message } => {
                DispatchError::DispatchException { status, message }
            }
            // A nested call's user exception propagates, as in Ice.
            crate::error::Error::UserException(e) => DispatchError::UserException(e),
            other => {
                DispatchError::UnknownLocalException(format!("{}:\n{}", other.ice_name(), other))
            }
        }
    }
}
