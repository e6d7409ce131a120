//! A generated dispatcher serving a real Ice client: a Python Ice 3.7
//! client (tests/py/client.py) calls a floe server of `Rich::SubEcho`
//! and checks results, out-parameters, optionals, `ice_ids`, and the user
//! exceptions the dispatcher encodes.
#![cfg(not(floe_no_ice_slice))]

mod common;
mod python;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use floe::runtime::Communicator;
use floe::Identity;
use floe_codegen_tests::rich;
use python::Peer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_ice_client_calls_generated_dispatcher() {
    if !python::python_available() {
        return;
    }
    let python = python::PYTHON;
    let communicator = Communicator::new();
    let adapter = communicator
        .create_object_adapter_with_endpoints("Echo", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    adapter
        .add(
            Identity::from_name("echo"),
            rich::SubEchoDispatcher::new(common::Echo),
        )
        .unwrap();
    adapter.activate();
    let port = adapter.endpoints()[0].to_string();
    let port = port
        .split_whitespace()
        .skip_while(|w| *w != "-p")
        .nth(1)
        .expect("a port in the endpoint")
        .to_owned();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let child = Command::new(python)
        .arg(dir.join("tests/py/client.py"))
        .arg(dir.join("../idl/tests/codegen/Rich.ice"))
        .arg("/usr/share/ice/slice")
        .arg(&port)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python3");
    let mut peer = Peer(child);
    let mut waited = Duration::ZERO;
    let status = loop {
        if let Some(status) = peer.0.try_wait().expect("wait python3") {
            break status;
        }
        assert!(
            waited < Duration::from_secs(60),
            "client.py did not finish in 60 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += Duration::from_millis(50);
    };
    let mut out = String::new();
    let mut err = String::new();
    std::io::Read::read_to_string(peer.0.stdout.as_mut().expect("piped"), &mut out).unwrap();
    std::io::Read::read_to_string(peer.0.stderr.as_mut().expect("piped"), &mut err).unwrap();
    assert!(
        status.success() && out.trim() == "ok",
        "client.py: {status}\n{out}\n{err}"
    );
    communicator.destroy().await;
}
