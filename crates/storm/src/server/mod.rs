//! [`Server`]: floe-storm on the network. Plugs the transport-free broker
//! into floe-runtime: two object adapters with default servants for the
//! broker's identities, and [`RuntimeSinks`] (`sinks.rs`) delivering
//! through floe proxies.
//!
//! | adapter (properties prefix) | default servant for category | routes to |
//! |---|---|---|
//! | `IceStorm.TopicManager` | instance name, and `IceStorm` (Finder) | [`Broker::dispatch_topic_manager`] |
//! | `IceStorm.Publish` | instance name | [`Broker::dispatch_publish`] |
//!
//! Subscriber proxies get `IceStorm.Send.Timeout` as their endpoint and
//! invocation timeout, like IceStorm. `tcp`, `ssl`, `ws`, `wss` and `udp`
//! endpoints can be delivered to; a subscriber with only opaque endpoints
//! fails on delivery and is handled by its retry policy.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use floe::runtime::{
    Communicator, Current, Dispatch, Endpoint, Error as RtError, ObjectAdapter, Servant,
};
use floe::wire::Encapsulation;

use crate::broker::Broker;
use crate::config::StormConfig;
use crate::instance::{AdapterEndpoints, ObjectAddress, ReplicatedAddresses};
use crate::metrics::{MetricsEndpoint, MetricsError};
use crate::replica::{Replica, ReplicaError, ReplicaServant};
use crate::slice::floe_storm::ReplicaDispatcher;
use crate::store::StoreError;
use crate::types::EndpointData;

mod sinks;

pub use sinks::{endpoint_data, runtime_endpoint, runtime_proxy, RuntimeSinks};

