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

mod grid {
    pub mod router;
    pub mod support;
}

use std::process::Command;
use std::time::Duration;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use floe::runtime::{Communicator, Identity};
use floe_testkit::{Peer, PYTHON, READY_TIMEOUT};
use grid::router::{call_back, CallbackI, Router};
use grid::support::*;

#[test]
fn glacier2_sessions_and_routed_calls() {
    if floe_testkit::interop_disabled("glacier2") {
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
