//! floe through a real Glacier2 router (Ice 3.7 `glacier2router`, with a
//! permissive verifier, started on 127.0.0.1 by the test), in front of a
//! real IceGrid registry that resolves indirect proxies for it. A Python
//! Ice client runs the checks first, as the reference:
//! - a session is created, a call routed through it (to a direct proxy and
//!   to an indirect `a@<adapter>` the router resolves), the session
//!   destroyed (the router's traces show each step);
//! - a session outlives the router's session timeout while the client
//!   keeps it alive;
//! - a server calls the client back through the router (an object adapter
//!   with the router, in the client's callback category).

#[path = "../crates/runtime/tests/interop/harness.rs"]
mod harness;
#[path = "grid/support.rs"]
mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use floe::runtime::{Communicator, Current, DispatchError, Glacier2Session, Identity};
use harness::{free_port, Peer, PYTHON, READY_TIMEOUT};
use support::*;

/// Counts the callbacks.
struct CallbackI(Arc<AtomicUsize>);

impl Latency for CallbackI {
    async fn o(&self, _: &Current) -> Result<(), DispatchError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// The server side of a callback: `o()` on `proxy` (the router's server
/// endpoints) from a communicator without router.
fn call_back(proxy: &str) {
    runtime().block_on(async {
        let communicator = Communicator::new();
        let prx = LatencyPrx::unchecked_cast(communicator.string_to_proxy(proxy).expect("proxy"));
        prx.o().await.expect("callback through the router");
        communicator.destroy().await;
    });
}

/// A `glacier2router` whose locator is `reg`'s.
struct Router {
    peer: Peer,
    port: u16,
    /// `Ice.LogFile`: the traces, readable while the router runs.
    log: tempfile::NamedTempFile,
}

impl Router {
    fn start(reg: &Registry) -> Router {
        let port = free_port();
        let log = tempfile::NamedTempFile::new().expect("log file");
        let mut cmd = Command::new("glacier2router");
        cmd.args([
            "--Glacier2.InstanceName=Glacier2".to_string(),
            format!("--Glacier2.Client.Endpoints=tcp -h 127.0.0.1 -p {port}"),
            // Gives each client a callback category.
            "--Glacier2.Server.Endpoints=tcp -h 127.0.0.1".to_string(),
            "--Glacier2.PermissionsVerifier=Glacier2/NullPermissionsVerifier".to_string(),
            "--Glacier2.SessionTimeout=2".to_string(),
            "--Glacier2.Trace.Session=1".to_string(),
            "--Glacier2.Trace.RoutingTable=1".to_string(),
            format!("--Ice.Default.Locator={}", reg.locator()),
            format!("--Ice.LogFile={}", log.path().display()),
        ]);
        let router = Router {
            peer: Peer::spawn("glacier2router", cmd),
            port,
            log,
        };
        // Up when the router answers.
        let deadline = Instant::now() + Duration::from_secs(30);
        runtime().block_on(async {
            let communicator = Communicator::new();
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

    /// A floe session with the router.
    async fn session(&self, communicator: &Communicator) -> Glacier2Session {
        let router = communicator.string_to_proxy(&self.proxy()).expect("router");
        Glacier2Session::create(communicator, &router, "u", "p")
            .await
            .expect("session")
    }

    fn proxy(&self) -> String {
        format!("Glacier2/router:tcp -h 127.0.0.1 -p {}", self.port)
    }

    /// Waits until the router's log has `count` lines containing `text`.
    fn wait_log(&self, text: &str, count: usize) {
        let t = Instant::now();
        loop {
            let log = std::fs::read_to_string(self.log.path()).unwrap_or_default();
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

#[test]
fn glacier2_sessions_and_routed_calls() {
    if harness::interop_disabled("glacier2") {
        return;
    }
    let reg = Registry::start();
    let server = start_server(Side::Floe, &reg, "Routed", "-");
    let router = Router::start(&reg);
    let direct = format!("a:tcp -h 127.0.0.1 -p {}", server.port);
    let targets = [direct.as_str(), "a@Routed"];

    // The reference: Python.
    for (i, target) in targets.iter().enumerate() {
        let out = Command::new(PYTHON)
            .arg(peer_script())
            .args(["glacier2", &router.proxy(), target])
            .output()
            .expect("python runs");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "ok",
            "python via router to {target}"
        );
        router.wait_log("destroying session", i + 1);
    }

    // floe's example client.
    for (i, target) in targets.iter().enumerate() {
        let out = Command::new(examples_dir().join("glacier2_client"))
            .args([&router.proxy(), *target])
            .output()
            .expect("glacier2_client runs");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "ok",
            "floe via router to {target}"
        );
        router.wait_log("created session", 3 + i);
        router.wait_log(
            &format!(
                "adding proxy to routing table:\n   {}",
                if i == 0 {
                    "a -t"
                } else {
                    "a -t -e 1.1 @ Routed"
                }
            ),
            2,
        );
        router.wait_log("destroying session", 3 + i);
    }

    // A session kept alive past the router's 2 s session timeout.
    runtime().block_on(async {
        let communicator = Communicator::new();
        let session = router.session(&communicator).await;
        assert!(!session.category_for_client().is_empty());
        let a = LatencyPrx::unchecked_cast(
            session.routed(&communicator.string_to_proxy("a@Routed").expect("proxy")),
        );
        a.o().await.expect("first routed call");
        tokio::time::sleep(Duration::from_millis(3500)).await;
        a.o().await.expect("routed call after the session timeout");
        session.destroy().await.expect("destroy");
        communicator.destroy().await;
    });

    // Callbacks through the router: Python first.
    let mut cmd = Command::new(PYTHON);
    cmd.arg(peer_script())
        .args(["glacier2-callback", &router.proxy()]);
    let mut python = Peer::spawn("python glacier2 callback client", cmd);
    let cb = python.wait_ready("PROXY ", READY_TIMEOUT);
    call_back(&cb);
    python.wait_ready("called", READY_TIMEOUT);

    let rt = runtime();
    let communicator = Communicator::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let (session, cb) = rt.block_on(async {
        let session = router.session(&communicator).await;
        let adapter = session
            .create_callback_adapter("Callback")
            .await
            .expect("adapter");
        let id = Identity::new("cb", session.category_for_client());
        let prx = adapter
            .add(id, LatencyDispatcher::new(CallbackI(calls.clone())))
            .expect("add");
        (session, prx.to_string())
    });
    call_back(&cb);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "floe callback through the router"
    );
    rt.block_on(async {
        session.destroy().await.expect("destroy");
        communicator.destroy().await;
    });
    terminate(server);
}