/// Errors starting the server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The runtime failed (bad endpoints, bind failure, …).
    #[error("runtime error: {0}")]
    Runtime(#[from] RtError),
    /// The store could not be opened or read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A replicated broker's Raft node could not start.
    #[error(transparent)]
    Replica(#[from] ReplicaError),
    /// The metrics endpoint could not start.
    #[error(transparent)]
    Metrics(#[from] MetricsError),
}

/// Default servant of the TopicManager adapter.
struct TopicManagerServant(Broker);

impl Servant for TopicManagerServant {
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch {
        self.0.dispatch_topic_manager(current, params)
    }

    fn handles_builtins(&self) -> bool {
        // The broker answers them per object (see `Broker`).
        true
    }
}

/// Default servant of the Publish adapter: publishers and links.
struct PublishServant(Broker);

impl Servant for PublishServant {
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch {
        self.0.dispatch_publish(current, params)
    }

    fn handles_builtins(&self) -> bool {
        // Publishers forward built-ins as events (§8.4).
        true
    }
}

/// A running floe-storm: communicator, adapters and broker.
pub struct Server {
    communicator: Communicator,
    topic_manager: ObjectAdapter,
    publish: ObjectAdapter,
    broker: Broker,
    /// A replica's `IceStorm.Node` adapter and Raft node.
    replica: Option<(ObjectAdapter, Arc<Replica>)>,
    /// Logs topic statistics periodically when `IceStorm.Trace.Topic` > 0.
    reporter: Option<tokio::task::JoinHandle<()>>,
    /// `floe.Storm.DrainTimeout`.
    drain_timeout: Duration,
    /// `GET /metrics` (`floe.Storm.Metrics.Endpoint`), if asked for.
    metrics: Option<MetricsEndpoint>,
}

/// The Publish adapter's bound on pending dispatches per connection.
pub const PUBLISH_MAX_DISPATCHES: &str = "IceStorm.Publish.MaxDispatches";

/// Its default on floe-storm (floe-runtime's own default is 1024).
pub const DEFAULT_PUBLISH_MAX_DISPATCHES: usize = 32;

/// The Publish adapter's bound on the event bytes pending dispatches hold
/// per connection.
pub const PUBLISH_MAX_DISPATCH_BYTES: &str = "IceStorm.Publish.MaxDispatchBytes";

/// Its default on floe-storm, 1 MiB (floe-runtime's own default is no
/// limit): 32 pending events of 10 KB stay under it, while large events
/// stop the reads after a MiB or a single event instead of after 32 of
/// them (32 MB per publisher connection with 1 MB events).
pub const DEFAULT_PUBLISH_MAX_DISPATCH_BYTES: usize = 1 << 20;

/// Period of the statistics log (`IceStorm.Trace.Topic` > 0).
pub const REPORT_INTERVAL: Duration = Duration::from_secs(30);

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("broker", &self.broker)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Creates the adapters from `config`'s endpoints (port 0 picks free
    /// ports), opens the broker and starts dispatching.
    ///
    /// # Errors
    ///
    /// Bad endpoints, bind failures, or store failures.
    pub async fn start(
        config: StormConfig,
        communicator: Communicator,
    ) -> Result<Server, ServerError> {
        let props = communicator.properties();
        // The runtime reads `<adapter>.PublishedEndpoints` itself.
        if let Some(p) = &config.topic_manager_published_endpoints {
            props.set("IceStorm.TopicManager.PublishedEndpoints", p);
        }
        if let Some(p) = &config.publish_published_endpoints {
            props.set("IceStorm.Publish.PublishedEndpoints", p);
        }
        // A publish waiting for room keeps its dispatch pending; with this
        // many pending on a publisher's connection, or pending events of
        // this many bytes, the runtime stops reading it (back-pressure,
        // `crate::admission`), which bounds what waits in the broker per
        // publisher connection.
        for (key, default) in [
            (PUBLISH_MAX_DISPATCHES, DEFAULT_PUBLISH_MAX_DISPATCHES),
            (
                PUBLISH_MAX_DISPATCH_BYTES,
                DEFAULT_PUBLISH_MAX_DISPATCH_BYTES,
            ),
        ] {
            if props.get(key).is_none() {
                props.set(key, &default.to_string());
            }
        }
        let topic_manager = communicator
            .create_object_adapter_with_endpoints(
                "IceStorm.TopicManager",
                &config.topic_manager_endpoints,
            )
            .await?;
        let publish = communicator
            .create_object_adapter_with_endpoints("IceStorm.Publish", &config.publish_endpoints)
            .await?;
        let endpoints = AdapterEndpoints {
            topic_manager: topic_manager
                .published_endpoints()
                .iter()
                .map(endpoint_data)
                .collect(),
            publish: publish
                .published_endpoints()
                .iter()
                .map(endpoint_data)
                .collect(),
            replicated: None,
        };
        let endpoints = AdapterEndpoints {
            replicated: match &config.replica {
                Some(rc) => Some(ReplicatedAddresses {
                    topic_manager: address(
                        &communicator,
                        "IceStorm.TopicManager",
                        rc.replicated_topic_manager_endpoints.as_deref(),
                        &endpoints.topic_manager,
                    )?,
                    publish: address(
                        &communicator,
                        "IceStorm.Publish",
                        rc.replicated_publish_endpoints.as_deref(),
                        &endpoints.publish,
                    )?,
                }),
                None => None,
            },
            ..endpoints
        };
        let replica_config = config.replica.clone();
        let sinks = Arc::new(RuntimeSinks::new(communicator.clone(), config.send_timeout));
        let instance = config.instance_name.clone();
        let trace_topic = config.trace_topic;
        let drain_timeout = config.drain_timeout;
        let metrics_endpoint = config.metrics_endpoint;
        let broker = Broker::open(config, endpoints, sinks)?;
        let metrics = match metrics_endpoint {
            Some(addr) => {
                Some(MetricsEndpoint::start(addr, broker.instance(), &communicator).await?)
            }
            None => None,
        };
        let replica = match replica_config {
            Some(rc) => Some(start_replica(&communicator, rc, &broker).await?),
            None => None,
        };
        let reporter = (trace_topic > 0).then(|| {
            let b = broker.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(REPORT_INTERVAL);
                tick.tick().await;
                loop {
                    tick.tick().await;
                    b.report();
                }
            })
        });
        let tm: Arc<dyn Servant> = Arc::new(TopicManagerServant(broker.clone()));
        topic_manager.add_default_servant(&instance, tm.clone());
        if instance != "IceStorm" {
            topic_manager.add_default_servant("IceStorm", tm);
        }
        publish.add_default_servant(&instance, Arc::new(PublishServant(broker.clone())));
        topic_manager.activate();
        publish.activate();
        // IceMX's `Topic` and `Subscriber` maps in the `Metrics` facet's
        // views, and the admin object when `Ice.Admin.Endpoints` asks for
        // it (as an IceBox service's communicator has one).
        crate::metrics::icemx::register(&communicator, broker.instance());
        communicator.create_admin().await?;
        Ok(Server {
            communicator,
            topic_manager,
            publish,
            broker,
            replica,
            reporter,
            drain_timeout,
            metrics,
        })
    }

    /// The broker.
    pub fn broker(&self) -> &Broker {
        &self.broker
    }

    /// The TopicManager adapter's endpoints as bound.
    pub fn topic_manager_endpoints(&self) -> &[Endpoint] {
        self.topic_manager.endpoints()
    }

    /// The Publish adapter's endpoints as bound.
    pub fn publish_endpoints(&self) -> &[Endpoint] {
        self.publish.endpoints()
    }

    /// Where `GET /metrics` is served, if it is.
    pub fn metrics_address(&self) -> Option<std::net::SocketAddr> {
        self.metrics.as_ref().map(MetricsEndpoint::local_addr)
    }

    /// The topic manager proxy, stringified.
    pub fn topic_manager_proxy(&self) -> String {
        self.topic_manager
            .create_proxy(floe::wire::Identity::new(
                "TopicManager",
                self.broker.instance().name(),
            ))
            .to_string()
    }

    /// Stops accepting, lets running dispatches reply, delivers what is
    /// queued, closes connections gracefully and destroys the
    /// communicator.
    ///
    /// In order:
    /// 1. The Publish adapter stops accepting and its running publishes
    ///    finish (those waiting for room get it as subscribers drain).
    /// 2. Every subscriber and link sends what it was offered: an event a
    ///    twoway publisher was told was accepted reaches its subscribers
    ///    across a graceful restart (SIGTERM), as long as they take it
    ///    within `floe.Storm.DrainTimeout` (10 s by default).
    /// 3. The subscribers stop (their statistics are logged; what a
    ///    stalled one still had queued is counted as dropped, and publishes
    ///    still waiting for it are released), then the TopicManager
    ///    adapter and the communicator.
    ///
    /// After `SIGKILL` (or a crash) what was queued is lost, as with
    /// IceStorm: topics, subscribers and links are persistent, events are
    /// not.
    pub async fn shutdown(self) {
        if let Some(r) = &self.reporter {
            r.abort();
        }
        // In a task of its own, so that it completes even when the drain
        // below gives up (an adapter's deactivation must not be dropped
        // half-way).
        let publish = self.publish.clone();
        let deactivating = tokio::spawn(async move {
            publish.deactivate().await;
            publish.wait_for_deactivate().await;
        });
        let drain = async {
            let _ = deactivating.await;
            self.broker.drained().await;
        };
        if tokio::time::timeout(self.drain_timeout, drain)
            .await
            .is_err()
        {
            tracing::warn!(
                timeout = ?self.drain_timeout,
                "shutdown: subscribers did not take everything queued for them in time; \
                 discarding the rest (floe.Storm.DrainTimeout)"
            );
        }
        if let Some((node, replica)) = &self.replica {
            replica.shutdown().await;
            node.deactivate().await;
            node.wait_for_deactivate().await;
            if let Some(id) = replica.node_proxy().map(|p| p.identity) {
                node.remove(&id);
            }
        }
        self.broker.close();
        self.topic_manager.deactivate().await;
        self.topic_manager.wait_for_deactivate().await;
        self.publish.deactivate().await;
        self.publish.wait_for_deactivate().await;
        // The adapters keep their servants, which hold the broker: remove
        // them so the store is closed when this returns (a restart in the
        // same process can then reopen it).
        let instance = self.broker.instance().name().to_owned();
        self.topic_manager.remove_default_servant(&instance);
        self.topic_manager.remove_default_servant("IceStorm");
        self.publish.remove_default_servant(&instance);
        self.communicator.destroy().await;
        let inst = Arc::downgrade(self.broker.instance());
        drop(self.broker);
        // Dispatches that were running may still hold the broker briefly.
        for _ in 0..200 {
            if inst.strong_count() == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tracing::warn!("broker still referenced after shutdown");
    }
}

