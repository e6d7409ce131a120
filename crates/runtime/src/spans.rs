//! `tracing` spans: one per connection, one per invocation, one per
//! dispatch, so that a `tracing` subscriber can follow a call from the
//! proxy to the servant.
//!
//! | span | where | fields |
//! |---|---|---|
//! | `connection` | the connection's task (reading, writing, closing); a root span | `id`, `transport`, `local`, `remote`, `incoming`, `adapter` (incoming only) |
//! | `invoke` | a proxy invocation, retries included, entered in the caller's span | `operation`, `identity`, `facet`, `mode`, `request_id`, `connection` |
//! | `dispatch` | a servant's dispatch, child of its `connection` span | `operation`, `identity`, `facet`, `mode`, `request_id`, `connection` |
//!
//! - `mode` is `twoway`, `oneway`, `batch-oneway`, `datagram` or
//!   `batch-datagram` on the client; a dispatch is `twoway` (it has a
//!   request id) or `oneway`.
//! - `request_id` is Ice's (0 for oneway requests); `connection` is the
//!   connection's [`ConnectionInfo::id`](crate::ConnectionInfo::id), the
//!   `id` of its `connection` span. An `invoke` span records both once its
//!   request is sent; a request retried on another connection records the
//!   last one. The client's `request_id` and `connection` are the same
//!   numbers as the server's only when both sides are one floe process
//!   (the ids are per process); across processes, `remote`/`local` of the
//!   two `connection` spans match.
//! - Events floe logs inside (retries, protocol errors, failed dispatches,
//!   `Ice.Trace.*`) carry the span they happened in.
//! - All three are at `DEBUG` level, under the targets
//!   `floe_runtime::proxy`, `floe_runtime::connection` and
//!   `floe_runtime::connection::dispatch`. With no subscriber, or one that
//!   filters `DEBUG` out, a span costs one check of a cached flag per call
//!   and no allocation.
//!
//! ```
//! use tracing_subscriber::fmt::format::FmtSpan;
//!
//! // Every span's open and close, with its fields and duration.
//! tracing_subscriber::fmt()
//!     .with_env_filter("floe_runtime=debug")
//!     .with_span_events(FmtSpan::CLOSE)
//!     .try_init()
//!     .ok();
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use tracing::field::{self, Empty};
use tracing::Span;

use crate::connection_info::ConnectionInfo;
use floe_wire::proxy::ProxyMode;
use floe_wire::Identity;

static NEXT_CONNECTION_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh [`ConnectionInfo::id`].
pub(crate) fn next_connection_id() -> u64 {
    NEXT_CONNECTION_ID.fetch_add(1, Ordering::Relaxed)
}

/// The span of a connection's task.
pub(crate) fn connection(info: &ConnectionInfo) -> Span {
    let adapter = (!info.adapter_name.is_empty()).then_some(info.adapter_name.as_str());
    // A root: a connection outlives the call that happened to open it.
    tracing::debug_span!(
        target: "floe_runtime::connection",
        parent: None,
        "connection",
        id = info.id,
        transport = info.transport,
        local = info.local.map(field::display),
        remote = info.remote.map(field::display),
        incoming = info.incoming,
        adapter,
    )
}

/// The span of one invocation; `request_id` and `connection` are recorded
/// with [`record_sent`] once the request is sent.
pub(crate) fn invoke(operation: &str, identity: &Identity, facet: &str, mode: ProxyMode) -> Span {
    tracing::debug_span!(
        target: "floe_runtime::proxy",
        "invoke",
        operation,
        identity = %identity,
        facet,
        mode = mode.name(),
        request_id = Empty,
        connection = Empty,
    )
}

/// Records where an invocation's request went (a no-op on a disabled span).
pub(crate) fn record_sent(span: &Span, request_id: i32, connection: u64) {
    if !span.is_disabled() {
        span.record("request_id", request_id);
        span.record("connection", connection);
    }
}

/// The span of one dispatch, a child of its connection's span.
pub(crate) fn dispatch(
    parent: &Span,
    operation: &str,
    identity: &Identity,
    facet: &str,
    request_id: i32,
    connection: u64,
) -> Span {
    tracing::debug_span!(
        target: "floe_runtime::connection::dispatch",
        parent: parent,
        "dispatch",
        operation,
        identity = %identity,
        facet,
        mode = if request_id == 0 { "oneway" } else { "twoway" },
        request_id,
        connection,
    )
}
