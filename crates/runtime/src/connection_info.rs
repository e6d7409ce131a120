//! [`ConnectionInfo`]: what is known about a connection and its
//! endpoints (Ice's `ConnectionInfo`, with IceSSL's and IceWS's parts).
//! A plain value, read by the connection's users, its tracing spans and
//! its metrics.

use std::net::SocketAddr;

use bytes::Bytes;

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
    /// The endpoint the connection was made to (outgoing) or accepted on
    /// (incoming, with the port bound), as Ice's `Connection::getEndpoint`:
    /// transport, host, port, timeout, compress.
    pub endpoint: Option<crate::endpoint::Endpoint>,
    /// A `ws`/`wss` connection's upgrade headers, as Ice's
    /// `WSConnectionInfo::headers`: the request's on the server side, the
    /// response's on the client side (names in lower case); empty for
    /// other transports.
    pub headers: Vec<(String, String)>,
}

/// The TLS side of a connection, as `IceSSL::ConnectionInfo` has it.
#[derive(Clone, Debug, Default)]
pub struct TlsInfo {
    /// The negotiated cipher suite (e.g. `TLS13_AES_256_GCM_SHA384`).
    pub cipher: String,
    /// The protocol version (e.g. `TLSv1_3`).
    pub protocol: String,
    /// The peer's certificate chain in DER, its own certificate first
    /// (empty when the peer sent none).
    pub peer_certificates: Vec<Bytes>,
    /// The subject of the peer's certificate (`CN=..., O=...`), if any.
    pub subject: Option<String>,
    /// Whether the peer's certificate chain was verified.
    pub verified: bool,
}
