//! `ssl` endpoints (IceSSL over rustls) against Ice for Java 3.7 over its
//! IceSSL (JSSE), with the certificates of `tls_certs.rs` turned into the
//! PKCS#12 keystores and truststores Java reads: the interop suite from
//! the Java client against a Python ssl server (the reference, Ice on both
//! sides) and against a floe ssl server, and the verification failures
//! between Java and floe in both directions.
//!
//! Ice for Java with IceSSL comes from Debian (`JAVA_DEBIAN_JARS` of
//! floe-testkit's interop peers); the tests print a line and pass when Java or those jars
//! are missing, like the other Java cells (missing jars fail under
//! `CI=true`).

mod interop {
    pub mod classes;
    pub mod floe_client;
    pub mod floe_server;
    pub mod transport_peers;
    pub mod types;
}

use floe_server::FloeServer;
use floe_testkit::interop::*;
use floe_testkit::tls_certs::TestCerts;
use floe_testkit::*;
use interop::transport_peers::*;
use interop::{floe_client, floe_server};

/// [`TestCerts::java_args`], or None after printing why (openssl or keytool
/// missing: the Java cells are optional; under `CI=true` this fails).
fn java_args(certs: &TestCerts, cert: &str, ca: &str, extra: &[&str]) -> Option<Vec<String>> {
    match certs.java_args(cert, ca, extra) {
        Ok(args) => Some(args),
        Err(why) => {
            optional_peer_missing("java keystores", &why);
            None
        }
    }
}

