//! [`Servant`]: the object implementation an [`crate::ObjectAdapter`]
//! dispatches requests to. What a dispatch returns ([`Dispatch`],
//! [`DispatchError`], ...) is in [`crate::outcome`], re-exported here.

use std::sync::Arc;

use floe_wire::Encapsulation;

use crate::object_model::current::Current;

pub use crate::outcome::{Dispatch, DispatchError, DispatchFuture, DispatchResult, ReplyData};

/// An Ice object implementation.
///
/// The adapter answers the built-in operations `ice_ping`, `ice_isA`,
/// `ice_id` and `ice_ids` from [`Servant::ice_ids`] / [`Servant::ice_id`]
/// unless [`Servant::handles_builtins`] says the servant wants them (a blob
/// servant such as an IceStorm publisher).
///
/// ```
/// use std::sync::Arc;
/// use floe_runtime::{Current, Dispatch, DispatchError, Servant};
/// use floe_wire::Encapsulation;
///
/// struct Hello;
/// impl Servant for Hello {
///     fn dispatch(self: Arc<Self>, current: Current, _params: Encapsulation) -> Dispatch {
///         match current.operation.as_str() {
///             "o" => Dispatch::ready(Ok(current.empty_reply())),
///             _ => Dispatch::error(DispatchError::operation_not_exist()),
///         }
///     }
///     fn ice_id(&self) -> &str { "::Cap::Hello" }
///     fn ice_ids(&self) -> &[&str] { &["::Cap::Hello", "::Ice::Object"] }
/// }
/// ```
pub trait Servant: Send + Sync + 'static {
    /// Dispatches one request. `params` is the parameters encapsulation, a
    /// zero-copy slice of the received frame. Return [`Dispatch::Ready`]
    /// when the answer is known at once, else [`Dispatch::future`].
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch;

    /// The most-derived Slice type id (`ice_id`).
    fn ice_id(&self) -> &str {
        "::Ice::Object"
    }

    /// All type ids, sorted, including `::Ice::Object` (`ice_ids`).
    fn ice_ids(&self) -> &[&str] {
        &["::Ice::Object"]
    }

    /// Whether the servant dispatches `ice_*` operations itself.
    fn handles_builtins(&self) -> bool {
        false
    }
}

/// A servant built from a closure, for tests and small programs.
///
/// ```
/// use floe_runtime::{servant_fn, Dispatch};
/// let s = servant_fn(|current, _params| Dispatch::ready(Ok(current.empty_reply())));
/// ```
pub fn servant_fn<F>(f: F) -> Arc<dyn Servant>
where
    F: Fn(Current, Encapsulation) -> Dispatch + Send + Sync + 'static,
{
    Arc::new(FnServant(f))
}

struct FnServant<F>(F);

impl<F> Servant for FnServant<F>
where
    F: Fn(Current, Encapsulation) -> Dispatch + Send + Sync + 'static,
{
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch {
        (self.0)(current, params)
    }
}
