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
//!   protocol core (`core/`);
//! - dispatches requests to the adapter's servants **inside the task**:
//!   synchronous servants answer before the next frame is read; an async
//!   one is polled once at once and, when that does not finish it, joins a
//!   `FuturesUnordered` polled beside the socket, so there is no task hop
//!   between socket and servant and no spawn per request. At most
//!   `max_dispatches` run at once, holding at most `max_dispatch_bytes` of
//!   parameters; beyond that the task stops reading (back-pressure through
//!   TCP);
//! - flushes what senders could not write directly (see `writer.rs`);
//! - keeps the connection alive and closes it when idle, inactive or
//!   silent (Ice 3.8's idle timeout, `idle.rs`, or Ice 3.7's ACM, §1.5,
//!   `acm.rs`; `liveness.rs` chooses), and runs the graceful close (§1.4).
//!
//! Twoway callers write their request frames themselves (see `writer.rs`),
//! then await the reply on a oneshot channel: one hop, from the connection
//! task to the caller, per twoway call. Oneway requests are queued for the
//! connection task, which writes consecutive ones together.

pub mod acm;
mod close;
pub(crate) mod config;
pub(crate) mod core;
mod dispatch;
mod establish;
pub mod idle;
pub(crate) mod limits;
pub(crate) mod liveness;
mod outgoing;
mod params;
pub(crate) mod protocol;
mod read;
mod signal;
mod task;
pub(crate) mod writer;

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use floe_wire::protocol::{
    check, compress_frame, BatchBuilder, CompressionStatus, FrameCheck, Header, Message, Reply,
    ReplyBody, ReplyStatus, Request, RequestFailed, RequestHead, CLOSE_CONNECTION,
    COMPRESSION_THRESHOLD, HEADER_SIZE, VALIDATE_CONNECTION,
};
use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use crate::transport::tls::TlsInfo;
use crate::transport::Io;

use crate::error::{Error, Result};
use crate::object_adapter::ObjectAdapter;
use crate::servant::{Dispatch, DispatchError, DispatchFuture, DispatchResult, ReplyData};
use crate::trace::event_if;
use acm::{AcmCloseAction, AcmInputs};
use close::{CloseStep, GracefulClose};
pub(crate) use config::ConnectionConfig;
use dispatch::{fill_failed, DispatchSet};
use liveness::Monitor;
pub(crate) use params::Params;
use protocol::Inbound;
use read::ReadSize;
use writer::Writer;

pub use core::policy::SEND_HIGH_WATER;

/// What is known about a connection's endpoints.
#[derive(Clone, Debug)]
pub struct ConnectionInfo {
    /// Local address.
    pub local: Option<SocketAddr>,
    /// Peer address.
    pub remote: Option<SocketAddr>,
    /// Whether the peer connected to us (server side).
    pub incoming: bool,
    /// Name of the adapter that accepted it (empty for outgoing).
    pub adapter_name: String,
    /// The connection id it was created for (`ice_connection_id`).
    pub connection_id: String,
    /// The transport: `tcp`, `ssl`, `ws` or `wss`.
    pub transport: &'static str,
    /// A number that tells this connection from the others of the
    /// process (never reused): the `connection` field of the
    /// [tracing spans](crate::spans).
    pub id: u64,
    /// The TLS side of an `ssl` connection (cipher, the peer's
    /// certificates), as `IceSSL::ConnectionInfo`; `None` over `tcp`.
    pub tls: Option<TlsInfo>,
}

const ACTIVE: u8 = 0;
const CLOSING: u8 = 1;
const CLOSED: u8 = 2;

struct BatchQueue {
    builder: BatchBuilder,
    /// Whether any queued request asked for compression.
    compress: bool,
}

