//! # floe-storm
//!
//! An IceStorm-compatible publish/subscribe broker. Section numbers (§)
//! refer to `docs/protocol.md`, §8 being the IceStorm wire
//! contract.
//!
//! A tour:
//!
//! - [`slice`](mod@slice): the Rust generated from `slice/IceStorm.ice` by floe-idl
//!   (`build.rs`): IceStorm's types, exceptions, typed proxies, servant
//!   traits and dispatchers.
//! - [`types`]: short names for those types and helpers over floe-wire's `ProxyData`.
//! - [`qos`]: QoS validation, exactly as IceStorm 3.7 does it.
//! - [`event`]: a published request, shared (`Arc` + `Bytes`) across subscribers.
//! - [`sink`]: the [`sink::SubscriberSink`] seam between delivery logic and the network.
//! - [`subscriber`]: per-subscriber queues, their byte budgets and the delivery state machine.
//! - [`admission`]: back-pressure: a topic admits an event only while no
//!   subscriber is over its budget; publishers wait, nothing is dropped.
//! - [`link`]: federation: the `TopicLink` servant, `EventData`, cost filtering.
//! - [`metrics`]: the topic and subscriber counters (IceStorm's
//!   `TopicMetrics` and `SubscriberMetrics`) and their snapshot, served
//!   to Prometheus on `GET /metrics` by `floe-storm --metrics ADDR`
//!   (feature `prometheus`).
//! - [`store`]: redb persistence, one durable commit per mutation.
//! - [`config`]: settings from Ice properties.
//! - [`command`]: every change to the durable state as a value;
//!   [`state`]: committing one and applying it to the running topics.
//! - [`topic_manager`], [`topic`], [`finder`]: implementations of the generated servant traits;
//!   [`publisher`]: the raw publisher objects.
//! - [`replica`]: replication on openraft (`IceStorm.NodeId`,
//!   `IceStorm.Nodes.<id>`): the Raft log and state machine on the store,
//!   Raft over floe RPC (`slice/Replica.ice`).
//! - [`instance`] (shared state) and [`broker`] ([`Broker`]: load, restore,
//!   route requests to the generated dispatchers).
//! - [`admin`]: `floe-storm admin`, an `icestormadmin` work-alike.
//! - [`server`]: the broker on floe-runtime (adapters, servants, proxy sinks);
//!   `src/bin/floe-storm.rs` is a thin command line around [`server::run`].
#![deny(missing_docs)]

pub mod admin;
pub mod admission;
pub mod broker;
pub mod command;
pub mod config;
mod config_error;
pub mod event;
pub mod finder;
pub mod instance;
pub mod link;
pub mod metrics;
pub mod publisher;
pub mod qos;
pub mod replica;
pub mod server;
pub mod sink;
pub mod slice;
pub mod state;
pub mod store;
pub mod subscriber;
pub mod topic;
pub mod topic_manager;
pub mod topic_servant;
pub mod types;

pub use broker::Broker;
pub use config::StormConfig;
pub use instance::AdapterEndpoints;
pub use server::{run, Server};
pub use sink::{DeliveryError, SinkFactory, SubscriberSink};
