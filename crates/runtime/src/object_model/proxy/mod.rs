//! [`Proxy`]: an untyped reference to an Ice object: identity, facet,
//! invocation mode, endpoints and per-proxy settings (`ice_*`), and
//! [`Proxy::invoke`], the one call every typed proxy goes through.
//!
//! Proxies are immutable and cheap to clone (one `Arc`); every `ice_*`
//! method returns a new proxy. A proxy caches the connection it last used.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use floe_wire::{Context, Encapsulation, EncodingVersion, Identity, ENCODING_1_1};

use crate::connection::Connection;
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::object_model::communicator::{Communicator, CommunicatorInner};
use crate::params_size::ParamsSize;

mod codec;
mod invoke;
mod object_ops;
pub(crate) mod observe;

/// How a proxy sends requests: floe-wire's [`ProxyMode`](floe_wire::proxy::ProxyMode)
/// (the proxy's mode byte, §4.10), under the name the runtime's API uses.
pub use floe_wire::proxy::ProxyMode as InvocationMode;

/// A successful invocation: the reply's encapsulation. A user exception is
/// a successful exchange too; the typed layer decodes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Response {
    /// Status 0: results (empty for oneway and batched requests).
    Ok(Encapsulation),
    /// Status 1: a user exception.
    UserException(Encapsulation),
}

impl Response {
    /// The results, or the error an Ice client raises for a user exception
    /// when it knows no exception type: [`Error::UnknownUserException`]
    /// with the type id, or the decoding error (see
    /// [`user_exception_error`](crate::user_exception_error)).
    ///
    /// # Errors
    ///
    /// As above.
    #[inline]
    pub fn into_ok(self) -> Result<Encapsulation> {
        match self {
            Response::Ok(e) => Ok(e),
            Response::UserException(e) => Err(undeclared_user_exception(e)),
        }
    }

    /// The results, or for a user exception the error
    /// [`Proxy::user_exception_error`] gives (what generated proxies call).
    ///
    /// # Errors
    ///
    /// As above.
    pub fn ok_or_user_exception(
        self,
        proxy: &Proxy,
        known: &floe_wire::UserExceptionRegistry,
        values: Option<fn() -> Arc<floe_wire::class::ValueFactoryRegistry>>,
        declared: &[&str],
    ) -> Result<Encapsulation> {
        match self {
            Response::Ok(e) => Ok(e),
            Response::UserException(e) => {
                Err(proxy.user_exception_error(e, known, values, declared))
            }
        }
    }
}

#[derive(Clone)]
pub(crate) struct ProxyInner {
    pub(crate) communicator: Weak<CommunicatorInner>,
    pub(crate) identity: Identity,
    pub(crate) facet: String,
    pub(crate) mode: InvocationMode,
    /// `Some` when `ice_compress` was called (overrides the endpoints' `-z`).
    pub(crate) compress: Option<bool>,
    /// `Ice.Override.Compress`, if set.
    pub(crate) override_compress: Option<bool>,
    pub(crate) secure: bool,
    pub(crate) encoding: EncodingVersion,
    pub(crate) context: Context,
    pub(crate) endpoints: Vec<Endpoint>,
    /// Endpoints of transports the runtime does not speak (ssl, ws,
    /// opaque): kept so the proxy marshals and prints unchanged.
    pub(crate) other_endpoints: Vec<floe_wire::EndpointData>,
    pub(crate) adapter_id: String,
    pub(crate) invocation_timeout: Option<Duration>,
    pub(crate) fixed: Option<Connection>,
    pub(crate) connection_id: String,
    pub(crate) cached: Arc<Mutex<Option<Connection>>>,
    /// The size of the last parameters encoded, the room for the next.
    pub(crate) params_size: ParamsSize,
    /// `Ice.Default.SlicedFormat`, read once (generated code overrides it
    /// for operations with `["format:..."]` metadata).
    pub(crate) class_format: floe_wire::ClassFormat,
    /// The locator of an indirect proxy (`ice_locator`).
    pub(crate) locator: Option<Arc<crate::object_model::locator::LocatorInfo>>,
    /// `ice_locator_cache_timeout`, seconds (-1: forever).
    pub(crate) locator_cache_timeout: i32,
    /// `ice_endpoint_selection`.
    pub(crate) endpoint_selection: crate::object_model::locator::EndpointSelection,
    /// The router requests go through (`ice_router`).
    pub(crate) router: Option<Arc<crate::object_model::router::RouterInfo>>,
    /// Invocation middleware (`ice_middleware`, the communicator's).
    pub(crate) middleware: crate::middleware::Layers,
}

