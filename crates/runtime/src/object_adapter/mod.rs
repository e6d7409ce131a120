//! [`ObjectAdapter`]: listens on endpoints, maps identities (and facets) to
//! servants, and dispatches the requests of the connections it accepts.
//!
//! The servant map sits behind a std `RwLock`: dispatch takes a read lock for
//! one hash lookup per request and never holds it across an `.await`;
//! registrations are rare writes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

use floe_wire::Identity;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::communicator::{Communicator, CommunicatorInner};
use crate::connection::{Connection, ConnectionConfig};
use crate::datagram;
use crate::endpoint::{Endpoint, Transport};
use crate::error::{Error, Result};
use crate::listener;
use crate::locator::registration::AdapterRegistration;
use crate::proxy::Proxy;
use crate::servant::Servant;

mod dispatch;
mod servant_locator;
pub(crate) use dispatch::panic_error;
use servant_locator::DynServantLocator;
pub use servant_locator::{Located, ServantLocator};

const HOLDING: u8 = 0;
const ACTIVE: u8 = 1;
const DEACTIVATING: u8 = 2;
const DEACTIVATED: u8 = 3;

#[derive(Default)]
struct ServantMap {
    /// identity → facet → servant ("" is the default facet).
    active: HashMap<Identity, Facets>,
    /// category → default servant ("" matches every category).
    defaults: HashMap<String, Arc<dyn Servant>>,
    /// category → servant locator ("" matches every category).
    locators: HashMap<String, Arc<dyn DynServantLocator>>,
}

/// The servants of one identity, by facet. The default facet (`""`), which
/// nearly every request names, is kept apart so that finding it costs no
/// second (SipHash) hash per request.
#[derive(Default)]
struct Facets {
    /// The `""` facet.
    default: Option<Arc<dyn Servant>>,
    /// Every other facet.
    named: HashMap<String, Arc<dyn Servant>>,
}

impl Facets {
    fn get(&self, facet: &str) -> Option<&Arc<dyn Servant>> {
        if facet.is_empty() {
            self.default.as_ref()
        } else {
            self.named.get(facet)
        }
    }

    fn contains(&self, facet: &str) -> bool {
        self.get(facet).is_some()
    }

    fn insert(&mut self, facet: &str, servant: Arc<dyn Servant>) {
        if facet.is_empty() {
            self.default = Some(servant);
        } else {
            self.named.insert(facet.to_string(), servant);
        }
    }

    fn remove(&mut self, facet: &str) -> Option<Arc<dyn Servant>> {
        if facet.is_empty() {
            self.default.take()
        } else {
            self.named.remove(facet)
        }
    }

    fn is_empty(&self) -> bool {
        self.default.is_none() && self.named.is_empty()
    }
}

pub(crate) struct AdapterInner {
    name: String,
    pub(crate) communicator: Weak<CommunicatorInner>,
    servants: RwLock<ServantMap>,
    /// Endpoints as bound (ephemeral ports resolved).
    endpoints: Vec<Endpoint>,
    /// Endpoints put into proxies the adapter creates.
    published: Vec<Endpoint>,
    /// Listeners waiting for `activate`.
    listeners: Mutex<Vec<listener::Listener>>,
    /// UDP sockets waiting for `activate`.
    udp: Mutex<Vec<tokio::net::UdpSocket>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    connections: Mutex<Accepted>,
    state: AtomicU8,
    /// `true` while the adapter is holding (before `activate`, or after
    /// `hold`): accept loops and held dispatches wait on it.
    held: watch::Sender<bool>,
    deactivated: watch::Sender<bool>,
    pub(crate) config: ConnectionConfig,
    /// `<Adapter>.AdapterId`, `.ReplicaGroupId` and the locator.
    pub(crate) registration: AdapterRegistration,
}

/// The connections an adapter accepted that have not ended, by
/// [`Connection::key`].
#[derive(Default)]
struct Accepted {
    map: HashMap<usize, Connection>,
    /// [`ObjectAdapter::track`] drops ended connections when the map
    /// reaches this size.
    prune_at: usize,
}

/// An object adapter; clones share it.
#[derive(Clone)]
pub struct ObjectAdapter {
    pub(crate) inner: Arc<AdapterInner>,
}

impl std::fmt::Debug for ObjectAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectAdapter")
            .field("name", &self.inner.name)
            .field("endpoints", &self.inner.endpoints)
            .finish()
    }
}

