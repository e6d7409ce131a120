//! [`MetricsEndpoint`]: `GET /metrics` for Prometheus on
//! `floe.Storm.Metrics.Endpoint` (`floe-storm --metrics ADDR`), with the
//! text of [`super::prometheus`] (feature `prometheus`) and, when the
//! broker's communicator has IceMX views (`IceMX.Metrics.*`), their
//! `icemx_*` families too. floe's runtime serves the HTTP side
//! ([`floe::runtime::prometheus::PrometheusEndpoint`]); a scrape takes the
//! broker's snapshot then, and nothing runs between scrapes.

use std::net::SocketAddr;
use std::sync::Arc;

use floe::runtime::Communicator;

use crate::config::METRICS_ENDPOINT;
use crate::instance::Instance;

/// Why the metrics endpoint did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MetricsError {
    /// Its address could not be bound.
    #[cfg(feature = "prometheus")]
    #[error("cannot serve metrics ({METRICS_ENDPOINT}): {0}")]
    Serve(#[from] floe::runtime::prometheus::PrometheusError),
    /// An endpoint was asked for, but this build has no `prometheus` feature.
    #[error("{METRICS_ENDPOINT} (--metrics) is set, but floe-storm was built without its `prometheus` feature")]
    Disabled,
}

/// The running endpoint; dropping it stops it.
#[derive(Debug)]
pub struct MetricsEndpoint {
    addr: SocketAddr,
    #[cfg(feature = "prometheus")]
    _endpoint: floe::runtime::prometheus::PrometheusEndpoint,
}

impl MetricsEndpoint {
    /// The address it listens on (the port bound when `0` was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Listens on `addr` and serves `instance`'s counters and
    /// `communicator`'s IceMX views (read at each scrape; both held
    /// weakly). Must be called within a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`MetricsError::Serve`] when `addr` cannot be bound;
    /// [`MetricsError::Disabled`] without the `prometheus` feature.
    pub async fn start(
        addr: SocketAddr,
        instance: &Arc<Instance>,
        communicator: &Communicator,
    ) -> Result<MetricsEndpoint, MetricsError> {
        #[cfg(feature = "prometheus")]
        {
            let mut registry = super::prometheus::registry(instance);
            communicator.register_prometheus(&mut registry);
            let endpoint =
                floe::runtime::prometheus::PrometheusEndpoint::serve(addr, registry).await?;
            Ok(MetricsEndpoint {
                addr: endpoint.local_addr(),
                _endpoint: endpoint,
            })
        }
        #[cfg(not(feature = "prometheus"))]
        {
            let _ = (addr, instance, communicator);
            Err(MetricsError::Disabled)
        }
    }
}
