//! The Rust-first hello is the Slice hello: its `.ice` export is
//! `examples/hello/slice/Hello.ice`, its proxy calls a servant generated
//! from that Slice file and the other way round, and it talks to Ice for
//! Python both ways, the
//! Python side loading the exported file (real Ice 3.7 peers; skipped with
//! `FLOE_NO_INTEROP=1`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};

use floe::runtime::{Communicator, Current, DispatchError};
use floe::Identity;
use floe_example_hello_derive::{HelloPrx, HelloSlice};

const PYTHON: &str = "/usr/bin/python3";

/// The hello example's code, generated from its Slice file.
#[allow(dead_code, clippy::all)]
mod from_slice {
    floe::slice!("../hello/slice/Hello.ice");
}

fn hello_ice() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../hello/slice/Hello.ice")
}

fn model(file: &str, text: &str) -> floe_idl::model::Model {
    match floe_idl::compile_source(Path::new(file), text, &Default::default()) {
        Ok(out) => out.model,
        Err(f) => panic!("{}\n--- {file}:\n{text}", f.rendered()),
    }
}

#[test]
fn exported_slice_is_the_hello_examples_slice() {
    let out = Command::new(env!("CARGO_BIN_EXE_export-slice"))
        .output()
        .expect("export runs");
    assert!(out.status.success());
    let exported = String::from_utf8(out.stdout).expect("UTF-8");
    assert_eq!(exported, HelloSlice::ice_slice());
    let original = std::fs::read_to_string(hello_ice()).expect("Hello.ice");
    // The same definitions, doc comments included, once both are
    // compiled: only layout and comments outside definitions differ.
    let (exported, original) = (
        model("Exported.ice", &exported),
        model("Hello.ice", &original),
    );
    assert_eq!(
        floe_idl::export::to_slice(&exported),
        floe_idl::export::to_slice(&original)
    );
}

/// A servant of the trait generated from `Hello.ice`.
struct SliceHello(std::sync::atomic::AtomicUsize);

impl from_slice::demo::Hello for SliceHello {
    async fn say_hello(&self, _: i32, _: &Current) -> Result<(), DispatchError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
    async fn shutdown(&self, _: &Current) -> Result<(), DispatchError> {
        Ok(())
    }
}

/// A servant of the Rust-first trait.
struct DeriveHello(std::sync::atomic::AtomicUsize);

impl floe_example_hello_derive::Hello for DeriveHello {
    async fn say_hello(&self, _: i32, _: &Current) -> Result<(), DispatchError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
    async fn shutdown(&self, _: &Current) -> Result<(), DispatchError> {
        Ok(())
    }
}

#[tokio::test]
async fn slice_generated_client_calls_the_derive_servant() {
    let communicator = Communicator::new();
    let adapter = communicator
        .create_object_adapter_with_endpoints("Hello", "tcp -h 127.0.0.1 -p 0")
        .await
        .expect("adapter");
    let servant = std::sync::Arc::new(DeriveHello(Default::default()));
    let proxy = adapter
        .add(
            Identity::from_name("hello"),
            std::sync::Arc::new(floe_example_hello_derive::HelloDispatcher(servant.clone())),
        )
        .expect("added");
    adapter.activate();
    let hello = from_slice::demo::HelloPrx::checked_cast(proxy)
        .await
        .expect("ice_isA")
        .expect("a ::Demo::Hello");
    hello.say_hello(0).await.expect("twoway");
    hello.ice_oneway().say_hello(0).await.expect("oneway");
    hello.ice_ping().await.expect("ping");
    assert_eq!(servant.0.load(std::sync::atomic::Ordering::Relaxed), 2);
    communicator.destroy().await;
}

