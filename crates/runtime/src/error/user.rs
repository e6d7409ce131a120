//! [`UserError`]: a Slice user exception as an error value, the way a
//! servant raises one and a proxy call returns one.
//!
//! Generated code implements `From<E> for DispatchError` for every user
//! exception `E`, so a servant raises with `?` or `Err(e.into())`; a proxy
//! call that receives a declared exception returns
//! [`Error::UserException`](crate::Error::UserException), which
//! [`Error::user_exception`](crate::Error::user_exception) views as `E`
//! (or as one of its bases).
//!
//! ```
//! use floe_runtime::{DispatchError, Error, UserError};
//! use floe_wire::exception::{UserException, UserExceptionType};
//! # use floe_wire::{Decoder, Encoder};
//! #[derive(Debug, Default)]
//! struct Oops { reason: String }
//! impl UserExceptionType for Oops { const TYPE_ID: &'static str = "::M::Oops"; }
//! impl UserException for Oops {
//!     fn ice_id(&self) -> &'static str { Self::TYPE_ID }
//!     fn ice_ids(&self) -> &'static [&'static str] { &["::M::Oops"] }
//!     fn write_slices(&self, enc: &mut Encoder) {
//!         enc.start_slice(Self::TYPE_ID, None, true);
//!         enc.write_string(&self.reason);
//!         enc.end_slice();
//!     }
//!     fn read_slices(&mut self, dec: &mut Decoder) -> floe_wire::Result<()> {
//!         dec.start_slice()?;
//!         self.reason = dec.read_string()?;
//!         dec.end_slice()
//!     }
//! }
//!
//! // What a proxy call returns for a declared exception:
//! let e = Error::UserException(UserError::new(Oops { reason: "no".into() }));
//! assert_eq!(e.user_exception::<Oops>().unwrap().reason, "no");
//! // What a servant returns (generated code writes this `From` for you):
//! let d = DispatchError::UserException(UserError::new(Oops::default()));
//! assert_eq!(d.to_string(), "user exception ::M::Oops");
//! ```

use std::fmt;
use std::sync::Arc;

use floe_wire::exception::{UserException, UserExceptionRegistry};
use floe_wire::{Decoder, Encoder};

use super::Error;

/// A user exception raised by a servant or received in a reply (status 1).
///
/// Cheap to clone (shared). Two are equal when they encode to the same
/// bytes.
#[derive(Clone)]
pub struct UserError(Arc<dyn UserException>);

impl UserError {
    /// Wraps an exception.
    pub fn new<E: UserException>(e: E) -> Self {
        UserError(Arc::new(e))
    }

    /// Wraps a decoded exception (what `Decoder::read_user_exception`
    /// returns).
    pub fn from_box(e: Box<dyn UserException>) -> Self {
        UserError(Arc::from(e))
    }

    /// The Slice type id of the most-derived type.
    pub fn ice_id(&self) -> &'static str {
        self.0.ice_id()
    }

    /// Whether the exception is of type `type_id` or derives from it.
    pub fn is_a(&self, type_id: &str) -> bool {
        self.0.is_a(type_id)
    }

    /// Views the exception as `E`: its own type or one of its bases.
    pub fn downcast_ref<E: UserException>(&self) -> Option<&E> {
        self.0.downcast_ref::<E>()
    }

    /// The exception as a trait object (to encode it).
    pub fn as_dyn(&self) -> &dyn UserException {
        &*self.0
    }
}

impl fmt::Debug for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.ice_id())
    }
}

impl PartialEq for UserError {
    fn eq(&self, other: &Self) -> bool {
        if Arc::ptr_eq(&self.0, &other.0) {
            return true;
        }
        let encode = |e: &dyn UserException| {
            let mut enc = Encoder::new();
            enc.write_user_exception(e);
            enc.finish()
        };
        self.ice_id() == other.ice_id() && encode(self.as_dyn()) == encode(other.as_dyn())
    }
}

impl Eq for UserError {}

impl std::error::Error for UserError {}

/// The error a call returns for a user-exception reply (status 1), the way
/// an Ice client decides it: `dec` (the reply's encapsulation) is read with
/// `known`, the exceptions the caller's program knows (Ice's factory
/// table; generated code passes those of its Slice files). The result is
///
/// - [`Error::UserException`] when the exception is one of `declared` (the
///   operation's `throws` clause) or derives from one;
/// - [`Error::UnknownUserException`] with its type id when it is known but
///   not declared, or when none of its slices is known and the last slice
///   says so;
/// - the decoding error otherwise, as Ice raises it: an exception whose
///   slices are all unknown and whose last slice is not flagged (encoding
///   1.0 has no such flag; Ice 3.7 C++11 senders never set it) runs out of
///   data, `UnmarshalOutOfBoundsException`.
///
/// Generated proxies call this; hand-written callers of
/// [`Proxy::invoke`](crate::Proxy::invoke) may too.
pub fn user_exception_error(
    dec: &mut Decoder,
    known: &UserExceptionRegistry,
    declared: &[&str],
) -> Error {
    match dec.read_user_exception(known) {
        Ok(ex) if declared.iter().any(|id| ex.is_a(id)) => {
            Error::UserException(UserError::from_box(ex))
        }
        Ok(ex) => Error::UnknownUserException(ex.ice_id().to_owned()),
        Err(floe_wire::Error::UnknownUserException { type_id }) => {
            Error::UnknownUserException(type_id)
        }
        Err(e) => e.into(),
    }
}
