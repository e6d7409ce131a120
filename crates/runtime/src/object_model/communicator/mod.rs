//! [`Communicator`]: the root object: properties, the outgoing connection
//! cache, object adapters, and shutdown.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use floe_wire::Identity;
use tokio::sync::watch;

use crate::connection::config::{connection_config, Side};
use crate::connection::{Connection, ConnectionConfig};
use crate::datagram::Datagrams;
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::object_model::object_adapter::ObjectAdapter;
use crate::object_model::proxy::Proxy;
use crate::properties::Properties;

mod connections;
mod metrics;
#[cfg(feature = "prometheus")]
mod prometheus;
mod value_factories;

/// Key of the outgoing connection cache: address and connection id.
type ConnectionKey = (String, String);

pub(crate) struct CommunicatorInner {
    properties: Properties,
    pub(crate) client_config: ConnectionConfig,
    /// The IceMX metrics views (`IceMX.Metrics.*`), served by the admin
    /// `Metrics` facet; `None` when no view is configured.
    pub(crate) metrics: Option<Arc<crate::metrics::MetricsAdmin>>,
    /// The scrape endpoint `Floe.Prometheus.Endpoint` started (stopped
    /// by `destroy`).
    #[cfg(feature = "prometheus")]
    pub(crate) prometheus: Mutex<Option<crate::prometheus::PrometheusEndpoint>>,
    pub(crate) retry_intervals: Vec<Duration>,
    /// `Ice.Override.Compress`.
    pub(crate) override_compress: Option<bool>,
    /// `Ice.AcceptClassCycles` (default 0, as Ice for C++): whether the
    /// decoders of requests and replies accept class graphs with cycles.
    pub(crate) accept_class_cycles: bool,
    /// `Ice.ClassGraphDepthMax` (default 100, as Ice), at most
    /// [`floe_wire::class::CLASS_GRAPH_DEPTH_LIMIT`].
    pub(crate) class_graph_depth_max: usize,
    /// `Floe.ClassGraphMemoryFactor` (default
    /// [`floe_wire::class::CLASS_GRAPH_MEMORY_FACTOR`]): the class-graph
    /// memory budget of the decoders of requests and replies, in bytes of
    /// decoded instances per byte of encapsulation (0: no budget).
    pub(crate) class_graph_memory_factor: usize,
    default_host: Option<String>,
    /// The TLS client configuration and the endpoint order.
    transports: crate::transport::ClientTransports,
    /// Outgoing connections, one per (address, connection id).
    connections: Mutex<HashMap<ConnectionKey, Connection>>,
    /// One lock per endpoint list being connected: concurrent first calls
    /// to one server share a connection instead of racing to open several,
    /// while a slow or dead server never delays connections to others.
    connecting: Mutex<HashMap<ConnectionKey, Arc<tokio::sync::Mutex<()>>>>,
    pub(crate) datagrams: Datagrams,
    pub(crate) adapters: Mutex<Vec<ObjectAdapter>>,
    shutdown: watch::Sender<bool>,
    destroyed: AtomicBool,
    /// `Ice.Default.Locator` and the locators' caches.
    pub(crate) locators: crate::object_model::locator::LocatorManager,
    /// The proxy of the `Ice.Admin` object, once created (`None` inside:
    /// admin disabled; see `create_admin`).
    pub(crate) admin: tokio::sync::OnceCell<Option<Proxy>>,
    /// `Ice.Default.Router` and the routers' state.
    pub(crate) routers: crate::object_model::router::RouterManager,
    /// The application's value factories (see `add_value_factory`).
    pub(crate) value_factories: value_factories::Slot,
    /// Invocation middleware for new proxies.
    pub(crate) invocation_middleware: crate::middleware::InvocationChain,
}

/// The communicator; clones share it.
///
/// ```no_run
/// # async fn f() -> floe_runtime::Result<()> {
/// use floe_runtime::Communicator;
/// let communicator = Communicator::new();
/// let proxy = communicator.string_to_proxy("hello:tcp -h 127.0.0.1 -p 10000")?;
/// proxy.ice_ping().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Communicator {
    pub(crate) inner: Arc<CommunicatorInner>,
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Communicator").finish_non_exhaustive()
    }
}

impl Default for Communicator {
    fn default() -> Self {
        Self::new()
    }
}

