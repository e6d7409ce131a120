//! The communicator's Prometheus endpoint (feature `prometheus`): its
//! IceMX views registered with a `prometheus-client` registry and served
//! over HTTP (see [`crate::prometheus`]).

use std::net::SocketAddr;
use std::sync::Arc;

use prometheus_client::registry::Registry;

use super::Communicator;
use crate::prometheus::{icemx, PrometheusEndpoint, PrometheusError, PROMETHEUS_ENDPOINT};

impl Communicator {
    /// Registers this communicator's IceMX views with `registry` (read at
    /// each scrape; the registry holds them weakly). Returns `false`, and
    /// registers nothing, when the communicator observes no metrics (no
    /// `IceMX.Metrics.*` view, no [`PROMETHEUS_ENDPOINT`]).
    pub fn register_prometheus(&self, registry: &mut Registry) -> bool {
        let Some(admin) = &self.inner.metrics else {
            return false;
        };
        registry.register_collector(Box::new(icemx::ViewsCollector {
            admin: Arc::downgrade(admin),
        }));
        true
    }

    /// Serves this communicator's IceMX views on `http://ADDR/metrics`
    /// until the returned endpoint is dropped. (The
    /// [`PROMETHEUS_ENDPOINT`] property starts one that lives as long as
    /// the communicator.)
    ///
    /// # Errors
    ///
    /// [`PrometheusError::Bind`] when `addr` cannot be bound.
    pub async fn serve_prometheus(
        &self,
        addr: SocketAddr,
    ) -> Result<PrometheusEndpoint, PrometheusError> {
        let mut registry = Registry::default();
        self.register_prometheus(&mut registry);
        PrometheusEndpoint::serve(addr, registry).await
    }

    /// The address of the endpoint [`PROMETHEUS_ENDPOINT`] started, if
    /// any.
    pub fn prometheus_addr(&self) -> Option<SocketAddr> {
        crate::metrics::map_lock(&self.inner.prometheus)
            .as_ref()
            .map(PrometheusEndpoint::local_addr)
    }

    /// Starts the endpoint [`PROMETHEUS_ENDPOINT`] names, if set (from
    /// the constructor).
    pub(crate) fn start_prometheus_from_properties(&self) -> Result<(), PrometheusError> {
        let Some(value) = self.properties().get(PROMETHEUS_ENDPOINT) else {
            return Ok(());
        };
        let value = value.trim();
        if value.is_empty() {
            return Ok(());
        }
        let addr: SocketAddr = value
            .parse()
            .map_err(|_| PrometheusError::Address(value.to_string()))?;
        let runtime =
            tokio::runtime::Handle::try_current().map_err(|_| PrometheusError::NoRuntime)?;
        let bind = |source| PrometheusError::Bind { addr, source };
        let listener = std::net::TcpListener::bind(addr).map_err(bind)?;
        listener.set_nonblocking(true).map_err(bind)?;
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener).map_err(bind)?
        };
        let mut registry = Registry::default();
        self.register_prometheus(&mut registry);
        let endpoint = PrometheusEndpoint::spawn(listener, registry, &runtime)?;
        *crate::metrics::map_lock(&self.inner.prometheus) = Some(endpoint);
        Ok(())
    }
}
