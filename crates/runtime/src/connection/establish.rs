//! Making a [`Connection`]: connecting (TCP, then the transport's
//! handshake, then the server's ValidateConnection, §1.3) and accepting.

use super::*;
use crate::endpoint::Endpoint;
use crate::transport::{Acceptor, Connector, Established};

impl Connection {
    /// Connects to `addr` over the transport `connector` sets up, waits
    /// for the server's ValidateConnection (§1.3) and starts the
    /// connection task. The timeout covers the TLS handshake too.
    pub(crate) async fn connect(
        addr: &str,
        connector: &Connector,
        timeout: Option<Duration>,
        connection_id: String,
        config: ConnectionConfig,
        endpoint: Endpoint,
    ) -> Result<Connection> {
        let metrics = config.metrics.clone();
        if let Some(admin) = &metrics {
            lookup_observed(admin, &endpoint, addr).await;
        }
        let observer = metrics
            .as_ref()
            .and_then(|admin| crate::metrics::observe::establishment(admin, &endpoint, addr));
        let establish = async {
            let stream = TcpStream::connect(addr)
                .await
                .map_err(|e| match Error::from_io(&e) {
                    Error::Socket(s) => Error::ConnectFailed(s),
                    other => other,
                })?;
            socket_options(&stream, &config)?;
            // On the heap: a WebSocket handshake's state is large, and
            // would otherwise sit in every caller's future.
            let established =
                Box::pin(connector.establish(stream, config.message_size_max)).await?;
            let mut head = [0u8; HEADER_SIZE];
            read_validation(&established.io, &mut head).await?;
            let h = Header::parse(&head, 0)?;
            if h.message_type != floe_wire::protocol::MessageType::ValidateConnection {
                return Err(floe_wire::Error::ConnectionNotValidated(h.message_type as u8).into());
            }
            if h.size != HEADER_SIZE {
                return Err(floe_wire::Error::IllegalMessageSize(h.size as i64).into());
            }
            Ok::<_, Error>(established)
        };
        let established = match timeout {
            Some(t) => tokio::time::timeout(t, establish)
                .await
                .unwrap_or(Err(Error::ConnectTimeout)),
            None => establish.await,
        };
        if let (Some(o), Err(e)) = (&observer, &established) {
            o.failed(e.ice_name());
        }
        drop(observer);
        let established = established?;
        let info = ConnectionInfo {
            local: established.local,
            remote: established.remote,
            incoming: false,
            adapter_name: String::new(),
            connection_id,
            transport: established.transport,
            id: crate::spans::next_connection_id(),
            tls: established.tls,
            endpoint: Some(endpoint),
            headers: established.headers,
        };
        event_if!(config.trace.network >= 1, info, debug, remote = ?info.remote, "connection established");
        // The server's ValidateConnection, read before the task, is not in
        // the connection's `receivedBytes`: as in Ice, they start once the
        // connection is validated.
        Self::start(established.io, info, config, None, false)
    }

    /// Takes an accepted TCP socket: sends ValidateConnection first
    /// (§1.3) and starts the connection task dispatching to `dispatcher`.
    /// Never waits.
    pub(crate) fn accept_tcp(
        stream: TcpStream,
        dispatcher: Arc<dyn Dispatcher>,
        config: ConnectionConfig,
        endpoint: Endpoint,
    ) -> Result<Connection> {
        socket_options(&stream, &config)?;
        Self::accepted(Established::tcp(stream), dispatcher, config, endpoint)
    }

