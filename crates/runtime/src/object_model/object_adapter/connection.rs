//! The adapter as a connection's [`Dispatcher`], and the adapter side of
//! [`Connection`]'s public API: Ice's `Connection::setAdapter`,
//! `getAdapter` and `createProxy`.

use std::any::Any;
use std::sync::Arc;

use floe_wire::protocol::Request;

use super::{AdapterInner, ObjectAdapter};
use crate::connection::{Connection, Dispatcher};
use crate::object_model::proxy::Proxy;
use crate::object_model::servant::Dispatch;

impl Dispatcher for AdapterInner {
    fn dispatch(self: Arc<Self>, request: Request, connection: Connection) -> Dispatch {
        ObjectAdapter { inner: self }.dispatch_request(request, Some(connection))
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn untrack(self: Arc<Self>, key: usize) {
        ObjectAdapter { inner: self }.untrack(key);
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

impl ObjectAdapter {
    /// The adapter as the [`Dispatcher`] of the connections it accepts.
    pub(crate) fn dispatcher(&self) -> Arc<dyn Dispatcher> {
        self.inner.clone()
    }
}

impl Connection {
    /// Sets the adapter that dispatches requests arriving on this
    /// connection: makes an outgoing connection bidirectional (the server
    /// can call back objects of `adapter` over it).
    pub fn set_adapter(&self, adapter: Option<ObjectAdapter>) {
        self.set_dispatcher(adapter.map(|a| a.dispatcher()));
    }

    /// The adapter dispatching incoming requests, if any.
    pub fn adapter(&self) -> Option<ObjectAdapter> {
        let inner = self
            .dispatcher()?
            .into_any()
            .downcast::<AdapterInner>()
            .ok()?;
        Some(ObjectAdapter { inner })
    }

    /// A proxy for `identity` whose calls go through this connection (Ice's
    /// `Connection::createProxy`): no endpoints, fixed to the connection
    /// (see [`crate::Proxy::ice_fixed`]), in the communicator of the connection's
    /// adapter. A connection without an adapter (an outgoing one never
    /// given one with [`Connection::set_adapter`]) knows no communicator:
    /// calls through the proxy work, but proxies in their results cannot
    /// be decoded as live ones; use `ice_fixed` on a proxy of the
    /// communicator instead.
    pub fn create_proxy(&self, identity: floe_wire::Identity) -> Proxy {
        let communicator = self
            .adapter()
            .map(|a| a.inner.communicator.clone())
            .unwrap_or_default();
        Proxy::new_internal(communicator, identity, Vec::new()).ice_fixed(self)
    }
}
