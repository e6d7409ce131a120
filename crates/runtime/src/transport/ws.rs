//! Ice's WebSocket transport (`ws`, and `wss` over TLS), with
//! tokio-tungstenite: an HTTP/1.1 upgrade asking for (client) or granting
//! (server) the `ice.zeroc.com` subprotocol, then the protocol's byte
//! stream carried in binary frames, as IceWS does.
//!
//! [`WsStream`] turns the message stream back into a byte stream for the
//! connection's stream path. Each Ice message leaves in a binary frame of
//! its own, as IceWS sends them: the writer's bytes are cut at the message
//! boundaries their protocol headers give (Ice 3.7 misreads a frame that
//! carries the end of one message and the start of the next: it closed
//! the connection with `BadMagicException` when floe coalesced oneways
//! into one frame). Frames read are concatenated, whatever their sizes. Pings are answered by tungstenite, a Close
//! frame is the end of the stream, and a text frame is a protocol error.
//! Frame and message sizes are bounded (`Ice.MessageSizeMax`, with room for
//! coalesced messages), so hostile input cannot make it allocate without
//! limit.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use futures_util::{Sink, Stream};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_tungstenite::tungstenite::handshake::server::{
    ErrorResponse, Request as HttpRequest, Response as HttpResponse,
};
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use crate::error::{Error, Result};
use floe_wire::protocol::HEADER_SIZE;

/// The WebSocket subprotocol of Ice.
pub(crate) const SUBPROTOCOL: &str = "ice.zeroc.com";

const PROTOCOL_HEADER: &str = "Sec-WebSocket-Protocol";

/// The frame and message limits for a connection whose Ice messages are
/// at most `message_size_max` bytes (0: Ice's unlimited, bounded here
/// anyway).
fn config(message_size_max: usize) -> WebSocketConfig {
    let max = if message_size_max == 0 {
        256 << 20
    } else {
        message_size_max.saturating_mul(4).max(1 << 20)
    };
    WebSocketConfig::default()
        .max_message_size(Some(max))
        .max_frame_size(Some(max))
}

/// A WebSocket connection as a byte stream.
pub(crate) struct WsStream<S> {
    ws: WebSocketStream<S>,
    /// What is left of the last binary frame read.
    pending: Bytes,
    /// Bytes written that do not make a whole message yet.
    out: BytesMut,
    /// Whether shutdown queued our Close frame.
    close_sent: bool,
}

impl<S: AsyncRead + AsyncWrite + Unpin> WsStream<S> {
    fn new(ws: WebSocketStream<S>) -> Self {
        WsStream {
            ws,
            pending: Bytes::new(),
            out: BytesMut::new(),
            close_sent: false,
        }
    }
}

fn ws_error(e: tokio_tungstenite::tungstenite::Error) -> io::Error {
    use tokio_tungstenite::tungstenite::Error as E;
    match e {
        E::Io(e) => e,
        E::ConnectionClosed | E::AlreadyClosed => io::ErrorKind::UnexpectedEof.into(),
        // The peer closed the TCP connection without a Close frame: a lost
        // connection, as on tcp.
        E::Protocol(
            tokio_tungstenite::tungstenite::error::ProtocolError::ResetWithoutClosingHandshake,
        ) => io::ErrorKind::ConnectionReset.into(),
        other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for WsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            if !self.pending.is_empty() {
                let n = self.pending.len().min(buf.remaining());
                buf.put_slice(&self.pending[..n]);
                self.pending.advance(n);
                return Poll::Ready(Ok(()));
            }
            match ready!(Pin::new(&mut self.ws).poll_next(cx)) {
                None | Some(Ok(Message::Close(_))) => return Poll::Ready(Ok(())),
                Some(Ok(Message::Binary(data))) => self.pending = data,
                Some(Ok(Message::Text(_))) => {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "a text WebSocket frame on an Ice connection",
                    )))
                }
                // Pings are answered by tungstenite.
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
                Some(Err(e)) => return Poll::Ready(Err(ws_error(e))),
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for WsStream<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let len: usize = bufs.iter().map(|b| b.len()).sum();
        if len == 0 {
            return Poll::Ready(Ok(0));
        }
        ready!(Pin::new(&mut self.ws).poll_ready(cx)).map_err(ws_error)?;
        let this = &mut *self;
        for b in bufs {
            this.out.extend_from_slice(b);
        }
        // One frame per whole message (tungstenite queues each; the flush
        // writes them).
        while let Some(size) = message_size(&this.out) {
            let frame = this.out.split_to(size).freeze();
            Pin::new(&mut this.ws)
                .start_send(Message::Binary(frame))
                .map_err(ws_error)?;
        }
        Poll::Ready(Ok(len))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.ws).poll_flush(cx).map_err(ws_error)
    }

    /// Closes with status 1000 (normal closure), as IceWS does. A Close
    /// frame without a status reads as 1005 in a browser, which Ice for
    /// JavaScript reports as a `SocketException` instead of the
    /// `ConnectionLostException` of a connection the server closed.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if !self.close_sent {
            // Already closed or failed: poll_close below says so.
            if ready!(Pin::new(&mut self.ws).poll_ready(cx)).is_ok() {
                let normal = CloseFrame {
                    code: CloseCode::Normal,
                    reason: "".into(),
                };
                let _ = Pin::new(&mut self.ws).start_send(Message::Close(Some(normal)));
            }
            self.close_sent = true;
        }
        Pin::new(&mut self.ws).poll_close(cx).map_err(ws_error)
    }
}