#[test]
fn java_ssl_client_against_python_ssl_server() {
    if interop_disabled("java_ssl_client_against_python_ssl_server") {
        return;
    }
    // The reference: Ice for Java against Ice for Python, same certificates.
    let certs = TestCerts::generate();
    let Some(args) = java_args(&certs, "client", "ca", &[]) else {
        return;
    };
    let mut server_args = certs.args("server", "ca", &[]);
    server_args.push(format!("--Interop.Endpoints={SSL_ANY_PORT}"));
    let server = start_py_server(&strs(&server_args));
    if let Some(report) = run_java_debian_client(&ssl_endpoint(server.port), &strs(&args)) {
        report.assert_all_pass(CHECKS);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_ssl_client_against_floe_ssl_server() {
    if interop_disabled("java_ssl_client_against_floe_ssl_server") {
        return;
    }
    let certs = TestCerts::generate();
    let Some(args) = java_args(&certs, "client", "ca", &[]) else {
        return;
    };
    let server = FloeServer::start_on(certs.properties("server", "ca"), SSL_ANY_PORT).await;
    let endpoint = ssl_endpoint(server.port);
    let report =
        tokio::task::spawn_blocking(move || run_java_debian_client(&endpoint, &strs(&args)))
            .await
            .expect("client thread");
    server.stop().await;
    if let Some(report) = report {
        report.assert_all_pass(CHECKS);
    }
}

/// Starts JavaServer on ssl with `server.p12`, trusting `ca` (None after
/// printing why when the Java peer is unavailable).
fn start_java_ssl_server_with(certs: &TestCerts) -> Option<Server> {
    let mut args = java_args(certs, "server", "ca", &[])?;
    args.push(format!("--Interop.Endpoints={SSL_ANY_PORT}"));
    start_java_debian_server(&strs(&args))
}

#[test]
fn python_ssl_client_against_java_ssl_server() {
    if interop_disabled("python_ssl_client_against_java_ssl_server") {
        return;
    }
    // The reference for the floe client below: Ice for Python against Ice
    // for Java.
    let certs = TestCerts::generate();
    let Some(server) = start_java_ssl_server_with(&certs) else {
        return;
    };
    run_py_client(
        &ssl_endpoint(server.port),
        &strs(&certs.args("client", "ca", &[])),
    )
    .assert_all_pass(CHECKS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floe_client_against_java_ssl_server() {
    if interop_disabled("floe_client_against_java_ssl_server") {
        return;
    }
    let certs = std::sync::Arc::new(TestCerts::generate());
    let server = {
        let certs = certs.clone();
        tokio::task::spawn_blocking(move || start_java_ssl_server_with(&certs))
            .await
            .expect("start")
    };
    let Some(server) = server else {
        return;
    };
    floe_client::run_floe_client(
        "floe_client->java_ssl_server",
        &ssl_endpoint(server.port),
        certs.properties("client", "ca"),
        None,
    )
    .await
    .assert_all_pass(CHECKS);
}

/// Runs only the `ping` check of the Java ssl client: Ok, Err(detail), or
/// None when the Java peer is unavailable.
fn java_ping(endpoint: &str, args: &[String]) -> Option<Result<(), String>> {
    let mut all = vec!["--only=ping"];
    all.extend(strs(args));
    let report = run_java_debian_client(endpoint, &all)?;
    Some(match report.results.get("ping") {
        Some(None) => Ok(()),
        Some(Some(detail)) => Err(detail.clone()),
        None => Err(format!("no ping result; output:\n{}", report.output)),
    })
}

/// The Ice exception type of a check's failure detail
/// (`::Ice::SecurityException: ...` -> `::Ice::SecurityException`).
fn ice_error(detail: &str) -> &str {
    detail.find(": ").map_or(detail, |i| &detail[..i])
}

/// The Java ssl client's ping against `endpoint` with each set of
/// [`TestCerts::java_args`] in `sets`, then all checks with the first set.
/// None when the Java peer is unavailable.
fn java_probes(endpoint: &str, sets: &[Vec<String>]) -> Option<Vec<Result<(), String>>> {
    let mut out = Vec::new();
    for args in sets {
        out.push(java_ping(endpoint, args)?);
    }
    let report = run_java_debian_client(endpoint, &strs(&sets[0]))?;
    out.push(
        report
            .problems(CHECKS)
            .into_iter()
            .next()
            .map_or(Ok(()), Err),
    );
    Some(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_and_floe_refuse_each_other() {
    if interop_disabled("java_and_floe_refuse_each_other") {
        return;
    }
    let certs = TestCerts::generate();
    let mut sets = Vec::new();
    for (cert, ca, extra) in [
        ("client", "ca", &[][..]),
        // Java trusts another CA than the server's.
        ("client", "other_ca", &[]),
        // The server does not trust Java's certificate.
        ("rogue_client", "ca", &[]),
        // Java presents no certificate (servers' IceSSL.VerifyPeer is 2).
        ("", "ca", &[]),
        // The server's certificate names wrong.example only: IceSSL's
        // CheckCertName is 0 by default, so only this client minds.
        ("client", "ca", &["--IceSSL.CheckCertName=1"]),
    ] {
        let Some(args) = java_args(&certs, cert, ca, extra) else {
            return;
        };
        sets.push(args);
    }
    // The reference: the same probes against Ice for Python.
    let mut py_args = certs.args("wrongname", "ca", &[]);
    py_args.push(format!("--Interop.Endpoints={SSL_ANY_PORT}"));
    let reference = {
        let sets = sets.clone();
        tokio::task::spawn_blocking(move || {
            let server = start_py_server(&strs(&py_args));
            java_probes(&ssl_endpoint(server.port), &sets)
        })
        .await
        .expect("reference thread")
    };
    let server = FloeServer::start_on(certs.properties("wrongname", "ca"), SSL_ANY_PORT).await;
    let endpoint = ssl_endpoint(server.port);
    let floe = tokio::task::spawn_blocking(move || java_probes(&endpoint, &sets))
        .await
        .expect("client thread");
    let (Some(reference), Some(floe)) = (reference, floe) else {
        server.stop().await;
        return;
    };
    println!("java ssl probes, Ice for Python server: {reference:?}");
    println!("java ssl probes, floe server: {floe:?}");
    // What each probe checks, and whether Java itself refuses (true) or
    // the server refuses Java (false).
    let what = [
        ("trusted client", true),
        ("untrusted server", true),
        ("untrusted client", false),
        ("no client certificate", false),
        ("wrong name, CheckCertName=1", true),
        ("all checks after the refusals", true),
    ];
    assert_eq!(floe.len(), what.len());
    for (((what, java_refuses), py), floe) in what.iter().zip(&reference).zip(&floe) {
        match (py, floe) {
            (Ok(()), Ok(())) => {}
            // Java's own verification of the server: the same exception
            // and reason whichever server it talks to.
            (Err(py), Err(floe)) if *java_refuses => {
                assert_eq!(floe, py, "{what}");
                assert!(
                    floe.starts_with("::Ice::SecurityException"),
                    "{what}: {floe}"
                );
            }
            // The server refuses Java's certificate: under TLS 1.3 Java has
            // finished its side of the handshake when the alert comes, so it
            // sees the connection closed (as with Ice for Python) or a
            // SecurityException.
            (Err(py), Err(floe)) => {
                for e in [py, floe] {
                    assert!(
                        matches!(
                            ice_error(e),
                            "::Ice::SecurityException" | "::Ice::ConnectionLostException"
                        ),
                        "{what}: {e}"
                    );
                }
            }
            _ => panic!("{what}: Ice for Python server {py:?}, floe server {floe:?}"),
        }
    }
    // And floe's own clients are still served.
    floe_ping(
        certs.properties("client", "ca"),
        &format!("test:{}", ssl_endpoint(server.port)),
    )
    .await
    .expect("floe ping after the refusals");
    server.stop().await;
}
