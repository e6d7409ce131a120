//! A real `glacier2router` for the Glacier2 tests (started on 127.0.0.1 by
//! the test, killed when dropped), in front of the test's IceGrid
//! registry, with a permissive verifier and its traces in a log file.

#![allow(dead_code)]

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use floe::runtime::{Communicator, Current, DispatchError, Glacier2Session, Properties};

use super::support::{runtime, Latency, LatencyPrx, Registry};
use floe_testkit::{free_port, Peer};

/// Counts the callbacks.
pub struct CallbackI(pub Arc<AtomicUsize>);

impl Latency for CallbackI {
    async fn o(&self, _: &Current) -> Result<(), DispatchError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// The server side of a callback: `o()` on `proxy` (the router's server
/// endpoints) from a communicator without router.
pub fn call_back(proxy: &str) {
    runtime().block_on(async {
        let communicator = Communicator::new();
        let prx = LatencyPrx::unchecked_cast(communicator.string_to_proxy(proxy).expect("proxy"));
        prx.o().await.expect("callback through the router");
        communicator.destroy().await;
    });
}

/// A `glacier2router` whose locator is the test registry's.
pub struct Router {
    pub peer: Peer,
    /// The router's proxy (`Glacier2/router:<client endpoint>`).
    proxy: String,
    /// The properties a client of [`Router::proxy`] needs (IceSSL).
    client_props: Vec<(String, String)>,
    /// `Ice.LogFile`: the traces, readable while the router runs.
    log: tempfile::NamedTempFile,
}

impl Router {
    /// A router on `tcp`, user/password sessions with
    /// `Glacier2/NullPermissionsVerifier`, a 2 s session timeout.
    pub fn start(reg: &Registry) -> Router {
        let port = free_port();
        Router::start_with(
            reg,
            &format!("tcp -h 127.0.0.1 -p {port}"),
            &["--Glacier2.SessionTimeout=2".to_string()],
            Vec::new(),
        )
    }

    /// A router whose client endpoints are `client_endpoints` (the first
    /// one is [`Router::proxy`]'s), with `extra` arguments; `client_props`
    /// are what a client needs to reach it.
    pub fn start_with(
        reg: &Registry,
        client_endpoints: &str,
        extra: &[String],
        client_props: Vec<(String, String)>,
    ) -> Router {
        let log = tempfile::NamedTempFile::new().expect("log file");
        let mut cmd = Command::new("glacier2router");
        cmd.args([
            "--Glacier2.InstanceName=Glacier2".to_string(),
            format!("--Glacier2.Client.Endpoints={client_endpoints}"),
            // Gives each client a callback category.
            "--Glacier2.Server.Endpoints=tcp -h 127.0.0.1".to_string(),
            "--Glacier2.PermissionsVerifier=Glacier2/NullPermissionsVerifier".to_string(),
            "--Glacier2.Trace.Session=1".to_string(),
            "--Glacier2.Trace.RoutingTable=1".to_string(),
            format!("--Ice.Default.Locator={}", reg.locator()),
            format!("--Ice.LogFile={}", log.path().display()),
        ])
        .args(extra);
        let first = client_endpoints
            .split(':')
            .next()
            .unwrap_or(client_endpoints);
        let router = Router {
            peer: Peer::spawn("glacier2router", cmd),
            proxy: format!("Glacier2/router:{first}"),
            client_props,
            log,
        };
        // Up when the router answers.
        let deadline = Instant::now() + Duration::from_secs(30);
        runtime().block_on(async {
            let communicator = router.communicator();
            let prx = communicator
                .string_to_proxy(&router.proxy())
                .expect("router");
            while let Err(e) = prx.ice_ping().await {
                assert!(
                    Instant::now() < deadline,
                    "router not up: {e}; {}",
                    router.peer.log()
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            communicator.destroy().await;
        });
        router
    }

    /// A new communicator with the properties a client of the router needs.
    pub fn communicator(&self) -> Communicator {
        let props = Properties::new();
        for (k, v) in &self.client_props {
            props.set(k, v);
        }
        Communicator::with_properties(props)
    }

    /// A floe session with the router (user and password).
    pub async fn session(&self, communicator: &Communicator) -> Glacier2Session {
        let router = communicator.string_to_proxy(&self.proxy()).expect("router");
        Glacier2Session::create(communicator, &router, "u", "p")
            .await
            .expect("session")
    }

    /// The router's proxy, on its first client endpoint.
    pub fn proxy(&self) -> String {
        self.proxy.clone()
    }

    /// The router's traces so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }

    /// Waits until the router's log has `count` lines containing `text`.
    pub fn wait_log(&self, text: &str, count: usize) {
        let t = Instant::now();
        loop {
            let log = self.log();
            if log.matches(text).count() >= count {
                return;
            }
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "no {count} x `{text}` in:\n{log}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
