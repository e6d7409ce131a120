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

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// The Python interpreter that has the Debian `Ice` module (Ice 3.7.8).
pub const PYTHON: &str = "/usr/bin/python3";

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

/// How long a server may take to print its `READY` line.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

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

/// The cargo target directory (`CARGO_TARGET_DIR` or `<workspace>/target`).
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => crate_dir().join("..").join("..").join("target"),
    }
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
            if let Some(label) = line.strip_prefix("PASS ") {
                report.record(label.trim(), None);
            } else if let Some(rest) = line.strip_prefix("FAIL ") {
                let (label, detail) = rest.split_once(": ").unwrap_or((rest, ""));
                report.record(label.trim(), Some(detail.to_owned()));
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

// ------------------------------------------------------------ processes

/// A spawned peer: killed and reaped when dropped, so that none outlives
/// its test. Its stdout lines arrive on a channel; everything it prints is
/// kept for diagnostics.
pub struct Peer {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    log: Arc<Mutex<Vec<String>>>,
}

impl Peer {
    fn spawn(name: &str, mut cmd: Command) -> Peer {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: cannot start {cmd:?}: {e}"));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let out_log = Arc::clone(&log);
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                out_log
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(line.clone());
                // Keep draining even when nobody waits for lines any more.
                let _ = tx.send(line);
            }
        });
        let err_log = Arc::clone(&log);
        thread::spawn(move || {
            let mut text = String::new();
            let _ = BufReader::new(stderr).read_to_string(&mut text);
            let mut log = err_log.lock().unwrap_or_else(|p| p.into_inner());
            log.extend(text.lines().map(|l| format!("[stderr] {l}")));
        });
        let stdin = child.stdin.take();
        Peer {
            name: name.to_owned(),
            child,
            stdin,
            lines,
            log,
        }
    }

    fn log(&self) -> String {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .join("\n")
    }

    /// The rest of the first stdout line starting with `prefix`.
    fn wait_line(&mut self, prefix: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix(prefix) {
                        return rest.trim().to_owned();
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!(
                    "{}: no `{prefix}` line within {timeout:?}; output:\n{}",
                    self.name,
                    self.log()
                ),
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait();
                    thread::sleep(Duration::from_millis(50)); // the stderr reader
                    panic!(
                        "{}: exited ({status:?}) before `{prefix}`; output:\n{}",
                        self.name,
                        self.log()
                    )
                }
            }
        }
    }

    /// Waits until the peer exits (killing it after `timeout`): its output.
    fn wait_output(mut self, timeout: Duration) -> String {
        self.stdin.take();
        let deadline = Instant::now() + timeout;
        let mut timed_out = false;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(_) => {}
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    timed_out = true;
                    break;
                }
            }
        }
        if timed_out {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
        thread::sleep(Duration::from_millis(20)); // the stderr reader
        let mut out = self.log();
        if timed_out {
            out.push_str(&format!("\n<{}: killed after {timeout:?}>", self.name));
        }
        out
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.stdin.take();
        let _ = self.child.kill();
        let _ = self.child.wait();
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
        let mut peer = Peer::spawn(name, cmd);
        let ready = peer.wait_line("READY ", READY_TIMEOUT);
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
    Report::parse(&name, Peer::spawn(&name, cmd).wait_output(CLIENT_TIMEOUT))
}

/// Runs the C++ client against a server of `kind` to completion.
pub fn run_cpp_client(ports: Ports, kind: &str) -> Report {
    let mut cmd = Command::new(&cpp_peers().client);
    cmd.arg(ports.port.to_string())
        .arg(ports.cycles_port.to_string())
        .arg(ports.facets_port.to_string())
        .arg(kind);
    let name = format!("C++ client -> {} server", display(kind));
    Report::parse(&name, Peer::spawn(&name, cmd).wait_output(CLIENT_TIMEOUT))
}

// ------------------------------------------------------------ C++ build

/// Paths of the built C++ peers.
pub struct CppPeers {
    server: PathBuf,
    client: PathBuf,
}

/// Builds (once per stamp) and returns the C++ peers under
/// `target/conformance-cpp/`. The stamp hashes the Slice and C++ sources,
/// the flags and slice2cpp's version; each build happens in a private
/// directory and the binaries are renamed into place, so that concurrent
/// test processes never see half-written files.
pub fn cpp_peers() -> &'static CppPeers {
    static PEERS: OnceLock<Result<CppPeers, String>> = OnceLock::new();
    match PEERS.get_or_init(build_cpp_peers) {
        Ok(peers) => peers,
        Err(e) => panic!("C++ peers unavailable: {e}"),
    }
}

