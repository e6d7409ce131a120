//! Checks the interop suite itself against the reference: the real Ice 3.7 Python
//! and C++11 peers run every check against each other and must all pass. If these
//! fail, the suite (or the installed Ice) is wrong, not floe.

#[path = "interop/harness.rs"]
mod harness;

use harness::*;

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

#[path = "interop/hostile.rs"]
mod hostile;

#[path = "interop/wiretap.rs"]
mod wiretap;

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
