//! Transports under a connection: what its frames travel over.
//!
//! - **`tcp`** is the fast path: the connection's writer sends frames with
//!   direct vectored `sendmsg` calls on the socket, and its reader reads
//!   straight into frame buffers with `recv`, setting `SO_RCVLOWAT` for
//!   large oneways (see `connection/writer.rs` and `connection/read.rs`).
//! - **`ssl`** (and later `ws`/`wss`) is the stream path: the socket is
//!   wrapped in a stream (`tokio-rustls`), driven through `AsyncRead` /
//!   `AsyncWrite` ([`stream::StreamIo`]); vectored writes where the stream
//!   takes them.
//!
//! [`Io`] is what a connection holds; [`Connector`] and [`Acceptor`] make
//! one from a freshly connected or accepted TCP socket.

pub(crate) mod stream;
pub(crate) mod tls;
mod verify;

use std::sync::Arc;

use tokio::net::TcpStream;

use crate::error::Result;
use stream::StreamIo;
use tls::{TlsClient, TlsInfo, TlsServer};

/// A connection's transport.
pub(crate) enum Io {
    /// A plain TCP socket (the fast path).
    Tcp(Arc<TcpStream>),
    /// A stream over a TCP socket (TLS).
    Stream(Arc<StreamIo>),
}

/// How an outgoing connection is made over its TCP socket.
#[derive(Clone)]
pub(crate) enum Connector {
    /// Plain `tcp`.
    Tcp,
    /// `ssl`: a TLS handshake to `host` first.
    Tls(Arc<TlsClient>, String),
}

/// How an accepted TCP socket becomes a connection.
#[derive(Clone)]
pub(crate) enum Acceptor {
    /// Plain `tcp`.
    Tcp,
    /// `ssl`: a TLS handshake first.
    Tls(Arc<TlsServer>),
}

/// An established transport: the connection's I/O and what is known of
/// the peer's security.
pub(crate) struct Established {
    pub(crate) io: Io,
    pub(crate) tls: Option<TlsInfo>,
    pub(crate) local: Option<std::net::SocketAddr>,
    pub(crate) remote: Option<std::net::SocketAddr>,
}

impl Established {
    /// A plain TCP connection.
    pub(crate) fn tcp(stream: TcpStream) -> Established {
        Established {
            local: stream.local_addr().ok(),
            remote: stream.peer_addr().ok(),
            io: Io::Tcp(Arc::new(stream)),
            tls: None,
        }
    }
}

impl Connector {
    /// Sets up the transport over a connected socket.
    pub(crate) async fn establish(&self, stream: TcpStream) -> Result<Established> {
        match self {
            Connector::Tcp => Ok(Established::tcp(stream)),
            Connector::Tls(client, host) => {
                let local = stream.local_addr().ok();
                let remote = stream.peer_addr().ok();
                let mut e = Established::tls_from(client.connect(stream, host).await?);
                e.local = local;
                e.remote = remote;
                Ok(e)
            }
        }
    }
}

impl Acceptor {
    /// Sets up the transport over an accepted socket.
    pub(crate) async fn establish(&self, stream: TcpStream) -> Result<Established> {
        match self {
            Acceptor::Tcp => Ok(Established::tcp(stream)),
            Acceptor::Tls(server) => {
                let local = stream.local_addr().ok();
                let remote = stream.peer_addr().ok();
                let mut e = Established::tls_from(server.accept(stream).await?);
                e.local = local;
                e.remote = remote;
                Ok(e)
            }
        }
    }
}

impl Established {
    fn tls_from((stream, info): (tls::TlsStream, TlsInfo)) -> Established {
        Established {
            io: Io::Stream(Arc::new(StreamIo::new(stream))),
            tls: Some(info),
            local: None,
            remote: None,
        }
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
        if !endpoint.transport.is_secure() {
            return Ok(Connector::Tcp);
        }
        let client = match self.tls.get() {
            Some(c) => c.clone(),
            None => {
                let c = Arc::new(TlsClient::from_properties(props)?);
                self.tls.get_or_init(|| c).clone()
            }
        };
        Ok(Connector::Tls(client, endpoint.connect_host().to_string()))
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