    /// Takes an accepted socket and sets up the transport `acceptor` says
    /// (a TLS handshake for `ssl`, bounded by `ConnectTimeout`), then
    /// continues as [`Connection::accept_tcp`].
    pub(crate) async fn accept(
        stream: TcpStream,
        acceptor: &Acceptor,
        dispatcher: Arc<dyn Dispatcher>,
        config: ConnectionConfig,
        endpoint: Endpoint,
    ) -> Result<Connection> {
        socket_options(&stream, &config)?;
        // A client that never finishes its handshake is dropped after the
        // connect timeout (`<Adapter>.Connection.ConnectTimeout`, 10 s).
        let establish = Box::pin(acceptor.establish(stream, config.message_size_max));
        let established = match config.connect_timeout {
            Some(limit) => tokio::time::timeout(limit, establish)
                .await
                .map_err(|_| Error::ConnectTimeout)??,
            None => establish.await?,
        };
        Self::accepted(established, dispatcher, config, endpoint)
    }

    fn accepted(
        established: Established,
        dispatcher: Arc<dyn Dispatcher>,
        config: ConnectionConfig,
        endpoint: Endpoint,
    ) -> Result<Connection> {
        let info = ConnectionInfo {
            local: established.local,
            remote: established.remote,
            incoming: true,
            adapter_name: dispatcher.name().to_string(),
            connection_id: String::new(),
            transport: established.transport,
            id: crate::spans::next_connection_id(),
            tls: established.tls,
            endpoint: Some(endpoint),
            headers: established.headers,
        };
        event_if!(
            config.trace.network >= 1,
            info,
            debug,
            remote = ?info.remote,
            adapter = dispatcher.name(),
            "connection accepted"
        );
        Self::start(established.io, info, config, Some(dispatcher), true)
    }
}

/// Reads the server's first frame header (ValidateConnection) from a
/// fresh connection.
async fn read_validation(io: &Io, head: &mut [u8; HEADER_SIZE]) -> Result<()> {
    let lost = |e: std::io::Error| Error::ConnectionLost(e.to_string());
    match io {
        Io::Tcp(s) => {
            let mut filled = 0;
            while filled < HEADER_SIZE {
                s.readable().await.map_err(lost)?;
                match s.try_read(&mut head[filled..]) {
                    Ok(0) => {
                        return Err(Error::ConnectionLost(
                            "peer closed the connection before validating it".into(),
                        ))
                    }
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(lost(e)),
                }
            }
            Ok(())
        }
        Io::Stream(s) => {
            // Into a buffer of exactly the header's size: nothing past the
            // header is taken from the stream.
            let mut filled = BytesMut::with_capacity(HEADER_SIZE);
            while filled.len() < HEADER_SIZE {
                s.lend_read_buf(filled);
                let r = std::future::poll_fn(|cx| s.poll_read(cx)).await;
                filled = s.take_read_buf();
                match r {
                    Ok((0, _)) => {
                        return Err(Error::ConnectionLost(
                            "peer closed the connection before validating it".into(),
                        ))
                    }
                    Ok(_) => {}
                    Err(e) => return Err(lost(e)),
                }
            }
            head.copy_from_slice(&filled[..HEADER_SIZE]);
            Ok(())
        }
    }
}

/// With metrics on, resolves the host name of `endpoint` (not an IP
/// address) as the `EndpointLookup` map observes it; the connection
/// resolves it again (from the system's cache). Failures are counted as
/// `::Ice::DNSException`.
async fn lookup_observed(admin: &crate::metrics::MetricsAdmin, endpoint: &Endpoint, addr: &str) {
    if endpoint.host.parse::<std::net::IpAddr>().is_ok() || endpoint.host.is_empty() {
        return;
    }
    let Some(observer) = crate::metrics::observe::endpoint_lookup(admin, endpoint) else {
        return;
    };
    if tokio::net::lookup_host(addr).await.is_err() {
        observer.failed("::Ice::DNSException");
    }
}

/// The options every TCP socket of a connection gets, connected or
/// accepted, before any byte moves: Nagle off, and the kernel buffers of
/// `Ice.TCP.RcvSize` / `Ice.TCP.SndSize`.
fn socket_options(stream: &TcpStream, config: &ConnectionConfig) -> Result<()> {
    config.socket_buffers.apply(stream);
    stream
        .set_nodelay(true)
        .map_err(|e| Error::Socket(e.to_string()))
}
