//! [`Connection`]: one connection speaking protocol 1.0 over a transport
//! (`tcp`, or `ssl` through the stream path of `crate::transport`), in
//! either direction (client requests, server dispatch, or both for
//! bidirectional use).
//!
//! Each connection has **one task** (spawned with `tokio::spawn`, so it runs
//! on current-thread and multi-thread runtimes alike) that:
//!
//! - reads whole frames into a `BytesMut` and freezes them (zero-copy
//!   receive: parameters reach servants as slices of the frame);
//! - delivers replies to waiting callers through the reply slots of the
//!   protocol core (`core/`), unless the caller reads its reply itself
//!   (`caller_read.rs`);
//! - dispatches requests to the adapter's servants **inside the task**:
//!   synchronous servants answer before the next frame is read; an async
//!   one is polled once at once and, when that does not finish it, joins a
//!   `FuturesUnordered` polled beside the socket, so there is no task hop
//!   between socket and servant and no spawn per request. At most
//!   `max_dispatches` run at once, holding at most `max_dispatch_bytes` of
//!   parameters; beyond that the task stops reading (back-pressure through
//!   TCP);
//! - flushes what senders could not write directly (see `writer/`);
//! - keeps the connection alive and closes it when idle, inactive or
//!   silent (Ice 3.8's idle timeout, `idle.rs`, or Ice 3.7's ACM, §1.5,
//!   `acm.rs`; `liveness.rs` chooses), and runs the graceful close (§1.4).
//!
//! What the connection knows and decides lives in its protocol core
//! (`core/`, no I/O: `ConnectionState`, behind the writer's lock); the
//! files here are the tokio driver around it. Twoway callers write their
//! request frames themselves (see `writer/`), then await the reply in
//! their request's slot of the core. The only caller waiting on a client's
//! TCP connection reads its reply itself (`caller_read.rs`); otherwise the
//! connection task delivers it, one hop. Oneway requests are queued for
//! the connection task, which writes consecutive ones together.

mod caller_read;
mod caller_spin;
pub(crate) mod config;
pub(crate) mod core;
mod dispatch;
pub(crate) mod dispatcher;
mod establish;
pub(crate) mod observe;
mod outgoing;
mod read;
mod signal;
pub(crate) mod socket_buffers;
mod task;
pub(crate) mod writer;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use floe_wire::protocol::{
    Header, Message, ReplyBody, Request, RequestFailed, RequestHead, HEADER_SIZE,
    VALIDATE_CONNECTION,
};
use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use crate::transport::Io;

use crate::error::{Error, Result};
use crate::outcome::{Dispatch, DispatchError, DispatchFuture, DispatchResult};
use crate::trace::event_if;
pub(crate) use config::ConnectionConfig;
use core::inbound::Inbound;
pub(crate) use core::limits;
use core::outbound::{self, OutFrame};
pub(crate) use core::params::Params;
use core::TaskPass;
use dispatch::{fill_failed, DispatchSet};
pub(crate) use dispatcher::Dispatcher;
pub(crate) use outgoing::InvokeError;
use read::ReadSize;
use writer::Writer;

pub use crate::connection_info::ConnectionInfo;
pub use core::policy::SEND_HIGH_WATER;

pub(crate) struct ConnectionInner {
    io: Io,
    /// The send side, and the protocol core behind its lock.
    pub(crate) writer: Writer,
    /// Where incoming requests go (see [`Dispatcher`]).
    dispatcher: RwLock<Option<Arc<dyn Dispatcher>>>,
    /// Becomes `true` once the socket is closed.
    closed_tx: watch::Sender<bool>,
    info: ConnectionInfo,
    config: ConnectionConfig,
    /// The `connection` span (see [`crate::spans`]), the parent of its
    /// dispatches' spans.
    span: tracing::Span,
    /// The read side, shared by the task and a caller that reads its own
    /// reply (see `caller_read.rs`).
    read: Mutex<caller_read::ReadState>,
    /// Who the socket's read readiness wakes, and its waker.
    route: Arc<caller_read::ReadRoute>,
    route_waker: Waker,
}

/// A connection handle; clones share the connection.
#[derive(Clone)]
pub struct Connection {
    pub(crate) inner: Arc<ConnectionInner>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("local", &self.inner.info.local)
            .field("remote", &self.inner.info.remote)
            .field("incoming", &self.inner.info.incoming)
            .finish()
    }
}

