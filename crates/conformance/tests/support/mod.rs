//! The conformance suite's harness: the Ice peers (`peers/`: a Python and
//! a C++ client and server, the C++ pair built once under
//! `target/conformance-cpp/`; the Python pair runs under Ice 3.7 and Ice
//! 3.8 for Python, see [`Python`]), the floe server and client, the
//! reports every client produces (`PASS <config>/<check>` /
//! `FAIL ...: detail`), the Ice <-> Ice references and the comparison of a
//! floe direction with them ([`reference`]).
//!
//! Every process listens on 127.0.0.1 only and is killed when its guard
//! drops, also when a test panics. With `FLOE_NO_INTEROP=1` the tests
//! return early; otherwise a missing peer (Python `Ice` module, slice2cpp,
//! g++, libIce++11) fails them with a message saying what to install.
//!
//! Two test targets share this module (`conformance.rs` with the Ice 3.7
//! peers, `ice38.rs` with the Ice 3.8 one), and each uses part of it.

#![allow(dead_code)]

pub mod floe_client;
pub mod floe_server;
pub mod reference;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use floe_testkit::{CppBuild, Peer, ReportLine, READY_TIMEOUT};

/// The Python interpreter that has the Debian `Ice` module (Ice 3.7.8).
pub use floe_testkit::PYTHON;

/// An Ice for Python peer: an interpreter whose `import Ice` is one Ice
/// version, and the kind its server is to clients and in report names.
/// `peers/client.py` and `peers/server.py` run under both.
#[derive(Clone, Debug)]
pub struct Python {
    /// The interpreter.
    pub interpreter: PathBuf,
    /// `python` (Ice 3.7) or `python38` (Ice 3.8).
    pub kind: &'static str,
}

impl Python {
    /// Ice 3.7.8 for Python from Debian ([`PYTHON`]).
    pub fn ice37() -> Python {
        Python {
            interpreter: PathBuf::from(PYTHON),
            kind: "python",
        }
    }

    /// Ice 3.8 for Python in `interpreter`
    /// (`floe_testkit::ice38::python`).
    pub fn ice38(interpreter: PathBuf) -> Python {
        Python {
            interpreter,
            kind: "python38",
        }
    }
}

/// How long a client may take to run every check.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

/// The configurations every client runs, in order: name, encoding 1.0,
/// `Ice.AcceptClassCycles=1` on both sides, class checks (`obj.*`) only.
pub const CONFIGS: &[(&str, bool, bool, bool)] = &[
    ("1.1", false, false, false),
    ("1.0", true, false, false),
    ("1.1-cycles", false, true, true),
    ("1.0-cycles", true, true, true),
];

/// Every check label (`<config>/<check>`) a client reports, in order.
pub fn expected_labels() -> Vec<String> {
    let mut out = Vec::new();
    for &(config, _, _, objects_only) in CONFIGS {
        for check in floe_client::CHECKS {
            if !objects_only || check.starts_with("obj.") {
                out.push(format!("{config}/{check}"));
            }
        }
    }
    out
}

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn slice_dir() -> PathBuf {
    crate_dir().join("slice")
}

fn peers_dir() -> PathBuf {
    crate_dir().join("peers")
}

// ------------------------------------------------------------ reports

/// How a report names a peer of `kind` (`cpp`, `python`, `python38`,
/// `floe`).
pub fn display(kind: &str) -> &str {
    match kind {
        "cpp" => "C++",
        "python" => "Python",
        "python38" => "Python 3.8",
        other => other,
    }
}

/// What one client reported: every check label with its failure, if any.
#[derive(Clone, Debug)]
pub struct Report {
    /// `<client> -> <server>`.
    pub name: String,
    /// Label -> None (passed) or Some(detail), in the order reported.
    pub results: Vec<(String, Option<String>)>,
    /// Everything the client printed (empty for the floe client).
    pub output: String,
}