pub(crate) struct ConnectionInner {
    io: Io,
    pub(crate) writer: Writer,
    adapter: RwLock<Option<ObjectAdapter>>,
    batch: Mutex<BatchQueue>,
    state: AtomicU8,
    /// Becomes `true` once the socket is closed.
    closed_tx: watch::Sender<bool>,
    /// The error that ended the connection, once it ended.
    end_error: Mutex<Option<Error>>,
    /// A graceful close should wait for our own pending requests too.
    wait_for_requests: AtomicBool,
    /// The last read delivered several replies: callers are
    /// pipelining requests, and the small twoway requests they send next
    /// are queued for the connection task, which writes them together
    /// (see [`Connection::invoke`]).
    pipelining: AtomicBool,
    info: ConnectionInfo,
    config: ConnectionConfig,
    /// The `connection` span (see [`crate::spans`]), the parent of its
    /// dispatches' spans.
    span: tracing::Span,
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
        adapter: Option<ObjectAdapter>,
        validate: bool,
    ) -> Result<Connection> {
        let (closed_tx, _) = watch::channel(false);
        let span = crate::spans::connection(&info);
        let inner = Arc::new(ConnectionInner {
            writer: Writer::for_io(&io, &config.policy),
            io,
            adapter: RwLock::new(adapter),
            batch: Mutex::new(BatchQueue {
                builder: BatchBuilder::new(),
                compress: false,
            }),
            state: AtomicU8::new(ACTIVE),
            closed_tx,
            end_error: Mutex::new(None),
            wait_for_requests: AtomicBool::new(false),
            pipelining: AtomicBool::new(false),
            info,
            config,
            span,
        });
        if validate {
            // Written before the task starts, so that no reply to a request
            // the client pipelined can overtake it (§1.3).
            inner
                .writer
                .send(&mut [Bytes::from_static(&VALIDATE_CONNECTION)])?;
        }
        if inner.span.is_disabled() {
            tokio::spawn(task::run(inner.clone()));
        } else {
            use tracing::Instrument;
            tokio::spawn(task::run(inner.clone()).instrument(inner.span.clone()));
        }
        Ok(Connection { inner })
    }

    /// Endpoint addresses and direction.
    pub fn info(&self) -> &ConnectionInfo {
        &self.inner.info
    }

    /// Whether the connection can still carry new requests.
    pub fn is_active(&self) -> bool {
        self.inner.state.load(Ordering::Acquire) == ACTIVE
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

    /// Sets the adapter that dispatches requests arriving on this
    /// connection: makes an outgoing connection bidirectional (the server
    /// can call back objects of `adapter` over it).
    pub fn set_adapter(&self, adapter: Option<ObjectAdapter>) {
        *self
            .inner
            .adapter
            .write()
            .unwrap_or_else(|p| p.into_inner()) = adapter;
    }

    /// The adapter dispatching incoming requests, if any.
    pub fn adapter(&self) -> Option<ObjectAdapter> {
        self.inner.adapter()
    }

    /// Sends a heartbeat (a ValidateConnection frame) now.
    ///
    /// # Errors
    ///
    /// If the connection is closed.
    pub fn heartbeat(&self) -> Result<()> {
        self.inner
            .writer
            .send(&mut [Bytes::from_static(&VALIDATE_CONNECTION)])
    }

    /// Closes gracefully (§1.4): waits for running dispatches and for this
    /// side's pending requests, sends CloseConnection, and waits for the
    /// peer to close the socket (at most the close timeout).
    pub async fn close(&self) {
        self.inner.wait_for_requests.store(true, Ordering::Release);
        self.inner.begin_close();
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
        self.inner
            .end_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
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

    fn adapter(&self) -> Option<ObjectAdapter> {
        self.adapter
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Sends a whole frame, compressing it when asked and large enough
    /// (§5); `extra` is a large payload to send after `frame` without
    /// copying (never combined with compression).
    fn send_frame(&self, frame: BytesMut, compress: bool, extra: Option<Bytes>) -> Result<()> {
        self.send_frame_as(frame, compress, extra, false)
    }

    /// [`ConnectionInner::send_frame`]; with `deferred`, through the
    /// connection task's queue ([`Writer::send_deferred`]).
    fn send_frame_as(
        &self,
        frame: BytesMut,
        compress: bool,
        extra: Option<Bytes>,
        deferred: bool,
    ) -> Result<()> {
        let frame = self.maybe_compress(frame, compress, extra.is_some());
        // An empty part is skipped by the writer.
        let mut parts = [frame.freeze(), extra.unwrap_or_default()];
        if deferred {
            self.writer.send_deferred(&mut parts)
        } else {
            self.writer.send(&mut parts)
        }
    }

    /// `frame` compressed when asked and large enough (§5), or marked as
    /// accepting a compressed reply.
    fn maybe_compress(&self, mut frame: BytesMut, compress: bool, has_extra: bool) -> BytesMut {
        if compress {
            if frame.len() >= COMPRESSION_THRESHOLD
                && !has_extra
                && limits::compressible(frame.len())
            {
                match compress_frame(&frame, self.config.compression_level) {
                    Ok(c) => frame = c,
                    Err(e) => {
                        tracing::warn!("compression failed, sending uncompressed: {e}");
                        frame[9] = CompressionStatus::Supported as u8;
                    }
                }
            } else {
                frame[9] = CompressionStatus::Supported as u8;
            }
        }
        frame
    }

    /// Starts a graceful close (the connection task carries it out).
    pub(crate) fn begin_close(&self) {
        if self
            .state
            .compare_exchange(ACTIVE, CLOSING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.writer.wake_task();
        }
    }

    /// Closes the socket now and fails everything pending with `err`.
    fn terminate(&self, err: Error) {
        if self.state.swap(CLOSED, Ordering::AcqRel) == CLOSED {
            return;
        }
        {
            let mut end = self.end_error.lock().unwrap_or_else(|p| p.into_inner());
            end.get_or_insert(err.clone());
        }
        // Fails the send queue and every request waiting for a reply.
        self.writer.fail(err);
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

    /// Handles one whole frame: [`protocol::inbound`] says what it asks,
    /// and this carries it out; what kind of frame it was.
    fn handle_frame(
        self: &Arc<Self>,
        frame: Bytes,
        dispatches: &mut DispatchSet,
    ) -> Result<Handled> {
        let (header, inbound) = protocol::inbound(frame, self.config.message_size_max)?;
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
        match inbound {
            Inbound::Request {
                request,
                accepts_compression,
                frame,
            } => self.dispatch(request, accepts_compression, dispatches, Some(&frame)),
            Inbound::Batch(batch) => {
                for request in batch.iter() {
                    self.dispatch(request?, false, dispatches, None);
                }
            }
            Inbound::Reply(reply) => {
                let completed = self
                    .writer
                    .lock()
                    .complete_request(reply.request_id, reply.body);
                if let Ok(waker) = completed {
                    if let Some(w) = waker {
                        w.wake();
                    }
                    return Ok(Handled::Reply);
                }
                tracing::trace!(id = reply.request_id, "reply for an abandoned request");
            }
            Inbound::BadParams {
                request_id,
                error,
                accepts_compression,
            } => self.send_reply(request_id, accepts_compression, Err(error.into())),
            // The client read the server's first one before the task
            // started: any other is a heartbeat.
            Inbound::Validate => return Ok(Handled::Heartbeat),
            Inbound::Close => return Err(Error::CloseConnection),
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