/// An untyped object reference.
#[derive(Clone)]
pub struct Proxy {
    pub(crate) inner: Arc<ProxyInner>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Proxy({self})")
    }
}

impl PartialEq for Proxy {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Proxy {
    pub(crate) fn new_internal(
        communicator: Weak<CommunicatorInner>,
        identity: Identity,
        endpoints: Vec<Endpoint>,
    ) -> Proxy {
        // `Ice.Override.Compress` wins over `ice_compress` and `-z`; read
        // once here so calls never touch the communicator.
        let upgraded = communicator.upgrade();
        let override_compress = upgraded.as_ref().and_then(|c| c.override_compress);
        let class_format = upgraded
            .as_ref()
            .map_or(floe_wire::ClassFormat::Compact, |c| {
                c.client_config.class_format
            });
        let locators = upgraded.as_ref().map(|c| &c.locators);
        let router = upgraded.as_ref().and_then(|c| c.routers.default_router());
        let middleware = upgraded
            .as_ref()
            .and_then(|c| c.invocation_middleware.layers());
        Proxy {
            inner: Arc::new(ProxyInner {
                override_compress,
                communicator,
                identity,
                facet: String::new(),
                mode: InvocationMode::Twoway,
                compress: None,
                secure: false,
                encoding: ENCODING_1_1,
                context: Context::new(),
                endpoints,
                other_endpoints: Vec::new(),
                adapter_id: String::new(),
                invocation_timeout: None,
                fixed: None,
                connection_id: String::new(),
                cached: Arc::new(Mutex::new(None)),
                params_size: ParamsSize::default(),
                class_format,
                locator: locators.and_then(|l| l.default_locator()),
                locator_cache_timeout: locators.map_or(-1, |l| l.cache_timeout),
                endpoint_selection: locators.map(|l| l.selection).unwrap_or_default(),
                router,
                middleware,
            }),
        }
    }

    pub(crate) fn with(&self, f: impl FnOnce(&mut ProxyInner)) -> Proxy {
        let mut inner = (*self.inner).clone();
        inner.cached = Arc::new(Mutex::new(None));
        f(&mut inner);
        Proxy {
            inner: Arc::new(inner),
        }
    }

    /// The target identity.
    pub fn identity(&self) -> &Identity {
        &self.inner.identity
    }

    /// The facet (empty = default).
    pub fn facet(&self) -> &str {
        &self.inner.facet
    }

    /// The invocation mode.
    pub fn mode(&self) -> InvocationMode {
        self.inner.mode
    }

    /// The endpoints.
    pub fn endpoints(&self) -> &[Endpoint] {
        &self.inner.endpoints
    }

    /// The adapter id (indirect proxies; empty for direct ones).
    pub fn adapter_id(&self) -> &str {
        &self.inner.adapter_id
    }

    /// The encoding used for request parameters.
    pub fn encoding(&self) -> EncodingVersion {
        self.inner.encoding
    }

    /// The per-proxy context.
    pub fn context(&self) -> &Context {
        &self.inner.context
    }

    /// Whether requests are compressed (`Ice.Override.Compress`, else the
    /// `ice_compress` setting, else the first endpoint's `-z`).
    pub fn is_compressed(&self) -> bool {
        if let Some(c) = self.inner.override_compress {
            return c;
        }
        self.inner
            .compress
            .unwrap_or_else(|| self.inner.endpoints.first().is_some_and(|e| e.compress))
    }

    /// The invocation timeout, if any.
    pub fn invocation_timeout(&self) -> Option<Duration> {
        self.inner.invocation_timeout
    }

    /// The communicator.
    ///
    /// # Errors
    ///
    /// [`Error::CommunicatorDestroyed`] if it is gone.
    pub fn communicator(&self) -> Result<Communicator> {
        Communicator::upgrade(&self.inner.communicator)
    }

    /// The same proxy for another identity.
    pub fn ice_identity(&self, identity: Identity) -> Proxy {
        self.with(|p| p.identity = identity)
    }

    /// The same proxy for another facet.
    pub fn ice_facet(&self, facet: &str) -> Proxy {
        if facet == self.inner.facet {
            return self.clone();
        }
        self.with(|p| p.facet = facet.to_string())
    }