impl Communicator {
    /// A communicator with no properties set.
    pub fn new() -> Self {
        Self::with_properties(Properties::new())
    }

    /// A communicator configured by `properties`. The first one of the
    /// process with `Ice.StdOut` or `Ice.StdErr` set redirects stdout or
    /// stderr to those files (see [`crate::logger`]).
    pub fn with_properties(properties: Properties) -> Self {
        // `Ice.StdOut`/`Ice.StdErr`, as an Ice communicator starts (once per
        // process); an error cannot stop this constructor: it is reported.
        if let Err(e) = crate::logger::stdio::redirect(&properties) {
            tracing::error!("{e}");
            eprintln!("{e}");
        }
        let retry_intervals = match properties.get("Ice.RetryIntervals") {
            None => vec![Duration::ZERO],
            Some(v) => {
                let list: Vec<i64> = v
                    .split(|c: char| c == ',' || c.is_whitespace())
                    .filter_map(|s| s.trim().parse().ok())
                    .collect();
                if list.first().is_some_and(|&d| d < 0) {
                    Vec::new()
                } else {
                    list.into_iter()
                        .map(|ms| Duration::from_millis(ms.max(0) as u64))
                        .collect()
                }
            }
        };
        let metrics = crate::metrics::MetricsAdmin::from_properties(&properties);
        let mut client_config = connection_config(&properties, Side::Client);
        client_config.metrics = metrics.clone();
        let datagrams = Datagrams::new(client_config.compression_level);
        let (shutdown, _) = watch::channel(false);
        let communicator = Communicator {
            inner: Arc::new(CommunicatorInner {
                locators: crate::object_model::locator::LocatorManager::from_properties(
                    &properties,
                ),
                admin: tokio::sync::OnceCell::new(),
                routers: crate::object_model::router::RouterManager::default(),
                default_host: properties.get("Ice.Default.Host"),
                transports: crate::transport::ClientTransports::new(&properties),
                client_config,
                metrics,
                #[cfg(feature = "prometheus")]
                prometheus: Mutex::new(None),
                retry_intervals,
                override_compress: properties
                    .get("Ice.Override.Compress")
                    .map(|v| v.trim() != "0"),
                accept_class_cycles: properties.get_int_or("Ice.AcceptClassCycles", 0) != 0,
                class_graph_depth_max: class_graph_depth_max(&properties),
                class_graph_memory_factor: usize::try_from(properties.get_int_or(
                    "Floe.ClassGraphMemoryFactor",
                    floe_wire::class::CLASS_GRAPH_MEMORY_FACTOR as i64,
                ))
                .unwrap_or(0),
                properties,
                connections: Mutex::new(HashMap::new()),
                connecting: Mutex::new(HashMap::new()),
                datagrams,
                adapters: Mutex::new(Vec::new()),
                value_factories: Mutex::new(None),
                invocation_middleware: Default::default(),
                shutdown,
                destroyed: AtomicBool::new(false),
            }),
        };
        communicator.inner.locators.init_default(&communicator);
        communicator.inner.routers.init_default(&communicator);
        communicator.start_prometheus();
        communicator
    }

    /// Starts the scrape endpoint `Floe.Prometheus.Endpoint` names, if
    /// set; a failure cannot stop the constructor: it is reported.
    fn start_prometheus(&self) {
        #[cfg(feature = "prometheus")]
        let result = self.start_prometheus_from_properties();
        #[cfg(not(feature = "prometheus"))]
        let result = match self
            .inner
            .properties
            .get(crate::metrics::PROMETHEUS_ENDPOINT)
        {
            Some(_) => Err(format!(
                "{} is set, but floe was built without its `prometheus` feature",
                crate::metrics::PROMETHEUS_ENDPOINT
            )),
            None => Ok(()),
        };
        if let Err(e) = result {
            tracing::error!("{e}");
        }
    }

    /// A communicator configured from command-line arguments
    /// (`--Ice.Config=file`, `--Name=value`; see [`Properties::from_args`]).
    ///
    /// # Errors
    ///
    /// If a configuration file cannot be read.
    pub fn from_args(args: &mut Vec<String>) -> Result<Self> {
        Ok(Self::with_properties(Properties::from_args(args)?))
    }

