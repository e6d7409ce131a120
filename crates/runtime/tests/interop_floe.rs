//! floe against real Ice 3.7 peers: a floe server driven by the Python, C++ and
//! Node clients of the interop suite (every check must pass), and hostile frames
//! sent to a floe server while a real client keeps working.

mod interop {
    pub mod classes;
    pub mod floe_client;
    pub mod floe_server;
    pub mod types;
}

use floe_runtime::Properties;
use floe_server::FloeServer;
use floe_testkit::interop::*;
use floe_testkit::*;
use interop::{floe_client, floe_server};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floe_client_against_java_server() {
    if interop_disabled("floe_client_against_java_server") {
        return;
    }
    // JavaServer runs on Debian's Ice for Java 3.7.8 (JAVA_DEBIAN_JARS).
    let server = tokio::task::spawn_blocking(|| start_java_debian_server(&[]))
        .await
        .expect("start");
    let Some(server) = server else {
        return;
    };
    floe_client::run_floe_client(
        "floe_client->java_server",
        &server.endpoint(),
        Properties::new(),
        None,
    )
    .await
    .assert_all_pass(CHECKS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floe_server_with_node_client() {
    if interop_disabled("floe_server_with_node_client") {
        return;
    }
    let server = FloeServer::start(Properties::new()).await;
    let endpoint = server.endpoint();
    let report = tokio::task::spawn_blocking(move || run_node_client(&endpoint, &[]))
        .await
        .expect("client thread");
    server.stop().await;
    if let Some(report) = report {
        report.assert_all_pass(CHECKS);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floe_server_with_java_client() {
    if interop_disabled("floe_server_with_java_client") {
        return;
    }
    let server = FloeServer::start(Properties::new()).await;
    let endpoint = server.endpoint();
    let report = tokio::task::spawn_blocking(move || run_java_client(&endpoint, &[]))
        .await
        .expect("client thread");
    server.stop().await;
    if let Some(report) = report {
        report.assert_all_pass(CHECKS);
    }
}

/// floe against itself with the same checks (not interop, but it separates floe
/// bugs from interop bugs when a cell above fails).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floe_client_against_floe_server() {
    if interop_disabled("floe_client_against_floe_server") {
        return;
    }
    let server = FloeServer::start(Properties::new()).await;
    let report = floe_client::run_floe_client(
        "floe_client->floe_server",
        &server.endpoint(),
        Properties::new(),
        None,
    )
    .await;
    server.stop().await;
    report.assert_all_pass(CHECKS);
}

/// Hostile frames to a floe server, three rounds, while the Python client runs
/// every check on the same server: each case must get Ice's reaction and the
/// client must not notice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_frames_against_floe_server() {
    if interop_disabled("hostile_frames_against_floe_server") {
        return;
    }
    let server = FloeServer::start(Properties::new()).await;
    let port = server.port;
    let endpoint = server.endpoint();
    let attacker = tokio::task::spawn_blocking(move || {
        let mut problems = Vec::new();
        for _ in 0..3 {
            problems.extend(hostile::run_all(port));
        }
        problems
    });
    let report = tokio::task::spawn_blocking(move || run_py_client(&endpoint, &[]))
        .await
        .expect("client thread");
    let problems = attacker.await.expect("attacker thread");
    // The server must still answer after all of it.
    let still_up = tokio::task::spawn_blocking(move || hostile::connect(port).map(drop))
        .await
        .expect("probe");
    server.stop().await;
    let mut all: Vec<String> = problems.iter().map(|p| format!("hostile {p}")).collect();
    all.extend(
        report
            .problems(CHECKS)
            .into_iter()
            .map(|p| format!("py_client {p}")),
    );
    if let Err(e) = still_up {
        all.push(format!("floe server stopped accepting: {e}"));
    }
    assert!(
        all.is_empty(),
        "hostile frames vs floe server:\n  {}",
        all.join("\n  ")
    );
}

/// Compression on the wire, both directions, checked by a relay that parses
/// frame headers: requests of >= 100 bytes from a compressing client go out with
/// status 2, and the server answers them with status 2.
async fn compressed_both_ways(tap: &wiretap::Wiretap, who: &str) {
    use wiretap::Direction::*;
    let frames = tap.frames();
    assert!(
        tap.count(ToServer, 2) >= 1,
        "{who}: no compressed request: {frames:?}"
    );
    assert!(
        tap.count(ToClient, 2) >= 1,
        "{who}: no compressed reply: {frames:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compression_python_client_to_floe_server() {
    if interop_disabled("compression_python_client_to_floe_server") {
        return;
    }
    let server = FloeServer::start(Properties::new()).await;
    let tap = wiretap::Wiretap::start(server.port);
    // ice_compress(true) on the proxy.
    let ep = tap.endpoint();
    let report = tokio::task::spawn_blocking(move || run_py_client(&ep, &["--only=compress"]))
        .await
        .expect("client thread");
    report.assert_all_pass(&["compress"]);
    compressed_both_ways(&tap, "ice_compress").await;
    // -z on the endpoint: every request of the client is marked for compression.
    tap.clear();
    let ep = format!("{} -z", tap.endpoint());
    let report = tokio::task::spawn_blocking(move || run_py_client(&ep, &["--only=byte_seq,seqs"]))
        .await
        .expect("client thread");
    report.assert_all_pass(&["byte_seq", "seqs"]);
    compressed_both_ways(&tap, "-z").await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compression_floe_client_to_cpp_server() {
    if interop_disabled("compression_floe_client_to_cpp_server") {
        return;
    }
    let server = tokio::task::spawn_blocking(|| start_cpp_server(&[]))
        .await
        .expect("start");
    let tap = wiretap::Wiretap::start(server.port);
    floe_client::run_floe_client(
        "floe_client(ice_compress)",
        &tap.endpoint(),
        Properties::new(),
        Some(&["compress"]),
    )
    .await
    .assert_all_pass(&["compress"]);
    compressed_both_ways(&tap, "ice_compress").await;
    tap.clear();
    let ep = format!("{} -z", tap.endpoint());
    floe_client::run_floe_client(
        "floe_client(-z)",
        &ep,
        Properties::new(),
        Some(&["byte_seq", "seqs"]),
    )
    .await
    .assert_all_pass(&["byte_seq", "seqs"]);
    compressed_both_ways(&tap, "-z").await;
}

/// Encoding 1.0 requests (enums as byte/short, proxies without versions): a
/// floe server must answer in 1.0, and a floe client with `-e 1.0` proxies must
/// be understood by Ice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encoding_1_0_python_client_to_floe_server() {
    if interop_disabled("encoding_1_0_python_client_to_floe_server") {
        return;
    }
    let checks = encoding_1_0_checks();
    let only = format!("--only={}", checks.join(","));
    floe_server_with(move |ep| run_py_client(&ep, &["--Ice.Default.EncodingVersion=1.0", &only]))
        .await
        .assert_all_pass(&checks);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encoding_1_0_floe_client_to_cpp_server() {
    if interop_disabled("encoding_1_0_floe_client_to_cpp_server") {
        return;
    }
    let server = tokio::task::spawn_blocking(|| start_cpp_server(&[]))
        .await
        .expect("start");
    let checks = encoding_1_0_checks();
    floe_client::run_floe_client_with_options(
        "floe_client(-e 1.0)->cpp_server",
        &server.endpoint(),
        " -e 1.0",
        Properties::new(),
        Some(&checks),
    )
    .await
    .assert_all_pass(&checks);
}

/// ACM (docs/protocol.md §1.5): the floe server heartbeats while it dispatches, so a
/// Python client whose ACM closes silent connections keeps a 2.5 s call alive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acm_python_client_long_call_to_floe_server() {
    if interop_disabled("acm_python_client_long_call_to_floe_server") {
        return;
    }
    let props = Properties::new();
    props.set("Ice.ACM.Server.Timeout", "1");
    let server = FloeServer::start(props).await;
    let endpoint = server.endpoint();
    let args = [
        "--Ice.ACM.Client.Timeout=1",
        "--Ice.ACM.Client.Heartbeat=0",
        "--Ice.ACM.Client.Close=3",
        "--only=long_call",
    ];
    let report = tokio::task::spawn_blocking(move || run_py_client(&endpoint, &args))
        .await
        .expect("client thread");
    server.stop().await;
    report.assert_all_pass(&["long_call"]);
}

/// ACM: a floe client with client ACM (Timeout=1, Close=3, no heartbeats) keeps
/// a 2.5 s call to a C++ server that heartbeats on dispatch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acm_floe_client_long_call_to_cpp_server() {
    if interop_disabled("acm_floe_client_long_call_to_cpp_server") {
        return;
    }
    let server = tokio::task::spawn_blocking(|| {
        start_cpp_server(&["--Ice.ACM.Server.Timeout=1", "--Ice.ACM.Server.Heartbeat=1"])
    })
    .await
    .expect("start");
    let props = Properties::new();
    props.set("Ice.ACM.Client.Timeout", "1");
    props.set("Ice.ACM.Client.Heartbeat", "0");
    props.set("Ice.ACM.Client.Close", "3");
    floe_client::run_floe_client(
        "floe_client(ACM)",
        &server.endpoint(),
        props,
        Some(&["long_call"]),
    )
    .await
    .assert_all_pass(&["long_call"]);
}

/// ACM: a C++ server that drops connections idle for 1 s (Close=4) keeps a floe
/// client's connection alive when the client heartbeats (Heartbeat=3, Always;
/// Close=0 so that the client does not close it itself).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acm_floe_client_heartbeats_keep_cpp_connection() {
    if interop_disabled("acm_floe_client_heartbeats_keep_cpp_connection") {
        return;
    }
    let server = tokio::task::spawn_blocking(|| {
        start_cpp_server(&["--Ice.ACM.Server.Timeout=1", "--Ice.ACM.Server.Close=4"])
    })
    .await
    .expect("start");
    let props = Properties::new();
    props.set("Ice.ACM.Client.Timeout", "1");
    props.set("Ice.ACM.Client.Heartbeat", "3");
    props.set("Ice.ACM.Client.Close", "0");
    floe_client::run_floe_client(
        "floe_client(heartbeats)",
        &server.endpoint(),
        props,
        Some(&["acm_idle_heartbeat"]),
    )
    .await
    .assert_all_pass(&["acm_idle_heartbeat"]);
}

/// ACM graceful idle close (CloseConnection, docs/protocol.md §1.4) from a C++ server:
/// the floe client notices and reconnects for its next call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acm_floe_client_reconnects_after_cpp_idle_close() {
    if interop_disabled("acm_floe_client_reconnects_after_cpp_idle_close") {
        return;
    }
    let server = tokio::task::spawn_blocking(|| {
        start_cpp_server(&["--Ice.ACM.Server.Timeout=1", "--Ice.ACM.Server.Close=1"])
    })
    .await
    .expect("start");
    floe_client::run_floe_client(
        "floe_client(idle close)",
        &server.endpoint(),
        Properties::new(),
        Some(&["idle_close_reconnect"]),
    )
    .await
    .assert_all_pass(&["idle_close_reconnect"]);
}