/// The size of the whole protocol message at the start of `out`, once all
/// of it is there; everything buffered when it does not start with a
/// protocol header (never the case for what the connection writes).
fn message_size(out: &[u8]) -> Option<usize> {
    if out.is_empty() {
        return None;
    }
    if out.len() < HEADER_SIZE {
        return (out[..4.min(out.len())] != b"IceP"[..4.min(out.len())]).then_some(out.len());
    }
    let size = i32::from_le_bytes([out[10], out[11], out[12], out[13]]);
    match usize::try_from(size) {
        Ok(size) if out[..4] == *b"IceP" && size >= HEADER_SIZE => {
            (out.len() >= size).then_some(size)
        }
        _ => Some(out.len()),
    }
}

fn handshake_error(e: tokio_tungstenite::tungstenite::Error) -> Error {
    use tokio_tungstenite::tungstenite::Error as E;
    match e {
        E::Io(e) => Error::from_io(&e),
        other => Error::ConnectionLost(format!("WebSocket handshake failed: {other}")),
    }
}

/// The client's upgrade over `stream` to `host`:`port` for `resource`.
pub(crate) async fn connect<S>(
    stream: S,
    host: &str,
    port: u16,
    resource: &str,
    message_size_max: usize,
) -> Result<(WsStream<S>, Vec<(String, String)>)>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    let resource = if resource.starts_with('/') {
        resource.to_string()
    } else {
        format!("/{resource}")
    };
    let url = format!("ws://{host}:{port}{resource}");
    let mut request = url
        .as_str()
        .into_client_request()
        .map_err(|e| Error::Initialization(format!("bad WebSocket address `{url}`: {e}")))?;
    request
        .headers_mut()
        .insert(PROTOCOL_HEADER, HeaderValue::from_static(SUBPROTOCOL));
    let (ws, response) = tokio_tungstenite::client_async_with_config(
        request,
        stream,
        Some(config(message_size_max)),
    )
    .await
    .map_err(handshake_error)?;
    let granted = response
        .headers()
        .get(PROTOCOL_HEADER)
        .and_then(|v| v.to_str().ok());
    if granted != Some(SUBPROTOCOL) {
        return Err(Error::ConnectionLost(format!(
            "the WebSocket server did not accept the {SUBPROTOCOL} subprotocol"
        )));
    }
    Ok((WsStream::new(ws), header_list(response.headers())))
}

/// The headers of an upgrade request or response, as Ice's
/// `WSConnectionInfo::headers` has them (names in lower case).
fn header_list(headers: &tokio_tungstenite::tungstenite::http::HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// The upgrade's response: the `ice.zeroc.com` subprotocol granted, or a
/// 400 when the request does not offer it.
// The signature is tungstenite's callback's.
#[allow(clippy::result_large_err)]
fn grant_subprotocol(
    request: &HttpRequest,
    mut response: HttpResponse,
) -> std::result::Result<HttpResponse, ErrorResponse> {
    let offered = request
        .headers()
        .get_all(PROTOCOL_HEADER)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim() == SUBPROTOCOL);
    if !offered {
        let mut refusal = ErrorResponse::new(Some(format!(
            "this Ice server speaks the {SUBPROTOCOL} WebSocket subprotocol"
        )));
        *refusal.status_mut() = tokio_tungstenite::tungstenite::http::StatusCode::BAD_REQUEST;
        return Err(refusal);
    }
    response
        .headers_mut()
        .insert(PROTOCOL_HEADER, HeaderValue::from_static(SUBPROTOCOL));
    Ok(response)
}

/// The server's side of the upgrade: a request must offer the
/// `ice.zeroc.com` subprotocol, which the response grants.
pub(crate) async fn accept<S>(
    stream: S,
    message_size_max: usize,
) -> Result<(WsStream<S>, Vec<(String, String)>)>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    // The request's headers, for the connection's info.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    #[allow(clippy::result_large_err)]
    let callback = move |request: &HttpRequest, response: HttpResponse| {
        *record.lock().unwrap_or_else(|p| p.into_inner()) = header_list(request.headers());
        grant_subprotocol(request, response)
    };
    let ws = tokio_tungstenite::accept_hdr_async_with_config(
        stream,
        callback,
        Some(config(message_size_max)),
    )
    .await
    .map_err(handshake_error)?;
    let headers = std::mem::take(&mut *seen.lock().unwrap_or_else(|p| p.into_inner()));
    Ok((WsStream::new(ws), headers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_cut_at_message_boundaries() {
        let mut m = b"IceP\x01\x00\x01\x00\x00\x00".to_vec();
        m.extend_from_slice(&20i32.to_le_bytes());
        m.extend_from_slice(&[7; 6]);
        assert_eq!(message_size(&m), Some(20));
        assert_eq!(message_size(&m[..19]), None);
        assert_eq!(message_size(&m[..3]), None);
        let mut two = m.clone();
        two.extend_from_slice(&m[..5]);
        assert_eq!(message_size(&two), Some(20));
        assert_eq!(message_size(b"GET /"), Some(5));
        assert_eq!(message_size(&[]), None);
    }
}
