//! The adapter's dispatch rules, the same for every transport (a stream
//! connection, a datagram): the operation mode and the parameters'
//! encoding, the servant lookup (identity, facet, default servants), the
//! `Current`, an adapter on hold, the built-in `ice_*` operations, and a
//! panicking servant as status 7. What is left to the caller is where the
//! reply goes.

use bytes::Bytes;
use floe_wire::protocol::{OperationMode, Request, RequestFailed};

use std::sync::Arc;

use super::{DynServantLocator, ObjectAdapter};
use crate::connection::Connection;
use crate::object_model::current::Current;
use crate::object_model::servant::{Dispatch, DispatchError, DispatchResult, ReplyData, Servant};
use crate::outcome::panic_error;

impl ObjectAdapter {
    /// Dispatches one request received on `connection` (`None` for a
    /// datagram) by the adapter's rules:
    ///
    /// 1. an invalid mode byte is a `MarshalException`
    ///    (`UnknownLocalException`), an unsupported parameters encoding an
    ///    `UnsupportedEncodingException`;
    /// 2. the servant: identity and facet, else a default servant
    ///    ([`ObjectAdapter::find_servant`]), else the servant locator of
    ///    the category or of `""` ([`super::ServantLocator`]);
    ///    `ObjectNotExistException` or `FacetNotExistException` when there
    ///    is none;
    /// 3. while the adapter holds, the request waits until it is activated
    ///    (the returned dispatch is pending);
    /// 4. `ice_ping`, `ice_isA`, `ice_id` and `ice_ids` are answered from
    ///    the servant's type ids unless it handles them itself;
    /// 5. everything else is [`Servant::dispatch`]; a panic while it runs
    ///    becomes `UnknownException` (status 7), here or, for a dispatch
    ///    still pending, where the caller polls it (see
    ///    [`panic_error`]).
    ///
    /// Between rules 1 and 2, the request goes through the adapter's
    /// middleware ([`ObjectAdapter::use_middleware`]), whose innermost
    /// layer applies rules 2 to 5.
    pub(crate) fn dispatch_request(
        &self,
        request: Request,
        connection: Option<Connection>,
    ) -> Dispatch {
        let Some(mode) = request.mode() else {
            let text = format!(
                "::Ice::MarshalException:\nunexpected operation mode {}",
                request.mode_byte
            );
            return Dispatch::Ready(Err(DispatchError::UnknownLocalException(text)));
        };
        if !request.params.encoding.is_supported() {
            let e = floe_wire::Error::UnsupportedEncoding {
                major: request.params.encoding.major,
                minor: request.params.encoding.minor,
            };
            return Dispatch::Ready(Err(e.into()));
        }
        if let Some(chain) = self.inner.middleware.get() {
            return self.dispatch_layered(chain.clone(), request, mode, connection);
        }
        let (current, params) = self.current(request, mode, connection);
        self.dispatch_to_servant(current, params)
    }

    /// The `Current` of `request`, and its parameters.
    #[inline(always)]
    fn current(
        &self,
        request: Request,
        mode: OperationMode,
        connection: Option<Connection>,
    ) -> (Current, floe_wire::Encapsulation) {
        let current = Current {
            adapter: self.clone(),
            connection,
            id: request.identity,
            facet: request.facet,
            operation: request.operation,
            mode,
            ctx: request.context,
            request_id: request.request_id,
            encoding: request.params.encoding,
        };
        (current, request.params)
    }

    /// [`ObjectAdapter::dispatch_request`] through the adapter's middleware
    /// `chain`. Not inlined: the path without middleware builds its
    /// `Current` in place, as it did before middleware existed.
    #[inline(never)]
    fn dispatch_layered(
        &self,
        chain: Arc<dyn Servant>,
        request: Request,
        mode: OperationMode,
        connection: Option<Connection>,
    ) -> Dispatch {
        let (current, params) = self.current(request, mode, connection);
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            chain.dispatch(current, params)
        }))
        .unwrap_or_else(|p| Dispatch::Ready(Err(panic_error(p))))
    }

    /// Rules 2 to 5 of [`ObjectAdapter::dispatch_request`], for a request
    /// that passed the adapter's middleware (if any). Inlined: a call
    /// would cost every request a move of its `Current`.
    #[inline(always)]
    pub(crate) fn dispatch_to_servant(
        &self,
        current: Current,
        params: floe_wire::Encapsulation,
    ) -> Dispatch {
        let servant = match self.find_servant(&current.id, &current.facet) {
            Ok(s) => s,
            Err(facet_missing) => {
                let Some(locator) = self.servant_locator(&current.id.category) else {
                    return Dispatch::Ready(Err(not_found(&current, facet_missing)));
                };
                let adapter = self.clone();
                return Dispatch::future(async move {
                    if adapter.is_holding() {
                        adapter.wait_until_released().await;
                    }
                    located(locator, current, params).await
                });
            }
        };
        if self.is_holding() {
            // ObjectAdapter::hold: the request (built-ins included) waits
            // until the adapter is activated.
            let adapter = self.clone();
            return Dispatch::future(async move {
                adapter.wait_until_released().await;
                match call(servant, current, params) {
                    Dispatch::Ready(result) => result,
                    Dispatch::Pending(fut) => fut.await,
                }
            });
        }
        call(servant, current, params)
    }
}

