//! `ws` and `wss` endpoints (Ice's WebSocket transport) against real Ice
//! 3.7 peers: the interop suite in both directions with Ice for Python and
//! C++ (Ice ↔ Ice first, as the reference), Ice for JavaScript under Node
//! as a ws client, and one adapter listening on tcp, ssl, ws and wss at
//! once.
//!
//! Ice for JavaScript's ws client is a browser's: it needs a global
//! `WebSocket` (and `navigator`), which Node before 22 lacks; node_client.js
//! provides them from the npm package `ws` for a ws endpoint. The browser
//! itself is tests/browser.rs at the workspace root.

mod interop {
    pub mod classes;
    pub mod floe_client;
    pub mod floe_server;
    pub mod transport_peers;
    pub mod types;
}

use floe_runtime::{Endpoint, Transport};
use floe_server::FloeServer;
use floe_testkit::interop::*;
use floe_testkit::tls_certs::TestCerts;
use floe_testkit::*;
use interop::transport_peers::*;
use interop::{floe_client, floe_server};

/// The text of a `ws`/`wss` endpoint on 127.0.0.1.
fn endpoint(proto: &str, port: u16) -> String {
    format!("{proto} -h 127.0.0.1 -p {port} -r /floe")
}

/// An Ice peer's arguments for `proto` (`ws`, `wss`): the IceSSL plugin
/// and certificates for wss, and the server endpoint when `server`.
fn args(certs: &TestCerts, proto: &str, server: bool) -> Vec<String> {
    let mut v = if proto == "wss" {
        certs.args(if server { "server" } else { "client" }, "ca", &[])
    } else {
        Vec::new()
    };
    if server {
        v.push(format!("--Interop.Endpoints={proto} -h 127.0.0.1 -p 0"));
    }
    v
}

fn floe_props(certs: &TestCerts, proto: &str, server: bool) -> floe_runtime::Properties {
    if proto == "wss" {
        certs.properties(if server { "server" } else { "client" }, "ca")
    } else {
        floe_runtime::Properties::new()
    }
}

/// An Ice client (Python or C++) against an Ice server of the same
/// language: the reference.
fn ice_to_ice(proto: &str, cpp: bool) {
    let certs = TestCerts::generate();
    let server_args = args(&certs, proto, true);
    let server = if cpp {
        start_cpp_server(&strs(&server_args))
    } else {
        start_py_server(&strs(&server_args))
    };
    let client_args = args(&certs, proto, false);
    let ep = endpoint(proto, server.port);
    let report = if cpp {
        run_cpp_client(&ep, &strs(&client_args))
    } else {
        run_py_client(&ep, &strs(&client_args))
    };
    report.assert_all_pass(CHECKS);
}

/// The floe client against an Ice server.
async fn floe_to_ice(proto: &'static str, cpp: bool) {
    let certs = TestCerts::generate();
    let server_args = args(&certs, proto, true);
    let server = tokio::task::spawn_blocking(move || {
        if cpp {
            start_cpp_server(&strs(&server_args))
        } else {
            start_py_server(&strs(&server_args))
        }
    })
    .await
    .expect("start");
    floe_client::run_floe_client(
        &format!("floe_client->{proto}_server"),
        &endpoint(proto, server.port),
        floe_props(&certs, proto, false),
        None,
    )
    .await
    .assert_all_pass(CHECKS);
}

/// An Ice client against the floe server.
async fn ice_to_floe(proto: &'static str, cpp: bool) {
    let certs = TestCerts::generate();
    let server = FloeServer::start_on(
        floe_props(&certs, proto, true),
        &format!("{proto} -h 127.0.0.1 -p 0"),
    )
    .await;
    let ep = endpoint(proto, server.port);
    let client_args = args(&certs, proto, false);
    let report = tokio::task::spawn_blocking(move || {
        if cpp {
            run_cpp_client(&ep, &strs(&client_args))
        } else {
            run_py_client(&ep, &strs(&client_args))
        }
    })
    .await
    .expect("client thread");
    server.stop().await;
    report.assert_all_pass(CHECKS);
}

macro_rules! interop {
    ($name:ident, $body:expr) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            if interop_disabled(stringify!($name)) {
                return;
            }
            $body.await;
        }
    };
}

#[test]
fn python_ws_client_against_python_ws_server() {
    if !interop_disabled("python_ws_client_against_python_ws_server") {
        ice_to_ice("ws", false);
    }
}

#[test]
fn python_wss_client_against_python_wss_server() {
    if !interop_disabled("python_wss_client_against_python_wss_server") {
        ice_to_ice("wss", false);
    }
}

