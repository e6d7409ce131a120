//! A [`Communicator`]'s outgoing connections: one per (address,
//! connection id), reused by every proxy that reaches the same server, and
//! opened once when several calls ask at the same time.

use super::*;

impl Communicator {
    /// The outgoing connection for the first reachable endpoint (only
    /// `ssl` ones when `secure`; see `ClientTransports::order`).
    pub(crate) async fn connection_for(
        &self,
        endpoints: &[Endpoint],
        secure: bool,
        connection_id: &str,
    ) -> Result<Connection> {
        if self.inner.destroyed.load(Ordering::Acquire) {
            return Err(Error::CommunicatorDestroyed);
        }
        let tcp = self.inner.transports.order(endpoints, secure);
        if tcp.is_empty() {
            let what = if secure { "ssl" } else { "tcp or ssl" };
            return Err(Error::NoEndpoint(format!("no {what} endpoint in proxy")));
        }
        let key = |e: &Endpoint| {
            let proto = if e.transport.is_secure() { "ssl " } else { "" };
            (
                format!("{proto}{}:{}", e.connect_host(), e.port),
                connection_id.to_string(),
            )
        };
        if let Some(c) = self.cached_connection(&tcp, &key) {
            return Ok(c);
        }
        let lock_key: ConnectionKey = (
            tcp.iter().map(|e| key(e).0).collect::<Vec<_>>().join(","),
            connection_id.to_string(),
        );
        let lock = self
            .inner
            .connecting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(lock_key.clone())
            .or_default()
            .clone();
        let result = {
            let _guard = lock.lock().await;
            match self.cached_connection(&tcp, &key) {
                Some(c) => Ok(c),
                None => self.connect_first(&tcp, connection_id, &key).await,
            }
        };
        // Forget the lock once nobody else waits on it.
        let mut connecting = self
            .inner
            .connecting
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if Arc::strong_count(&lock) <= 2 {
            connecting.remove(&lock_key);
        }
        result
    }

    /// Connects to the first endpoint that accepts, caching the connection.
    async fn connect_first(
        &self,
        tcp: &[&Endpoint],
        connection_id: &str,
        key: &impl Fn(&Endpoint) -> ConnectionKey,
    ) -> Result<Connection> {
        let mut last = Error::NoEndpoint("no endpoint".into());
        for &e in tcp {
            let k = key(e);
            // `ConnectTimeout` (Ice 3.8), and the endpoint's `-t` (Ice
            // 3.7) when it is shorter.
            let endpoint_timeout = (e.timeout > 0).then(|| Duration::from_millis(e.timeout as u64));
            let timeout = match (self.inner.client_config.connect_timeout, endpoint_timeout) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let addr = if e.connect_host().contains(':') {
                format!("[{}]:{}", e.connect_host(), e.port)
            } else {
                format!("{}:{}", e.connect_host(), e.port)
            };
            let connector = match self.inner.transports.connector(&self.inner.properties, e) {
                Ok(c) => c,
                Err(err) => {
                    last = err;
                    continue;
                }
            };
            match Connection::connect(
                &addr,
                &connector,
                timeout,
                connection_id.to_string(),
                self.inner.client_config.clone(),
                (*e).clone(),
            )
            .await
            {
                Ok(c) => {
                    self.inner
                        .connections
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(k, c.clone());
                    return Ok(c);
                }
                Err(err) => last = err,
            }
        }
        Err(last)
    }

    fn cached_connection(
        &self,
        endpoints: &[&Endpoint],
        key: &impl Fn(&Endpoint) -> ConnectionKey,
    ) -> Option<Connection> {
        let map = self
            .inner
            .connections
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        endpoints
            .iter()
            .filter_map(|e| map.get(&key(e)))
            .find(|c| c.is_active())
            .cloned()
    }
}