/// ACM graceful idle close from a floe server: the Python client reconnects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acm_python_client_reconnects_after_floe_idle_close() {
    if interop_disabled("acm_python_client_reconnects_after_floe_idle_close") {
        return;
    }
    let props = Properties::new();
    props.set("Ice.ACM.Server.Timeout", "1");
    props.set("Ice.ACM.Server.Close", "1");
    let server = FloeServer::start(props).await;
    let endpoint = server.endpoint();
    let report = tokio::task::spawn_blocking(move || {
        run_py_client(&endpoint, &["--only=idle_close_reconnect"])
    })
    .await
    .expect("client thread");
    server.stop().await;
    report.assert_all_pass(&["idle_close_reconnect"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encoding_1_0_cpp_client_to_floe_server() {
    if interop_disabled("encoding_1_0_cpp_client_to_floe_server") {
        return;
    }
    let checks = encoding_1_0_checks();
    let only = format!("--only={}", checks.join(","));
    floe_server_with(move |ep| run_cpp_client(&ep, &["--Ice.Default.EncodingVersion=1.0", &only]))
        .await
        .assert_all_pass(&checks);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encoding_1_0_floe_client_to_python_server() {
    if interop_disabled("encoding_1_0_floe_client_to_python_server") {
        return;
    }
    let server = tokio::task::spawn_blocking(|| start_py_server(&[]))
        .await
        .expect("start");
    let checks = encoding_1_0_checks();
    floe_client::run_floe_client_with_options(
        "floe_client(-e 1.0)->py_server",
        &server.endpoint(),
        " -e 1.0",
        Properties::new(),
        Some(&checks),
    )
    .await
    .assert_all_pass(&checks);
}

/// The heartbeats a floe server sends during a 2.5 s dispatch with ACM
/// Timeout=1 s (OnDispatch) must come as often as a real Ice server's (every
/// 0.5 s; checked against the C++ server in interop_peers).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acm_floe_server_heartbeat_timing() {
    if interop_disabled("acm_floe_server_heartbeat_timing") {
        return;
    }
    let props = Properties::new();
    props.set("Ice.ACM.Server.Timeout", "1");
    let server = FloeServer::start(props).await;
    let port = server.port;
    let beats = tokio::task::spawn_blocking(move || hostile::heartbeats_during_call(port, 2500))
        .await
        .expect("raw client");
    server.stop().await;
    let beats = beats.expect("call");
    hostile::check_heartbeat_timing(&beats).expect("floe server heartbeat timing");
}

/// Batch oneways from a floe client really travel as one BatchRequest frame
/// (type 1) after the flush, and the C++ server dispatches both requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_frame_floe_client_to_cpp_server() {
    if interop_disabled("batch_frame_floe_client_to_cpp_server") {
        return;
    }
    let server = tokio::task::spawn_blocking(|| start_cpp_server(&[]))
        .await
        .expect("start");
    let tap = wiretap::Wiretap::start(server.port);
    floe_client::run_floe_client(
        "floe_client(batch)",
        &tap.endpoint(),
        Properties::new(),
        Some(&["batch_oneway"]),
    )
    .await
    .assert_all_pass(&["batch_oneway"]);
    let batches = tap
        .frames()
        .into_iter()
        .filter(|f| f.direction == wiretap::Direction::ToServer && f.message_type == 1)
        .count();
    assert_eq!(
        batches,
        1,
        "expected one BatchRequest frame: {:?}",
        tap.frames()
    );
}