interop!(
    floe_client_against_python_ws_server,
    floe_to_ice("ws", false)
);
interop!(
    floe_client_against_python_wss_server,
    floe_to_ice("wss", false)
);
interop!(floe_client_against_cpp_ws_server, floe_to_ice("ws", true));
interop!(floe_client_against_cpp_wss_server, floe_to_ice("wss", true));
interop!(
    python_ws_client_against_floe_server,
    ice_to_floe("ws", false)
);
interop!(
    python_wss_client_against_floe_server,
    ice_to_floe("wss", false)
);
interop!(cpp_ws_client_against_floe_server, ice_to_floe("ws", true));
interop!(cpp_wss_client_against_floe_server, ice_to_floe("wss", true));

/// Ice for JavaScript (Node) against Ice for Python over ws: the reference.
#[test]
fn node_ws_client_against_python_ws_server() {
    if interop_disabled("node_ws_client_against_python_ws_server") {
        return;
    }
    let server = start_py_server(&["--Interop.Endpoints=ws -h 127.0.0.1 -p 0"]);
    if let Some(report) = run_node_client(&endpoint("ws", server.port), &[]) {
        report.assert_all_pass(CHECKS);
    }
}

/// Ice for JavaScript (Node) against the floe server over ws.
async fn node_to_floe() {
    let server =
        FloeServer::start_on(floe_runtime::Properties::new(), "ws -h 127.0.0.1 -p 0").await;
    let ep = endpoint("ws", server.port);
    let report = tokio::task::spawn_blocking(move || run_node_client(&ep, &[]))
        .await
        .expect("client thread");
    server.stop().await;
    if let Some(report) = report {
        report.assert_all_pass(CHECKS);
    }
}

interop!(node_ws_client_against_floe_server, node_to_floe());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_adapter_on_tcp_ssl_ws_and_wss() {
    if interop_disabled("one_adapter_on_tcp_ssl_ws_and_wss") {
        return;
    }
    let certs = TestCerts::generate();
    let server = FloeServer::start_on(
        certs.properties("server", "ca"),
        "tcp -h 127.0.0.1 -p 0:ssl -h 127.0.0.1 -p 0:ws -h 127.0.0.1 -p 0:wss -h 127.0.0.1 -p 0",
    )
    .await;
    let endpoints: Vec<Endpoint> = server.adapter.endpoints().to_vec();
    let kinds: Vec<Transport> = endpoints.iter().map(|e| e.transport).collect();
    assert_eq!(
        kinds,
        [
            Transport::Tcp,
            Transport::Ssl,
            Transport::Ws,
            Transport::Wss
        ]
    );
    // Ice for Python reaches the servant through each of them.
    let client = certs.args("client", "ca", &[]);
    let texts: Vec<String> = endpoints.iter().map(|e| e.to_string()).collect();
    let results = tokio::task::spawn_blocking(move || {
        texts
            .iter()
            .map(|ep| (ep.clone(), py_probe(&format!("test:{ep}"), &client)))
            .collect::<Vec<_>>()
    })
    .await
    .expect("probe thread");
    for (ep, line) in results {
        assert_eq!(line, "OK", "{ep}");
    }
    // So does floe, secure or not.
    for e in &endpoints {
        floe_ping(certs.properties("client", "ca"), &format!("test:{e}"))
            .await
            .unwrap_or_else(|err| panic!("floe ping over {e}: {err}"));
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_server_requires_the_ice_subprotocol() {
    let server =
        FloeServer::start_on(floe_runtime::Properties::new(), "ws -h 127.0.0.1 -p 0").await;
    let port = server.port;
    let upgrade = |protocol: &str| {
        format!(
            "GET /floe HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
             Sec-WebSocket-Version: 13\r\n{protocol}\r\n"
        )
    };
    let requests = [
        upgrade(""),
        upgrade("Sec-WebSocket-Protocol: chat\r\n"),
        upgrade("Sec-WebSocket-Protocol: chat, ice.zeroc.com\r\n"),
    ];
    let answers = tokio::task::spawn_blocking(move || {
        requests
            .iter()
            .map(|request| {
                use std::io::{Read, Write};
                let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
                s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
                    .expect("timeout");
                s.write_all(request.as_bytes()).expect("send upgrade");
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && s.read(&mut byte).is_ok_and(|n| n == 1) {
                    head.push(byte[0]);
                }
                String::from_utf8_lossy(&head).to_string()
            })
            .collect::<Vec<_>>()
    })
    .await
    .expect("client thread");
    assert!(answers[0].starts_with("HTTP/1.1 400"), "{}", answers[0]);
    assert!(answers[1].starts_with("HTTP/1.1 400"), "{}", answers[1]);
    assert!(answers[2].starts_with("HTTP/1.1 101"), "{}", answers[2]);
    assert!(
        answers[2]
            .to_ascii_lowercase()
            .contains("sec-websocket-protocol: ice.zeroc.com"),
        "{}",
        answers[2]
    );
    server.stop().await;
}