    /// What a [`floe_wire::Decoder`] needs to decode proxies as live
    /// proxies of this communicator (Ice's input stream made with a
    /// communicator): `dec.set_context(communicator.decoder_context())`.
    pub fn decoder_context(&self) -> floe_wire::DecoderContext {
        self.inner.clone()
    }

    /// Prepares `dec` as this communicator's decoders are: proxies decode
    /// as live proxies ([`Communicator::decoder_context`]), the value
    /// factories ([`Communicator::add_value_factory`]) make instances, and
    /// `Ice.AcceptClassCycles`, `Ice.ClassGraphDepthMax` and
    /// `Floe.ClassGraphMemoryFactor` apply.
    pub fn configure_decoder(&self, dec: &mut floe_wire::Decoder) {
        dec.set_accept_class_cycles(self.inner.accept_class_cycles);
        dec.set_class_graph_depth_max(self.inner.class_graph_depth_max);
        dec.set_class_graph_memory_factor(self.inner.class_graph_memory_factor);
        self.configure_value_factories(dec);
        dec.set_context(self.inner.clone());
    }

    /// The properties.
    pub fn properties(&self) -> &Properties {
        &self.inner.properties
    }

    /// Parses a stringified proxy (`hello:tcp -h 127.0.0.1 -p 10000`).
    ///
    /// # Errors
    ///
    /// Proxy, identity or endpoint parse errors.
    pub fn string_to_proxy(&self, text: &str) -> Result<Proxy> {
        self.string_to_proxy_opt(text)?.ok_or_else(|| {
            Error::Protocol(floe_wire::Error::ProxyParse {
                input: text.to_string(),
                reason: "null proxy".into(),
            })
        })
    }

    /// Parses a stringified proxy; the empty string gives the null proxy
    /// (`None`), as in Ice.
    ///
    /// # Errors
    ///
    /// Proxy, identity or endpoint parse errors.
    pub fn string_to_proxy_opt(&self, text: &str) -> Result<Option<Proxy>> {
        let data = floe_wire::proxy_string::string_to_proxy(text, &self.parse_defaults())?;
        Ok(data.map(|d| Proxy::from_data(self, d)))
    }

    /// The `Ice.Default.*` settings that complete stringified proxies.
    pub fn parse_defaults(&self) -> floe_wire::ParseDefaults {
        let props = &self.inner.properties;
        let mut d = floe_wire::ParseDefaults::default();
        if let Some(h) = props.get("Ice.Default.Host") {
            d.host = h;
        }
        d.timeout = props.get_int_or("Ice.Default.Timeout", d.timeout as i64) as i32;
        if let Some(p) = props.get("Ice.Default.Protocol") {
            d.protocol = p;
        }
        if let Some(e) = props.get("Ice.Default.EncodingVersion") {
            if let Ok(e) = e.parse() {
                d.encoding = e;
            }
        }
        d
    }

    /// A proxy for `identity` at `endpoints`.
    pub fn create_proxy(&self, identity: Identity, endpoints: Vec<Endpoint>) -> Proxy {
        Proxy::new_internal(Arc::downgrade(&self.inner), identity, endpoints)
    }

    /// Creates an adapter listening on `<name>.Endpoints`.
    ///
    /// # Errors
    ///
    /// If the property is missing or unparsable, or binding fails.
    pub async fn create_object_adapter(&self, name: &str) -> Result<ObjectAdapter> {
        let eps = self
            .inner
            .properties
            .get(&format!("{name}.Endpoints"))
            .ok_or_else(|| Error::Initialization(format!("{name}.Endpoints is not set")))?;
        self.create_object_adapter_with_endpoints(name, &eps).await
    }

    /// Creates an adapter listening on `endpoints` (e.g.
    /// `tcp -h 127.0.0.1 -p 0`; port 0 picks a free port, see
    /// [`ObjectAdapter::endpoints`]). Call [`ObjectAdapter::activate`] to
    /// start dispatching.
    ///
    /// # Errors
    ///
    /// Endpoint parse errors, bind failures, or a destroyed communicator.
    pub async fn create_object_adapter_with_endpoints(
        &self,
        name: &str,
        endpoints: &str,
    ) -> Result<ObjectAdapter> {
        if self.inner.destroyed.load(Ordering::Acquire) {
            return Err(Error::CommunicatorDestroyed);
        }
        let props = &self.inner.properties;
        let eps = Endpoint::parse_list(endpoints, self.inner.default_host.as_deref())?;
        let published = props
            .get(&format!("{name}.PublishedEndpoints"))
            .map(|p| Endpoint::parse_list(&p, self.inner.default_host.as_deref()))
            .transpose()?;
        let mut config = connection_config(props, Side::Server(name));
        config.metrics = self.inner.metrics.clone();
        let adapter = ObjectAdapter::bind(name, self, eps, published, config).await?;
        self.inner
            .adapters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(adapter.clone());
        Ok(adapter)
    }

