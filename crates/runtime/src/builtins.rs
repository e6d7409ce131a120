//! [`Builtins`]: a servant that answers the built-in operations
//! (`ice_ping`, `ice_isA`, `ice_id`, `ice_ids`) itself, as an Ice servant
//! that overrides them; [`WithBuiltins`] puts one in front of a
//! dispatcher. Without it (the default) the object adapter answers them
//! from the servant's type ids.
//!
//! Generated dispatchers offer `HelloDispatcher::with_builtins(servant)`
//! for a servant type that implements both `Hello` and [`Builtins`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use floe_wire::Encapsulation;

use crate::object_model::current::Current;
use crate::object_model::servant::{Dispatch, DispatchError, Servant};

/// The built-in operations of an Ice object, for a servant that answers
/// them itself (Ice's overridable `ice_ping`, `ice_isA`, `ice_id` and
/// `ice_ids`); each default does what the adapter does. `Current` tells
/// the operation's mode as received.
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use floe_runtime::{Builtins, Current, DispatchError};
///
/// #[derive(Default)]
/// struct Counted {
///     pings: AtomicU32,
/// }
///
/// impl Builtins for Counted {
///     async fn ice_ping(&self, _current: &Current) -> Result<(), DispatchError> {
///         self.pings.fetch_add(1, Ordering::Relaxed);
///         Ok(())
///     }
/// }
/// ```
pub trait Builtins: Send + Sync + 'static {
    /// `ice_ping`. The default answers.
    fn ice_ping(
        &self,
        current: &Current,
    ) -> impl Future<Output = Result<(), DispatchError>> + Send {
        let _ = current;
        async { Ok(()) }
    }

    /// `ice_isA(type_id)`; `type_ids` are the servant's (its dispatcher's
    /// `Servant::ice_ids`). The default: whether they hold `type_id`.
    fn ice_is_a(
        &self,
        type_id: String,
        type_ids: &[&str],
        current: &Current,
    ) -> impl Future<Output = Result<bool, DispatchError>> + Send {
        let _ = current;
        let is_a = type_ids.iter().any(|t| *t == type_id);
        async move { Ok(is_a) }
    }

    /// `ice_id`; `type_id` is the servant's most-derived type id. The
    /// default returns it.
    fn ice_id(
        &self,
        type_id: &str,
        current: &Current,
    ) -> impl Future<Output = Result<String, DispatchError>> + Send {
        let _ = current;
        let id = type_id.to_owned();
        async move { Ok(id) }
    }

    /// `ice_ids`; `type_ids` are the servant's. The default returns them.
    fn ice_ids(
        &self,
        type_ids: &[&str],
        current: &Current,
    ) -> impl Future<Output = Result<Vec<String>, DispatchError>> + Send {
        let _ = current;
        let ids = type_ids.iter().map(|t| (*t).to_owned()).collect();
        async move { Ok(ids) }
    }
}

/// A servant `S` (a generated dispatcher) whose built-in operations `B`
/// answers: the adapter passes them to it instead of answering itself.
pub struct WithBuiltins<S, B> {
    servant: Arc<S>,
    builtins: Arc<B>,
}

impl<S: Servant, B: Builtins> WithBuiltins<S, B> {
    /// `servant` with its built-in operations answered by `builtins`
    /// (often the same object the dispatcher wraps).
    pub fn new(servant: Arc<S>, builtins: Arc<B>) -> Arc<Self> {
        Arc::new(WithBuiltins { servant, builtins })
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S: Servant, B: Builtins> WithBuiltins<S, B> {
    /// The built-in operation `current.operation`, if it is one.
    fn builtin(&self, current: Current, params: Encapsulation) -> Option<BoxFuture<ReplyResult>> {
        let b = self.builtins.clone();
        let s = self.servant.clone();
        let fut: BoxFuture<ReplyResult> = match current.operation.as_str() {
            "ice_ping" => Box::pin(async move {
                no_params(params)?;
                b.ice_ping(&current).await?;
                Ok(current.empty_reply())
            }),
            "ice_isA" => Box::pin(async move {
                let mut dec = floe_wire::Decoder::from_encapsulation(params)?;
                let type_id = dec.read_string()?;
                dec.finish_encapsulation()?;
                let is_a = b.ice_is_a(type_id, s.ice_ids(), &current).await?;
                Ok(current.encode_reply(|enc| enc.write_bool(is_a)))
            }),
            "ice_id" => Box::pin(async move {
                no_params(params)?;
                let id = b.ice_id(s.ice_id(), &current).await?;
                Ok(current.encode_reply(|enc| enc.write_string(&id)))
            }),
            "ice_ids" => Box::pin(async move {
                no_params(params)?;
                let ids = b.ice_ids(s.ice_ids(), &current).await?;
                Ok(current.encode_reply(|enc| {
                    enc.write_size(ids.len());
                    for id in &ids {
                        enc.write_string(id);
                    }
                }))
            }),
            _ => return None,
        };
        Some(fut)
    }
}

type ReplyResult = Result<bytes::Bytes, DispatchError>;

/// Checks that a built-in operation without parameters got none.
fn no_params(params: Encapsulation) -> Result<(), DispatchError> {
    floe_wire::Decoder::from_encapsulation(params)?.finish_encapsulation()?;
    Ok(())
}

impl<S: Servant, B: Builtins> Servant for WithBuiltins<S, B> {
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch {
        if !matches!(
            current.operation.as_str(),
            "ice_ping" | "ice_isA" | "ice_id" | "ice_ids"
        ) {
            return self.servant.clone().dispatch(current, params);
        }
        match self.builtin(current, params) {
            Some(fut) => Dispatch::future(fut),
            None => Dispatch::error(DispatchError::operation_not_exist()),
        }
    }

    fn ice_id(&self) -> &str {
        self.servant.ice_id()
    }

    fn ice_ids(&self) -> &[&str] {
        self.servant.ice_ids()
    }

    fn handles_builtins(&self) -> bool {
        true
    }
}
