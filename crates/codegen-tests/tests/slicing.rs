//! `["format:sliced"]` from generated code, against real Ice 3.7 peers.
//!
//! The server knows `Derived` and `DerivedError` (`slice/Slicing.ice`); the
//! client does not (`slice/SlicingBase.ice`). Where the interface or the
//! operation is `["format:sliced"]`, the client slices what it receives to
//! the base it knows; in the compact format it cannot (Ice raises
//! `NoValueFactoryException` / `UnknownUserException`).
//!
//! 1. The Python client against a Python server: Ice ↔ Ice, the reference.
//! 2. The same Python client against a floe server (generated dispatchers):
//!    every outcome must be the reference's.
//! 3. A floe client generated from the base file only, against the Python
//!    server and against the floe server: the same outcomes in Rust terms.
//! 4. `Ice.Default.SlicedFormat=1` makes a floe server slice the operations
//!    that have no format metadata too.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use floe::codegen::{ClassRef, Current, DispatchError};
use floe::runtime::Communicator;
use floe::Identity;
use floe_codegen_tests::slicing_base_gen::slicing as client;
use floe_codegen_tests::slicing_gen::slicing as server;

mod python;

use python::{python_available, Peer, PYTHON};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The Python reference server; its port.
fn python_server() -> (Peer, u16) {
    let mut child = Command::new(PYTHON)
        .arg(dir().join("tests/py/slicing_server.py"))
        .arg(dir().join("slice/Slicing.ice"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start slicing_server.py");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("read the port");
    let port = line
        .trim()
        .strip_prefix("port ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("slicing_server.py said {line:?}"));
    (Peer(child), port)
}

/// Runs the Python client (base types only) against `port`: its lines.
fn python_client(port: u16) -> Vec<String> {
    let out = Command::new(PYTHON)
        .arg(dir().join("tests/py/slicing_client.py"))
        .arg(dir().join("slice/SlicingBase.ice"))
        .arg(port.to_string())
        .output()
        .expect("run slicing_client.py");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && text.lines().last() == Some("done"),
        "slicing_client.py: {}\n{text}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines().map(str::to_owned).collect()
}

/// The floe server's servants: what the Python server does.
struct Sliced;
struct Compact;

fn derived() -> Option<ClassRef<server::Base>> {
    let d = ClassRef::new(server::Derived {
        base: server::Base { b: "base".into() },
        d: "derived".into(),
    });
    Some(d.upcast())
}

fn derived_error() -> DispatchError {
    server::DerivedError {
        base: server::BaseError {
            reason: "derived".into(),
        },
        code: 7,
    }
    .into()
}

impl server::SlicedServer for Sliced {
    async fn derived_as_base(
        &self,
        _: &Current,
    ) -> Result<Option<ClassRef<server::Base>>, DispatchError> {
        Ok(derived())
    }
    async fn throw_derived(&self, _: &Current) -> Result<(), DispatchError> {
        Err(derived_error())
    }
}

impl server::CompactServer for Compact {
    async fn derived_as_base(
        &self,
        _: &Current,
    ) -> Result<Option<ClassRef<server::Base>>, DispatchError> {
        Ok(derived())
    }
    async fn throw_derived(&self, _: &Current) -> Result<(), DispatchError> {
        Err(derived_error())
    }
    async fn sliced_derived_as_base(
        &self,
        _: &Current,
    ) -> Result<Option<ClassRef<server::Base>>, DispatchError> {
        Ok(derived())
    }
}

/// A floe server of both objects; its communicator and port.
async fn floe_server(props: floe::runtime::Properties) -> (Communicator, u16) {
    let communicator = Communicator::with_properties(props);
    let adapter = communicator
        .create_object_adapter_with_endpoints("S", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    adapter
        .add(
            Identity::from_name("sliced"),
            server::SlicedServerDispatcher::new(Sliced),
        )
        .unwrap();
    adapter
        .add(
            Identity::from_name("compact"),
            server::CompactServerDispatcher::new(Compact),
        )
        .unwrap();
    adapter.activate();
    let port = adapter.endpoints()[0].port;
    (communicator, port)
}

/// The floe client (base types only) against `port`: the outcomes in the
/// Python client's words.
async fn floe_client(port: u16) -> Vec<String> {
    let communicator = Communicator::new();
    let proxy = |id: &str| {
        communicator
            .string_to_proxy(&format!("{id}:tcp -h 127.0.0.1 -p {port} -t 10000"))
            .unwrap()
    };
    let sliced = client::SlicedServerPrx::unchecked_cast(proxy("sliced"));
    let compact = client::CompactServerPrx::unchecked_cast(proxy("compact"));
    let base = |r: floe::runtime::Result<Option<ClassRef<client::Base>>>| match r {
        Ok(Some(b)) => format!("Base(b={}, type={})", b.read().b, b.ice_id()),
        Ok(None) => "returned None".to_owned(),
        Err(e) => ice_name(&e),
    };
    let error = |r: floe::runtime::Result<()>| match r {
        Ok(()) => "returned None".to_owned(),
        Err(e) => match e.user_exception::<client::BaseError>() {
            Some(b) => format!("BaseError(reason={}, type={})", b.reason, e.ice_name()),
            None => ice_name(&e),
        },
    };
    let lines = vec![
        format!(
            "sliced.derivedAsBase: {}",
            base(sliced.derived_as_base().await)
        ),
        format!(
            "sliced.throwDerived: {}",
            error(sliced.throw_derived().await)
        ),
        format!(
            "compact.derivedAsBase: {}",
            base(compact.derived_as_base().await)
        ),
        format!(
            "compact.throwDerived: {}",
            error(compact.throw_derived().await)
        ),
        format!(
            "compact.slicedDerivedAsBase: {}",
            base(compact.sliced_derived_as_base().await)
        ),
        "done".to_owned(),
    ];
    communicator.destroy().await;
    lines
}

/// The short name of the Ice exception an error maps to
/// (`::Ice::NoValueFactoryException` -> `NoValueFactoryException`).
fn ice_name(e: &floe::runtime::Error) -> String {
    e.ice_name().trim_start_matches("::Ice::").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sliced_format_lets_a_client_slice_what_it_does_not_know() {
    if !python_available() {
        return;
    }
    // 1. Ice <-> Ice.
    let (mut py_server, py_port) = python_server();
    let reference = python_client(py_port);
    assert_eq!(
        reference,
        [
            "sliced.derivedAsBase: Base(b=base, type=::Slicing::Base)",
            "sliced.throwDerived: BaseError(reason=derived, type=::Slicing::BaseError)",
            "compact.derivedAsBase: NoValueFactoryException",
            "compact.throwDerived: UnknownUserException",
            "compact.slicedDerivedAsBase: Base(b=base, type=::Slicing::Base)",
            "done",
        ],
        "the Ice <-> Ice reference changed"
    );

    // 2. Python client -> floe server.
    let (floe, floe_port) = floe_server(floe::runtime::Properties::new()).await;
    assert_eq!(python_client(floe_port), reference, "Python -> floe server");

    // 3. floe client -> Python server, and -> floe server.
    assert_eq!(
        floe_client(py_port).await,
        reference,
        "floe client -> Python"
    );
    assert_eq!(
        floe_client(floe_port).await,
        reference,
        "floe client -> floe"
    );

    // 4. `Ice.Default.SlicedFormat=1` on the floe server: operations
    //    without format metadata are sliced too.
    let props = floe::runtime::Properties::new();
    props.set("Ice.Default.SlicedFormat", "1");
    let (sliced_default, port) = floe_server(props).await;
    let lines = python_client(port);
    assert_eq!(
        lines[2..4],
        [
            "compact.derivedAsBase: Base(b=base, type=::Slicing::Base)",
            "compact.throwDerived: BaseError(reason=derived, type=::Slicing::BaseError)",
        ],
        "Ice.Default.SlicedFormat=1"
    );
    sliced_default.destroy().await;

    if let Some(stdin) = py_server.0.stdin.as_mut() {
        let _ = stdin.write_all(b"");
    }
    floe.destroy().await;
}
