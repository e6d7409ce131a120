//! Transports under a connection: what its frames travel over.
//!
//! - **`tcp`** is the fast path: the connection's writer sends frames with
//!   direct vectored `sendmsg` calls on the socket, and its reader reads
//!   straight into frame buffers with `recv`, setting `SO_RCVLOWAT` for
//!   large oneways (see `connection/writer/` and `connection/read.rs`).
//! - **`ssl`, `ws` and `wss`** take the stream path: the socket is wrapped
//!   in a stream (TLS with `tokio-rustls`, a WebSocket with
//!   tokio-tungstenite, or a WebSocket over TLS), driven through
//!   `AsyncRead` / `AsyncWrite` ([`stream::StreamIo`]); vectored writes
//!   where the stream takes them.
//!
//! [`Io`] is what a connection holds; [`Connector`] and [`Acceptor`] make
//! one from a freshly connected or accepted TCP socket.

pub(crate) mod stream;
pub(crate) mod tls;
mod verify;
pub(crate) mod ws;

use std::sync::Arc;

use tokio::net::TcpStream;

use crate::connection_info::TlsInfo;
use crate::error::Result;
use stream::StreamIo;
use tls::{TlsClient, TlsServer};

/// A connection's transport.
pub(crate) enum Io {
    /// A plain TCP socket (the fast path).
    Tcp(Arc<TcpStream>),
    /// A stream over a TCP socket (TLS).
    Stream(Arc<StreamIo>),
}

/// How an outgoing connection is made over its TCP socket.
#[derive(Clone)]
pub(crate) struct Connector {
    /// `ssl`, `wss`: a TLS handshake first.
    tls: Option<Arc<TlsClient>>,
    /// `ws`, `wss`: a WebSocket upgrade for this resource.
    ws: Option<String>,
    /// The endpoint's host (checked with `IceSSL.CheckCertName`, sent in
    /// the upgrade) and port.
    host: String,
    port: u16,
}

/// How an accepted TCP socket becomes a connection.
#[derive(Clone)]
pub(crate) struct Acceptor {
    /// `ssl`, `wss`: a TLS handshake first.
    pub(crate) tls: Option<Arc<TlsServer>>,
    /// `ws`, `wss`: then a WebSocket upgrade.
    pub(crate) ws: bool,
}

impl Acceptor {
    /// Whether accepted sockets are used as they are (plain `tcp`).
    pub(crate) fn is_plain(&self) -> bool {
        self.tls.is_none() && !self.ws
    }
}

/// An established transport: the connection's I/O and what is known of
/// the peer's security.
pub(crate) struct Established {
    pub(crate) io: Io,
    /// `tcp`, `ssl`, `ws` or `wss`.
    pub(crate) transport: &'static str,
    pub(crate) tls: Option<TlsInfo>,
    pub(crate) local: Option<std::net::SocketAddr>,
    pub(crate) remote: Option<std::net::SocketAddr>,
    /// The WebSocket upgrade's headers (the request's on the server side,
    /// the response's on the client side); empty for other transports.
    pub(crate) headers: Vec<(String, String)>,
}

impl Established {
    /// A plain TCP connection.
    pub(crate) fn tcp(stream: TcpStream) -> Established {
        Established {
            local: stream.local_addr().ok(),
            remote: stream.peer_addr().ok(),
            io: Io::Tcp(Arc::new(stream)),
            transport: "tcp",
            headers: Vec::new(),
            tls: None,
        }
    }
}

impl Connector {
    /// Plain `tcp`.
    pub(crate) fn is_plain(&self) -> bool {
        self.tls.is_none() && self.ws.is_none()
    }

    /// Sets up the transport over a connected socket.
    pub(crate) async fn establish(
        &self,
        stream: TcpStream,
        message_size_max: usize,
    ) -> Result<Established> {
        if self.is_plain() {
            return Ok(Established::tcp(stream));
        }
        let local = stream.local_addr().ok();
        let remote = stream.peer_addr().ok();
        let (io, tls, transport, headers) = match (&self.tls, &self.ws) {
            (Some(client), None) => {
                let (s, info) = client.connect(stream, &self.host).await?;
                (StreamIo::new(s), Some(info), "ssl", Vec::new())
            }
            (Some(client), Some(resource)) => {
                let (s, info) = client.connect(stream, &self.host).await?;
                let (s, headers) =
                    ws::connect(s, &self.host, self.port, resource, message_size_max).await?;
                (StreamIo::new(s), Some(info), "wss", headers)
            }
            (None, Some(resource)) => {
                let (s, headers) =
                    ws::connect(stream, &self.host, self.port, resource, message_size_max).await?;
                (StreamIo::new(s), None, "ws", headers)
            }
            (None, None) => unreachable!("plain tcp returned above"),
        };
        Ok(Established {
            io: Io::Stream(Arc::new(io)),
            transport,
            tls,
            local,
            remote,
            headers,
        })
    }
}