impl Report {
    /// An empty report.
    pub fn new(name: &str) -> Report {
        Report {
            name: name.to_owned(),
            results: Vec::new(),
            output: String::new(),
        }
    }

    /// Records one check's outcome.
    pub fn record(&mut self, label: &str, failure: Option<String>) {
        self.results.push((label.to_owned(), failure));
    }

    fn parse(name: &str, output: String) -> Report {
        let mut report = Report::new(name);
        for line in output.lines() {
            match ReportLine::parse(line) {
                Some(ReportLine::Pass(label)) => report.record(label, None),
                Some(ReportLine::Fail(label, detail)) => {
                    report.record(label, Some(detail.to_owned()));
                }
                _ => {}
            }
        }
        report.output = output;
        report
    }

    /// The labels of the failed checks.
    pub fn failed(&self) -> BTreeSet<String> {
        self.results
            .iter()
            .filter(|(_, f)| f.is_some())
            .map(|(l, _)| l.clone())
            .collect()
    }

    /// `<name>: N passed, M failed`.
    pub fn summary(&self) -> String {
        let failed = self.failed().len();
        format!(
            "{}: {} passed, {} failed",
            self.name,
            self.results.len() - failed,
            failed
        )
    }

    /// Panics unless the report holds exactly the expected labels, in order
    /// (the three clients run the same checks).
    pub fn assert_complete(&self) {
        let got: Vec<&str> = self.results.iter().map(|(l, _)| l.as_str()).collect();
        let want = expected_labels();
        assert!(
            got == want.iter().map(String::as_str).collect::<Vec<_>>(),
            "{}: the checks reported are not the suite's ({} reported, {} expected); \
             missing: {:?}; unexpected: {:?}\n--- output ---\n{}",
            self.name,
            got.len(),
            want.len(),
            want.iter()
                .filter(|w| !got.contains(&w.as_str()))
                .collect::<Vec<_>>(),
            got.iter()
                .filter(|g| !want.iter().any(|w| w == *g))
                .collect::<Vec<_>>(),
            self.output
        );
    }

    /// Prints the summary and every failure.
    pub fn print(&self) {
        println!("{}", self.summary());
        for (label, failure) in &self.results {
            if let Some(detail) = failure {
                println!("  FAIL {label}: {detail}");
            }
        }
    }
}

/// A running Ice server (Python or C++) and its three ports.
pub struct Server {
    _peer: Peer,
    /// The port of the communicator with default properties.
    pub port: u16,
    /// The port of the communicator with `Ice.AcceptClassCycles=1`.
    pub cycles_port: u16,
    /// The port of the default communicator's adapter of facets and
    /// default servants.
    pub facets_port: u16,
}

impl Server {
    fn start(name: &str, cmd: Command) -> Server {
        let mut peer = Peer::spawn_with_stdin(name, cmd);
        let ready = peer.wait_ready("READY ", READY_TIMEOUT);
        let ports: Vec<u16> = ready
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        let [port, cycles_port, facets_port] = ports[..] else {
            panic!("{name}: bad ready line `READY {ready}`");
        };
        Server {
            _peer: peer,
            port,
            cycles_port,
            facets_port,
        }
    }
}

