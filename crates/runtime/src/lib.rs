//! # floe-runtime
//!
//! Ice-compatible clients and servers on tokio: the [`Communicator`], its
//! [`ObjectAdapter`]s (servant maps and listeners), untyped [`Proxy`]s, and
//! the per-connection task that moves protocol 1.0 frames
//! ([`floe_wire::protocol`]) between sockets, callers and servants.
//!
//! A tour, in the order a request travels:
//!
//! - [`Proxy::invoke`] encodes a Request frame and writes it directly to the
//!   socket when nothing else is queued (the `connection` module explains the write
//!   path), then awaits the reply from the connection's request table.
//! - The server's connection task reads whole frames, looks the servant up
//!   in its [`ObjectAdapter`], and calls [`Servant::dispatch`] with a
//!   [`Current`] and the parameters (a slice of the frame). Synchronous
//!   servants answer at once; async ones are polled inside the connection
//!   task.
//! - Replies travel back the same way; statuses 2–255 become [`Error`]s
//!   (8–255, Ice 3.8's, [`Error::DispatchException`]).
//!
//! Each connection, invocation and dispatch is a `tracing` span (see
//! [`spans`]), and `Ice.Trace.*` sets the level of floe's events
//! ([`trace`]).
//!
//! Configuration comes from [`Properties`] (`Ice.MessageSizeMax`,
//! `Ice.RetryIntervals`, `Ice.Connection.*`, `Ice.ACM.*`,
//! `Ice.BatchAutoFlushSize`, `Ice.Compression.Level`, `Ice.TCP.Backlog`,
//! `Ice.TCP.RcvSize` and `Ice.TCP.SndSize` (bytes; the OS default if unset),
//! `<Adapter>.Endpoints`, ...). Works on the current-thread and the
//! multi-thread tokio runtimes.
//!
//! **Connections** take Ice 3.8's settings: `Ice.Connection.Client.*` for
//! outgoing ones, `<Adapter>.Connection.*` then `Ice.Connection.Server.*`
//! for accepted ones: `IdleTimeout` (60 s), `EnableIdleCheck` (1),
//! `InactivityTimeout` (300 s), `ConnectTimeout` (10 s), `CloseTimeout`
//! (10 s), `MaxDispatches` (100; a connection with that many dispatches
//! pending stops reading until one finishes; 0 = no limit), and
//! `<Adapter>.MaxConnections` (0 = no limit; a connection accepted beyond
//! it is closed at once). Ice 3.7's `Ice.ACM.*` still work: a side whose
//! `Ice.ACM.*` properties are set and whose 3.8 liveness properties are
//! not follows ACM (see [`IdleConfig`] for the 3.8 rules and how floe
//! keeps idle connections to 3.7 peers up too).
//!
//! These settings are floe's own: `floe.MaxDispatches` (the default of
//! `MaxDispatches` when no `Ice.Connection.*` property sets it;
//! `<Adapter>.MaxDispatches` for one object adapter's connections),
//! `floe.MaxDispatchBytes` (the parameter bytes the pending dispatches of a
//! connection may hold before it stops reading, default 0 = no limit;
//! `<Adapter>.MaxDispatchBytes` per adapter) and `floe.BusyPoll` (microseconds,
//! default 0 = off). With `floe.BusyPoll=N`, a connection that just wrote
//! (a client its twoway request, a server its reply) polls its socket for
//! the answer for up to N µs, yielding to the runtime every few
//! microseconds, instead of going to sleep until the I/O driver reports
//! it. A thread that sleeps between messages pays a wake-up per message,
//! and on virtual machines that wake-up dominates a loopback or LAN round
//! trip (measured here: 55–65 µs per round trip with sleeping threads,
//! 11–15 µs with `floe.BusyPoll=50` on both sides, on tokio's
//! current-thread runtime). The price is CPU: up to N µs of it per message
//! whose answer is slow to come. Use it for latency-critical traffic on
//! machines with cores to spare; leave it off elsewhere.
//!
//! `floe.CallerSpin` (microseconds, default 50 on tokio's multi-thread
//! runtime; 0 = off) is the client half of that, on by default: a twoway
//! call that is the only one waiting in the process (and on a connection
//! where no calls overlapped since the last one) reads its socket for the
//! reply for up to that long before its caller goes to sleep, within the
//! one poll of its task (the socket's `SO_RCVLOWAT` is raised meanwhile,
//! so that the reply does not also wake the worker parked in the I/O
//! driver); another call starting ends the spin. The window adapts
//! per connection: it stays open while replies come within it, halves
//! after each spin that ran out for a reply that took longer, closes below
//! 2 µs and is tried again once every 32 calls. On this project's 2-core
//! VM an empty call on the multi-thread runtime took 22–26 µs with it and
//! 64–74 µs without, for the same client CPU time per call; a peer that
//! is slow to answer costs at most one window per 32 calls. On the
//! current-thread runtime callers spin only when the property is set: the
//! spinning thread runs every task there, so it yields after each read,
//! which costs about four times the instructions of the multi-thread spin.
//!
//! `floe.OnewayBatchSize` (KB, default 0 = off) changes the wire form of
//! oneway requests that have to wait: when a connection has not yet
//! written what was sent before (the peer reads slower than this side
//! sends), a oneway request queued behind other oneway requests joins
//! them in one BatchRequest message of up to that size (never over
//! `Ice.MessageSizeMax`, which Ice also applies to its batches). A
//! request that finds the connection idle still leaves at once, alone,
//! and nothing waits for a batch to fill. Every Ice peer accepts batch
//! requests and dispatches them in order, reading and waking once per
//! batch: an Ice for C++ subscriber of 10 KB oneways spent a third to a
//! half less CPU per MB (floe-storm sets 1024 by default). The price: a
//! peer dispatches a batch's requests one after the other, even with a
//! multi-threaded server thread pool; and a peer whose own
//! `Ice.MessageSizeMax` is below the batch size closes the connection on
//! a larger batch, as on any Ice batch that large.
//!
//! ```
//! let props = floe_runtime::Properties::new();
//! props.set("floe.BusyPoll", "50");
//! let communicator = floe_runtime::Communicator::with_properties(props);
//! # drop(communicator);
//! ```
//!
//! ```no_run
//! use std::sync::Arc;
//! use floe_runtime::{servant_fn, Communicator, Dispatch, Identity, OperationMode};
//! # async fn f() -> floe_runtime::Result<()> {
//! let communicator = Communicator::new();
//! let adapter = communicator
//!     .create_object_adapter_with_endpoints("Hello", "tcp -h 127.0.0.1 -p 0")
//!     .await?;
//! let proxy = adapter.add(
//!     Identity::from_name("hello"),
//!     servant_fn(|current, _params| Dispatch::ready(Ok(current.empty_reply()))),
//! )?;
//! adapter.activate();
//! proxy.invoke("o", OperationMode::Normal, proxy.empty_params()).await?;
//! communicator.destroy().await;
//! # Ok(()) }
//! ```
//!
//! Section numbers (§) refer to the protocol description in `docs/protocol.md`.
#![deny(missing_docs)]