impl Connection {
    pub(super) fn start(
        io: Io,
        info: ConnectionInfo,
        config: ConnectionConfig,
        dispatcher: Option<Arc<dyn Dispatcher>>,
        validate: bool,
    ) -> Result<Connection> {
        let (closed_tx, _) = watch::channel(false);
        let span = crate::spans::connection(&info);
        let mut writer = Writer::for_io(&io, &config);
        if validate {
            // Written before the task starts, so that no reply to a request
            // the client pipelined can overtake it (§1.3); and before the
            // metrics observer is attached: as in Ice, a connection's
            // `sentBytes` start once it is validated.
            writer.send(&mut [Bytes::from_static(&VALIDATE_CONNECTION)])?;
        }
        if let Some(admin) = &config.metrics {
            writer.metrics = observe::ConnectionObserver::start(admin, &info);
        }
        let (route, route_waker) = caller_read::route();
        let inner = Arc::new(ConnectionInner {
            writer,
            io,
            dispatcher: RwLock::new(dispatcher),
            closed_tx,
            info,
            config,
            span,
            read: Mutex::new(caller_read::ReadState::new()),
            route,
            route_waker,
        });
        if inner.span.is_disabled() {
            tokio::spawn(task::run(inner.clone()));
        } else {
            use tracing::Instrument;
            tokio::spawn(task::run(inner.clone()).instrument(inner.span.clone()));
        }
        Ok(Connection { inner })
    }

    /// The endpoint of the connection (Ice's `Connection::getEndpoint`
    /// and its `EndpointInfo`: transport, host, port, timeout, compress):
    /// the one connected to, or the adapter's endpoint that accepted it.
    pub fn endpoint(&self) -> Option<&crate::endpoint::Endpoint> {
        self.inner.info.endpoint.as_ref()
    }

    /// Endpoint addresses and direction.
    pub fn info(&self) -> &ConnectionInfo {
        &self.inner.info
    }

    /// The IceMX metrics of the connection's communicator, if it
    /// observes any.
    pub(crate) fn metrics(&self) -> Option<&Arc<crate::metrics::MetricsAdmin>> {
        self.inner.config.metrics.as_ref()
    }

    /// Whether the connection can still carry new requests.
    pub fn is_active(&self) -> bool {
        self.inner.writer.lock().is_active()
    }

    /// Bytes of requests and replies queued on this connection and not
    /// yet written to its socket. It grows while the peer reads slower
    /// than we send; a oneway invocation waits while more than
    /// [`SEND_HIGH_WATER`] is queued, and
    /// [`Proxy::try_send_oneway_now`](crate::Proxy::try_send_oneway_now)
    /// refuses past the limit it is given.
    pub fn queued_bytes(&self) -> usize {
        self.inner.writer.queued_bytes()
    }

    /// Sets where requests arriving on this connection go (the public
    /// face is `Connection::set_adapter`).
    pub(crate) fn set_dispatcher(&self, dispatcher: Option<Arc<dyn Dispatcher>>) {
        *self
            .inner
            .dispatcher
            .write()
            .unwrap_or_else(|p| p.into_inner()) = dispatcher;
    }

    /// Where requests arriving on this connection go, if anywhere (the
    /// public face is `Connection::adapter`).
    pub(crate) fn dispatcher(&self) -> Option<Arc<dyn Dispatcher>> {
        self.inner.dispatcher()
    }

    /// Sends a heartbeat (a ValidateConnection frame) now.
    ///
    /// # Errors
    ///
    /// If the connection is closed.
    pub fn heartbeat(&self) -> Result<()> {
        self.inner
            .writer
            .send_uncounted(&mut [Bytes::from_static(&VALIDATE_CONNECTION)])
    }

    /// Closes gracefully (§1.4): waits for running dispatches and for this
    /// side's pending requests, sends CloseConnection, and waits for the
    /// peer to close the socket (at most the close timeout).
    pub async fn close(&self) {
        self.inner.begin_close(true);
        self.closed().await;
    }

    /// Closes at once without CloseConnection; pending requests fail with
    /// `ConnectionManuallyClosed`.
    pub fn abort(&self) {
        self.inner.terminate(Error::ConnectionManuallyClosed);
    }

    /// Waits until the socket is closed.
    pub async fn closed(&self) {
        let mut rx = self.inner.closed_tx.subscribe();
        let _ = rx.wait_for(|closed| *closed).await;
    }