/// Fails the test with a clear message unless `python` can import Ice
/// (checked once per interpreter).
fn require_python_ice(python: &Python) {
    static CHECKED: Mutex<BTreeMap<PathBuf, Result<(), String>>> = Mutex::new(BTreeMap::new());
    let mut checked = CHECKED.lock().unwrap_or_else(|p| p.into_inner());
    let result = checked
        .entry(python.interpreter.clone())
        .or_insert_with(|| {
            let interpreter = python.interpreter.display();
            let out = Command::new(&python.interpreter)
                .args(["-c", "import Ice"])
                .output()
                .map_err(|e| format!("cannot run {interpreter}: {e}"))?;
            if out.status.success() {
                return Ok(());
            }
            let install = match python.kind {
                "python" => "install python3-zeroc-ice",
                _ => "cargo xtask test installs Ice 3.8 for Python",
            };
            Err(format!(
                "{interpreter} cannot import Ice ({}); {install} \
                 (or set FLOE_NO_INTEROP=1 to skip)",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Starts `peers/server.py` under `python`.
pub fn start_python_server(python: &Python) -> Server {
    require_python_ice(python);
    let mut cmd = Command::new(&python.interpreter);
    cmd.arg(peers_dir().join("server.py")).arg(slice_dir());
    Server::start(&format!("{} server", display(python.kind)), cmd)
}

/// Starts the C++ server.
pub fn start_cpp_server() -> Server {
    Server::start("C++ server", Command::new(&cpp_peers().server))
}

/// The ports of a server: see [`Server`].
#[derive(Clone, Copy, Debug)]
pub struct Ports {
    /// The default communicator's main adapter.
    pub port: u16,
    /// The `Ice.AcceptClassCycles=1` communicator's main adapter.
    pub cycles_port: u16,
    /// The default communicator's adapter of facets and default servants.
    pub facets_port: u16,
}

impl Server {
    /// The server's ports.
    pub fn ports(&self) -> Ports {
        Ports {
            port: self.port,
            cycles_port: self.cycles_port,
            facets_port: self.facets_port,
        }
    }
}

/// Runs `peers/client.py` under `python` against a server of `kind` to
/// completion.
pub fn run_python_client(python: &Python, ports: Ports, kind: &str) -> Report {
    require_python_ice(python);
    let mut cmd = Command::new(&python.interpreter);
    cmd.arg(peers_dir().join("client.py"))
        .arg(slice_dir())
        .arg(ports.port.to_string())
        .arg(ports.cycles_port.to_string())
        .arg(ports.facets_port.to_string())
        .arg(kind);
    let name = format!(
        "{} client -> {} server",
        display(python.kind),
        display(kind)
    );
    Report::parse(
        &name,
        Peer::spawn_with_stdin(&name, cmd).wait_output(CLIENT_TIMEOUT),
    )
}

/// Runs the C++ client against a server of `kind` to completion.
pub fn run_cpp_client(ports: Ports, kind: &str) -> Report {
    let mut cmd = Command::new(&cpp_peers().client);
    cmd.arg(ports.port.to_string())
        .arg(ports.cycles_port.to_string())
        .arg(ports.facets_port.to_string())
        .arg(kind);
    let name = format!("C++ client -> {} server", display(kind));
    Report::parse(
        &name,
        Peer::spawn_with_stdin(&name, cmd).wait_output(CLIENT_TIMEOUT),
    )
}

// ------------------------------------------------------------ C++ build

/// Paths of the built C++ peers.
pub struct CppPeers {
    server: PathBuf,
    client: PathBuf,
}

/// Builds (once per stamp: see [`CppBuild`]) and returns the C++ peers
/// under `target/conformance-cpp/`.
pub fn cpp_peers() -> &'static CppPeers {
    static PEERS: OnceLock<Result<CppPeers, String>> = OnceLock::new();
    let peers = PEERS.get_or_init(|| {
        let (slice, peers) = (slice_dir(), peers_dir());
        let out = CppBuild {
            dir: "conformance-cpp",
            include: &slice,
            slices: &[
                slice.join("Conformance.ice"),
                slice.join("ServerOnly.ice"),
                slice.join("ClientOnly.ice"),
            ],
            sources: &[peers.join("server.cpp"), peers.join("client.cpp")],
            programs: &[
                ("server", &["server", "Conformance", "ServerOnly"]),
                ("client", &["client", "Conformance", "ClientOnly"]),
            ],
        }
        .build()?;
        Ok(CppPeers {
            server: out.join("server"),
            client: out.join("client"),
        })
    });
    match peers {
        Ok(peers) => peers,
        Err(e) => panic!("C++ peers unavailable: {e}"),
    }
}
