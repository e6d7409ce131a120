//! Checks the interop suite itself against the reference: the real Ice 3.7 Python
//! and C++11 peers run every check against each other and must all pass. If these
//! fail, the suite (or the installed Ice) is wrong, not floe.

use floe_testkit::interop::*;
use floe_testkit::*;

#[test]
fn python_client_against_cpp_server() {
    if interop_disabled("python_client_against_cpp_server") {
        return;
    }
    let server = start_cpp_server(&[]);
    run_py_client(&server.endpoint(), &[]).assert_all_pass(CHECKS);
}

#[test]
fn cpp_client_against_python_server() {
    if interop_disabled("cpp_client_against_python_server") {
        return;
    }
    let server = start_py_server(&[]);
    run_cpp_client(&server.endpoint(), &[]).assert_all_pass(CHECKS);
}

#[test]
fn server_peer_is_killed_on_drop() {
    if interop_disabled("server_peer_is_killed_on_drop") {
        return;
    }
    let server = start_py_server(&[]);
    let port = server.port;
    drop(server);
    // The listener is gone with the process: connecting must fail now.
    let refused = std::net::TcpStream::connect(("127.0.0.1", port)).is_err();
    assert!(
        refused,
        "py_server still accepts connections on {port} after drop"
    );
}

#[test]
fn node_client_against_cpp_server() {
    if interop_disabled("node_client_against_cpp_server") {
        return;
    }
    let server = start_cpp_server(&[]);
    if let Some(report) = run_node_client(&server.endpoint(), &[]) {
        report.assert_all_pass(CHECKS);
    }
}

#[test]
fn java_client_against_python_server() {
    if interop_disabled("java_client_against_python_server") {
        return;
    }
    let server = start_py_server(&[]);
    if let Some(report) = run_java_client(&server.endpoint(), &[]) {
        report.assert_all_pass(CHECKS);
    }
}

#[test]
fn python_client_against_java_server() {
    if interop_disabled("python_client_against_java_server") {
        return;
    }
    // JavaServer on Debian's Ice for Java 3.7.8 (JAVA_DEBIAN_JARS).
    if let Some(server) = start_java_debian_server(&[]) {
        run_py_client(&server.endpoint(), &[]).assert_all_pass(CHECKS);
    }
}