impl Acceptor {
    /// Sets up the transport over an accepted socket.
    pub(crate) async fn establish(
        &self,
        stream: TcpStream,
        message_size_max: usize,
    ) -> Result<Established> {
        let local = stream.local_addr().ok();
        let remote = stream.peer_addr().ok();
        let (io, tls, transport, headers) = match (&self.tls, self.ws) {
            (None, false) => return Ok(Established::tcp(stream)),
            (Some(server), false) => {
                let (s, info) = server.accept(stream).await?;
                (StreamIo::new(s), Some(info), "ssl", Vec::new())
            }
            (Some(server), true) => {
                let (s, info) = server.accept(stream).await?;
                let (s, headers) = ws::accept(s, message_size_max).await?;
                (StreamIo::new(s), Some(info), "wss", headers)
            }
            (None, true) => {
                let (s, headers) = ws::accept(stream, message_size_max).await?;
                (StreamIo::new(s), None, "ws", headers)
            }
        };
        Ok(Established {
            io: Io::Stream(Arc::new(io)),
            transport,
            tls,
            local,
            remote,
            headers,
        })
    }
}

/// A communicator's outgoing side of the transports: the TLS client
/// configuration (made from `IceSSL.*` at the first `ssl` connection) and
/// the endpoint order (`Ice.Default.PreferSecure`).
pub(crate) struct ClientTransports {
    tls: std::sync::OnceLock<Arc<TlsClient>>,
    prefer_secure: bool,
}

impl ClientTransports {
    /// The settings of `props`.
    pub(crate) fn new(props: &crate::properties::Properties) -> ClientTransports {
        ClientTransports {
            tls: std::sync::OnceLock::new(),
            prefer_secure: props.get_int_or("Ice.Default.PreferSecure", 0) > 0,
        }
    }

    /// How to connect to `endpoint`.
    pub(crate) fn connector(
        &self,
        props: &crate::properties::Properties,
        endpoint: &crate::endpoint::Endpoint,
    ) -> Result<Connector> {
        let tls = if endpoint.transport.is_secure() {
            Some(match self.tls.get() {
                Some(c) => c.clone(),
                None => {
                    let c = Arc::new(TlsClient::from_properties(props)?);
                    self.tls.get_or_init(|| c).clone()
                }
            })
        } else {
            None
        };
        Ok(Connector {
            tls,
            ws: endpoint
                .transport
                .is_websocket()
                .then(|| endpoint.resource.clone()),
            host: endpoint.connect_host().to_string(),
            port: endpoint.port,
        })
    }

    /// The connection-oriented endpoints of a proxy in the order they are
    /// tried: only secure ones for a secure proxy (`ice_secure`),
    /// otherwise the non-secure ones first, or the secure ones first with
    /// `Ice.Default.PreferSecure=1` (the list's order kept within each
    /// group).
    pub(crate) fn order<'a>(
        &self,
        endpoints: &'a [crate::endpoint::Endpoint],
        secure: bool,
    ) -> Vec<&'a crate::endpoint::Endpoint> {
        let mut list: Vec<&crate::endpoint::Endpoint> = endpoints
            .iter()
            .filter(|e| e.transport.is_stream() && (!secure || e.transport.is_secure()))
            .collect();
        let prefer = self.prefer_secure;
        list.sort_by_key(|e| e.transport.is_secure() != prefer);
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::Endpoint;
    use crate::properties::Properties;

    #[test]
    fn endpoint_order_follows_secure_and_prefer_secure() {
        let eps = vec![
            Endpoint::ssl("h", 1),
            Endpoint::udp("h", 2),
            Endpoint::tcp("h", 3),
            Endpoint::ssl("h", 4),
        ];
        let ports = |list: Vec<&Endpoint>| list.iter().map(|e| e.port).collect::<Vec<_>>();
        let props = Properties::new();
        let t = ClientTransports::new(&props);
        assert_eq!(ports(t.order(&eps, false)), [3, 1, 4]);
        assert_eq!(ports(t.order(&eps, true)), [1, 4]);
        props.set("Ice.Default.PreferSecure", "1");
        let t = ClientTransports::new(&props);
        assert_eq!(ports(t.order(&eps, false)), [1, 4, 3]);
    }
}
