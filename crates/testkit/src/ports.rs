//! Ports and endpoints on 127.0.0.1, where every test peer listens.

use std::net::TcpListener;

/// A TCP port on 127.0.0.1 that was free a moment ago.
///
/// Prefer letting the peer bind port 0 and report its port (the servers of
/// the suites print `READY <port>`); use this only when a port must be
/// chosen up front.
///
/// # Panics
///
/// When 127.0.0.1 cannot be bound at all.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0 for a free port");
    listener
        .local_addr()
        .expect("local_addr of a bound listener")
        .port()
}

/// The `tcp` endpoint string for a port on 127.0.0.1.
pub fn endpoint(port: u16) -> String {
    format!("tcp -h 127.0.0.1 -p {port}")
}