/// The hostile cases describe what real Ice servers do; a real client keeps
/// working on the same server meanwhile.
fn hostile_against(server: &Server, client: fn(&str, &[&str]) -> ClientReport) {
    let port = server.port;
    let attacker = std::thread::spawn(move || {
        let mut problems = Vec::new();
        for _ in 0..3 {
            problems.extend(hostile::run_all(port));
        }
        problems
    });
    client(&server.endpoint(), &[]).assert_all_pass(CHECKS);
    let problems = attacker.join().expect("attacker thread");
    assert!(
        problems.is_empty(),
        "hostile cases misbehaved:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn hostile_frames_against_cpp_server() {
    if interop_disabled("hostile_frames_against_cpp_server") {
        return;
    }
    hostile_against(&start_cpp_server(&[]), run_py_client);
}

#[test]
fn hostile_frames_against_python_server() {
    if interop_disabled("hostile_frames_against_python_server") {
        return;
    }
    hostile_against(&start_py_server(&[]), run_cpp_client);
}

#[test]
fn wiretap_sees_compressed_frames_both_ways() {
    if interop_disabled("wiretap_sees_compressed_frames_both_ways") {
        return;
    }
    let server = start_cpp_server(&[]);
    let tap = wiretap::Wiretap::start(server.port);
    run_py_client(&tap.endpoint(), &["--only=compress"]).assert_all_pass(&["compress"]);
    use wiretap::Direction::*;
    assert!(
        tap.count(ToServer, 2) >= 1,
        "no compressed request: {:?}",
        tap.frames()
    );
    assert!(
        tap.count(ToClient, 2) >= 1,
        "no compressed reply: {:?}",
        tap.frames()
    );
    // The 2-byte echo is below 100 bytes: sent with status 1, answered with status 1.
    assert!(
        tap.count(ToServer, 1) >= 1,
        "no small request with status 1: {:?}",
        tap.frames()
    );
}

#[test]
fn python_client_encoding_1_0_against_cpp_server() {
    if interop_disabled("python_client_encoding_1_0_against_cpp_server") {
        return;
    }
    let server = start_cpp_server(&[]);
    let checks = encoding_1_0_checks();
    let only = format!("--only={}", checks.join(","));
    run_py_client(
        &server.endpoint(),
        &["--Ice.Default.EncodingVersion=1.0", &only],
    )
    .assert_all_pass(&checks);
}

/// Client ACM closes a connection silent for 1 s while waiting for a reply
/// unless the server heartbeats during the dispatch (Heartbeat=OnDispatch).
pub const CLIENT_ACM: &[&str] = &[
    "--Ice.ACM.Client.Timeout=1",
    "--Ice.ACM.Client.Heartbeat=0",
    "--Ice.ACM.Client.Close=3",
    "--only=long_call",
];

#[test]
fn acm_python_client_long_call_against_cpp_server() {
    if interop_disabled("acm_python_client_long_call_against_cpp_server") {
        return;
    }
    let server = start_cpp_server(&["--Ice.ACM.Server.Timeout=1", "--Ice.ACM.Server.Heartbeat=1"]);
    run_py_client(&server.endpoint(), CLIENT_ACM).assert_all_pass(&["long_call"]);
    // Without server heartbeats the same call fails: the check is meaningful.
    let silent = start_cpp_server(&["--Ice.ACM.Server.Timeout=1", "--Ice.ACM.Server.Heartbeat=0"]);
    let report = run_py_client(&silent.endpoint(), CLIENT_ACM);
    let failure = report
        .results
        .get("long_call")
        .cloned()
        .flatten()
        .unwrap_or_default();
    assert!(
        failure.contains("ConnectionTimeout"),
        "expected ConnectionTimeoutException without heartbeats: {report:?}"
    );
}

#[test]
fn acm_python_client_heartbeats_keep_cpp_connection() {
    if interop_disabled("acm_python_client_heartbeats_keep_cpp_connection") {
        return;
    }
    let server = start_cpp_server(&["--Ice.ACM.Server.Timeout=1", "--Ice.ACM.Server.Close=4"]);
    let args = |hb: &'static str| {
        [
            "--Ice.ACM.Client.Timeout=1",
            hb,
            "--Ice.ACM.Client.Close=0",
            "--only=acm_idle_heartbeat",
        ]
    };
    run_py_client(&server.endpoint(), &args("--Ice.ACM.Client.Heartbeat=3"))
        .assert_all_pass(&["acm_idle_heartbeat"]);
    // Without client heartbeats the server drops the connection: the check is meaningful.
    let report = run_py_client(&server.endpoint(), &args("--Ice.ACM.Client.Heartbeat=0"));
    assert!(
        report
            .results
            .get("acm_idle_heartbeat")
            .is_some_and(|r| r.is_some()),
        "expected the idle connection to be dropped without heartbeats: {report:?}"
    );
}

#[test]
fn acm_python_client_reconnects_after_cpp_idle_close() {
    if interop_disabled("acm_python_client_reconnects_after_cpp_idle_close") {
        return;
    }
    let server = start_cpp_server(&["--Ice.ACM.Server.Timeout=1", "--Ice.ACM.Server.Close=1"]);
    run_py_client(&server.endpoint(), &["--only=idle_close_reconnect"])
        .assert_all_pass(&["idle_close_reconnect"]);
}

#[test]
fn cpp_client_encoding_1_0_against_python_server() {
    if interop_disabled("cpp_client_encoding_1_0_against_python_server") {
        return;
    }
    let server = start_py_server(&[]);
    let checks = encoding_1_0_checks();
    let only = format!("--only={}", checks.join(","));
    run_cpp_client(
        &server.endpoint(),
        &["--Ice.Default.EncodingVersion=1.0", &only],
    )
    .assert_all_pass(&checks);
}

#[test]
fn acm_cpp_server_heartbeat_timing() {
    if interop_disabled("acm_cpp_server_heartbeat_timing") {
        return;
    }
    let server = start_cpp_server(&["--Ice.ACM.Server.Timeout=1", "--Ice.ACM.Server.Heartbeat=1"]);
    let beats = hostile::heartbeats_during_call(server.port, 2500).expect("call");
    hostile::check_heartbeat_timing(&beats).expect("C++ server heartbeat timing");
}