    /// Twoway mode.
    pub fn ice_twoway(&self) -> Proxy {
        self.ice_mode(InvocationMode::Twoway)
    }

    /// Oneway mode. A oneway invocation returns once its request is
    /// written or queued on the connection. A oneway on an idle connection
    /// is written before the call returns; small ones (up to 16 KB of
    /// parameters) sent back to back, within 20 µs of the previous write,
    /// are queued and the connection task writes them together as soon as
    /// the calling task yields (a fraction of a syscall each). More than
    /// 1 MiB queued makes the next oneway wait.
    pub fn ice_oneway(&self) -> Proxy {
        self.ice_mode(InvocationMode::Oneway)
    }

    /// Batch oneway mode.
    pub fn ice_batch_oneway(&self) -> Proxy {
        self.ice_mode(InvocationMode::BatchOneway)
    }

    /// Datagram mode (needs a udp endpoint).
    pub fn ice_datagram(&self) -> Proxy {
        self.ice_mode(InvocationMode::Datagram)
    }

    /// Batch datagram mode.
    pub fn ice_batch_datagram(&self) -> Proxy {
        self.ice_mode(InvocationMode::BatchDatagram)
    }

    /// The same proxy in `mode`.
    pub fn ice_mode(&self, mode: InvocationMode) -> Proxy {
        if mode == self.inner.mode {
            return self.clone();
        }
        let fixed = self.inner.fixed.clone();
        let cached = self.inner.cached.clone();
        let mut p = self.with(|p| p.mode = mode);
        // The connection does not depend on twoway/oneway/batch: share it.
        if fixed.is_some() || !mode.is_datagram() {
            Arc::get_mut(&mut p.inner)
                .map(|i| i.cached = cached)
                .unwrap_or(());
        }
        p
    }

    /// Forces compression on or off.
    pub fn ice_compress(&self, compress: bool) -> Proxy {
        self.with(|p| p.compress = Some(compress))
    }

    /// Sets the per-proxy context (sent with every request).
    pub fn ice_context(&self, context: Context) -> Proxy {
        self.with(|p| p.context = context)
    }

    /// Sets the encoding for request parameters.
    pub fn ice_encoding_version(&self, encoding: EncodingVersion) -> Proxy {
        self.with(|p| p.encoding = encoding)
    }

    /// Fails invocations that take longer than `timeout` with
    /// [`Error::InvocationTimeout`] (`None`: wait forever).
    pub fn ice_invocation_timeout(&self, timeout: Option<Duration>) -> Proxy {
        self.with(|p| p.invocation_timeout = timeout)
    }

    /// A proxy bound to `connection`: requests go over it and nowhere else,
    /// never retried (used for bidirectional callbacks).
    pub fn ice_fixed(&self, connection: &Connection) -> Proxy {
        self.with(|p| p.fixed = Some(connection.clone()))
    }

    /// Uses connections reserved for `id`: proxies with different connection
    /// ids never share a connection.
    pub fn ice_connection_id(&self, id: &str) -> Proxy {
        self.with(|p| p.connection_id = id.to_string())
    }

    /// Replaces the endpoints.
    pub fn ice_endpoints(&self, endpoints: Vec<Endpoint>) -> Proxy {
        self.with(|p| p.endpoints = endpoints)
    }

    /// A proxy that uses only secure (`ssl`) endpoints when `secure`.
    pub fn ice_secure(&self, secure: bool) -> Proxy {
        self.with(|p| p.secure = secure)
    }

    /// Whether the proxy uses only secure endpoints ([`Proxy::ice_secure`]).
    pub fn ice_is_secure(&self) -> bool {
        self.inner.secure
    }

    /// The connection this proxy uses now, without connecting: its fixed
    /// connection, or the one an earlier invocation established and the
    /// proxy cached (Ice's `ice_getCachedConnection`). `None` before the
    /// first invocation, or once that connection was lost.
    pub fn ice_get_cached_connection(&self) -> Option<Connection> {
        self.ready_connection().and_then(Result::ok)
    }

    /// The connection this proxy uses, establishing it if needed.
    ///
    /// # Errors
    ///
    /// Connection failures.
    pub async fn ice_get_connection(&self) -> Result<Connection> {
        if let Some(c) = self.ready_connection() {
            return c;
        }
        let comm = self.communicator()?;
        // Direct or through the locator (see `locator::resolve`).
        let c = crate::object_model::locator::resolve::connect(self, &comm).await?;
        *lock(&self.inner.cached) = Some(c.clone());
        Ok(c)
    }

