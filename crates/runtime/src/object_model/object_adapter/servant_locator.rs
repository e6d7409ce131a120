//! [`ServantLocator`]: servants found on demand, per identity category, as
//! Ice's `ServantLocator` (evictors, servants loaded from a database).
//!
//! An adapter asks a locator only when no servant is registered for the
//! identity and facet and no default servant applies (Ice's order): the
//! locator of the identity's category, else the one of category `""`.
//! `locate` returns the servant and a cookie, or `None`
//! (`ObjectNotExistException`, or `FacetNotExistException` when the
//! identity has servants for other facets). After the servant has
//! dispatched, `finished` gets the servant and the cookie back, before the
//! reply is sent. An error returned by `locate` or `finished` is the
//! reply, as in Ice: a user exception goes to the caller as one (an
//! `UnknownUserException` for a caller whose operation does not declare
//! it), `object_not_exist()` is `ObjectNotExistException`, and so on; an
//! error from `finished` replaces the servant's result. `deactivate` is
//! called once per registered category by [`ObjectAdapter::destroy`].

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::object_model::current::Current;
use crate::object_model::servant::{DispatchError, Servant};

/// A servant locator (Ice's `ServantLocator`), registered with
/// [`ObjectAdapter::add_servant_locator`](crate::ObjectAdapter::add_servant_locator).
///
/// ```
/// use std::sync::Arc;
/// use floe_runtime::{Current, DispatchError, ObjectAdapter, Servant, ServantLocator};
///
/// /// Loads a servant per request, counting them in the cookie.
/// struct Loader {
///     make: fn(&str) -> Option<Arc<dyn Servant>>,
/// }
///
/// impl ServantLocator for Loader {
///     type Cookie = String;
///
///     async fn locate(
///         &self,
///         current: &Current,
///     ) -> Result<Option<(Arc<dyn Servant>, String)>, DispatchError> {
///         Ok((self.make)(&current.id.name).map(|s| (s, current.id.name.to_string())))
///     }
///
///     async fn finished(
///         &self,
///         _current: &Current,
///         _servant: Arc<dyn Servant>,
///         name: String,
///     ) -> Result<(), DispatchError> {
///         println!("done with {name}");
///         Ok(())
///     }
/// }
///
/// fn register(adapter: &ObjectAdapter) -> floe_runtime::Result<()> {
///     adapter.add_servant_locator(Loader { make: |_| None }, "db")
/// }
/// ```
pub trait ServantLocator: Send + Sync + 'static {
    /// What `locate` hands to `finished` for one request (Ice's cookie).
    type Cookie: Send + 'static;

    /// Finds the servant for `current` (identity, facet, operation): the
    /// servant and a cookie, or `None` when there is none.
    ///
    /// # Errors
    ///
    /// Any [`DispatchError`]: sent to the caller as the reply (the servant
    /// does not run and `finished` is not called).
    fn locate(&self, current: &Current) -> impl Future<Output = Located<Self::Cookie>> + Send;

    /// Called after the servant located for `current` has dispatched (also
    /// when it failed), before the reply is sent. The default does nothing.
    ///
    /// # Errors
    ///
    /// Any [`DispatchError`]: it replaces the servant's result.
    fn finished(
        &self,
        current: &Current,
        servant: Arc<dyn Servant>,
        cookie: Self::Cookie,
    ) -> impl Future<Output = Result<(), DispatchError>> + Send {
        let _ = (current, servant, cookie);
        async { Ok(()) }
    }

    /// Called by [`ObjectAdapter::destroy`](crate::ObjectAdapter::destroy)
    /// with the category the locator was registered for. The default does
    /// nothing.
    fn deactivate(&self, category: &str) {
        let _ = category;
    }
}

/// What [`ServantLocator::locate`] returns: the servant and its cookie,
/// `None` when there is none, or the error that is the reply.
pub type Located<C> = Result<Option<(Arc<dyn Servant>, C)>, DispatchError>;

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A cookie with its type erased.
pub(crate) type AnyCookie = Box<dyn Any + Send>;

/// [`ServantLocator`] with its cookie type erased and its futures boxed,
/// so that locators of every type share the adapter's map.
pub(crate) trait DynServantLocator: Send + Sync + 'static {
    fn locate<'a>(&'a self, current: &'a Current) -> BoxFuture<'a, Located<AnyCookie>>;

    fn finished<'a>(
        &'a self,
        current: &'a Current,
        servant: Arc<dyn Servant>,
        cookie: AnyCookie,
    ) -> BoxFuture<'a, Result<(), DispatchError>>;

    fn deactivate(&self, category: &str);
}

impl<L: ServantLocator> DynServantLocator for L {
    fn locate<'a>(&'a self, current: &'a Current) -> BoxFuture<'a, Located<AnyCookie>> {
        Box::pin(async move {
            let found = ServantLocator::locate(self, current).await?;
            Ok(found.map(|(servant, cookie)| (servant, Box::new(cookie) as AnyCookie)))
        })
    }

    fn finished<'a>(
        &'a self,
        current: &'a Current,
        servant: Arc<dyn Servant>,
        cookie: AnyCookie,
    ) -> BoxFuture<'a, Result<(), DispatchError>> {
        Box::pin(async move {
            match cookie.downcast::<L::Cookie>() {
                Ok(cookie) => ServantLocator::finished(self, current, servant, *cookie).await,
                // `locate` of this very locator made it: cannot happen.
                Err(_) => Err(DispatchError::UnknownException(
                    "servant locator cookie of another type".into(),
                )),
            }
        })
    }

    fn deactivate(&self, category: &str) {
        ServantLocator::deactivate(self, category)
    }
}