impl ObjectAdapter {
    /// Binds `endpoints` (not yet accepting: see [`ObjectAdapter::activate`]).
    pub(crate) async fn bind(
        name: &str,
        communicator: &Communicator,
        endpoints: Vec<Endpoint>,
        published: Option<Vec<Endpoint>>,
        config: ConnectionConfig,
    ) -> Result<ObjectAdapter> {
        let registration = AdapterRegistration::from_properties(communicator, name)?;
        let mut bound = Vec::new();
        let mut listeners = Vec::new();
        let mut udp = Vec::new();
        let backlog = listener::backlog(communicator.properties());
        let mut acceptors = listener::Acceptors::default();
        for ep in endpoints {
            let addr = format!("{}:{}", ep.bind_host(), ep.port);
            let local = match ep.transport {
                Transport::Tcp | Transport::Ssl | Transport::Ws | Transport::Wss => {
                    let acceptor = acceptors.get(communicator.properties(), name, &ep)?;
                    let l = listener::bind(ep.bind_host(), ep.port, backlog)
                        .await
                        .map_err(|e| Error::Socket(format!("cannot listen on {addr}: {e}")))?;
                    let local = l.local_addr().map_err(|e| Error::Socket(e.to_string()))?;
                    let endpoint = Endpoint {
                        port: local.port(),
                        ..ep.clone()
                    };
                    listeners.push(listener::Listener {
                        tcp: l,
                        acceptor,
                        endpoint,
                    });
                    local
                }
                Transport::Udp => {
                    let s = tokio::net::UdpSocket::bind(&addr)
                        .await
                        .map_err(|e| Error::Socket(format!("cannot bind {addr}: {e}")))?;
                    let local = s.local_addr().map_err(|e| Error::Socket(e.to_string()))?;
                    udp.push(s);
                    local
                }
            };
            bound.push(Endpoint {
                port: local.port(),
                ..ep
            });
        }
        let published = published.unwrap_or_else(|| {
            bound
                .iter()
                .map(|e| Endpoint {
                    host: e.connect_host().to_string(),
                    ..e.clone()
                })
                .collect()
        });
        let (deactivated, _) = watch::channel(false);
        let (held, _) = watch::channel(true);
        Ok(ObjectAdapter {
            inner: Arc::new(AdapterInner {
                name: name.to_string(),
                communicator: Arc::downgrade(&communicator.inner),
                servants: RwLock::new(ServantMap::default()),
                endpoints: bound,
                published,
                listeners: Mutex::new(listeners),
                udp: Mutex::new(udp),
                tasks: Mutex::new(Vec::new()),
                connections: Mutex::new(Accepted::default()),
                state: AtomicU8::new(HOLDING),
                held,
                deactivated,
                config,
                registration,
            }),
        })
    }

    /// The adapter's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The endpoints the adapter listens on, with the ports actually bound.
    pub fn endpoints(&self) -> &[Endpoint] {
        &self.inner.endpoints
    }

    /// The endpoints put into proxies made by [`ObjectAdapter::create_proxy`].
    pub fn published_endpoints(&self) -> &[Endpoint] {
        &self.inner.published
    }

    /// The communicator that created the adapter.
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