    /// What [`Proxy::ice_get_connection`] answers without waiting: the
    /// fixed connection (or why it cannot be used), or the cached one
    /// while it is active; `None` when a connection must be found.
    pub(crate) fn ready_connection(&self) -> Option<Result<Connection>> {
        if let Some(c) = &self.inner.fixed {
            return Some(if c.is_active() {
                Ok(c.clone())
            } else {
                Err(c.end_error().unwrap_or(Error::ConnectionManuallyClosed))
            });
        }
        let cached = lock(&self.inner.cached);
        cached.as_ref().filter(|c| c.is_active()).cloned().map(Ok)
    }
}

/// The error for a user exception no declaration names (see
/// [`Response::into_ok`]).
#[cold]
fn undeclared_user_exception(e: Encapsulation) -> Error {
    match floe_wire::Decoder::from_encapsulation(e) {
        Ok(mut dec) => {
            crate::user_exception_error(&mut dec, &floe_wire::UserExceptionRegistry::new(), &[])
        }
        Err(e) => e.into(),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl std::fmt::Display for Proxy {
    /// The full stringified form, as `proxyToString` prints it:
    /// `hello -t -e 1.1:tcp -h 127.0.0.1 -p 10000 -t 60000`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&floe_wire::proxy_string::proxy_to_string(
            &self.to_data(),
            floe_wire::ToStringMode::Unicode,
        ))
    }
}

impl Proxy {
    /// The wire-level data of this proxy (what `Encode` writes for a proxy
    /// parameter: `Some(proxy.to_data())`).
    pub fn to_data(&self) -> floe_wire::ProxyData {
        let p = &*self.inner;
        let mut d = floe_wire::ProxyData::new(p.identity.clone());
        d.facet = p.facet.clone();
        d.mode = p.mode;
        d.secure = p.secure;
        d.encoding = p.encoding;
        d.endpoints = p.endpoints.iter().map(Endpoint::to_data).collect();
        d.endpoints.extend(p.other_endpoints.iter().cloned());
        d.adapter_id = p.adapter_id.clone();
        d
    }

    /// A proxy of `communicator` from wire-level data (a decoded proxy
    /// parameter, or a parsed string).
    pub fn from_data(communicator: &Communicator, data: floe_wire::ProxyData) -> Proxy {
        let mut endpoints = Vec::new();
        let mut other = Vec::new();
        for e in data.endpoints {
            match Endpoint::from_data(&e) {
                Some(ep) => endpoints.push(ep),
                None => other.push(e),
            }
        }
        let mut proxy = Proxy::new_internal(
            Arc::downgrade(&communicator.inner),
            data.identity,
            endpoints,
        );
        let inner = Arc::make_mut(&mut proxy.inner);
        inner.facet = data.facet;
        inner.mode = data.mode;
        inner.secure = data.secure;
        inner.encoding = data.encoding;
        inner.other_endpoints = other;
        inner.adapter_id = data.adapter_id;
        proxy
    }
}

impl floe_wire::ProxyType for Proxy {
    /// Writes [`Proxy::to_data`].
    fn write_proxy(&self, enc: &mut floe_wire::Encoder) {
        floe_wire::ProxyType::write_proxy(&self.to_data(), enc)
    }

    /// A proxy of the communicator in the decoder's context (set by
    /// [`Proxy::reply_decoder`], [`crate::Current::params_decoder`] or
    /// [`Communicator::decoder_context`]).
    ///
    /// # Errors
    ///
    /// [`floe_wire::Error::Marshal`] when the decoder has no communicator.
    fn from_proxy_data(
        data: floe_wire::ProxyData,
        dec: &floe_wire::Decoder,
    ) -> floe_wire::Result<Self> {
        let inner = dec
            .context()
            .and_then(|c| c.clone().downcast::<CommunicatorInner>().ok())
            .ok_or_else(|| {
                floe_wire::Error::marshal(
                    "a proxy needs a communicator: decode with Proxy::reply_decoder, \
                     Current::params_decoder or Communicator::decoder_context",
                )
            })?;
        Ok(Proxy::from_data(&Communicator { inner }, data))
    }
}
