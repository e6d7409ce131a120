//! Middleware: layers around dispatch and invocation.
//!
//! **Dispatch middleware** follows Ice 3.8's `ObjectAdapter::use`: a
//! middleware is a [`Servant`] that wraps the next one and decides what to
//! do with each request: pass it on (perhaps with a changed [`Current`]),
//! answer it itself (an auth check answering
//! [`DispatchError::unauthorized`](crate::DispatchError::unauthorized)),
//! or look at the outcome ([`Dispatch::inspect`]: timing, counting).
//!
//! - Per adapter: [`ObjectAdapter::use_middleware`] installs a factory that
//!   receives the next servant (the adapter's own dispatch: servant lookup,
//!   default servants, servant locators, built-ins) and returns the
//!   middleware. The first middleware installed is the outermost, the first
//!   to see a request, as in Ice 3.8. Every request the adapter dispatches
//!   goes through the chain, `ice_ping` and requests for missing objects
//!   included. Middleware is installed before the adapter dispatches its
//!   first request; afterwards `use_middleware` fails, as Ice's `use` does.
//! - Per servant: [`layered`] wraps one servant: its middleware sees every
//!   request for that servant, built-ins included, and the wrapped servant
//!   keeps its type ids.
//!
//! **Invocation middleware** ([`InvocationMiddleware`]) runs around the
//! invocations of a proxy: [`InvocationMiddleware::before`] may add to the
//! request's context (a token, a deadline, a `traceparent`) or refuse the
//! call; [`InvocationMiddleware::after`] sees the outcome once the
//! invocation is over (after retries). They are synchronous, so a layer
//! costs no allocation and no extra future.
//!
//! - Per communicator: [`Communicator::use_invocation_middleware`]; proxies
//!   made after the call use it (install it before making proxies).
//! - Per proxy: [`Proxy::ice_middleware`] returns a proxy that also runs
//!   the given layer (after the communicator's).
//!
//! **Trace context** (module `otel`, feature `otel`): the W3C `traceparent` and
//! `tracestate` entries in the request context, written from the current
//! `tracing` span by an invocation middleware and read into a dispatch
//! span by a dispatch middleware.
//!
//! Neither costs anything when none is installed: a dispatch checks one
//! initialised cell, an invocation one `Option`.
//!
//! ```
//! use std::sync::Arc;
//! use floe_runtime::{servant_fn, Communicator, Dispatch, DispatchError, Identity, OperationMode};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> floe_runtime::Result<()> {
//! let communicator = Communicator::new();
//! let adapter = communicator
//!     .create_object_adapter_with_endpoints("Hello", "tcp -h 127.0.0.1 -p 0")
//!     .await?;
//! // Requests without a `token` in their context are refused (status 9).
//! adapter.use_middleware(|next| {
//!     servant_fn(move |current, params| {
//!         if current.ctx.get("token").map(String::as_str) != Some("secret") {
//!             return Dispatch::error(DispatchError::unauthorized("no token"));
//!         }
//!         next.clone().dispatch(current, params)
//!     })
//! })?;
//! let hello = adapter.add(
//!     Identity::from_name("hello"),
//!     servant_fn(|current, _| Dispatch::ready(Ok(current.empty_reply()))),
//! )?;
//! adapter.activate();
//! assert!(hello.ice_ping().await.is_err());
//! let ctx = [("token".to_string(), "secret".to_string())].into();
//! hello.ice_context(ctx).ice_ping().await?;
//! communicator.destroy().await;
//! # Ok(()) }
//! ```
//!
//! [`Servant`]: crate::Servant
//! [`Current`]: crate::Current
//! [`Dispatch::inspect`]: crate::Dispatch::inspect
//! [`ObjectAdapter::use_middleware`]: crate::ObjectAdapter::use_middleware
//! [`Communicator::use_invocation_middleware`]: crate::Communicator::use_invocation_middleware
//! [`Proxy::ice_middleware`]: crate::Proxy::ice_middleware

mod dispatch;
mod invocation;
#[cfg(feature = "otel")]
pub mod otel;

pub use dispatch::layered;
pub(crate) use dispatch::DispatchChain;
pub(crate) use invocation::{InvocationChain, Layers};
pub use invocation::{InvocationMiddleware, Outgoing};
