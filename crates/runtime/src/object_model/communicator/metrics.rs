//! The communicator's application-defined metrics maps (see
//! [`MetricsProvider`]).

use std::sync::Arc;

use super::Communicator;
use crate::metrics::provided::MetricsProvider;

impl Communicator {
    /// Adds an application-defined map to every metrics view (see
    /// [`MetricsProvider`]). Returns `false`, and does nothing, when the
    /// communicator has no metrics view (no `IceMX.Metrics.*` property,
    /// or `Ice.Admin.Facets` leaves out `Metrics`).
    pub fn add_metrics_provider(&self, provider: Arc<dyn MetricsProvider>) -> bool {
        match &self.inner.metrics {
            Some(admin) => {
                admin.add_provider(provider);
                true
            }
            None => false,
        }
    }
}
