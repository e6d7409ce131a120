//! [`Proxy`]: an untyped reference to an Ice object: identity, facet,
//! invocation mode, endpoints and per-proxy settings (`ice_*`), and
//! [`Proxy::invoke`], the one call every typed proxy goes through.
//!
//! Proxies are immutable and cheap to clone (one `Arc`); every `ice_*`
//! method returns a new proxy. A proxy caches the connection it last used.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use floe_wire::protocol::{OperationMode, ReplyBody, RequestHead};
use floe_wire::{Context, Encapsulation, EncodingVersion, Identity, ENCODING_1_1};

use crate::communicator::{Communicator, CommunicatorInner};
use crate::connection::{Connection, Params};
use crate::current::encode_encapsulation;
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::params_size::ParamsSize;
use crate::spans;
use tracing::Instrument;

/// How a proxy sends requests (§4.10 mode byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum InvocationMode {
    /// Waits for a reply.
    #[default]
    Twoway,
    /// No reply (requestId 0).
    Oneway,
    /// Queued until flushed, sent as a BatchRequest.
    BatchOneway,
    /// One UDP datagram per request.
    Datagram,
    /// Queued, flushed as one datagram.
    BatchDatagram,
}

impl InvocationMode {
    /// `twoway`, `oneway`, `batch-oneway`, `datagram` or `batch-datagram`
    /// (the `mode` field of the [`invoke` span](crate::spans)).
    pub fn name(self) -> &'static str {
        match self {
            InvocationMode::Twoway => "twoway",
            InvocationMode::Oneway => "oneway",
            InvocationMode::BatchOneway => "batch-oneway",
            InvocationMode::Datagram => "datagram",
            InvocationMode::BatchDatagram => "batch-datagram",
        }
    }

    /// Whether requests wait for replies.
    pub fn is_twoway(self) -> bool {
        self == InvocationMode::Twoway
    }

    /// Whether requests are queued until flushed.
    pub fn is_batch(self) -> bool {
        matches!(
            self,
            InvocationMode::BatchOneway | InvocationMode::BatchDatagram
        )
    }

    /// Whether requests go over UDP.
    pub fn is_datagram(self) -> bool {
        matches!(
            self,
            InvocationMode::Datagram | InvocationMode::BatchDatagram
        )
    }
}

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
    /// The results, or [`Error::UnknownUserException`] for a user exception
    /// (for callers that declare none).
    ///
    /// # Errors
    ///
    /// As above.
    pub fn into_ok(self) -> Result<Encapsulation> {
        match self {
            Response::Ok(e) => Ok(e),
            Response::UserException(e) => Err(Error::UnknownUserException(
                user_exception_type_id(&e)
                    .unwrap_or_else(|| format!("user exception ({} bytes)", e.data.len())),
            )),
        }
    }
}