/// `ObjectNotExistException`, or `FacetNotExistException` when the
/// identity has servants for other facets, for the request of `current`.
fn not_found(current: &Current, facet_missing: bool) -> DispatchError {
    let f = RequestFailed {
        identity: current.id.clone(),
        facet: current.facet.clone(),
        operation: current.operation.clone(),
    };
    if facet_missing {
        DispatchError::FacetNotExist(f)
    } else {
        DispatchError::ObjectNotExist(f)
    }
}

/// A user exception raised by a servant locator, encoded for the reply in
/// the request's encoding and the adapter's class format.
fn locator_error(current: &Current, e: DispatchError) -> DispatchError {
    current.encode_user_exception(e, None)
}

/// Rule 2's servant locator: `locate`, the dispatch, then `finished`,
/// whose error replaces the dispatch's result. A panic of the servant
/// becomes status 7 here, so that `finished` still runs.
async fn located(
    locator: Arc<dyn DynServantLocator>,
    current: Current,
    params: floe_wire::Encapsulation,
) -> DispatchResult {
    let found = locator
        .locate(&current)
        .await
        .map_err(|e| locator_error(&current, e))?;
    let Some((servant, cookie)) = found else {
        let facet_missing = current.adapter.has_servant(&current.id);
        return Err(not_found(&current, facet_missing));
    };
    let result = match call(servant.clone(), current.clone(), params) {
        Dispatch::Ready(result) => result,
        Dispatch::Pending(fut) => CatchPanic(fut).await,
    };
    match locator.finished(&current, servant, cookie).await {
        Ok(()) => result,
        Err(e) => Err(locator_error(&current, e)),
    }
}

/// A dispatch future whose panic becomes status 7.
struct CatchPanic(crate::object_model::servant::DispatchFuture);

impl std::future::Future for CatchPanic {
    type Output = DispatchResult;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<DispatchResult> {
        let fut = &mut self.0;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fut.as_mut().poll(cx)))
            .unwrap_or_else(|p| std::task::Poll::Ready(Err(panic_error(p))))
    }
}

/// Rules 4 and 5 of [`ObjectAdapter::dispatch_request`]. Inlined: a call
/// would cost every request a move of its `Current`.
#[inline(always)]
pub(crate) fn call(
    servant: Arc<dyn Servant>,
    current: Current,
    params: floe_wire::Encapsulation,
) -> Dispatch {
    if current.operation.starts_with("ice_") && !servant.handles_builtins() {
        if let Some(result) = builtin(&*servant, &current, &params) {
            return Dispatch::Ready(result);
        }
        // Not a built-in we know: the servant decides.
    }
    // A panicking servant must not take the connection (and everybody
    // else's dispatches on it) down: it becomes reply status 7.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        servant.dispatch(current, params)
    }))
    .unwrap_or_else(|p| Dispatch::Ready(Err(panic_error(p))))
}

/// Answers the built-in operations (§2.2) from the servant's type ids.
/// `None` for an `ice_` operation that is not built in.
fn builtin(
    servant: &dyn Servant,
    current: &Current,
    params: &floe_wire::Encapsulation,
) -> Option<DispatchResult> {
    let result: std::result::Result<Bytes, DispatchError> = match current.operation.as_str() {
        "ice_ping" => Ok(current.empty_reply()),
        "ice_isA" => (|| {
            let mut dec = floe_wire::Decoder::from_encapsulation(params.clone())?;
            let id = dec.read_string()?;
            dec.finish_encapsulation()?;
            let is_a = servant.ice_ids().iter().any(|t| *t == id);
            Ok(current.encode_reply(|enc| enc.write_bool(is_a)))
        })()
        .map_err(|e: floe_wire::Error| e.into()),
        "ice_id" => Ok(current.encode_reply(|enc| enc.write_string(servant.ice_id()))),
        "ice_ids" => Ok(current.encode_reply(|enc| {
            let ids = servant.ice_ids();
            enc.write_size(ids.len());
            for id in ids {
                enc.write_string(id);
            }
        })),
        _ => return None,
    };
    Some(result.map(ReplyData::new))
}
