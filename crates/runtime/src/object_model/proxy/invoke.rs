//! Invocations: [`Proxy::invoke`] and its variants (parameters as one
//! encapsulation, forwarded, or split around a large payload) and the
//! retry loop (§7.2). The variants that borrow their parameters return
//! the invocation's future itself, with no `async` layer around it (one
//! poll level and one move of the future fewer per call).

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use floe_wire::protocol::{OperationMode, ReplyBody, RequestHead};
use floe_wire::{Context, Encapsulation};
use tracing::Instrument;

use super::observe;
use super::{InvocationMode, Proxy, Response};
use crate::connection::observe::{remote, remote_replied};
use crate::connection::{Connection, InvokeError, Params};
use crate::error::{Error, Result};
use crate::metrics::observe::{context_size, request_size};
use crate::spans;

impl Proxy {
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
        self.invoke_encoded(operation, mode, &params, context).await
    }

    /// [`Proxy::invoke_with_context`] with the parameters borrowed: the
    /// future returned is the invocation's own, with no `async` layer
    /// around it to hold the parameters (generated proxies keep them and
    /// call this).
    ///
    /// # Errors
    ///
    /// As [`Proxy::invoke`].
    pub fn invoke_encoded<'a>(
        &'a self,
        operation: &'a str,
        mode: OperationMode,
        params: &'a Bytes,
        context: Option<&'a Context>,
    ) -> impl Future<Output = Result<Response>> + Send + 'a {
        self.invoke_params(
            operation,
            mode,
            Params::Encapsulation(params),
            context,
            true,
        )
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
    pub fn invoke_encapsulation<'a>(
        &'a self,
        operation: &'a str,
        mode: OperationMode,
        params: &'a Encapsulation,
        context: Option<&'a Context>,
    ) -> impl Future<Output = Result<Response>> + Send + 'a {
        let body = Params::Body(params.encoding, &params.data);
        self.invoke_params(operation, mode, body, context, true)
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
    pub fn invoke_with_payload<'a>(
        &'a self,
        operation: &'a str,
        mode: OperationMode,
        prefix: &'a Bytes,
        payload: &'a Bytes,
        context: Option<&'a Context>,
    ) -> impl Future<Output = Result<Response>> + Send + 'a {
        let params = Params::Split(self.inner.encoding, prefix, payload);
        self.invoke_params(operation, mode, params, context, true)
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
    pub fn invoke_with_payload_slice<'a>(
        &'a self,
        operation: &'a str,
        mode: OperationMode,
        prefix: &'a Bytes,
        payload: &'a [u8],
        context: Option<&'a Context>,
    ) -> impl Future<Output = Result<Response>> + Send + 'a {
        let params = Params::Slice(self.inner.encoding, prefix, payload);
        self.invoke_params(operation, mode, params, context, true)
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
    ///
    /// The proxy's invocation middleware does not run (a raw forward, as a
    /// broker's; [`Proxy::invoke_encapsulation`] runs it).
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
        let conn = self.ice_get_cached_connection()?;
        let head = RequestHead {
            identity: &p.identity,
            facet: &p.facet,
            operation,
            mode,
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
    ///
    /// With `middleware`, the proxy's invocation middleware runs around
    /// the invocation (boxed, and then this function runs again without
    /// it). It is a branch here rather than a wrapper future: a wrapper
    /// costs every call a move of this future and one more poll level.
    pub(crate) async fn invoke_params(
        &self,
        operation: &str,
        mode: OperationMode,
        params: Params<'_>,
        context: Option<&Context>,
        middleware: bool,
    ) -> Result<Response> {
        if middleware {
            if let Some(layers) = &self.inner.middleware {
                let layered = self.invoke_layered(layers.clone(), operation, mode, params, context);
                return Box::pin(layered).await;
            }
        }
        let p = &*self.inner;
        // The usual call's connection, found with no `await`.
        let mut ready = self.ready_connection();
        // IceMX: one relaxed load when no communicator observes metrics.
        let observer = if crate::metrics::active() {
            self.observe_invocation(operation, context, ready.as_ref())
        } else {
            None
        };
        let span = spans::invoke(operation, &p.identity, &p.facet, p.mode);
        let head = RequestHead {
            identity: &p.identity,
            facet: &p.facet,
            operation,
            mode,
            context: context.unwrap_or(&p.context),
        };
        let compress = self.is_compressed();
        if p.mode.is_datagram() {
            let comm = self.communicator()?;
            return comm
                .inner
                .datagrams
                .send(
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
        // IceMX: when the last remote attempt ended, which the invocation
        // ends at on success (one clock reading for both).
        let mut remote_end = None;
        loop {
            // IceMX: an attempt on the connection found as the invocation
            // started starts with it (the same poll, one clock reading).
            let started = ready.is_some();
            let connection = match ready.take() {
                Some(c) => c,
                None if span.is_disabled() => self.ice_get_connection().await,
                None => self.ice_get_connection().instrument(span.clone()).await,
            };
            let result = match connection {
                Err(e) => Err(InvokeError::unsent(e)),
                Ok(conn) if p.mode.is_batch() => conn
                    .queue_batch_request(&head, &params.framed(), compress)
                    .map(|_| ReplyBody::Ok(Encapsulation::empty(p.encoding)))
                    .map_err(InvokeError::unsent),
                Ok(conn) => {
                    // IceMX: the attempt's remote observer (none without
                    // metrics).
                    let remote = observer.as_ref().and_then(|o| {
                        let size = request_size(
                            &p.identity,
                            &p.facet,
                            operation,
                            context_size(head.context),
                            params.len(),
                        );
                        remote(o, conn.info(), size, started)
                    });
                    // Awaited here rather than in an `async fn` of the
                    // connection: one future level fewer per call.
                    let r = match conn.send_invocation(&head, params, twoway, compress, &span) {
                        Err(e) => Err(e),
                        Ok(Some(reply)) => match p.invocation_timeout {
                            None => reply.await,
                            Some(t) => tokio::time::timeout(t, reply)
                                .await
                                .unwrap_or(Err(Error::InvocationTimeout)),
                        }
                        .map_err(InvokeError::sent),
                        Ok(None) => conn.oneway_sent().await,
                    };
                    if let Some(c) = &remote {
                        remote_end = Some(remote_replied(c, r.as_ref().ok()));
                    }
                    r
                }
            };
            let (err, sent) = match result {
                Ok(body) => match reply_to_result(body) {
                    Ok(r) => {
                        if let Some(o) = &observer {
                            observe::invoked(
                                o,
                                matches!(r, Response::UserException(_)),
                                remote_end,
                            );
                        }
                        return Ok(r);
                    }
                    Err(e) => (e, true),
                },
                Err(InvokeError { error, sent }) => (error, sent),
            };
            if p.fixed.is_some() || p.mode.is_batch() {
                return Err(invocation_failed(observer.as_ref(), err));
            }
            let retryable = err.is_retryable(sent, mode.is_idempotent())
                || crate::object_model::locator::resolve::retry_object_not_exist(self, &err);
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
                return Err(invocation_failed(observer.as_ref(), err));
            };
            attempt += 1;
            if let Some(o) = &observer {
                observe::retried(o);
            }
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
}

/// `err`, counted as the failure of an observed invocation.
fn invocation_failed(observer: Option<&crate::metrics::Observer>, err: Error) -> Error {
    if let Some(o) = observer {
        o.failed(err.ice_name());
    }
    err
}

impl Proxy {
    /// Attaches an invocation of `operation` to the `Invocation` maps of
    /// this proxy's communicator, if it observes metrics (found through
    /// the `ready` connection when there is one: a connection is its
    /// communicator's).
    fn observe_invocation(
        &self,
        operation: &str,
        context: Option<&Context>,
        ready: Option<&Result<Connection>>,
    ) -> Option<crate::metrics::Observer> {
        let context = context.unwrap_or(&self.inner.context);
        if let Some(Ok(conn)) = ready {
            return observe::invocation(conn.metrics()?, self, operation, context);
        }
        let inner = self.inner.communicator.upgrade()?;
        observe::invocation(inner.metrics.as_ref()?, self, operation, context)
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
        ReplyBody::DispatchException { status, message } => {
            Err(Error::DispatchException { status, message })
        }
    }
}