/// The most-derived type id of the user exception in `encaps` (what Ice
/// clients report for an exception they do not expect), if it decodes.
fn user_exception_type_id(encaps: &Encapsulation) -> Option<String> {
    let mut dec = floe_wire::Decoder::from_encapsulation(encaps.clone()).ok()?;
    match dec.read_user_exception(&floe_wire::UserExceptionRegistry::new()) {
        Err(floe_wire::Error::UnknownUserException { type_id }) => Some(type_id),
        _ => None,
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
    pub(crate) locator: Option<Arc<crate::locator::LocatorInfo>>,
    /// `ice_locator_cache_timeout`, seconds (-1: forever).
    pub(crate) locator_cache_timeout: i32,
    /// `ice_endpoint_selection`.
    pub(crate) endpoint_selection: crate::locator::EndpointSelection,
    /// The router requests go through (`ice_router`).
    pub(crate) router: Option<Arc<crate::router::RouterInfo>>,
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
        self.inner
            .communicator
            .upgrade()
            .map(|inner| Communicator { inner })
            .ok_or(Error::CommunicatorDestroyed)
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

    /// The connection this proxy uses, establishing it if needed.
    ///
    /// # Errors
    ///
    /// Connection failures.
    pub async fn ice_get_connection(&self) -> Result<Connection> {
        if let Some(c) = &self.inner.fixed {
            if c.is_active() {
                return Ok(c.clone());
            }
            return Err(c.end_error().unwrap_or(Error::ConnectionManuallyClosed));
        }
        if let Some(c) = &*lock(&self.inner.cached) {
            if c.is_active() {
                return Ok(c.clone());
            }
        }
        let comm = self.communicator()?;
        // Direct or through the locator (see `locator::resolve`).
        let c = crate::locator::resolve::connect(self, &comm).await?;
        *lock(&self.inner.cached) = Some(c.clone());
        Ok(c)
    }

    /// Invokes `operation` with `params`, an encoded parameters
    /// encapsulation (6-byte header included, in [`Proxy::encoding`]; see
    /// [`Proxy::encode_params`]). Twoway proxies wait for the reply; oneway
    /// and datagram proxies return once the request is written or queued;
    /// batch proxies queue it.
    ///
    /// Failed invocations are retried as Ice does (§7.2, `Ice.RetryIntervals`).
    /// Dropping the returned future abandons the call: a late reply is
    /// discarded.
    ///
    /// # Errors
    ///
    /// Reply statuses 2–7 as [`Error::ObjectNotExist`] … [`Error::UnknownException`],
    /// connection and protocol errors, [`Error::InvocationTimeout`].
    pub async fn invoke(
        &self,
        operation: &str,
        mode: OperationMode,
        params: Bytes,
    ) -> Result<Response> {
        self.invoke_with_context(operation, mode, params, None)
            .await
    }

    /// [`Proxy::invoke`] with an explicit context instead of the proxy's.
    ///
    /// # Errors
    ///
    /// As [`Proxy::invoke`].
    pub async fn invoke_with_context(
        &self,
        operation: &str,
        mode: OperationMode,
        params: Bytes,
        context: Option<&Context>,
    ) -> Result<Response> {
        self.invoke_params(operation, mode, Params::Encapsulation(&params), context)
            .await
    }

    /// [`Proxy::invoke_with_context`] with parameters that are already an
    /// encapsulation (typically one received from a peer and forwarded,
    /// as an IceStorm broker does): its data is sent as it is, beside the
    /// frame head in a vectored write, so one `Bytes` can be sent to many
    /// targets without a copy.
    ///
    /// # Errors
    ///
    /// As [`Proxy::invoke`].
    pub async fn invoke_encapsulation(
        &self,
        operation: &str,
        mode: OperationMode,
        params: &Encapsulation,
        context: Option<&Context>,
    ) -> Result<Response> {
        let body = Params::Body(params.encoding, &params.data);
        self.invoke_params(operation, mode, body, context).await
    }

    /// [`Proxy::invoke_with_context`] with parameters in two parts, both in
    /// this proxy's encoding without the encapsulation header: `prefix`
    /// (from [`Proxy::encode_params_prefix`]: the parameters before a byte
    /// sequence, and its size) then `payload` (the byte sequence's bytes,
    /// the last parameter). A large payload is sent beside the frame head
    /// in a vectored write, never copied. Generated proxies use it for a
    /// trailing `sequence<byte>` parameter.
    ///
    /// # Errors
    ///
    /// As [`Proxy::invoke`].
    pub async fn invoke_with_payload(
        &self,
        operation: &str,
        mode: OperationMode,
        prefix: &Bytes,
        payload: &Bytes,
        context: Option<&Context>,
    ) -> Result<Response> {
        let params = Params::Split(self.inner.encoding, prefix, payload);
        self.invoke_params(operation, mode, params, context).await
    }

    /// [`Proxy::invoke_with_payload`] with a borrowed payload, typically a
    /// number sequence's memory ([`floe_wire::codec::WireNumber`]): a
    /// large one is written to the socket from where it is, and copied
    /// only when the socket does not take it at once (the rest is queued)
    /// or when the request is compressed, batched or sent as a datagram.
    /// Generated proxies use it for a trailing
    /// `sequence<short|int|long|float|double>` parameter.
    ///
    /// ```no_run
    /// # async fn f(proxy: floe_runtime::Proxy) -> floe_runtime::Result<()> {
    /// use floe_runtime::OperationMode;
    /// use floe_wire::codec::WireNumber;
    ///
    /// let samples = vec![0.5f32; 250_000];
    /// // `publishFloatsOneWay(FloatSeq message)`: the count, then the floats.
    /// let prefix = proxy.encode_params_prefix(|enc| enc.write_size(samples.len()));
    /// proxy
    ///     .invoke_with_payload_slice(
    ///         "publishFloatsOneWay",
    ///         OperationMode::Normal,
    ///         &prefix,
    ///         &f32::wire_bytes(&samples),
    ///         None,
    ///     )
    ///     .await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Proxy::invoke`].
    pub async fn invoke_with_payload_slice(
        &self,
        operation: &str,
        mode: OperationMode,
        prefix: &Bytes,
        payload: &[u8],
        context: Option<&Context>,
    ) -> Result<Response> {
        let params = Params::Slice(self.inner.encoding, prefix, payload);
        self.invoke_params(operation, mode, params, context).await
    }

    /// Sends a oneway request with an encapsulation as in
    /// [`Proxy::invoke_encapsulation`] **now, without awaiting**, if this
    /// is a oneway proxy whose connection is established: the frame is
    /// written, or queued behind what the connection has not written yet
    /// (or, within a burst of small oneways, queued to be written with the
    /// rest of the burst, as by [`Proxy::ice_oneway`] invocations).
    /// `None` when that is not possible (another mode, no connection yet,
    /// or it was lost) or when more than `max_queued` bytes already wait
    /// in the connection's write queue (the peer reads slower than we
    /// send): use [`Proxy::invoke_encapsulation`], which connects, retries
    /// and waits for the queue to drain below 1 MiB, or keep the message
    /// in a bounded queue of your own.
    pub fn try_send_oneway_now(
        &self,
        operation: &str,
        mode: OperationMode,
        params: &Encapsulation,
        context: Option<&Context>,
        max_queued: usize,
    ) -> Option<Result<()>> {
        let p = &*self.inner;
        if p.mode != InvocationMode::Oneway {
            return None;
        }
        let conn = match &p.fixed {
            Some(c) => c.clone(),
            None => lock(&p.cached).clone()?,
        };
        if !conn.is_active() {
            return None;
        }
        let head = RequestHead {
            identity: &p.identity,
            facet: &p.facet,
            operation,
            mode: mode as u8,
            context: context.unwrap_or(&p.context),
        };
        let body = Params::Body(params.encoding, &params.data);
        let span = spans::invoke(operation, &p.identity, &p.facet, p.mode);
        let _entered = span.enter();
        let sent = conn.try_send_oneway_request(&head, body, self.is_compressed(), max_queued);
        if sent.is_some() {
            spans::record_sent(&span, 0, conn.info().id);
        }
        sent
    }

    /// Runs an invocation in its `invoke` span (see [`crate::spans`]).
    ///
    /// The span is entered around what this future does itself (getting
    /// a connection, which may ask a locator, and logging retries) and
    /// lives until the call ends, but the whole future is not wrapped in
    /// `Instrumented`: that would move this large future into a wrapper
    /// on every call, spans disabled or not.
    async fn invoke_params(
        &self,
        operation: &str,
        mode: OperationMode,
        params: Params<'_>,
        context: Option<&Context>,
    ) -> Result<Response> {
        let p = &*self.inner;
        let span = spans::invoke(operation, &p.identity, &p.facet, p.mode);
        let head = RequestHead {
            identity: &p.identity,
            facet: &p.facet,
            operation,
            mode: mode as u8,
            context: context.unwrap_or(&p.context),
        };
        let compress = self.is_compressed();
        if p.mode.is_datagram() {
            let comm = self.communicator()?;
            return comm
                .send_datagram(
                    &p.endpoints,
                    &head,
                    &params.framed(),
                    compress,
                    p.mode.is_batch(),
                )
                .await
                .map(|_| Response::Ok(Encapsulation::empty(p.encoding)));
        }
        let twoway = p.mode.is_twoway();
        let mut attempt = 0usize;
        let mut close_retried = false;
        loop {
            let connection = if span.is_disabled() {
                self.ice_get_connection().await
            } else {
                self.ice_get_connection().instrument(span.clone()).await
            };
            let result = match connection {
                Err(e) => Err((e, false)),
                Ok(conn) if p.mode.is_batch() => conn
                    .queue_batch_request(&head, &params.framed(), compress)
                    .map(|_| ReplyBody::Ok(Encapsulation::empty(p.encoding)))
                    .map_err(|e| (e, false)),
                Ok(conn) => {
                    conn.invoke(&head, params, twoway, compress, p.invocation_timeout, &span)
                        .await
                }
            };
            let (err, sent) = match result {
                Ok(body) => match reply_to_result(body) {
                    Ok(r) => return Ok(r),
                    Err(e) => (e, true),
                },
                Err(e) => e,
            };
            if p.fixed.is_some() || p.mode.is_batch() {
                return Err(err);
            }
            let retryable = err.is_retryable(sent, mode.is_idempotent())
                || crate::locator::resolve::retry_object_not_exist(self, &err);
            // Looked up only after a failure: the success path touches no
            // communicator state.
            let retry_interval = self
                .inner
                .communicator
                .upgrade()
                .and_then(|c| c.retry_intervals.get(attempt).copied());
            let interval = if retryable && retry_interval.is_some() {
                retry_interval
            } else if matches!(err, Error::CloseConnection) && !close_retried {
                // CloseConnection is retried at least once, even when the
                // retry list is used up.
                close_retried = true;
                Some(Duration::ZERO)
            } else {
                None
            };
            let Some(interval) = interval else {
                return Err(err);
            };
            attempt += 1;
            let trace_retry = self
                .communicator()
                .map(|c| c.properties().get_int_or("Ice.Trace.Retry", 0) >= 1)
                .unwrap_or(false);
            span.in_scope(|| {
                crate::trace::event_if!(
                    trace_retry,
                    info,
                    debug,
                    operation,
                    attempt,
                    "retrying after: {err}"
                )
            });
            if !interval.is_zero() {
                tokio::time::sleep(interval).await;
            }
        }
    }

    /// Encodes a parameters encapsulation in this proxy's encoding.
    ///
    /// The buffer starts with the size of the proxy's previous parameters
    /// (see `ParamsSize`), so a request of the same shape as the last one
    /// is encoded without growing (and copying) its buffer.
    pub fn encode_params(&self, write: impl FnOnce(&mut floe_wire::Encoder)) -> Bytes {
        let size = &self.inner.params_size;
        let capacity = size.capacity();
        let format = self.inner.class_format;
        size.record(
            encode_encapsulation(self.inner.encoding, capacity, |enc| {
                enc.set_class_format(format);
                write(enc)
            }),
            capacity,
        )
    }

    /// A decoder for a results (or user exception) encapsulation received
    /// by this proxy, carrying the communicator so that proxies in it
    /// decode as live ones and `Ice.AcceptClassCycles`, `Ice.ClassGraphDepthMax` and
    /// `Floe.ClassGraphMemoryFactor` apply (generated
    /// code uses it for operations whose results may hold proxies or
    /// classes; the others skip the upgrade of the weak communicator
    /// reference).
    ///
    /// # Errors
    ///
    /// [`floe_wire::Error::UnsupportedEncoding`] for an encapsulation
    /// neither 1.0 nor 1.1.
    pub fn reply_decoder(&self, encaps: Encapsulation) -> floe_wire::Result<floe_wire::Decoder> {
        let mut dec = floe_wire::Decoder::from_encapsulation(encaps)?;
        if let Some(inner) = self.inner.communicator.upgrade() {
            dec.set_accept_class_cycles(inner.accept_class_cycles);
            dec.set_class_graph_depth_max(inner.class_graph_depth_max);
            dec.set_class_graph_memory_factor(inner.class_graph_memory_factor);
            dec.set_context(inner);
        }
        Ok(dec)
    }

    /// Encodes the start of a parameters encapsulation's data (no header)
    /// in this proxy's encoding, for [`Proxy::invoke_with_payload`].
    pub fn encode_params_prefix(&self, write: impl FnOnce(&mut floe_wire::Encoder)) -> Bytes {
        let mut enc = floe_wire::Encoder::with_buffer(
            bytes::BytesMut::with_capacity(32),
            self.inner.encoding,
        );
        enc.set_class_format(self.inner.class_format);
        write(&mut enc);
        enc.finish()
    }

    /// An empty parameters encapsulation in this proxy's encoding.
    pub fn empty_params(&self) -> Bytes {
        if self.inner.encoding == ENCODING_1_1 {
            Bytes::from_static(&[6, 0, 0, 0, 1, 1])
        } else {
            Bytes::from_static(&[6, 0, 0, 0, 1, 0])
        }
    }

    /// `ice_ping`: checks that the object exists.
    ///
    /// # Errors
    ///
    /// [`Error::ObjectNotExist`] and friends, connection errors.
    pub async fn ice_ping(&self) -> Result<()> {
        self.invoke("ice_ping", OperationMode::Nonmutating, self.empty_params())
            .await?
            .into_ok()
            .map(drop)
    }

    /// `ice_isA`: whether the object implements `type_id`.
    ///
    /// # Errors
    ///
    /// As [`Proxy::ice_ping`].
    pub async fn ice_is_a(&self, type_id: &str) -> Result<bool> {
        let params = self.encode_params(|e| e.write_string(type_id));
        let r = self
            .twoway_for_builtin()?
            .invoke("ice_isA", OperationMode::Nonmutating, params)
            .await?
            .into_ok()?;
        let mut dec = floe_wire::Decoder::from_encapsulation(r)?;
        Ok(dec.read_bool()?)
    }

    /// `ice_id`: the most-derived type id.
    ///
    /// # Errors
    ///
    /// As [`Proxy::ice_ping`].
    pub async fn ice_id(&self) -> Result<String> {
        let r = self
            .twoway_for_builtin()?
            .invoke("ice_id", OperationMode::Nonmutating, self.empty_params())
            .await?
            .into_ok()?;
        let mut dec = floe_wire::Decoder::from_encapsulation(r)?;
        Ok(dec.read_string()?)
    }

    /// `ice_ids`: all type ids, sorted.
    ///
    /// # Errors
    ///
    /// As [`Proxy::ice_ping`].
    pub async fn ice_ids(&self) -> Result<Vec<String>> {
        let r = self
            .twoway_for_builtin()?
            .invoke("ice_ids", OperationMode::Nonmutating, self.empty_params())
            .await?
            .into_ok()?;
        let mut dec = floe_wire::Decoder::from_encapsulation(r)?;
        Ok(dec.read_seq::<String>()?)
    }

    fn twoway_for_builtin(&self) -> Result<Proxy> {
        if self.inner.mode.is_twoway() {
            Ok(self.clone())
        } else {
            Err(Error::TwowayOnly)
        }
    }

    /// Sends the batch requests queued on this proxy's connection.
    ///
    /// # Errors
    ///
    /// Connection errors.
    pub async fn ice_flush_batch_requests(&self) -> Result<()> {
        if self.inner.mode.is_datagram() {
            let comm = self.communicator()?;
            return comm.flush_datagram_batches().await;
        }
        let conn = self.ice_get_connection().await?;
        conn.flush_batch_requests()
    }
}

fn reply_to_result(body: ReplyBody) -> Result<Response> {
    match body {
        ReplyBody::Ok(e) => Ok(Response::Ok(e)),
        ReplyBody::UserException(e) => Ok(Response::UserException(e)),
        ReplyBody::ObjectNotExist(f) => Err(Error::ObjectNotExist(f)),
        ReplyBody::FacetNotExist(f) => Err(Error::FacetNotExist(f)),
        ReplyBody::OperationNotExist(f) => Err(Error::OperationNotExist(f)),
        ReplyBody::UnknownLocalException(s) => Err(Error::UnknownLocalException(s)),
        ReplyBody::UnknownUserException(s) => Err(Error::UnknownUserException(s)),
        ReplyBody::UnknownException(s) => Err(Error::UnknownException(s)),
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
        d.mode = match p.mode {
            InvocationMode::Twoway => floe_wire::proxy::ProxyMode::Twoway,
            InvocationMode::Oneway => floe_wire::proxy::ProxyMode::Oneway,
            InvocationMode::BatchOneway => floe_wire::proxy::ProxyMode::BatchOneway,
            InvocationMode::Datagram => floe_wire::proxy::ProxyMode::Datagram,
            InvocationMode::BatchDatagram => floe_wire::proxy::ProxyMode::BatchDatagram,
        };
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
        inner.mode = match data.mode {
            floe_wire::proxy::ProxyMode::Twoway => InvocationMode::Twoway,
            floe_wire::proxy::ProxyMode::Oneway => InvocationMode::Oneway,
            floe_wire::proxy::ProxyMode::BatchOneway => InvocationMode::BatchOneway,
            floe_wire::proxy::ProxyMode::Datagram => InvocationMode::Datagram,
            floe_wire::proxy::ProxyMode::BatchDatagram => InvocationMode::BatchDatagram,
        };
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