mod admin;
pub mod builtins;
pub mod connection;
mod connection_info;
mod datagram;
mod encapsulation;
pub mod endpoint;
pub mod error;
mod listener;
pub mod logger;
mod metrics;
pub mod middleware;
pub mod object_model;
pub mod outcome;
mod params_size;
#[cfg(feature = "prometheus")]
pub mod prometheus;
pub mod properties;
mod signals;
pub mod spans;
mod timer;
pub mod trace;
mod transport;

pub use object_model::{communicator, current, locator, object_adapter, proxy, router, servant};

pub use builtins::{Builtins, WithBuiltins};
pub use communicator::Communicator;
pub use connection::core::acm::{AcmClose, AcmConfig, AcmHeartbeat};
pub use connection::core::idle::IdleConfig;
pub use connection::{Connection, ConnectionInfo, SEND_HIGH_WATER};
pub use connection_info::TlsInfo;
pub use current::Current;
pub use encapsulation::{encapsulation_bytes, encode_encapsulation};
pub use endpoint::{Endpoint, Transport};
pub use error::user::{user_exception_error, UserError};
pub use error::{Error, Result};
pub use floe_wire::protocol::{OperationMode, ReplyStatus};
pub use floe_wire::{Context, Encapsulation, EncodingVersion, Identity};
pub use locator::EndpointSelection;
pub use metrics::provided::{MetricsField, MetricsObject, MetricsProvider};
pub use object_adapter::{ObjectAdapter, ServantLocator};
pub use properties::Properties;
pub use proxy::{InvocationMode, Proxy, Response};
pub use router::session::Glacier2Session;
pub use servant::{
    servant_fn, Dispatch, DispatchError, DispatchFuture, DispatchResult, ReplyData, Servant,
};
