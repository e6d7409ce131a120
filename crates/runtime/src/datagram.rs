//! UDP endpoints (§2.7): one frame per datagram, requestId 0 or a
//! BatchRequest, no validation, no replies.

use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use floe_wire::protocol::{
    check, BatchBuilder, CompressionStatus, FrameCheck, Request, RequestHead, COMPRESSION_THRESHOLD,
};
use tokio::net::UdpSocket;

use crate::communicator::Communicator;
use crate::connection::core::inbound::{inbound, Inbound};
use crate::endpoint::{Endpoint, Transport};
use crate::error::{Error, Result};
use crate::object_adapter::ObjectAdapter;
use crate::servant::Dispatch;

/// Largest datagram accepted (`Ice.UDP.RcvSize` default).
const MAX_DATAGRAM: usize = 65535 - 28;

/// Receives datagrams for `adapter` until the task is aborted.
pub(crate) async fn receive_loop(socket: UdpSocket, adapter: ObjectAdapter) {
    let mut buf = BytesMut::with_capacity(MAX_DATAGRAM);
    loop {
        buf.clear();
        buf.reserve(MAX_DATAGRAM);
        match socket.recv_buf_from(&mut buf).await {
            Ok((_, from)) => {
                let frame = buf.split().freeze();
                if let Err(e) = handle_datagram(frame, &adapter) {
                    // A bad datagram is dropped; the socket keeps serving.
                    tracing::warn!(%from, "dropping bad datagram: {e}");
                }
            }
            Err(e) => {
                tracing::debug!("udp receive error: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        }
    }
}

fn handle_datagram(frame: Bytes, adapter: &ObjectAdapter) -> Result<()> {
    let max = adapter.inner.config.message_size_max;
    match check(&frame, max)? {
        FrameCheck::Complete { len } if len == frame.len() => {}
        _ => return Err(floe_wire::Error::IllegalMessageSize(frame.len() as i64).into()),
    }
    match inbound(frame, max)?.1 {
        Inbound::Request { request, .. } => dispatch_oneway(request, adapter),
        Inbound::Batch(b) => {
            for r in b.iter() {
                dispatch_oneway(r?, adapter);
            }
        }
        // Nothing is answered over UDP; replies and the rest are ignored.
        _ => {}
    }
    Ok(())
}

/// Dispatches a datagram request by the adapter's rules
/// ([`ObjectAdapter::dispatch_request`]); its result has nowhere to go.
/// Datagrams that arrive while the adapter is not active are dropped (an
/// adapter on hold would otherwise queue without bound).
fn dispatch_oneway(mut request: Request, adapter: &ObjectAdapter) {
    if !adapter.is_active() {
        return;
    }
    // Oneway, whatever the sender wrote.
    request.request_id = 0;
    match adapter.dispatch_request(request, None) {
        Dispatch::Ready(Err(e)) => tracing::debug!("datagram dispatch failed: {e}"),
        Dispatch::Ready(Ok(_)) => {}
        Dispatch::Pending(f) => {
            tokio::spawn(async move {
                if let Err(e) = f.await {
                    tracing::debug!("datagram dispatch failed: {e}");
                }
            });
        }
    }
}

/// A client-side UDP sender bound to an ephemeral port.
pub(crate) struct DatagramSender {
    socket: UdpSocket,
}

impl DatagramSender {
    pub(crate) async fn connect(addr: &str) -> Result<Arc<DatagramSender>> {
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

    pub(crate) async fn send(&self, frame: &[u8]) -> Result<()> {
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

/// The sending side of UDP proxies: one datagram per request, batches
/// per address until flushed.
impl Communicator {
    /// Sends (or queues, for batch datagram proxies) one datagram request.
    pub(crate) async fn send_datagram(
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
            let mut batches = self
                .inner
                .datagram_batches
                .lock()
                .unwrap_or_else(|p| p.into_inner());
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
        self.send_datagram_frame(&addr, frame, compress).await
    }

    async fn send_datagram_frame(&self, addr: &str, frame: BytesMut, compress: bool) -> Result<()> {
        let frame = if compress && frame.len() >= COMPRESSION_THRESHOLD {
            floe_wire::protocol::compress_frame(&frame, self.inner.client_config.compression_level)?
        } else {
            let mut f = frame;
            if compress {
                f[9] = CompressionStatus::Supported as u8;
            }
            f
        };
        let sender = {
            let map = self
                .inner
                .datagram
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            map.get(addr).cloned()
        };
        let sender = match sender {
            Some(s) => s,
            None => {
                let s = DatagramSender::connect(addr).await?;
                self.inner
                    .datagram
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(addr.to_string(), s.clone());
                s
            }
        };
        sender.send(&frame).await
    }

    pub(crate) async fn flush_datagram_batches(&self) -> Result<()> {
        let frames: Vec<(String, BytesMut, bool)> = {
            let mut batches = self
                .inner
                .datagram_batches
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            batches
                .iter_mut()
                .filter_map(|(a, (b, c))| b.take_frame().map(|f| (a.clone(), f, std::mem::take(c))))
                .collect()
        };
        for (addr, frame, compress) in frames {
            self.send_datagram_frame(&addr, frame, compress).await?;
        }
        Ok(())
    }
}
