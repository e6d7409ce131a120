//! `ssl` endpoints (IceSSL over rustls) against real Ice 3.7 peers, with
//! certificates made by the test (rcgen): the interop suite over ssl in
//! both directions with Ice for Python and C++, Ice ↔ Ice as the
//! reference, the TLS information servants see, verification failures
//! (untrusted CA, wrong name, expired certificate, a peer that does not
//! speak TLS) in each direction with the error asserted, and the hostile
//! frames of the tcp tests sent through TLS to a floe server.

mod interop {
    pub mod classes;
    pub mod floe_client;
    pub mod floe_server;
    pub mod transport_peers;
    pub mod types;
}

use floe_runtime::{servant_fn, Communicator, Dispatch, Identity, OperationMode};
use floe_server::FloeServer;
use floe_testkit::interop::*;
use floe_testkit::tls_certs::TestCerts;
use floe_testkit::*;
use interop::transport_peers::*;
use interop::{floe_client, floe_server};

/// An Ice peer's ssl server arguments: the plugin, `cert`, trust in `ca`.
fn server_args(certs: &TestCerts, cert: &str, ca: &str, extra: &[&str]) -> Vec<String> {
    let mut v = certs.args(cert, ca, extra);
    v.push(format!("--Interop.Endpoints={SSL_ANY_PORT}"));
    v
}

