//! Glacier2 sessions authorized by the TLS connection
//! (`Glacier2::Router::createSessionFromSecureConnection`): a real
//! `glacier2router` whose client endpoint is `ssl` (IceSSL with
//! certificates made by the test), with
//! `Glacier2.SSLPermissionsVerifier=Glacier2/NullSSLPermissionsVerifier`,
//! in front of a real IceGrid registry. A Python Ice client runs the
//! checks first, as the reference:
//! - a session from the secure connection, a call routed through it to an
//!   indirect `a@<adapter>` (and, for floe, to a direct proxy), the
//!   session destroyed; the router's traces show the session and the
//!   client certificate's subject;
//! - a server calls the client back through the router over the ssl
//!   connection;
//! - over the router's `tcp` endpoint the same request is refused with
//!   `Glacier2::PermissionDeniedException`.

mod grid {
    pub mod router;
    pub mod support;
}

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use floe::runtime::{Error, Glacier2Session, Identity};
use floe_testkit::tls_certs::TestCerts;
use floe_testkit::{free_port, Peer, PYTHON, READY_TIMEOUT};
use grid::router::{call_back, CallbackI, Router};
use grid::support::*;

/// A router with an `ssl` and a `tcp` client endpoint (the proxy is the
/// ssl one), presenting `server.pem` and requiring a client certificate
/// from `ca.pem`.
fn ssl_router(reg: &Registry, certs: &TestCerts) -> (Router, u16) {
    let (ssl, tcp) = (free_port(), free_port());
    let mut extra = certs.args(
        "server",
        "ca",
        &["--Glacier2.SSLPermissionsVerifier=Glacier2/NullSSLPermissionsVerifier"],
    );
    extra.push("--Glacier2.SessionTimeout=30".to_string());
    let router = Router::start_with(
        reg,
        &format!("ssl -h 127.0.0.1 -p {ssl}:tcp -h 127.0.0.1 -p {tcp}"),
        &extra,
        certs.ice_ssl("client", "ca"),
    );
    (router, tcp)
}

#[test]
fn glacier2_session_from_secure_connection() {
    if floe_testkit::interop_disabled("glacier2 ssl") {
        return;
    }
    let certs = TestCerts::generate();
    let reg = Registry::start();
    let server = start_server(Side::Floe, &reg, "Routed", "-");
    let (router, tcp_port) = ssl_router(&reg, &certs);
    let client_args = certs.args("client", "ca", &[]);
    let direct = format!("a:tcp -h 127.0.0.1 -p {}", server.port);

    // The reference: Python, a routed call and a callback.
    let out = Command::new(PYTHON)
        .arg(peer_script())
        .args(["glacier2-secure", &router.proxy(), "a@Routed"])
        .args(&client_args)
        .output()
        .expect("python runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "ok",
        "python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    router.wait_log("destroying session", 1);
    let mut cmd = Command::new(PYTHON);
    cmd.arg(peer_script())
        .args(["glacier2-callback-secure", &router.proxy()])
        .args(&client_args);
    let mut python = Peer::spawn("python glacier2 ssl callback client", cmd);
    let cb = python.wait_ready("PROXY ", READY_TIMEOUT);
    call_back(&cb);
    python.wait_ready("called", READY_TIMEOUT);
    router.wait_log("destroying session", 2);

    // floe: the same session, routed calls and a callback.
    let rt = runtime();
    let communicator = router.communicator();
    let calls = Arc::new(AtomicUsize::new(0));
    let (session, cb) = rt.block_on(async {
        let prx = communicator
            .string_to_proxy(&router.proxy())
            .expect("router");
        let session = Glacier2Session::create_from_secure_connection(&communicator, &prx)
            .await
            .expect("session from the secure connection");
        for target in [direct.as_str(), "a@Routed"] {
            let a = LatencyPrx::unchecked_cast(
                session.routed(&communicator.string_to_proxy(target).expect("proxy")),
            );
            a.o()
                .await
                .unwrap_or_else(|e| panic!("routed o() to {target}: {e}"));
            let conn = a.ice_get_connection().await.expect("connection");
            assert!(conn.info().tls.is_some(), "routed over the ssl connection");
        }
        let adapter = session
            .create_callback_adapter("Callback")
            .await
            .expect("callback adapter");
        let id = Identity::new("cb", session.category_for_client());
        let prx = adapter
            .add(id, LatencyDispatcher::new(CallbackI(calls.clone())))
            .expect("add");
        (session, prx.to_string())
    });
    call_back(&cb);
    assert_eq!(calls.load(Ordering::SeqCst), 1, "floe callback over ssl");
    rt.block_on(async {
        session.destroy().await.expect("destroy");
        communicator.destroy().await;
    });
    router.wait_log("destroying session", 3);
    // Glacier2 takes the session's user id from the client certificate.
    router.wait_log("created session\n   id = O=floe tests,CN=client", 3);

    // Not over tcp: the router refuses.
    let refused = rt.block_on(async {
        let communicator = router.communicator();
        let prx = communicator
            .string_to_proxy(&format!("Glacier2/router:tcp -h 127.0.0.1 -p {tcp_port}"))
            .expect("router");
        let r = Glacier2Session::create_from_secure_connection(&communicator, &prx).await;
        communicator.destroy().await;
        r
    });
    match refused {
        Err(Error::UnknownUserException(t)) => {
            assert_eq!(t, "::Glacier2::PermissionDeniedException")
        }
        other => panic!("tcp createSessionFromSecureConnection: {other:?}"),
    }
    terminate(server);
}