#[tokio::test]
async fn derive_client_calls_the_slice_generated_servant() {
    let communicator = Communicator::new();
    let adapter = communicator
        .create_object_adapter_with_endpoints("Hello", "tcp -h 127.0.0.1 -p 0")
        .await
        .expect("adapter");
    let servant = std::sync::Arc::new(SliceHello(Default::default()));
    let proxy = adapter
        .add(
            Identity::from_name("hello"),
            std::sync::Arc::new(from_slice::demo::HelloDispatcher(servant.clone())),
        )
        .expect("added");
    adapter.activate();
    let hello = HelloPrx::checked_cast(proxy)
        .await
        .expect("ice_isA")
        .expect("a ::Demo::Hello");
    hello.say_hello(0).await.expect("twoway");
    let batch = hello.ice_batch_oneway();
    batch.say_hello(0).await.expect("queued");
    batch.ice_flush_batch_requests().await.expect("flushed");
    hello.ice_ping().await.expect("ping");
    assert_eq!(servant.0.load(std::sync::atomic::Ordering::Relaxed), 2);
    communicator.destroy().await;
}

/// Starts a server and returns it with the endpoint it printed.
fn start(mut cmd: Command) -> (Child, String, BufReader<ChildStdout>) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("a line");
    let endpoint = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    (child, endpoint, out)
}

fn run(mut cmd: Command) -> Output {
    let out = cmd.output().expect("the client runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Waits for the server to exit 0 and returns the rest of its output.
fn finish(mut child: Child, out: BufReader<ChildStdout>) -> String {
    let rest: Vec<String> = out.lines().map_while(Result::ok).collect();
    assert!(child.wait().expect("the server exits").success());
    rest.join("\n")
}

fn interop() -> bool {
    std::env::var_os("FLOE_NO_INTEROP").is_none_or(|v| v != "1")
}

fn floe_client(endpoint: &str, shutdown: bool) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_derive-client"));
    cmd.arg(format!("--Hello.Proxy=hello:{endpoint}"));
    if shutdown {
        cmd.arg("--shutdown");
    }
    cmd
}

/// A Python script of the hello example, on the Slice file `slice`.
fn python(script: &str, slice: &Path) -> Command {
    let mut cmd = Command::new(PYTHON);
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../hello/python/{script}")))
        .env("HELLO_SLICE", slice);
    cmd
}

/// The export written to a temporary file, for Python to load.
fn exported_file() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("Hello.ice");
    run({
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_export-slice"));
        cmd.arg(&path);
        cmd
    });
    (dir, path)
}

#[test]
fn derive_server_with_derive_and_python_clients() {
    let mut server = Command::new(env!("CARGO_BIN_EXE_derive-server"));
    server.arg("--Hello.Endpoints=tcp -h 127.0.0.1 -p 0");
    let (child, endpoint, out) = start(server);
    let printed = run(floe_client(&endpoint, !interop())).stdout;
    assert_eq!(
        String::from_utf8_lossy(&printed).trim(),
        "said hello 4 times"
    );
    let mut greetings = 4;
    if interop() {
        let (_dir, slice) = exported_file();
        let mut py = python("client.py", &slice);
        py.arg(format!("--Hello.Proxy=hello:{endpoint}"))
            .arg("--shutdown");
        let printed = run(py).stdout;
        assert_eq!(
            String::from_utf8_lossy(&printed).trim(),
            "said hello 4 times"
        );
        greetings += 4;
    }
    let log = finish(child, out);
    assert_eq!(log.matches("Hello World!").count(), greetings, "{log}");
    assert!(log.ends_with("Shutting down..."), "{log}");
}

#[test]
fn python_server_with_the_derive_client() {
    if !interop() {
        return;
    }
    let (_dir, slice) = exported_file();
    let mut server = python("server.py", &slice);
    server.arg("--Hello.Endpoints=tcp -h 127.0.0.1 -p 0");
    let (child, endpoint, out) = start(server);
    run(floe_client(&endpoint, true));
    let log = finish(child, out);
    assert_eq!(log.matches("Hello World!").count(), 4, "{log}");
}
