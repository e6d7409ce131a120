//! The Interop suite's Ice 3.7 peers (`crates/testkit/interop/`: one
//! `Interop::Test` interface, servers in Python, C++ and Java, clients in
//! Python, C++, JavaScript and Java that all run the same [`CHECKS`]), and
//! how to start them. floe's own side of the suite (its server and client
//! driver) lives with floe-runtime's tests.
//!
//! Servers print `READY <port>` ([`Server`]); clients print a report
//! ([`ClientReport`]). The C++ peers are built once per stamp under
//! `target/interop-cpp/`, the Node peer's packages live in
//! `target/interop-node/`, the Java peer's classes in `target/interop-java/`.

mod java;
mod node;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

pub use java::{
    java_peer, run_java_client, run_java_debian_client, start_java_debian_server, JAVA_DEBIAN_JARS,
    JAVA_ICE,
};
pub use node::{node_peer, run_node_client};

use crate::cpp_build::CppBuild;
use crate::peer::{Peer, READY_TIMEOUT};
use crate::ports::endpoint;
use crate::python::{require_python_ice, PYTHON};
use crate::report::ClientReport;

/// How long a client may take to run all its checks.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(180);

/// The checks every interop client runs, in order (py_client.py, cpp_client.cpp and
/// the floe driver print exactly these names).
pub const CHECKS: &[&str] = &[
    "ping",
    "is_a",
    "ids",
    "prims",
    "prims_extremes",
    "byte_seq",
    "seqs",
    "dicts",
    "enums",
    "structs",
    "optionals_set",
    "optionals_unset",
    "class_base",
    "class_derived",
    "class_null",
    "class_graph_cycle",
    "class_shared",
    "class_optional_members",
    "class_unknown_sliced",
    "exc_base",
    "exc_derived",
    "exc_none",
    "exc_sliced_known",
    "exc_sliced_unknown",
    "exc_undeclared",
    "exc_non_ice",
    "object_not_exist",
    "facet_not_exist",
    "operation_not_exist",
    "proxy_param",
    "facets",
    "context",
    "oneway",
    "batch_oneway",
    "compress",
    "idempotent_retry",
    "normal_no_retry",
    "concurrency",
    "bidir",
];

/// The checks that apply to encoding 1.0 requests (`-e 1.0`): all but the
/// optional values (classes and user exceptions use the 1.0 layout).
pub fn encoding_1_0_checks() -> Vec<&'static str> {
    CHECKS
        .iter()
        .copied()
        // Optional values do not exist in 1.0; `class_optional_members`
        // fails between two real Ice peers in 1.0 as well.
        .filter(|c| !c.starts_with("optionals_") && *c != "class_optional_members")
        .collect()
}

/// The directory holding Interop.ice and the peer sources.
pub fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("interop")
}

/// A running server peer and the port it listens on.
pub struct Server {
    /// The process guard.
    pub peer: Peer,
    /// The port from the `READY <port>` line.
    pub port: u16,
}

impl Server {
    /// `tcp -h 127.0.0.1 -p <port>`.
    pub fn endpoint(&self) -> String {
        endpoint(self.port)
    }

    fn start(name: &str, cmd: Command) -> Server {
        let mut peer = Peer::spawn(name, cmd);
        let rest = peer.wait_ready("READY ", READY_TIMEOUT);
        let port = rest
            .parse()
            .unwrap_or_else(|_| panic!("{name}: bad ready line `READY {rest}`"));
        Server { peer, port }
    }
}

/// Starts py_server.py on a free port (extra `--Ice.*` arguments allowed).
pub fn start_py_server(extra: &[&str]) -> Server {
    require_python_ice();
    let mut cmd = Command::new(PYTHON);
    cmd.arg(interop_dir().join("py_server.py"))
        .arg("0")
        .args(extra);
    Server::start("py_server", cmd)
}

/// Starts the C++11 server on a free port (extra `--Ice.*` arguments allowed).
pub fn start_cpp_server(extra: &[&str]) -> Server {
    let mut cmd = Command::new(&cpp_peers().server);
    cmd.arg("0").args(extra);
    Server::start("cpp_server", cmd)
}

/// Runs py_client.py against `endpoint` to completion.
pub fn run_py_client(endpoint: &str, extra: &[&str]) -> ClientReport {
    require_python_ice();
    let mut cmd = Command::new(PYTHON);
    cmd.arg(interop_dir().join("py_client.py"))
        .arg(endpoint)
        .args(extra);
    ClientReport::run("py_client", cmd, CLIENT_TIMEOUT)
}

/// Runs the C++11 client against `endpoint` to completion.
pub fn run_cpp_client(endpoint: &str, extra: &[&str]) -> ClientReport {
    let mut cmd = Command::new(&cpp_peers().client);
    cmd.arg(endpoint).args(extra);
    ClientReport::run("cpp_client", cmd, CLIENT_TIMEOUT)
}

/// Paths of the built C++11 peers.
pub struct CppPeers {
    /// cpp_server binary.
    pub server: PathBuf,
    /// cpp_client binary.
    pub client: PathBuf,
}

/// Builds (once per stamp: see [`CppBuild`]) and returns the C++11 peers
/// under `target/interop-cpp/`.
///
/// # Panics
///
/// When they cannot be built (slice2cpp, g++ or libIce++11 missing).
pub fn cpp_peers() -> &'static CppPeers {
    static PEERS: OnceLock<Result<CppPeers, String>> = OnceLock::new();
    let peers = PEERS.get_or_init(|| {
        let src = interop_dir();
        let out = CppBuild {
            dir: "interop-cpp",
            include: &src,
            slices: &[src.join("Interop.ice"), src.join("ServerOnly.ice")],
            sources: &[src.join("cpp_server.cpp"), src.join("cpp_client.cpp")],
            programs: &[
                ("cpp_server", &["cpp_server", "Interop", "ServerOnly"]),
                ("cpp_client", &["cpp_client", "Interop"]),
            ],
        }
        .build()?;
        Ok(CppPeers {
            server: out.join("cpp_server"),
            client: out.join("cpp_client"),
        })
    });
    match peers {
        Ok(peers) => peers,
        Err(e) => panic!("C++ interop peers unavailable: {e}"),
    }
}