    /// Flushes the batch requests queued on every outgoing connection.
    ///
    /// # Errors
    ///
    /// The first connection error.
    pub async fn flush_batch_requests(&self) -> Result<()> {
        let conns: Vec<Connection> = self
            .inner
            .connections
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        let mut first = None;
        for c in conns {
            if let Err(e) = c.flush_batch_requests() {
                first.get_or_insert(e);
            }
        }
        self.inner.datagrams.flush().await?;
        first.map_or(Ok(()), Err)
    }

    /// The communicator of `weak`, if it is still there.
    ///
    /// # Errors
    ///
    /// [`Error::CommunicatorDestroyed`] if it is gone.
    pub(crate) fn upgrade(weak: &Weak<CommunicatorInner>) -> Result<Communicator> {
        weak.upgrade()
            .map(|inner| Communicator { inner })
            .ok_or(Error::CommunicatorDestroyed)
    }

    /// The adapters created so far.
    fn adapters(&self) -> Vec<ObjectAdapter> {
        self.inner
            .adapters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Starts deactivating every adapter (non-blocking; must be called
    /// inside a tokio runtime, e.g. from a servant; outside one it only
    /// logs an error). [`Communicator::wait_for_shutdown`] waits for
    /// the end.
    pub fn shutdown(&self) {
        if self.inner.shutdown.send_replace(true) {
            return;
        }
        let adapters = self.adapters();
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            tracing::error!("Communicator::shutdown called outside a tokio runtime");
            return;
        };
        for a in adapters {
            handle.spawn(async move { a.deactivate().await });
        }
    }

    /// Whether [`Communicator::shutdown`] was called.
    pub fn is_shutdown(&self) -> bool {
        *self.inner.shutdown.borrow()
    }

    /// Waits for [`Communicator::shutdown`] and for every adapter to finish
    /// deactivating.
    pub async fn wait_for_shutdown(&self) {
        let mut rx = self.inner.shutdown.subscribe();
        let _ = rx.wait_for(|s| *s).await;
        let adapters = self.adapters();
        for a in adapters {
            a.wait_for_deactivate().await;
        }
    }

    /// Shuts down, destroying every object adapter
    /// ([`ObjectAdapter::destroy`]: servant locators are deactivated and
    /// servants dropped), then closes every outgoing connection
    /// gracefully; later calls fail with [`Error::CommunicatorDestroyed`].
    pub async fn destroy(&self) {
        if self.inner.destroyed.swap(true, Ordering::AcqRel) {
            return;
        }
        let adapters: Vec<ObjectAdapter> = self
            .inner
            .adapters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
            .collect();
        self.inner.shutdown.send_replace(true);
        for a in &adapters {
            a.destroy().await;
        }
        let conns: Vec<Connection> = self
            .inner
            .connections
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .map(|(_, c)| c)
            .collect();
        for c in &conns {
            c.close().await;
        }
        self.inner.datagrams.close();
        #[cfg(feature = "prometheus")]
        crate::metrics::map_lock(&self.inner.prometheus).take();
    }
}

/// `Ice.ClassGraphDepthMax`: Ice's default (100) and meaning (below 1: no
/// limit), within the depth a decoder's stack allows
/// ([`floe_wire::class::CLASS_GRAPH_DEPTH_LIMIT`]).
fn class_graph_depth_max(properties: &Properties) -> usize {
    let limit = floe_wire::class::CLASS_GRAPH_DEPTH_LIMIT;
    let value = properties.get_int_or("Ice.ClassGraphDepthMax", 100);
    match usize::try_from(value) {
        Ok(depth) if (1..=limit).contains(&depth) => depth,
        _ => {
            tracing::warn!(
                "Ice.ClassGraphDepthMax={value}: class graphs nest at most {limit} deep in floe (the decoder's stack)"
            );
            limit
        }
    }
}
