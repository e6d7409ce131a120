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
