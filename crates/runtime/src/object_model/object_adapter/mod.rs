//! [`ObjectAdapter`]: listens on endpoints, maps identities (and facets) to
//! servants, and dispatches the requests of the connections it accepts.
//!
//! The servant map sits behind a std `RwLock`: dispatch takes a read lock for
//! one hash lookup per request and never holds it across an `.await`;
//! registrations are rare writes.

use std::collections::HashMap;
use std::sync::atomic::AtomicU8;
use std::sync::{Arc, Mutex, RwLock, Weak};

use floe_wire::Identity;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::connection::{Connection, ConnectionConfig};
use crate::object_model::communicator::{Communicator, CommunicatorInner};

use crate::endpoint::{Endpoint, Transport};
use crate::error::{Error, Result};
use crate::listener;
use crate::object_model::proxy::Proxy;
use crate::object_model::servant::Servant;
use registration::AdapterRegistration;

mod accept;
mod connection;
mod datagram;
mod dispatch;
mod lifecycle;
mod registration;
mod servant_locator;
mod servants;
pub(crate) use dispatch::call;
use servant_locator::DynServantLocator;
pub use servant_locator::{Located, ServantLocator};
use servants::ServantMap;

const HOLDING: u8 = 0;
const ACTIVE: u8 = 1;
const DEACTIVATING: u8 = 2;
const DEACTIVATED: u8 = 3;

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
    /// Dispatch middleware (`use_middleware`).
    pub(crate) middleware: crate::middleware::DispatchChain,
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
                middleware: Default::default(),
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
        Communicator::upgrade(&self.inner.communicator)
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
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
