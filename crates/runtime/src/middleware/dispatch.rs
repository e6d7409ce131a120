//! Dispatch middleware: the chain an object adapter runs each request
//! through ([`crate::ObjectAdapter::use_middleware`]), and [`layered`], the
//! same for one servant.

use std::sync::{Arc, Mutex, OnceLock};

use floe_wire::Encapsulation;

use crate::error::{Error, Result};
use crate::object_model::current::Current;
use crate::object_model::servant::{Dispatch, Servant};

/// What `use_middleware` installs: given the next servant, the middleware.
type Factory = Box<dyn FnOnce(Arc<dyn Servant>) -> Arc<dyn Servant> + Send>;

/// An adapter's dispatch middleware: the factories installed, then, from
/// the first dispatch on, the chain they built (`None`: no middleware, the
/// adapter dispatches directly).
#[derive(Default)]
pub(crate) struct DispatchChain {
    pending: Mutex<Pending>,
    built: OnceLock<Option<Arc<dyn Servant>>>,
}

#[derive(Default)]
struct Pending {
    factories: Vec<Factory>,
    /// The chain was built: no more middleware.
    sealed: bool,
}

impl DispatchChain {
    /// Adds a middleware factory.
    ///
    /// # Errors
    ///
    /// [`Error::Initialization`] once the adapter has dispatched a request.
    pub(crate) fn add(&self, factory: Factory) -> Result<()> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if pending.sealed {
            return Err(Error::Initialization(
                "dispatch middleware must be installed before the object adapter's first dispatch"
                    .into(),
            ));
        }
        pending.factories.push(factory);
        Ok(())
    }

    /// The chain's outermost middleware, built on the first call; `None`
    /// when no middleware was installed (one atomic load once built).
    #[inline]
    pub(crate) fn get(&self) -> Option<&Arc<dyn Servant>> {
        self.built.get_or_init(|| self.build()).as_ref()
    }

    fn build(&self) -> Option<Arc<dyn Servant>> {
        let factories = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            pending.sealed = true;
            std::mem::take(&mut pending.factories)
        };
        if factories.is_empty() {
            return None;
        }
        // The first installed is the outermost: build from the innermost.
        let mut next: Arc<dyn Servant> = Arc::new(AdapterDispatch);
        for factory in factories.into_iter().rev() {
            next = factory(next);
        }
        Some(next)
    }
}

/// The innermost servant of an adapter's chain: the adapter's own dispatch
/// (servant lookup, locators, hold, built-ins) of `current.adapter`.
struct AdapterDispatch;

impl Servant for AdapterDispatch {
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch {
        let adapter = current.adapter.clone();
        adapter.dispatch_to_servant(current, params)
    }

    fn handles_builtins(&self) -> bool {
        true
    }
}

/// `servant` behind the middleware `wrap` makes: `wrap` receives the next
/// servant (`servant`, with the adapter's answers to the built-in
/// operations when it does not answer them itself) and returns the
/// middleware. The result keeps `servant`'s type ids; register it instead
/// of `servant`. Every request for it goes through the middleware,
/// `ice_ping` and the other built-ins included.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use floe_runtime::middleware::layered;
/// use floe_runtime::{servant_fn, Dispatch};
///
/// let calls = Arc::new(AtomicU64::new(0));
/// let hello = servant_fn(|current, _| Dispatch::ready(Ok(current.empty_reply())));
/// let counted = {
///     let calls = calls.clone();
///     layered(hello, move |next| {
///         servant_fn(move |current, params| {
///             calls.fetch_add(1, Ordering::Relaxed);
///             next.clone().dispatch(current, params)
///         })
///     })
/// };
/// # drop(counted);
/// ```
pub fn layered(
    servant: Arc<dyn Servant>,
    wrap: impl FnOnce(Arc<dyn Servant>) -> Arc<dyn Servant>,
) -> Arc<dyn Servant> {
    let next: Arc<dyn Servant> = Arc::new(Answering(servant.clone()));
    Arc::new(Layered {
        outer: wrap(next),
        inner: servant,
    })
}

/// A servant with the adapter's answers to the built-ins it does not
/// handle itself.
struct Answering(Arc<dyn Servant>);

impl Servant for Answering {
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch {
        crate::object_model::object_adapter::call(self.0.clone(), current, params)
    }

    fn ice_id(&self) -> &str {
        self.0.ice_id()
    }

    fn ice_ids(&self) -> &[&str] {
        self.0.ice_ids()
    }

    fn handles_builtins(&self) -> bool {
        true
    }
}

/// A servant behind its middleware.
struct Layered {
    outer: Arc<dyn Servant>,
    inner: Arc<dyn Servant>,
}

impl Servant for Layered {
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch {
        self.outer.clone().dispatch(current, params)
    }

    fn ice_id(&self) -> &str {
        self.inner.ice_id()
    }

    fn ice_ids(&self) -> &[&str] {
        self.inner.ice_ids()
    }

    fn handles_builtins(&self) -> bool {
        true
    }
}

impl crate::ObjectAdapter {
    /// Installs a dispatch middleware, as Ice 3.8's `ObjectAdapter::use`:
    /// `wrap` receives the next servant of the chain and returns the
    /// middleware, a [`Servant`] that passes requests on with
    /// `next.clone().dispatch(current, params)`, answers them itself, or
    /// looks at the outcome ([`Dispatch::inspect`]). The first middleware
    /// installed sees requests first. `wrap` runs when the adapter
    /// dispatches its first request. See [`crate::middleware`].
    ///
    /// # Errors
    ///
    /// [`Error::Initialization`] once the adapter has dispatched a request.
    pub fn use_middleware<F>(&self, wrap: F) -> Result<&Self>
    where
        F: FnOnce(Arc<dyn Servant>) -> Arc<dyn Servant> + Send + 'static,
    {
        self.inner.middleware.add(Box::new(wrap))?;
        Ok(self)
    }
}
