//! An adapter's accept loop: each socket a listener accepts becomes a
//! connection dispatching to the adapter, without waiting for the peer.
//!
//! A burst of connects must not overflow the listen queue (see
//! `crate::listener`), so the loop only accepts: each accepted socket
//! gets its ValidateConnection and its connection task at once.

use super::ObjectAdapter;
use crate::connection::Connection;
use crate::listener::Listener;

/// Accepts connections on `listener` for `adapter` until the task is
/// aborted (adapter deactivation). While the adapter holds, new clients
/// wait in the listen queue, as with Ice's `hold`. With
/// `<Adapter>.MaxConnections` (Ice 3.8) set above 0, a socket accepted
/// while the adapter has that many connections is closed at once.
pub(crate) async fn accept_loop(listener: Listener, adapter: ObjectAdapter) {
    let Listener {
        tcp: listener,
        acceptor,
        endpoint,
    } = listener;
    let max_connections = adapter
        .communicator()
        .map(|c| {
            c.properties()
                .get_int_or(&format!("{}.MaxConnections", adapter.name()), 0)
        })
        .ok()
        .filter(|&n| n > 0)
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    loop {
        adapter.wait_until_released().await;
        // `accept` is cancel-safe: a `hold` while it waits stops accepting.
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = adapter.wait_until_held() => continue,
        };
        match accepted {
            Ok((stream, _)) => {
                if !adapter.is_active() && !adapter.is_holding() {
                    continue;
                }
                if max_connections.is_some_and(|max| adapter.connection_count() >= max) {
                    // Dropped: the client sees its connection closed before
                    // validation, as Ice 3.8 closes it.
                    tracing::debug!(
                        "{}: refusing a connection, MaxConnections reached",
                        adapter.name()
                    );
                    continue;
                }
                // Sends ValidateConnection (a non-blocking write into an
                // empty socket buffer) and spawns the connection task:
                // nothing here waits for the peer. A TLS handshake or a
                // WebSocket upgrade runs in a task of its own, so that a
                // slow or silent client holds up nobody else.
                match acceptor.is_plain() {
                    true => {
                        let config = adapter.inner.config.clone();
                        let endpoint = endpoint.clone();
                        match Connection::accept_tcp(stream, adapter.dispatcher(), config, endpoint)
                        {
                            Ok(conn) => adapter.track(conn),
                            Err(e) => tracing::debug!("accept failed: {e}"),
                        }
                    }
                    false => {
                        let adapter = adapter.clone();
                        let acceptor = acceptor.clone();
                        let endpoint = endpoint.clone();
                        tokio::spawn(async move {
                            let config = adapter.inner.config.clone();
                            let accepting = Connection::accept(
                                stream,
                                &acceptor,
                                adapter.dispatcher(),
                                config,
                                endpoint,
                            );
                            match accepting.await {
                                Ok(conn) => adapter.track(conn),
                                Err(e) => tracing::debug!("accept failed: {e}"),
                            }
                        });
                    }
                }
            }
            Err(e) => {
                // EMFILE and friends: back off instead of spinning.
                tracing::warn!("accept error on {}: {e}", adapter.name());
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
    }
}
