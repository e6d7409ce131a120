//! An adapter's UDP endpoints, the receiving side (§2.7): each datagram
//! is one frame, a request or a batch, dispatched as oneway; nothing is
//! answered.

use bytes::{Bytes, BytesMut};
use floe_wire::protocol::{check, FrameCheck, Request};
use tokio::net::UdpSocket;

use super::ObjectAdapter;
use crate::connection::core::inbound::{inbound, Inbound};
use crate::datagram::MAX_DATAGRAM;
use crate::error::Result;
use crate::outcome::Dispatch;

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
