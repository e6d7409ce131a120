//! The locator settings of a [`Proxy`]: `ice_locator`,
//! `ice_locator_cache_timeout`, `ice_endpoint_selection`, `ice_adapter_id`.

use crate::object_model::communicator::Communicator;
use crate::object_model::locator::EndpointSelection;
use crate::object_model::proxy::Proxy;

impl Proxy {
    /// The same proxy resolved through `locator` (an `Ice::Locator`, such
    /// as IceGrid's `IceGrid/Locator`), or through none. Proxies start
    /// with `Ice.Default.Locator`.
    ///
    /// Only indirect proxies (`id@adapter`, or a well-known `id`) use
    /// their locator.
    pub fn ice_locator(&self, locator: Option<&Proxy>) -> Proxy {
        let info = match (locator, self.communicator()) {
            (Some(l), Ok(c)) => Some(c.inner.locators.info(l)),
            _ => None,
        };
        self.with(|p| p.locator = info)
    }

    /// The locator this proxy resolves through, if any.
    pub fn ice_get_locator(&self) -> Option<Proxy> {
        self.inner.locator.as_ref().map(|l| l.locator.clone())
    }

    /// The same proxy with another locator cache timeout, in seconds:
    /// how long it trusts what the locator said before asking again
    /// (`-1`: forever, the default of `Ice.Default.LocatorCacheTimeout`;
    /// `0`: asks every time it connects).
    pub fn ice_locator_cache_timeout(&self, seconds: i32) -> Proxy {
        self.with(|p| p.locator_cache_timeout = seconds.max(-1))
    }

    /// The locator cache timeout in seconds.
    pub fn locator_cache_timeout(&self) -> i32 {
        self.inner.locator_cache_timeout
    }

    /// The same proxy with another endpoint selection (see
    /// [`EndpointSelection`]).
    pub fn ice_endpoint_selection(&self, selection: EndpointSelection) -> Proxy {
        self.with(|p| p.endpoint_selection = selection)
    }

    /// How this proxy orders its endpoints for a new connection.
    pub fn endpoint_selection(&self) -> EndpointSelection {
        self.inner.endpoint_selection
    }

    /// The same proxy made indirect through object adapter (or replica
    /// group) `adapter_id`: its endpoints are dropped, the locator finds
    /// them. An empty id makes a well-known proxy.
    pub fn ice_adapter_id(&self, adapter_id: &str) -> Proxy {
        self.with(|p| {
            p.adapter_id = adapter_id.to_string();
            p.endpoints.clear();
            p.other_endpoints.clear();
        })
    }

    /// Whether the proxy has no endpoints and is resolved through its
    /// locator (by adapter id, or as a well-known object).
    pub fn is_indirect(&self) -> bool {
        crate::object_model::locator::resolve::is_indirect(&self.inner)
    }
}

impl Communicator {
    /// The default locator (`Ice.Default.Locator`), if set.
    pub fn default_locator(&self) -> Option<Proxy> {
        self.inner
            .locators
            .default_locator()
            .map(|l| l.locator.clone())
    }
}