#[test]
fn python_ssl_client_against_python_ssl_server() {
    if interop_disabled("python_ssl_client_against_python_ssl_server") {
        return;
    }
    // The reference: the same certificates and properties, Ice on both sides.
    let certs = TestCerts::generate();
    let server = start_py_server(&strs(&server_args(&certs, "server", "ca", &[])));
    run_py_client(
        &ssl_endpoint(server.port),
        &strs(&certs.args("client", "ca", &[])),
    )
    .assert_all_pass(CHECKS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floe_client_against_python_ssl_server() {
    if interop_disabled("floe_client_against_python_ssl_server") {
        return;
    }
    let certs = TestCerts::generate();
    let args = server_args(&certs, "server", "ca", &[]);
    let server = tokio::task::spawn_blocking(move || start_py_server(&strs(&args)))
        .await
        .expect("start");
    floe_client::run_floe_client(
        "floe_client->py_ssl_server",
        &ssl_endpoint(server.port),
        certs.properties("client", "ca"),
        None,
    )
    .await
    .assert_all_pass(CHECKS);
}

/// Runs a blocking Ice client against a floe server on ssl.
async fn floe_ssl_server_with<F>(certs: &TestCerts, client: F) -> ClientReport
where
    F: FnOnce(String) -> ClientReport + Send + 'static,
{
    let server = FloeServer::start_on(certs.properties("server", "ca"), SSL_ANY_PORT).await;
    let endpoint = ssl_endpoint(server.port);
    let report = tokio::task::spawn_blocking(move || client(endpoint))
        .await
        .expect("client thread");
    server.stop().await;
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_ssl_client_against_floe_ssl_server() {
    if interop_disabled("python_ssl_client_against_floe_ssl_server") {
        return;
    }
    let certs = TestCerts::generate();
    let args = certs.args("client", "ca", &[]);
    floe_ssl_server_with(&certs, move |ep| run_py_client(&ep, &strs(&args)))
        .await
        .assert_all_pass(CHECKS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cpp_ssl_client_against_floe_ssl_server() {
    if interop_disabled("cpp_ssl_client_against_floe_ssl_server") {
        return;
    }
    let certs = TestCerts::generate();
    let args = certs.args("client", "ca", &[]);
    floe_ssl_server_with(&certs, move |ep| run_cpp_client(&ep, &strs(&args)))
        .await
        .assert_all_pass(CHECKS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floe_client_against_cpp_ssl_server() {
    if interop_disabled("floe_client_against_cpp_ssl_server") {
        return;
    }
    let certs = TestCerts::generate();
    let args = server_args(&certs, "server", "ca", &[]);
    let server = tokio::task::spawn_blocking(move || start_cpp_server(&strs(&args)))
        .await
        .expect("start");
    floe_client::run_floe_client(
        "floe_client->cpp_ssl_server",
        &ssl_endpoint(server.port),
        certs.properties("client", "ca"),
        None,
    )
    .await
    .assert_all_pass(CHECKS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floe_client_refuses_bad_python_servers() {
    if interop_disabled("floe_client_refuses_bad_python_servers") {
        return;
    }
    let certs = TestCerts::generate();
    let start = |cert: &'static str, endpoints: &'static str| {
        let mut args = certs.args(cert, "ca", &[]);
        args.push(format!("--Interop.Endpoints={endpoints}"));
        tokio::task::spawn_blocking(move || start_py_server(&strs(&args)))
    };
    let ssl = "ssl -h 127.0.0.1 -p 0";
    let rogue = start("rogue_server", ssl).await.expect("start");
    let wrong = start("wrongname", ssl).await.expect("start");
    let expired = start("expired", ssl).await.expect("start");
    let plain = start("server", "tcp -h 127.0.0.1 -p 0")
        .await
        .expect("start");
    let proxy = |port: u16| format!("test:{}", ssl_endpoint(port));
    let client = || certs.properties("client", "ca");

    // A certificate from a CA the client does not trust.
    expect_security(floe_ping(client(), &proxy(rogue.port)).await, "trusted CA");
    // A certificate for another name: accepted by default (IceSSL 3.7's
    // CheckCertName is 0), refused with IceSSL.CheckCertName=1.
    floe_ping(client(), &proxy(wrong.port))
        .await
        .expect("CheckCertName=0 accepts another name");
    let strict = client();
    strict.set("IceSSL.CheckCertName", "1");
    expect_security(
        floe_ping(strict, &proxy(wrong.port)).await,
        "does not match the host name",
    );
    // The right name with CheckCertName=1.
    let rogue_ok = client();
    rogue_ok.set("IceSSL.VerifyPeer", "0");
    floe_ping(rogue_ok, &proxy(rogue.port))
        .await
        .expect("VerifyPeer=0 trusts any server");
    // An expired certificate.
    expect_security(floe_ping(client(), &proxy(expired.port)).await, "expired");
    // IceSSL.TrustOnly.Client: the server's subject must match.
    let picky = client();
    picky.set("IceSSL.TrustOnly.Client", "CN=somebody else");
    expect_security(
        floe_ping(picky, &proxy(wrong.port)).await,
        "IceSSL.TrustOnly",
    );
    // An ssl client against a plain tcp port.
    expect_security(
        floe_ping(client(), &proxy(plain.port)).await,
        "does not speak TLS",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_refused_by_floe_server() {
    if interop_disabled("python_client_refused_by_floe_server") {
        return;
    }
    let certs = TestCerts::generate();
    let props = certs.properties("server", "ca");
    props.set("IceSSL.TrustOnly.Server", "!CN=banned");
    let server = FloeServer::start_on(props, SSL_ANY_PORT).await;
    let proxy = format!("test:{}", ssl_endpoint(server.port));
    let ok = certs.args("client", "ca", &[]);
    let rogue = certs.args("rogue_client", "ca", &[]);
    let anonymous = certs.args("", "ca", &[]);
    let banned = certs.args("banned_client", "ca", &[]);
    let (ok, rogue, anonymous, banned) = tokio::task::spawn_blocking(move || {
        (
            py_probe(&proxy, &ok),
            py_probe(&proxy, &rogue),
            py_probe(&proxy, &anonymous),
            py_probe(&proxy, &banned),
        )
    })
    .await
    .expect("probe thread");
    assert_eq!(ok, "OK");
    // The floe server refuses a client certificate from an unknown CA, a
    // client without one (VerifyPeer=2 by default), and a subject that
    // IceSSL.TrustOnly.Server rejects. Under TLS 1.3 the client's side of
    // the handshake is done before the server's alert arrives, so Ice for
    // Python reports it at its first read: a ProtocolException ("SSL
    // protocol error during read"), a SecurityException or a lost
    // connection.
    for (what, line) in [
        ("untrusted client", &rogue),
        ("no client certificate", &anonymous),
        ("TrustOnly", &banned),
    ] {
        assert!(
            line.starts_with("ERROR ")
                && (line.contains("SecurityException")
                    || line.contains("ProtocolException")
                    || line.contains("ConnectionLostException")),
            "{what}: {line}"
        );
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_refuses_misnamed_floe_server() {
    if interop_disabled("python_client_refuses_misnamed_floe_server") {
        return;
    }
    let certs = TestCerts::generate();
    let server = FloeServer::start_on(certs.properties("wrongname", "ca"), SSL_ANY_PORT).await;
    let proxy = format!("test:{}", ssl_endpoint(server.port));
    let strict = certs.args("client", "ca", &["--IceSSL.CheckCertName=1"]);
    let lax = certs.args("client", "ca", &[]);
    let other_ca = certs.args("client", "other_ca", &[]);
    let (strict, lax, other_ca) = tokio::task::spawn_blocking(move || {
        (
            py_probe(&proxy, &strict),
            py_probe(&proxy, &lax),
            py_probe(&proxy, &other_ca),
        )
    })
    .await
    .expect("probe thread");
    assert!(
        strict.starts_with("ERROR SecurityException"),
        "wrong name: {strict}"
    );
    assert_eq!(lax, "OK", "CheckCertName=0 ignores the name");
    assert!(
        other_ca.starts_with("ERROR SecurityException"),
        "untrusted CA: {other_ca}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servants_see_the_peer_certificate() {
    let certs = TestCerts::generate();
    let server = Communicator::with_properties(certs.properties("server", "ca"));
    let adapter = server
        .create_object_adapter_with_endpoints("Tls", "tcp -h 127.0.0.1 -p 0:ssl -h 127.0.0.1 -p 0")
        .await
        .expect("adapter");
    let proxy = adapter
        .add(
            Identity::from_name("who"),
            servant_fn(|current, _params| {
                let info = current
                    .connection
                    .as_ref()
                    .map(|c| c.info().clone())
                    .expect("a connection");
                let text = match &info.tls {
                    Some(tls) => format!(
                        "{}|{}|{}|{}",
                        tls.subject.clone().unwrap_or_default(),
                        tls.peer_certificates.len(),
                        tls.verified,
                        tls.cipher
                    ),
                    None => "plain".to_string(),
                };
                Dispatch::ready(Ok(current.encode_reply(|enc| enc.write_string(&text))))
            }),
        )
        .expect("add");
    adapter.activate();
    assert_eq!(proxy.endpoints().len(), 2);
    let client = Communicator::with_properties(certs.properties("client", "ca"));
    let ask = |secure: bool| {
        let p = client
            .create_proxy(Identity::from_name("who"), proxy.endpoints().to_vec())
            .ice_secure(secure);
        async move {
            let reply = p
                .invoke("who", OperationMode::Normal, p.empty_params())
                .await
                .expect("who");
            let results = reply.into_ok().expect("ok");
            let mut dec = floe_wire::Decoder::from_encapsulation(results).expect("reply");
            let text = dec.read_string().expect("string");
            (text, p.ice_get_connection().await.expect("connection"))
        }
    };
    // Not secure: tcp first.
    let (plain, conn) = ask(false).await;
    assert_eq!(plain, "plain");
    assert!(conn.info().tls.is_none());
    // ice_secure: only the ssl endpoint.
    let (text, conn) = ask(true).await;
    let parts: Vec<&str> = text.split('|').collect();
    assert_eq!(parts[0], "CN=client, O=floe tests");
    assert_eq!(parts[1], "1");
    assert_eq!(parts[2], "true");
    assert!(parts[3].starts_with("TLS13_"), "cipher {}", parts[3]);
    let tls = conn.info().tls.clone().expect("client side TLS info");
    assert_eq!(tls.subject.as_deref(), Some("CN=server, O=floe tests"));
    assert!(tls.verified);
    assert_eq!(tls.protocol, "TLSv1_3");
    client.destroy().await;
    server.destroy().await;
}

/// A blocking TLS client connection (rustls, trusting `ca.pem`, presenting
/// `client.pem`) to 127.0.0.1:`port`, validated (ValidateConnection read).
fn tls_connect(
    certs: &TestCerts,
    port: u16,
) -> Result<rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(certs.path("ca.pem")).map_err(|e| e.to_string())? {
        roots
            .add(cert.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    }
    let chain = CertificateDer::pem_file_iter(certs.path("client.pem"))
        .map_err(|e| e.to_string())?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let key =
        PrivateKeyDer::from_pem_file(certs.path("client_key.pem")).map_err(|e| e.to_string())?;
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, key)
        .map_err(|e| e.to_string())?;
    let name = ServerName::try_from("127.0.0.1").map_err(|e| e.to_string())?;
    let conn = rustls::ClientConnection::new(std::sync::Arc::new(config), name)
        .map_err(|e| e.to_string())?;
    let tcp =
        std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    let mut s = rustls::StreamOwned::new(conn, tcp);
    hostile::validate(&mut s)?;
    Ok(s)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_frames_over_ssl_against_floe_server() {
    let certs = std::sync::Arc::new(TestCerts::generate());
    let server = FloeServer::start_on(certs.properties("server", "ca"), SSL_ANY_PORT).await;
    let port = server.port;
    let problems = {
        let certs = certs.clone();
        tokio::task::spawn_blocking(move || hostile::run_all_with(|| tls_connect(&certs, port)))
            .await
            .expect("hostile thread")
    };
    assert!(
        problems.is_empty(),
        "hostile frames over ssl vs floe server:\n  {}",
        problems.join("\n  ")
    );
    // The server still serves.
    floe_ping(
        certs.properties("client", "ca"),
        &format!("test:{}", ssl_endpoint(port)),
    )
    .await
    .expect("ping after the hostile frames");
    server.stop().await;
}