    /// Starts accepting connections (and datagrams), or resumes after
    /// [`ObjectAdapter::hold`]. Must be called inside a tokio runtime.
    ///
    /// The first activation of an adapter with an `<Adapter>.AdapterId`
    /// and a locator also registers it, in the background; use
    /// [`ObjectAdapter::activate_and_register`] to wait for that.
    pub fn activate(&self) {
        self.spawn_registration();
        if self
            .inner
            .state
            .compare_exchange(HOLDING, ACTIVE, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        self.inner.held.send_replace(false);
        let listeners = std::mem::take(&mut *lock(&self.inner.listeners));
        let udp = std::mem::take(&mut *lock(&self.inner.udp));
        let mut tasks = lock(&self.inner.tasks);
        for listener in listeners {
            let adapter = self.clone();
            tasks.push(tokio::spawn(listener::accept_loop(listener, adapter)));
        }
        for socket in udp {
            let adapter = self.clone();
            tasks.push(tokio::spawn(datagram::receive_loop(socket, adapter)));
        }
    }

    /// Holds the adapter, as Ice's `hold()`: no new connection is accepted
    /// (clients wait in the listen backlog) and requests that arrive on
    /// existing connections are not dispatched until [`ObjectAdapter::activate`];
    /// dispatches already running finish. Held requests count towards each
    /// connection's dispatch limit, so a connection stops reading when it is
    /// full. Does nothing unless the adapter is active.
    pub fn hold(&self) {
        if self
            .inner
            .state
            .compare_exchange(ACTIVE, HOLDING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.inner.held.send_replace(true);
        }
    }

    /// Whether the adapter is holding (created and not yet activated, or
    /// held with [`ObjectAdapter::hold`]).
    pub fn is_holding(&self) -> bool {
        self.inner.state.load(Ordering::Acquire) == HOLDING
    }

    /// Waits until the adapter is held.
    pub(crate) async fn wait_until_held(&self) {
        let mut rx = self.inner.held.subscribe();
        let _ = rx.wait_for(|held| *held).await;
    }

    /// Waits until the adapter is not holding (active or deactivating).
    pub(crate) async fn wait_until_released(&self) {
        let mut rx = self.inner.held.subscribe();
        // The sender lives as long as `self`, so this cannot fail.
        let _ = rx.wait_for(|held| !*held).await;
    }

    /// Whether the adapter is active (not holding, not deactivated).
    pub fn is_active(&self) -> bool {
        self.inner.state.load(Ordering::Acquire) == ACTIVE
    }

    /// Registers `servant` for `identity` (default facet) and returns a proxy
    /// for it.
    ///
    /// # Errors
    ///
    /// [`Error::AlreadyRegistered`] if the identity already has a servant.
    pub fn add(&self, identity: Identity, servant: Arc<dyn Servant>) -> Result<Proxy> {
        self.add_facet(identity, "", servant)
    }

    /// Registers `servant` for `identity` and `facet`.
    ///
    /// # Errors
    ///
    /// [`Error::AlreadyRegistered`] if that facet already has a servant.
    pub fn add_facet(
        &self,
        identity: Identity,
        facet: &str,
        servant: Arc<dyn Servant>,
    ) -> Result<Proxy> {
        {
            let mut map = self
                .inner
                .servants
                .write()
                .unwrap_or_else(|p| p.into_inner());
            let facets = map.active.entry(identity.clone()).or_default();
            if facets.contains(facet) {
                return Err(Error::AlreadyRegistered(format!(
                    "servant for {}{}",
                    identity.name,
                    if facet.is_empty() {
                        String::new()
                    } else {
                        format!(" -f {facet}")
                    }
                )));
            }
            facets.insert(facet, servant);
        }
        Ok(self.create_proxy(identity).ice_facet(facet))
    }

    /// Removes the servant of `identity` and `facet`; returns it.
    pub fn remove_facet(&self, identity: &Identity, facet: &str) -> Option<Arc<dyn Servant>> {
        let mut map = self
            .inner
            .servants
            .write()
            .unwrap_or_else(|p| p.into_inner());
        let facets = map.active.get_mut(identity)?;
        let s = facets.remove(facet);
        if facets.is_empty() {
            map.active.remove(identity);
        }
        s
    }

    /// Removes the default-facet servant of `identity`.
    pub fn remove(&self, identity: &Identity) -> Option<Arc<dyn Servant>> {
        self.remove_facet(identity, "")
    }

    /// Registers a default servant for every identity of `category` that has
    /// no servant of its own (`""` = any category).
    pub fn add_default_servant(&self, category: &str, servant: Arc<dyn Servant>) {
        let mut map = self
            .inner
            .servants
            .write()
            .unwrap_or_else(|p| p.into_inner());
        map.defaults.insert(category.to_string(), servant);
    }

    /// Removes the default servant of `category`.
    pub fn remove_default_servant(&self, category: &str) -> Option<Arc<dyn Servant>> {
        let mut map = self
            .inner
            .servants
            .write()
            .unwrap_or_else(|p| p.into_inner());
        map.defaults.remove(category)
    }

    /// The servant for `identity` and `facet`, as Ice's
    /// `ServantManager::findServant`: the servant registered for both;
    /// else the default servant of the identity's category, else the one
    /// of category `""` (a default servant answers every facet, and also
    /// stands in for an identity that has servants, but none for `facet`).
    /// `Err(false)` when there is none and no servant has the identity
    /// (ObjectNotExist), `Err(true)` when the identity has servants for
    /// other facets only (FacetNotExist).
    pub fn find_servant(
        &self,
        identity: &Identity,
        facet: &str,
    ) -> std::result::Result<Arc<dyn Servant>, bool> {
        let map = self
            .inner
            .servants
            .read()
            .unwrap_or_else(|p| p.into_inner());
        let facets = map.active.get(identity);
        if let Some(s) = facets.and_then(|f| f.get(facet)) {
            return Ok(s.clone());
        }
        let default = map
            .defaults
            .get(&identity.category)
            .or_else(|| map.defaults.get(""));
        match default {
            Some(s) => Ok(s.clone()),
            None => Err(facets.is_some()),
        }
    }

    /// Registers a servant locator for the identities of `category` (`""`:
    /// every category without a locator of its own), asked when no
    /// servant and no default servant answers a request (see
    /// [`ServantLocator`]).
    ///
    /// # Errors
    ///
    /// [`Error::AlreadyRegistered`] if `category` has a locator.
    pub fn add_servant_locator<L: ServantLocator>(&self, locator: L, category: &str) -> Result<()> {
        let mut map = self
            .inner
            .servants
            .write()
            .unwrap_or_else(|p| p.into_inner());
        if map.locators.contains_key(category) {
            return Err(Error::AlreadyRegistered(format!(
                "servant locator for category `{category}`"
            )));
        }
        map.locators.insert(category.to_string(), Arc::new(locator));
        Ok(())
    }

    /// Removes the servant locator of `category` (its `deactivate` is not
    /// called, as in Ice).
    ///
    /// # Errors
    ///
    /// [`Error::NotRegistered`] if `category` has none.
    pub fn remove_servant_locator(&self, category: &str) -> Result<()> {
        let mut map = self
            .inner
            .servants
            .write()
            .unwrap_or_else(|p| p.into_inner());
        match map.locators.remove(category) {
            Some(_) => Ok(()),
            None => Err(Error::NotRegistered {
                kind: "servant locator".into(),
                id: category.to_string(),
            }),
        }
    }

    /// Whether a servant locator is registered for exactly `category`.
    pub fn has_servant_locator(&self, category: &str) -> bool {
        self.inner
            .servants
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .locators
            .contains_key(category)
    }

    /// The locator asked for an identity of `category`: its own, else the
    /// one of `""`.
    fn servant_locator(&self, category: &str) -> Option<Arc<dyn DynServantLocator>> {
        let map = self
            .inner
            .servants
            .read()
            .unwrap_or_else(|p| p.into_inner());
        map.locators
            .get(category)
            .or_else(|| map.locators.get(""))
            .cloned()
    }

    /// Whether some servant (of any facet) is registered for `identity`
    /// (Ice's `ServantManager::hasServant`): what makes a request that
    /// finds no servant `FacetNotExistException` rather than
    /// `ObjectNotExistException`.
    pub fn has_servant(&self, identity: &Identity) -> bool {
        self.inner
            .servants
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .active
            .contains_key(identity)
    }

    /// A proxy for `identity`: with the adapter's published endpoints, or,
    /// for an adapter with an `<Adapter>.AdapterId`, the indirect proxy
    /// `identity@id` (see [`ObjectAdapter::create_indirect_proxy`]), as Ice
    /// does.
    ///
    /// If the communicator is gone the proxy is still built; its calls
    /// fail with `CommunicatorDestroyed`.
    pub fn create_proxy(&self, identity: Identity) -> Proxy {
        self.create_indirect_proxy(identity)
    }

    /// Keeps an accepted connection until it ends ([`ObjectAdapter::untrack`])
    /// or the adapter is deactivated.
    pub(crate) fn track(&self, conn: Connection) {
        let mut conns = lock(&self.inner.connections);
        if conns.map.len() >= conns.prune_at {
            // Connections remove themselves when they end; this only
            // catches one whose adapter was replaced (`set_adapter`), at a
            // cost amortised over the accepts.
            conns.map.retain(|_, c| c.is_active());
            conns.prune_at = (2 * conns.map.len()).max(64);
        }
        // A connection that already ended (and untracked itself before
        // this lock was taken) is not kept.
        if conn.is_active() {
            conns.map.insert(conn.key(), conn);
        }
    }

    /// How many accepted connections are open (`<Adapter>.MaxConnections`).
    pub(crate) fn connection_count(&self) -> usize {
        lock(&self.inner.connections).map.len()
    }

    /// Forgets the connection with [`Connection::key`] `key`, which ended:
    /// its socket is closed once its task lets it go, not at the next accept.
    pub(crate) fn untrack(&self, key: usize) {
        lock(&self.inner.connections).map.remove(&key);
    }

    /// Starts the deactivation and returns, as Ice's `deactivate`: the
    /// adapter leaves the locator registry, stops accepting, and tells
    /// every connection to close gracefully (running dispatches finish and
    /// reply first, §1.4); [`ObjectAdapter::wait_for_deactivate`] waits
    /// until they are closed. So a servant may deactivate its own adapter
    /// (its dispatch is one of those the close waits for). Calling it
    /// again does nothing.
    pub async fn deactivate(&self) {
        let prev = self.inner.state.swap(DEACTIVATING, Ordering::AcqRel);
        if prev == DEACTIVATING || prev == DEACTIVATED {
            self.inner.state.store(prev, Ordering::Release);
            return;
        }
        // Off the registry first, as Ice does: clients stop coming.
        self.unregister_from_locator().await;
        // Held dispatches run now so that the graceful close can drain them.
        self.inner.held.send_replace(false);
        for t in lock(&self.inner.tasks).drain(..) {
            t.abort();
        }
        lock(&self.inner.listeners).clear();
        let conns: Vec<Connection> = lock(&self.inner.connections)
            .map
            .drain()
            .map(|(_, c)| c)
            .collect();
        for c in &conns {
            c.inner.begin_close(false);
        }
        let inner = self.inner.clone();
        let finish = async move {
            for c in &conns {
                c.closed().await;
            }
            inner.state.store(DEACTIVATED, Ordering::Release);
            inner.deactivated.send_replace(true);
            tracing::debug!(adapter = %inner.name, "adapter deactivated");
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => drop(handle.spawn(finish)),
            // Not on a tokio runtime: finish here.
            Err(_) => finish.await,
        }
    }

    /// Adds `servant` with a new identity, a UUID with no category (Ice's
    /// `addWithUUID`), and returns its proxy.
    ///
    /// # Errors
    ///
    /// As [`ObjectAdapter::add`] (never in practice: the UUID is new).
    pub fn add_with_uuid(&self, servant: Arc<dyn Servant>) -> Result<Proxy> {
        let identity = Identity {
            name: crate::locator::selection::random_uuid(),
            category: String::new(),
        };
        self.add(identity, servant)
    }

    /// Adds `servant` for `facet` with a new identity, a UUID with no
    /// category (Ice's `addFacetWithUUID`), and returns its proxy.
    ///
    /// # Errors
    ///
    /// As [`ObjectAdapter::add_facet`] (never in practice).
    pub fn add_facet_with_uuid(&self, servant: Arc<dyn Servant>, facet: &str) -> Result<Proxy> {
        let identity = Identity {
            name: crate::locator::selection::random_uuid(),
            category: String::new(),
        };
        self.add_facet(identity, facet, servant)
    }

    /// Deactivates the adapter and waits for the end of its deactivation,
    /// then calls each servant locator's
    /// [`deactivate`](ServantLocator::deactivate) with its category and
    /// forgets every servant, default servant and locator (which drops
    /// them), as Ice's `ObjectAdapter::destroy`. [`Communicator::destroy`]
    /// destroys every adapter of the communicator.
    pub async fn destroy(&self) {
        self.deactivate().await;
        self.wait_for_deactivate().await;
        let map = std::mem::take(
            &mut *self
                .inner
                .servants
                .write()
                .unwrap_or_else(|p| p.into_inner()),
        );
        for (category, locator) in &map.locators {
            locator.deactivate(category);
        }
        drop(map);
        if let Some(communicator) = self.inner.communicator.upgrade() {
            communicator
                .adapters
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .retain(|a| !Arc::ptr_eq(&a.inner, &self.inner));
        }
    }

    /// Waits until [`ObjectAdapter::deactivate`] has finished.
    pub async fn wait_for_deactivate(&self) {
        let mut rx = self.inner.deactivated.subscribe();
        let _ = rx.wait_for(|d| *d).await;
    }

    /// Whether the adapter was deactivated.
    pub fn is_deactivated(&self) -> bool {
        self.inner.state.load(Ordering::Acquire) == DEACTIVATED
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