/// Where a replicated broker's proxies on `adapter` point: its IceGrid
/// replica group (`<adapter>.ReplicaGroupId`), else the replicated
/// endpoints property, else the adapter's own endpoints.
fn address(
    communicator: &Communicator,
    adapter: &str,
    replicated: Option<&str>,
    own: &[EndpointData],
) -> Result<ObjectAddress, ServerError> {
    let group = communicator
        .properties()
        .get(&format!("{adapter}.ReplicaGroupId"))
        .filter(|g| !g.trim().is_empty());
    if let Some(group) = group {
        return Ok(ObjectAddress {
            endpoints: Vec::new(),
            adapter_id: group.trim().to_owned(),
        });
    }
    let endpoints = match replicated {
        Some(text) => {
            communicator
                .string_to_proxy(&format!("x:{text}"))?
                .to_data()
                .endpoints
        }
        None => own.to_vec(),
    };
    Ok(ObjectAddress {
        endpoints,
        adapter_id: String::new(),
    })
}

/// Starts the Raft node of a replica and its node object on the
/// `IceStorm.Node` adapter.
async fn start_replica(
    communicator: &Communicator,
    config: crate::replica::ReplicaConfig,
    broker: &Broker,
) -> Result<(ObjectAdapter, Arc<Replica>), ServerError> {
    let node = communicator.create_object_adapter("IceStorm.Node").await?;
    let own = config
        .nodes
        .get(&config.node_id)
        .cloned()
        .unwrap_or_default();
    let identity = communicator.string_to_proxy(&own)?.identity().clone();
    let inst = broker.instance();
    let replica = Replica::start(
        config,
        communicator,
        inst.store.clone(),
        inst.non_replicated_topic_manager_proxy(),
        inst,
    )
    .await?;
    if inst.replica.set(replica.clone()).is_err() {
        tracing::warn!("replica: the broker already had a Raft node");
    }
    node.add(
        identity,
        ReplicaDispatcher::new(ReplicaServant::new(replica.clone())),
    )?;
    node.activate();
    Ok((node, replica))
}

/// Runs floe-storm until `shutdown` resolves: starts the server, prints
/// nothing, calls `ready` with the started server, then shuts down
/// gracefully.
///
/// # Errors
///
/// As [`Server::start`].
pub async fn run(
    config: StormConfig,
    communicator: Communicator,
    ready: impl FnOnce(&Server),
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServerError> {
    let server = Server::start(config, communicator).await?;
    ready(&server);
    shutdown.await;
    server.shutdown().await;
    Ok(())
}
