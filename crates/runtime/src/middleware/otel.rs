//! OpenTelemetry trace context in the Ice request context (feature `otel`).
//!
//! The context carries the [W3C Trace Context] entries under the header
//! names of that specification, lower case, as plain strings:
//!
//! | context key   | value                                                      |
//! |---------------|------------------------------------------------------------|
//! | `traceparent` | `00-<trace id: 32 hex>-<parent span id: 16 hex>-<flags: 2 hex>` |
//! | `tracestate`  | the vendor list, e.g. `congo=t61rcWkgMzE` (may be absent)  |
//!
//! Any Ice peer joins a trace by putting these two entries in a request's
//! context (`proxy.ice_ping({"traceparent": "00-…-…-01"})` in Python, a
//! `Context` argument in C++ or Java), and reads them from
//! `current.ctx` when it dispatches.
//!
//! - [`TraceContext`], an [`InvocationMiddleware`], injects the context of
//!   the caller's current `tracing` span into every request (the span of
//!   the code that calls the proxy; floe's own `invoke` span starts after
//!   the middleware).
//! - [`trace_dispatch`], a dispatch middleware for
//!   [`ObjectAdapter::use_middleware`](crate::ObjectAdapter::use_middleware),
//!   runs each dispatch in an `ice.dispatch` span (level `INFO`, OpenTelemetry
//!   kind `server`) whose parent is the request's `traceparent`, or the
//!   current span when the request has none; a failed dispatch (any reply
//!   status but `Ok`) sets the span's status to `Error`. Calls the servant makes
//!   through a proxy with [`TraceContext`] continue the same trace.
//!
//! The spans reach OpenTelemetry through
//! [`tracing_opentelemetry::layer`](https://docs.rs/tracing-opentelemetry)
//! in the application's subscriber; without that layer both middlewares
//! pass requests on unchanged.
//!
//! ```
//! use floe_runtime::middleware::otel::{trace_dispatch, TraceContext};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> floe_runtime::Result<()> {
//! let communicator = floe_runtime::Communicator::new();
//! communicator.use_invocation_middleware(TraceContext::new());
//! let adapter = communicator
//!     .create_object_adapter_with_endpoints("Traced", "tcp -h 127.0.0.1 -p 0")
//!     .await?;
//! adapter.use_middleware(trace_dispatch)?;
//! # communicator.destroy().await;
//! # Ok(()) }
//! ```
//!
//! [W3C Trace Context]: https://www.w3.org/TR/trace-context/
//! [`InvocationMiddleware`]: super::InvocationMiddleware

use std::sync::Arc;

use floe_wire::{Context, Encapsulation};
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::{InvocationMiddleware, Outgoing};
use crate::object_model::current::Current;
use crate::object_model::servant::{Dispatch, Servant};

/// The context key of the W3C `traceparent` entry.
pub const TRACEPARENT: &str = "traceparent";

/// The context key of the W3C `tracestate` entry.
pub const TRACESTATE: &str = "tracestate";

/// Invocation middleware that puts the current span's trace context in
/// each request's context (see [the module](self)). A request whose
/// context already has a `traceparent` keeps it.
#[derive(Debug, Default)]
pub struct TraceContext {
    propagator: TraceContextPropagator,
}

impl TraceContext {
    /// The middleware, with the W3C propagator.
    pub fn new() -> Self {
        Self::default()
    }
}

impl InvocationMiddleware for TraceContext {
    fn before(&self, request: &mut Outgoing<'_>) -> crate::Result<()> {
        if request.context.contains_key(TRACEPARENT) {
            return Ok(());
        }
        let cx = tracing::Span::current().context();
        if !cx.span().span_context().is_valid() {
            return Ok(());
        }
        self.propagator
            .inject_context(&cx, &mut ContextCarrier(request.context.to_mut()));
        Ok(())
    }
}

/// An Ice context as an OpenTelemetry carrier.
struct ContextCarrier<'a>(&'a mut Context);

impl Injector for ContextCarrier<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), value);
    }
}

/// A read-only Ice context as an OpenTelemetry carrier.
struct ContextReader<'a>(&'a Context);

impl Extractor for ContextReader<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// The trace context of a request's Ice context, if it has a valid
/// `traceparent`.
pub fn extract(context: &Context) -> Option<opentelemetry::Context> {
    if !context.contains_key(TRACEPARENT) {
        return None;
    }
    let cx = TraceContextPropagator::new().extract(&ContextReader(context));
    cx.span().span_context().is_valid().then_some(cx)
}

/// Dispatch middleware (for
/// [`ObjectAdapter::use_middleware`](crate::ObjectAdapter::use_middleware))
/// that runs each dispatch in an `ice.dispatch` span continuing the
/// request's trace (see [the module](self)).
pub fn trace_dispatch(next: Arc<dyn Servant>) -> Arc<dyn Servant> {
    Arc::new(TraceDispatch { next })
}

/// Marks `span` failed (OpenTelemetry status `Error`) when the dispatch
/// failed: reply status 1 (user exception) to 255.
fn record_status(span: &tracing::Span, result: &crate::object_model::servant::DispatchResult) {
    if result.is_err() {
        span.record("otel.status_code", "ERROR");
    }
}

/// The servant [`trace_dispatch`] makes.
struct TraceDispatch {
    next: Arc<dyn Servant>,
}

impl Servant for TraceDispatch {
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch {
        let span = tracing::info_span!(
            "ice.dispatch",
            otel.kind = "server",
            rpc.system = "ice",
            rpc.method = %current.operation,
            rpc.service = %current.id,
            otel.status_code = tracing::field::Empty,
        );
        if let Some(parent) = extract(&current.ctx) {
            // Fails only without the OpenTelemetry layer: nothing to join.
            let _ = span.set_parent(parent);
        }
        let dispatch = span.in_scope(|| self.next.clone().dispatch(current, params));
        match dispatch {
            Dispatch::Pending(fut) => Dispatch::Pending(Box::pin(async move {
                let result = fut.instrument(span.clone()).await;
                record_status(&span, &result);
                result
            })),
            Dispatch::Ready(result) => {
                record_status(&span, &result);
                Dispatch::Ready(result)
            }
        }
    }

    fn handles_builtins(&self) -> bool {
        true
    }
}
