//! Routers: a proxy with a router (`Ice.Default.Router`,
//! [`Proxy::ice_router`]) sends its requests to the router's client
//! endpoints instead of its own, and the router (a Glacier2 firewall)
//! forwards them. See [`session`] for Glacier2 sessions.
//!
//! As Ice does, the router is asked once for its client proxy
//! (`Ice::Router::getClientProxy`), whose endpoints every routed proxy
//! then connects to, and, when the router keeps a routing table, each
//! routed proxy is added to it (`addProxies`) before its first request.
//! The `Ice::Router` operations are encoded here by hand.

pub mod session;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use floe_wire::protocol::OperationMode;
use floe_wire::ProxyData;

use crate::connection::Connection;
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::object_model::communicator::Communicator;
use crate::object_model::proxy::Proxy;

/// One router and what it told: shared by the proxies that use it.
pub(crate) struct RouterInfo {
    /// The `Ice::Router` proxy (itself without a router).
    pub(crate) router: Proxy,
    /// The client endpoints and whether the router keeps a routing table.
    client: tokio::sync::OnceCell<(Vec<Endpoint>, bool)>,
    /// The proxies already in the routing table, by their string.
    added: Mutex<HashSet<String>>,
}

/// The routers of a communicator: `Ice.Default.Router` and one
/// [`RouterInfo`] per router.
#[derive(Default)]
pub(crate) struct RouterManager {
    default: OnceLock<Option<Arc<RouterInfo>>>,
    infos: Mutex<HashMap<String, Arc<RouterInfo>>>,
}

impl RouterManager {
    /// Parses `Ice.Default.Router` (called once the communicator exists).
    pub(crate) fn init_default(&self, communicator: &Communicator) {
        let info = crate::object_model::locator::proxy_property(communicator, "Ice.Default.Router")
            .map(|p| self.info(&p));
        let _ = self.default.set(info);
    }

    /// The default router, if any.
    pub(crate) fn default_router(&self) -> Option<Arc<RouterInfo>> {
        self.default.get().cloned().flatten()
    }

    /// The shared state of `router`.
    pub(crate) fn info(&self, router: &Proxy) -> Arc<RouterInfo> {
        // The router itself is reached directly.
        let router = router.with(|p| {
            p.router = None;
            p.locator = None;
        });
        self.infos
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(router.to_string())
            .or_insert_with(|| {
                Arc::new(RouterInfo {
                    router,
                    client: tokio::sync::OnceCell::new(),
                    added: Mutex::new(HashSet::new()),
                })
            })
            .clone()
    }
}

impl RouterInfo {
    /// The connection to the router for `proxy`, after adding `proxy` to
    /// the routing table if the router keeps one.
    ///
    /// # Errors
    ///
    /// Failures to reach the router.
    pub(crate) async fn connection(
        &self,
        proxy: &Proxy,
        communicator: &Communicator,
    ) -> Result<Connection> {
        let (endpoints, routing_table) = self.client_endpoints().await?;
        let connection = communicator
            .connection_for(endpoints, proxy.inner.secure, &proxy.inner.connection_id)
            .await?;
        if *routing_table {
            self.add_proxy(proxy).await?;
        }
        Ok(connection)
    }

    /// `getClientProxy`, asked once: its endpoints (the router's own when
    /// it returns none) and `hasRoutingTable` (true when absent).
    async fn client_endpoints(&self) -> Result<&(Vec<Endpoint>, bool)> {
        self.client
            .get_or_try_init(|| async {
                // Boxed: a routed proxy's connection invokes the router.
                let reply = Box::pin(self.router.invoke(
                    "getClientProxy",
                    OperationMode::Nonmutating,
                    self.router.empty_params(),
                ))
                .await?
                .into_ok()?;
                let mut dec = floe_wire::Decoder::from_encapsulation(reply)?;
                let client = dec.read::<Option<ProxyData>>()?;
                let routing_table = dec.read_optional_value::<bool>(1)?.unwrap_or(true);
                let endpoints: Vec<Endpoint> = client
                    .map(|c| c.endpoints.iter().filter_map(Endpoint::from_data).collect())
                    .unwrap_or_default();
                let endpoints = if endpoints.is_empty() {
                    self.router.endpoints().to_vec()
                } else {
                    endpoints
                };
                if endpoints.is_empty() {
                    return Err(Error::NoEndpoint(format!(
                        "router {} has no client endpoints",
                        self.router
                    )));
                }
                Ok((endpoints, routing_table))
            })
            .await
    }

    /// `addProxies([proxy])`, once per proxy.
    async fn add_proxy(&self, proxy: &Proxy) -> Result<()> {
        let data = proxy.to_data();
        let key = floe_wire::proxy_string::proxy_to_string(&data, floe_wire::ToStringMode::Unicode);
        if self.lock_added().contains(&key) {
            return Ok(());
        }
        let params = self.router.encode_params(|e| {
            e.write_size(1);
            e.write(&Some(data));
        });
        // Boxed: a routed proxy's connection invokes the router.
        Box::pin(
            self.router
                .invoke("addProxies", OperationMode::Idempotent, params),
        )
        .await?
        .into_ok()?;
        self.lock_added().insert(key);
        Ok(())
    }

    fn lock_added(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.added.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Proxy {
    /// The same proxy routed through `router` (an `Ice::Router`, such as
    /// a Glacier2 router's `Glacier2/router`), or through none. Proxies
    /// start with `Ice.Default.Router`.
    pub fn ice_router(&self, router: Option<&Proxy>) -> Proxy {
        let info = match (router, self.communicator()) {
            (Some(r), Ok(c)) => Some(c.inner.routers.info(r)),
            _ => None,
        };
        self.with(|p| p.router = info)
    }

    /// The router this proxy is routed through, if any.
    pub fn ice_get_router(&self) -> Option<Proxy> {
        self.inner.router.as_ref().map(|r| r.router.clone())
    }
}

impl Communicator {
    /// The default router (`Ice.Default.Router`), if set.
    pub fn default_router(&self) -> Option<Proxy> {
        self.inner
            .routers
            .default_router()
            .map(|r| r.router.clone())
    }
}
