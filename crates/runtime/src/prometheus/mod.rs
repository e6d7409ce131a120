//! A Prometheus scrape endpoint (feature `prometheus`): the IceMX views
//! of a communicator (`IceMX.Metrics.*`, what the `Metrics` admin facet
//! reports) as Prometheus counters and gauges, served on `GET /metrics`.
//!
//! Start it with the property `Floe.Prometheus.Endpoint=HOST:PORT` (the
//! communicator starts it when created within a tokio runtime; port `0`
//! binds a free port, see [`Communicator::prometheus_addr`](crate::Communicator::prometheus_addr)), or with
//! [`Communicator::serve_prometheus`](crate::Communicator::serve_prometheus). With that property and no
//! `IceMX.Metrics.*` view, the communicator observes a view named
//! `Prometheus` with Ice's default settings (`GroupBy=id`); configure
//! views as for Ice to choose the grouping, e.g.
//! `IceMX.Metrics.ByOp.Map.Dispatch.GroupBy=operation`.
//!
//! Each series has the labels `view` and `id` (the entry's group key, as
//! `IceMX::Metrics::id`); `Remote` entries also `invocation` (their
//! invocation entry's id); `*_exceptions` also `exception` (the Ice type
//! id). For each map, `<m>` being `icemx_connection`,
//! `icemx_connection_establishment`, `icemx_dispatch`,
//! `icemx_endpoint_lookup`, `icemx_invocation` or
//! `icemx_invocation_remote`:
//!
//! | metric | type | IceMX member |
//! |---|---|---|
//! | `<m>_total` | counter | `total`: objects observed |
//! | `<m>_current` | gauge | `current`: objects observed now |
//! | `<m>_lifetime_seconds_total` | counter | `totalLifetime`, in seconds |
//! | `<m>_failures_total` | counter | `failures` |
//! | `<m>_exceptions_total` | counter | `getMetricsFailures`: failures by exception |
//! | `icemx_connection_{received,sent}_bytes_total` | counter | `receivedBytes`, `sentBytes` |
//! | `icemx_dispatch_{request,reply}_bytes_total`, `icemx_invocation_remote_…` | counter | `size`, `replySize` |
//! | `icemx_{dispatch,invocation}_user_exceptions_total` | counter | `userException` |
//! | `icemx_invocation_retries_total` | counter | `retry` |
//!
//! An entry's series end when its map drops it (Ice's `RetainDetached`).
//! Application maps ([`crate::MetricsProvider`]) are not exported here;
//! their owners export their own (floe-storm's `icestorm_*`). Other
//! collectors can share the endpoint: build a [`Registry`], call
//! [`Communicator::register_prometheus`](crate::Communicator::register_prometheus), and serve it with
//! [`PrometheusEndpoint::serve`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use floe_runtime::{Communicator, Properties};
//!
//! let props = Properties::new();
//! props.set("IceMX.Metrics.ByOp.Map.Dispatch.GroupBy", "operation");
//! props.set("Floe.Prometheus.Endpoint", "127.0.0.1:9464");
//! let communicator = Communicator::with_properties(props);
//! // ... adapters and servants; Prometheus scrapes
//! // http://127.0.0.1:9464/metrics
//! assert!(communicator.prometheus_addr().is_some());
//! # Ok(()) }
//! ```

mod http;
pub(crate) mod icemx;

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
pub use prometheus_client::registry::Registry;
use tokio::task::JoinHandle;

pub use crate::metrics::PROMETHEUS_ENDPOINT;

/// The `Content-Type` of [`encode`]'s text: OpenMetrics 1.0, which
/// Prometheus negotiates first and reads as its text format too.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A scrape of `registry`: the OpenMetrics text ([`CONTENT_TYPE`]).
///
/// # Errors
///
/// Only if formatting fails, which writing into a `String` does not.
pub fn encode(registry: &Registry) -> Result<String, fmt::Error> {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, registry)?;
    Ok(text)
}

/// Writes one metric family for a collector: its descriptor (name, help,
/// type), then one sample per label set.
///
/// # Errors
///
/// When the encoder fails.
pub fn family<L: EncodeLabelSet, M: EncodeMetric>(
    encoder: &mut DescriptorEncoder,
    (name, help, metric_type): (&str, &str, MetricType),
    samples: impl Iterator<Item = (L, M)>,
) -> fmt::Result {
    let mut family = encoder.encode_descriptor(name, help, None, metric_type)?;
    for (labels, metric) in samples {
        metric.encode(family.encode_family(&labels)?)?;
    }
    Ok(())
}

/// Why an endpoint did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrometheusError {
    /// Its address could not be bound.
    #[error("cannot serve metrics on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The failure.
        source: std::io::Error,
    },
    /// [`PROMETHEUS_ENDPOINT`] is not `HOST:PORT`.
    #[error("{PROMETHEUS_ENDPOINT}={0:?} is not an address (HOST:PORT)")]
    Address(String),
    /// [`PROMETHEUS_ENDPOINT`] is set, but the communicator was created
    /// outside a tokio runtime.
    #[error("{PROMETHEUS_ENDPOINT} needs the communicator to be created within a tokio runtime")]
    NoRuntime,
}

/// A running scrape endpoint; dropping it stops it.
#[derive(Debug)]
pub struct PrometheusEndpoint {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for PrometheusEndpoint {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl PrometheusEndpoint {
    /// Listens on `addr` and serves `registry` on `GET /metrics`. Must be
    /// called within a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`PrometheusError::Bind`] when `addr` cannot be bound.
    pub async fn serve(
        addr: SocketAddr,
        registry: Registry,
    ) -> Result<PrometheusEndpoint, PrometheusError> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| PrometheusError::Bind { addr, source })?;
        Self::spawn(listener, registry, &tokio::runtime::Handle::current())
    }

    /// Serves `registry` on `listener` from a task of `runtime`.
    pub(crate) fn spawn(
        listener: tokio::net::TcpListener,
        registry: Registry,
        runtime: &tokio::runtime::Handle,
    ) -> Result<PrometheusEndpoint, PrometheusError> {
        let addr = listener
            .local_addr()
            .map_err(|source| PrometheusError::Bind {
                addr: ([0, 0, 0, 0], 0).into(),
                source,
            })?;
        tracing::info!(%addr, "serving metrics on http://{addr}/metrics");
        Ok(PrometheusEndpoint {
            addr,
            task: runtime.spawn(http::serve(listener, Arc::new(registry))),
        })
    }

    /// The address it listens on (the port bound when `0` was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}