const CXXFLAGS: &[&str] = &["-std=c++11", "-DICE_CPP11_MAPPING", "-O1", "-w"];
const LIBS: &[&str] = &["-lIce++11", "-lpthread"];

fn build_cpp_peers() -> Result<CppPeers, String> {
    let out = target_dir().join("conformance-cpp");
    std::fs::create_dir_all(&out).map_err(|e| format!("create {}: {e}", out.display()))?;
    let version = Command::new("slice2cpp")
        .arg("--version")
        .output()
        .map_err(|e| {
            format!(
                "cannot run slice2cpp ({e}); install zeroc-ice-compilers and libzeroc-ice-dev \
                 (or set FLOE_NO_INTEROP=1 to skip)"
            )
        })?;
    let mut hasher = DefaultHasher::new();
    version.stdout.hash(&mut hasher);
    version.stderr.hash(&mut hasher);
    CXXFLAGS.hash(&mut hasher);
    LIBS.hash(&mut hasher);
    let sources = [
        slice_dir().join("Conformance.ice"),
        slice_dir().join("ServerOnly.ice"),
        slice_dir().join("ClientOnly.ice"),
        peers_dir().join("server.cpp"),
        peers_dir().join("client.cpp"),
    ];
    for file in &sources {
        let text = std::fs::read(file).map_err(|e| format!("read {}: {e}", file.display()))?;
        file.file_name().hash(&mut hasher);
        text.hash(&mut hasher);
    }
    let stamp = format!("{:016x}", hasher.finish());
    let peers = CppPeers {
        server: out.join("server"),
        client: out.join("client"),
    };
    let stamp_file = out.join("stamp");
    if std::fs::read_to_string(&stamp_file).is_ok_and(|s| s.trim() == stamp)
        && peers.server.exists()
        && peers.client.exists()
    {
        return Ok(peers);
    }

    let work = out.join(format!("build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| format!("create {}: {e}", work.display()))?;
    println!("building the C++ peers in {}", work.display());
    run_tool(
        Command::new("slice2cpp")
            .arg(format!("-I{}", slice_dir().display()))
            .arg("--output-dir")
            .arg(&work)
            .arg(&sources[0])
            .arg(&sources[1])
            .arg(&sources[2]),
    )?;
    let compile = |source: &Path, object: &str| {
        let mut cmd = Command::new("g++");
        cmd.args(CXXFLAGS)
            .arg(format!("-I{}", work.display()))
            .arg("-c")
            .arg(source)
            .arg("-o")
            .arg(work.join(object));
        cmd
    };
    run_parallel(vec![
        compile(&work.join("Conformance.cpp"), "Conformance.o"),
        compile(&work.join("ServerOnly.cpp"), "ServerOnly.o"),
        compile(&work.join("ClientOnly.cpp"), "ClientOnly.o"),
        compile(&sources[3], "server.o"),
        compile(&sources[4], "client.o"),
    ])?;
    let link = |objects: &[&str], output: &str| {
        let mut cmd = Command::new("g++");
        cmd.arg("-o").arg(work.join(output));
        for o in objects {
            cmd.arg(work.join(o));
        }
        cmd.args(LIBS);
        cmd
    };
    run_parallel(vec![
        link(&["server.o", "Conformance.o", "ServerOnly.o"], "server"),
        link(&["client.o", "Conformance.o", "ClientOnly.o"], "client"),
    ])?;
    for bin in ["server", "client"] {
        std::fs::rename(work.join(bin), out.join(bin))
            .map_err(|e| format!("install {bin}: {e}"))?;
    }
    std::fs::write(&stamp_file, &stamp).map_err(|e| format!("write the stamp: {e}"))?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(peers)
}

fn run_tool(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Runs the commands two at a time (the machine has 2 cores).
fn run_parallel(mut cmds: Vec<Command>) -> Result<(), String> {
    while !cmds.is_empty() {
        let batch: Vec<Command> = cmds.drain(..cmds.len().min(2)).collect();
        let handles: Vec<_> = batch
            .into_iter()
            .map(|mut cmd| thread::spawn(move || run_tool(&mut cmd)))
            .collect();
        for h in handles {
            h.join().map_err(|_| "build thread panicked".to_owned())??;
        }
    }
    Ok(())
}