    /// The error that ended the connection, once it ended.
    pub fn end_error(&self) -> Option<Error> {
        self.inner.writer.lock().end_error()
    }

    /// Whether two handles are the same connection.
    pub fn ptr_eq(&self, other: &Connection) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// An identifier of the connection, unique among live connections.
    pub(crate) fn key(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }
}

impl ConnectionInner {
    /// Our twoway requests still waiting for their replies.
    pub(crate) fn waiting_requests(&self) -> usize {
        self.writer.lock().requests.waiting()
    }

    fn dispatcher(&self) -> Option<Arc<dyn Dispatcher>> {
        self.dispatcher
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The compression level for a frame sent with compression asked for.
    fn compression(&self, compress: bool) -> Option<u32> {
        compress.then_some(self.config.compression_level)
    }

    /// Starts a graceful close (the connection task carries it out); with
    /// `wait_for_requests`, it waits for our requests' replies too.
    pub(crate) fn begin_close(&self, wait_for_requests: bool) {
        if self.writer.lock().begin_close(wait_for_requests) {
            self.writer.wake_task();
        }
    }

    /// Closes the socket now and fails everything pending with `err`.
    fn terminate(&self, err: Error) {
        let Some(wakers) = self.writer.lock().terminate(err) else {
            return;
        };
        for waker in wakers {
            waker.wake();
        }
        self.writer.notify_written();
        match &self.io {
            Io::Tcp(s) => {
                let _ = socket2::SockRef::from(&**s).shutdown(std::net::Shutdown::Both);
            }
            Io::Stream(s) => s.shutdown(),
        }
        // Wake the task if it is waiting, so it notices.
        self.writer.wake_task();
        self.closed_tx.send_replace(true);
    }

    /// Traces a frame received (`Ice.Trace.Protocol`).
    #[inline(always)]
    fn trace_frame(&self, header: &Header) {
        event_if!(
            self.config.trace.protocol >= 1,
            info,
            trace,
            remote = ?self.info.remote,
            kind = ?header.message_type,
            compression = header.compression as u8,
            size = header.size,
            "received frame"
        );
    }

    /// Handles one whole frame: the core says what it asks
    /// ([`core::inbound::inbound`], no lock taken) and this carries it out;
    /// only a reply takes the core's lock, to reach its request's slot.
    /// Requests are dispatched when `active` (as the task's pass saw the
    /// connection): one that arrives once the connection is closing is not
    /// run (§1.4; the peer retries it, as CloseConnection promises).
    fn handle_frame(
        self: &Arc<Self>,
        header: Header,
        frame: Bytes,
        dispatches: &mut DispatchSet,
        active: bool,
    ) -> Result<Handled> {
        if header.message_type == floe_wire::protocol::MessageType::Reply {
            return Ok(match self.receive_reply(header, frame)? {
                Ok(waker) => {
                    if let Some(w) = waker {
                        w.wake();
                    }
                    Handled::Reply
                }
                Err(_) => Handled::Traffic,
            });
        }
        let inbound = core::inbound::inbound_with(header, frame, self.config.message_size_max);
        if inbound.is_ok() {
            self.trace_frame(&header);
        }
        // Matched in its `Result`: unwrapped first, the request would be
        // moved once more on its way to the dispatch.
        match inbound {
            Err(e) => return Err(e.into()),
            // Taken above.
            Ok(Inbound::Reply(_)) => {}
            Ok(Inbound::Validate) => return Ok(Handled::Heartbeat),
            Ok(Inbound::Close) => return Err(Error::CloseConnection),
            Ok(_) if !active => {}
            Ok(Inbound::Request {
                request,
                accepts_compression,
                frame,
            }) => self.dispatch(request, accepts_compression, dispatches, Some(frame)),
            Ok(Inbound::Batch(batch)) => {
                for request in batch.iter() {
                    self.dispatch(request?, false, dispatches, None);
                }
            }
            Ok(Inbound::BadParams {
                request_id,
                error,
                accepts_compression,
            }) => self.send_reply(request_id, accepts_compression, Err(error.into())),
        }
        Ok(Handled::Traffic)
    }
}

/// What [`ConnectionInner::handle_frame`] handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Handled {
    /// A reply delivered to a waiting caller.
    Reply,
    /// A ValidateConnection: the peer's heartbeat.
    Heartbeat,
    /// A request, a batch, or a reply nobody waits for.
    Traffic,
}
