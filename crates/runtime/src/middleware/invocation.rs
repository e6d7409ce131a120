//! Invocation middleware: [`InvocationMiddleware`] layers that a proxy
//! runs around its invocations.

use std::borrow::Cow;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use floe_wire::protocol::OperationMode;
use floe_wire::Context;

use crate::connection::Params;
use crate::error::Result;
use crate::object_model::communicator::Communicator;
use crate::object_model::proxy::{Proxy, Response};

/// A layer around a proxy's invocations (see [`crate::middleware`]).
///
/// ```
/// use floe_runtime::middleware::{InvocationMiddleware, Outgoing};
///
/// /// Sends a token with every request.
/// struct Token(String);
///
/// impl InvocationMiddleware for Token {
///     fn before(&self, request: &mut Outgoing<'_>) -> floe_runtime::Result<()> {
///         request.context.to_mut().insert("token".into(), self.0.clone());
///         Ok(())
///     }
/// }
///
/// let communicator = floe_runtime::Communicator::new();
/// communicator.use_invocation_middleware(Token("secret".into()));
/// ```
pub trait InvocationMiddleware: Send + Sync + 'static {
    /// Called once per invocation before anything is sent (retries do not
    /// call it again): may change the request's context, or fail the
    /// invocation with an error (then nothing is sent, and only the layers
    /// before this one see [`InvocationMiddleware::after`]).
    ///
    /// # Errors
    ///
    /// Any error: the invocation fails with it.
    fn before(&self, request: &mut Outgoing<'_>) -> Result<()> {
        let _ = request;
        Ok(())
    }

    /// Called once the invocation is over (reply received, or failed after
    /// its retries), in the reverse order of `before`. Not called when the
    /// caller drops the invocation's future before it ends.
    fn after(&self, request: &Outgoing<'_>, result: &Result<Response>) {
        let _ = (request, result);
    }
}

/// A shared layer: install an `Arc` of a layer to keep reading its
/// state (a metrics layer's counts).
impl<T: InvocationMiddleware + ?Sized> InvocationMiddleware for Arc<T> {
    fn before(&self, request: &mut Outgoing<'_>) -> Result<()> {
        (**self).before(request)
    }

    fn after(&self, request: &Outgoing<'_>, result: &Result<Response>) {
        (**self).after(request, result);
    }
}

/// An invocation as its middleware sees it.
#[derive(Debug)]
#[non_exhaustive]
pub struct Outgoing<'a> {
    /// The proxy invoked.
    pub proxy: &'a Proxy,
    /// The operation.
    pub operation: &'a str,
    /// The operation's mode.
    pub mode: OperationMode,
    /// The request's context (the proxy's, or the one the call gave);
    /// `to_mut()` copies it before a change.
    pub context: Cow<'a, Context>,
    /// When the invocation started (before the first layer ran).
    pub started: Instant,
}

/// A proxy's layers, outermost first (`None`: no middleware).
pub(crate) type Layers = Option<Arc<[Arc<dyn InvocationMiddleware>]>>;

/// A communicator's invocation middleware, copied into each proxy it
/// makes.
#[derive(Default)]
pub(crate) struct InvocationChain(RwLock<Layers>);

impl InvocationChain {
    /// The layers new proxies get.
    pub(crate) fn layers(&self) -> Layers {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn push(&self, layer: Arc<dyn InvocationMiddleware>) {
        let mut layers = self.0.write().unwrap_or_else(|p| p.into_inner());
        *layers = Some(appended(&layers, layer));
    }
}

/// `layers` followed by `layer`.
fn appended(
    layers: &Layers,
    layer: Arc<dyn InvocationMiddleware>,
) -> Arc<[Arc<dyn InvocationMiddleware>]> {
    let mut all: Vec<_> = layers.as_deref().unwrap_or_default().to_vec();
    all.push(layer);
    all.into()
}

impl Communicator {
    /// Adds an invocation middleware layer for the proxies this
    /// communicator makes from now on (install layers before making
    /// proxies; the first installed is the outermost). See
    /// [`crate::middleware`].
    pub fn use_invocation_middleware(&self, layer: impl InvocationMiddleware) -> &Self {
        self.inner.invocation_middleware.push(Arc::new(layer));
        self
    }
}

impl Proxy {
    /// A proxy that runs `layer` around its invocations, after (inside)
    /// the layers this proxy already has. See [`crate::middleware`].
    pub fn ice_middleware(&self, layer: impl InvocationMiddleware) -> Proxy {
        let layer: Arc<dyn InvocationMiddleware> = Arc::new(layer);
        self.with(|p| p.middleware = Some(appended(&p.middleware, layer)))
    }

    /// An invocation through `layers`: their `before`, the invocation with
    /// the context they leave, their `after`.
    pub(crate) async fn invoke_layered(
        &self,
        layers: Arc<[Arc<dyn InvocationMiddleware>]>,
        operation: &str,
        mode: OperationMode,
        params: Params<'_>,
        context: Option<&Context>,
    ) -> Result<Response> {
        let mut request = Outgoing {
            proxy: self,
            operation,
            mode,
            context: Cow::Borrowed(context.unwrap_or(&self.inner.context)),
            started: Instant::now(),
        };
        let result = match before(&layers, &mut request) {
            Ok(()) => {
                self.invoke_params(operation, mode, params, Some(&request.context), false)
                    .await
            }
            Err((passed, e)) => {
                let result = Err(e);
                after(&layers[..passed], &request, &result);
                return result;
            }
        };
        after(&layers, &request, &result);
        result
    }
}

/// Runs the `before` of each layer; on a failure, the number of layers
/// that passed and the error.
pub(crate) fn before(
    layers: &[Arc<dyn InvocationMiddleware>],
    request: &mut Outgoing<'_>,
) -> std::result::Result<(), (usize, crate::Error)> {
    for (i, layer) in layers.iter().enumerate() {
        layer.before(request).map_err(|e| (i, e))?;
    }
    Ok(())
}

/// Runs the `after` of `layers`, innermost first.
pub(crate) fn after(
    layers: &[Arc<dyn InvocationMiddleware>],
    request: &Outgoing<'_>,
    result: &Result<Response>,
) {
    for layer in layers.iter().rev() {
        layer.after(request, result);
    }
}
