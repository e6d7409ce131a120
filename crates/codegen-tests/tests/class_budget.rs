//! The class-graph memory budget against real Ice 3.7 peers
//! (`tests/py/class_graph_peer.py`, `slice/ClassGraph.ice`).
//!
//! 300,000 instances of a class without members fit in a 900 KB frame
//! (under the default `Ice.MessageSizeMax`) but would take some 30 MB
//! decoded: over the default budget (24 bytes per encapsulation byte plus
//! 1 MiB). A floe server answers such a request with the
//! `UnknownLocalException` Ice servers send for a `MarshalException` and
//! keeps the connection; a floe client gets the `MarshalException`.
//! Ordinary graphs (instances with a member, or a few thousand empty ones)
//! go through both ways.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use floe::runtime::Communicator;
use floe::Identity;
use floe_codegen_tests::class_graph_gen::graph;
use floe_codegen_tests::graph_sink::GraphSink;

mod python;

use python::{python_available, Peer, PYTHON};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn peer(args: &[&str]) -> Peer {
    let child = Command::new(PYTHON)
        .arg(dir().join("tests/py/class_graph_peer.py"))
        .arg(dir().join("slice/ClassGraph.ice"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the Python Ice peer");
    Peer(child)
}

/// The peer's stdout lines up to `done` (or its end).
fn lines(peer: &mut Peer) -> Vec<String> {
    let out = peer.0.stdout.take().expect("piped stdout");
    BufReader::new(out)
        .lines()
        .map_while(Result::ok)
        .take_while(|l| l != "done")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_floe_server_refuses_a_python_clients_oversized_class_graph() {
    if !python_available() {
        return;
    }
    let communicator = Communicator::new();
    let adapter = communicator
        .create_object_adapter_with_endpoints("Graph", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    adapter
        .add(
            Identity::from_name("sink"),
            graph::SinkDispatcher::new(GraphSink),
        )
        .unwrap();
    adapter.activate();
    let port = adapter.endpoints()[0].port.to_string();
    let out = tokio::task::spawn_blocking(move || lines(&mut peer(&["client", &port])))
        .await
        .unwrap();
    communicator.destroy().await;
    assert_eq!(out.len(), 4, "{out:#?}");
    assert_eq!(out[0], "countEmpty(5000): returned 5000");
    assert!(
        out[1].starts_with("countEmpty(300000): UnknownLocalException: ")
            && out[1].contains("MarshalException")
            && out[1].contains("class graph too large"),
        "{}",
        out[1]
    );
    assert_eq!(out[2], "count(100000): returned 100000");
    // The connection outlived the refusal.
    assert_eq!(out[3], "ping: returned None");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_floe_client_refuses_a_python_servers_oversized_class_graph() {
    if !python_available() {
        return;
    }
    let mut server = peer(&["server"]);
    let mut port = String::new();
    BufReader::new(server.0.stdout.as_mut().expect("piped stdout"))
        .read_line(&mut port)
        .unwrap();
    let communicator = Communicator::new();
    let sink = graph::SinkPrx::unchecked_cast(
        communicator
            .string_to_proxy(&format!(
                "sink:tcp -h 127.0.0.1 -p {} -t 20000",
                port.trim()
            ))
            .unwrap(),
    );
    match sink.make_empty(300_000).await {
        Err(e) => {
            assert_eq!(e.ice_name(), "::Ice::MarshalException", "{e}");
            assert!(e.to_string().contains("class graph too large"), "{e}");
        }
        Ok(v) => panic!("{} instances accepted", v.len()),
    }
    assert_eq!(sink.make_empty(5000).await.unwrap().len(), 5000);
    let items = sink.make(100_000).await.unwrap();
    assert_eq!(items.iter().flatten().count(), 100_000);
    communicator.destroy().await;
}
