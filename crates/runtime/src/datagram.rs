//! UDP endpoints (§2.7), the sending side: one frame per datagram,
//! requestId 0 or a BatchRequest, no validation, no replies. (Object
//! adapters receive datagrams in `crate::object_model::object_adapter`.)

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::{BufMut, BytesMut};
use floe_wire::protocol::{BatchBuilder, CompressionStatus, RequestHead, COMPRESSION_THRESHOLD};
use tokio::net::UdpSocket;

use crate::endpoint::{Endpoint, Transport};
use crate::error::{Error, Result};

/// Largest datagram accepted (`Ice.UDP.RcvSize` default).
pub(crate) const MAX_DATAGRAM: usize = 65535 - 28;

/// A client-side UDP sender bound to an ephemeral port.
struct DatagramSender {
    socket: UdpSocket,
}

impl DatagramSender {
    async fn connect(addr: &str) -> Result<Arc<DatagramSender>> {
        let bind = if addr.starts_with('[') {
            "[::]:0"
        } else {
            "0.0.0.0:0"
        };
        let socket = UdpSocket::bind(bind)
            .await
            .map_err(|e| Error::Socket(e.to_string()))?;
        socket
            .connect(addr)
            .await
            .map_err(|e| Error::ConnectFailed(e.to_string()))?;
        Ok(Arc::new(DatagramSender { socket }))
    }

    async fn send(&self, frame: &[u8]) -> Result<()> {
        if frame.len() > MAX_DATAGRAM {
            return Err(floe_wire::Error::MemoryLimit {
                size: frame.len(),
                max: MAX_DATAGRAM,
            }
            .into());
        }
        self.socket
            .send(frame)
            .await
            .map(drop)
            .map_err(|e| Error::Socket(e.to_string()))
    }
}

/// The sending side of a communicator's UDP proxies: one datagram per
/// request, batches per address until flushed.
pub(crate) struct Datagrams {
    /// `Ice.Compression.Level`, for requests sent compressed.
    compression_level: u32,
    /// A sender per `host:port`.
    senders: Mutex<HashMap<String, Arc<DatagramSender>>>,
    /// Queued batch requests per `host:port`, and whether any asked for
    /// compression.
    batches: Mutex<HashMap<String, (BatchBuilder, bool)>>,
}

impl Datagrams {
    /// No sender yet; compressed requests at `compression_level`.
    pub(crate) fn new(compression_level: u32) -> Datagrams {
        Datagrams {
            compression_level,
            senders: Mutex::default(),
            batches: Mutex::default(),
        }
    }

    /// Sends (or queues, for batch datagram proxies) one datagram request
    /// (compressed when `compress` and large enough).
    pub(crate) async fn send(
        &self,
        endpoints: &[Endpoint],
        head: &RequestHead<'_>,
        params: &[u8],
        compress: bool,
        batch: bool,
    ) -> Result<()> {
        let ep = endpoints
            .iter()
            .find(|e| e.transport == Transport::Udp)
            .ok_or_else(|| Error::NoEndpoint("no udp endpoint in proxy".into()))?;
        let addr = format!("{}:{}", ep.connect_host(), ep.port);
        if batch {
            let mut batches = self.batches.lock().unwrap_or_else(|p| p.into_inner());
            let (b, c) = batches
                .entry(addr)
                .or_insert_with(|| (BatchBuilder::new(), false));
            crate::connection::limits::check_batch_push(b, head, params.len())?;
            b.push(head, params);
            *c |= compress;
            return Ok(());
        }
        let mut frame = BytesMut::with_capacity(64 + params.len());
        head.try_encode_head(&mut frame, 0, params.len(), CompressionStatus::NotSupported)?;
        frame.put_slice(params);
        self.send_frame(&addr, frame, compress).await
    }

    async fn send_frame(&self, addr: &str, frame: BytesMut, compress: bool) -> Result<()> {
        let frame = if compress && frame.len() >= COMPRESSION_THRESHOLD {
            floe_wire::protocol::compress_frame(&frame, self.compression_level)?
        } else {
            let mut f = frame;
            if compress {
                f[9] = CompressionStatus::Supported as u8;
            }
            f
        };
        let sender = {
            let map = self.senders.lock().unwrap_or_else(|p| p.into_inner());
            map.get(addr).cloned()
        };
        let sender = match sender {
            Some(s) => s,
            None => {
                let s = DatagramSender::connect(addr).await?;
                self.senders
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(addr.to_string(), s.clone());
                s
            }
        };
        sender.send(&frame).await
    }

    /// Sends every queued batch.
    pub(crate) async fn flush(&self) -> Result<()> {
        let frames: Vec<(String, BytesMut, bool)> = {
            let mut batches = self.batches.lock().unwrap_or_else(|p| p.into_inner());
            batches
                .iter_mut()
                .filter_map(|(a, (b, c))| b.take_frame().map(|f| (a.clone(), f, std::mem::take(c))))
                .collect()
        };
        for (addr, frame, compress) in frames {
            self.send_frame(&addr, frame, compress).await?;
        }
        Ok(())
    }

    /// Drops the senders (their sockets close).
    pub(crate) fn close(&self) {
        self.senders
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}
