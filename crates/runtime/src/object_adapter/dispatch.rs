//! The adapter's dispatch rules, the same for every transport (a stream
//! connection, a datagram): the operation mode and the parameters'
//! encoding, the servant lookup (identity, facet, default servants), the
//! `Current`, an adapter on hold, the built-in `ice_*` operations, and a
//! panicking servant as status 7. What is left to the caller is where the
//! reply goes.

use bytes::Bytes;
use floe_wire::protocol::{Request, RequestFailed};

use super::ObjectAdapter;
use crate::connection::Connection;
use crate::current::Current;
use crate::servant::{Dispatch, DispatchError, DispatchResult, ReplyData, Servant};

impl ObjectAdapter {
    /// Dispatches one request received on `connection` (`None` for a
    /// datagram) by the adapter's rules:
    ///
    /// 1. an invalid mode byte is a `MarshalException`
    ///    (`UnknownLocalException`), an unsupported parameters encoding an
    ///    `UnsupportedEncodingException`;
    /// 2. the servant: identity, then facet, else a default servant
    ///    ([`ObjectAdapter::find_servant`]); `ObjectNotExistException` or
    ///    `FacetNotExistException` when there is none;
    /// 3. while the adapter holds, the request waits until it is activated
    ///    (the returned dispatch is pending);
    /// 4. `ice_ping`, `ice_isA`, `ice_id` and `ice_ids` are answered from
    ///    the servant's type ids unless it handles them itself;
    /// 5. everything else is [`Servant::dispatch`]; a panic while it runs
    ///    becomes `UnknownException` (status 7), here or, for a dispatch
    ///    still pending, where the caller polls it (see
    ///    [`panic_error`]).
    pub(crate) fn dispatch_request(
        &self,
        request: Request,
        connection: Option<Connection>,
    ) -> Dispatch {
        let failed = |request: Request| RequestFailed {
            identity: request.identity,
            facet: request.facet,
            operation: request.operation,
        };
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
        let servant = match self.find_servant(&request.identity, &request.facet) {
            Ok(s) => s,
            Err(facet_missing) => {
                let f = failed(request);
                return Dispatch::Ready(Err(if facet_missing {
                    DispatchError::FacetNotExist(f)
                } else {
                    DispatchError::ObjectNotExist(f)
                }));
            }
        };
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
        let params = request.params;
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

/// Rules 4 and 5 of [`ObjectAdapter::dispatch_request`].
fn call(
    servant: std::sync::Arc<dyn Servant>,
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

/// Status 7 for a servant that panicked, with the panic's message.
pub(crate) fn panic_error(payload: Box<dyn std::any::Any + Send>) -> DispatchError {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    tracing::error!("servant panicked: {what}");
    DispatchError::UnknownException(format!("servant panicked: {what}"))
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
