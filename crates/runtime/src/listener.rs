//! TCP listeners of object adapters (`tcp`, `ssl`, `ws`, `wss`): binding
//! with Ice's listen backlog (`Ice.TCP.Backlog`). (The adapter's accept
//! loop is in `crate::object_model::object_adapter`.)
//!
//! A burst of connects must not overflow the listen queue: on Linux a
//! connection completed by the kernel while the accept queue is full is
//! dropped (the client believes it is connected and waits for a SYN-ACK
//! retransmission, a second or more), so the queue is as long as Ice makes
//! it, and the accept loop only accepts: each accepted socket gets its
//! ValidateConnection and its connection task at once, without waiting.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::{TcpListener, TcpSocket};

use crate::endpoint::Endpoint;
use crate::error::Result;
use crate::properties::Properties;
use crate::transport::tls::TlsServer;
use crate::transport::Acceptor;

/// A bound listener and how its accepted sockets become connections.
pub(crate) struct Listener {
    /// The listening socket.
    pub(crate) tcp: TcpListener,
    /// Plain TCP, or a TLS handshake and/or WebSocket upgrade first.
    pub(crate) acceptor: Acceptor,
    /// The endpoint it listens on (the port bound), for the connections'
    /// info.
    pub(crate) endpoint: crate::endpoint::Endpoint,
}

/// The acceptors of one adapter's endpoints: the TLS server configuration
/// is made from `IceSSL.*` once, at the first `ssl` endpoint.
#[derive(Default)]
pub(crate) struct Acceptors {
    tls: Option<Arc<TlsServer>>,
}

impl Acceptors {
    /// The acceptor for `endpoint` of the adapter `adapter`.
    pub(crate) fn get(
        &mut self,
        props: &Properties,
        adapter: &str,
        endpoint: &Endpoint,
    ) -> Result<Acceptor> {
        let tls = if endpoint.transport.is_secure() {
            Some(match &self.tls {
                Some(t) => t.clone(),
                None => self
                    .tls
                    .insert(Arc::new(TlsServer::from_properties(props, adapter)?))
                    .clone(),
            })
        } else {
            None
        };
        Ok(Acceptor {
            tls,
            ws: endpoint.transport.is_websocket(),
        })
    }
}

/// The listen backlog when `Ice.TCP.Backlog` is not set: as Ice for C++,
/// the system's `SOMAXCONN` where it has one (4096 with glibc; the kernel
/// caps it at `net.core.somaxconn`), 511 elsewhere.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) const DEFAULT_BACKLOG: u32 = libc::SOMAXCONN as u32;
/// The listen backlog when `Ice.TCP.Backlog` is not set (see the Linux
/// definition).
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) const DEFAULT_BACKLOG: u32 = 511;

/// `Ice.TCP.Backlog`: the size of the listen queue of each TCP endpoint of
/// an object adapter. A negative value asks for the system's maximum (the
/// kernel caps what `listen` is given).
pub(crate) fn backlog(props: &Properties) -> u32 {
    let v = props.get_int_or("Ice.TCP.Backlog", i64::from(DEFAULT_BACKLOG));
    if v < 0 {
        i32::MAX as u32
    } else {
        v.min(i64::from(i32::MAX)) as u32
    }
}

/// Binds a TCP listener on `host`:`port` (the first resolved address that
/// binds) with a listen queue of `backlog` connections. `SO_REUSEADDR` is
/// set on Unix, as tokio's own `TcpListener::bind` does.
pub(crate) async fn bind(host: &str, port: u16, backlog: u32) -> io::Result<TcpListener> {
    let mut last = None;
    for addr in tokio::net::lookup_host((host, port)).await? {
        match bind_addr(addr, backlog) {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{host} resolves to no address"),
        )
    }))
}

fn bind_addr(addr: SocketAddr, backlog: u32) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    #[cfg(not(windows))]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(backlog)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backlog_follows_the_property() {
        let props = Properties::new();
        assert_eq!(backlog(&props), DEFAULT_BACKLOG);
        props.set("Ice.TCP.Backlog", "16");
        assert_eq!(backlog(&props), 16);
        props.set("Ice.TCP.Backlog", "-1");
        assert_eq!(backlog(&props), i32::MAX as u32);
    }
}
