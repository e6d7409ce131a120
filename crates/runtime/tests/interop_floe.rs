//! floe against real Ice 3.7 peers: a floe server driven by the Python, C++ and
//! Node clients of the interop suite (every check must pass), and hostile frames
//! sent to a floe server while a real client keeps working.

#[path = "interop/harness.rs"]
mod harness;

#[path = "interop/types.rs"]
mod types;

#[path = "interop/classes.rs"]
mod classes;

#[path = "interop/floe_server.rs"]
mod floe_server;

#[path = "interop/hostile.rs"]
mod hostile;

#[path = "interop/wiretap.rs"]
mod wiretap;

use floe_runtime::Properties;
use floe_server::FloeServer;
use harness::*;

/// Runs a blocking client function against a fresh floe server.
async fn floe_server_with<F>(client: F) -> ClientReport
where
    F: FnOnce(String) -> ClientReport + Send + 'static,
{
    let server = FloeServer::start(Properties::new()).await;
    let endpoint = server.endpoint();
    let report = tokio::task::spawn_blocking(move || client(endpoint))
        .await
        .expect("client thread");
    server.stop().await;
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floe_server_with_python_client() {
    if interop_disabled("floe_server_with_python_client") {
        return;
    }
    floe_server_with(|ep| run_py_client(&ep, &[]))
        .await
        .assert_all_pass(CHECKS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floe_server_with_cpp_client() {
    if interop_disabled("floe_server_with_cpp_client") {
        return;
    }
    floe_server_with(|ep| run_cpp_client(&ep, &[]))
        .await
        .assert_all_pass(CHECKS);
}

#[path = "interop/floe_client.rs"]
mod floe_client;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floe_client_against_python_server() {
    if interop_disabled("floe_client_against_python_server") {
        return;
    }
    let server = tokio::task::spawn_blocking(|| start_py_server(&[]))
        .await
        .expect("start");
    floe_client::run_floe_client(
        "floe_client->py_server",
        &server.endpoint(),
        Properties::new(),
        None,
    )
    .await
    .assert_all_pass(CHECKS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floe_client_against_cpp_server() {
    if interop_disabled("floe_client_against_cpp_server") {
        return;
    }
    let server = tokio::task::spawn_blocking(|| start_cpp_server(&[]))
        .await
        .expect("start");
    floe_client::run_floe_client(
        "floe_client->cpp_server",
        &server.endpoint(),
        Properties::new(),
        None,
    )
    .await
    .assert_all_pass(CHECKS);
}
