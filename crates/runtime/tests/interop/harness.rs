//! Real Ice 3.7 peers for the interop tests: free ports on 127.0.0.1, a [`Peer`]
//! guard that kills and reaps its process on drop (also on panic), the cached
//! C++11 build of the peers under `target/interop-cpp/`, and the parsing of the
//! `PASS`/`FAIL`/`SUMMARY` lines the interop clients print.
//!
//! Every test starts with [`interop_disabled`]: with `FLOE_NO_INTEROP=1` it prints
//! a line and the test returns; otherwise a missing peer (Python `Ice` module,
//! slice2cpp, g++, libIce++11) fails the test with a message saying what to install.
//!
//! Shared by several test binaries, each using a different subset.
#![allow(dead_code)]

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

#[path = "node_packages.rs"]
pub mod node_packages;

/// The Python interpreter that has the Debian `Ice` module.
pub const PYTHON: &str = "/usr/bin/python3";

/// How long a server may take to print its ready line.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

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

/// True (after printing why) when `FLOE_NO_INTEROP=1` asks to skip real-peer tests.
pub fn interop_disabled(test: &str) -> bool {
    if std::env::var("FLOE_NO_INTEROP").is_ok_and(|v| v == "1") {
        println!("{test}: skipped (FLOE_NO_INTEROP=1)");
        return true;
    }
    false
}

/// The directory holding Interop.ice and the peer sources.
pub fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("interop")
}

/// The cargo target directory (`CARGO_TARGET_DIR` or `<workspace>/target`).
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    // crates/runtime -> workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("..")
        .join("target")
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
///
/// Prefer letting the peer bind port 0 and report its port (servers here print
/// `READY <port>`); use this only when a port must be chosen up front.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0 for a free port");
    listener
        .local_addr()
        .expect("local_addr of a bound listener")
        .port()
}

/// The endpoint string for a port on 127.0.0.1.
pub fn endpoint(port: u16) -> String {
    format!("tcp -h 127.0.0.1 -p {port}")
}

/// A spawned peer process. Dropping it kills the process and waits for it, so no
/// peer outlives its test, even when the test panics.
pub struct Peer {
    name: String,
    child: Option<Child>,
    lines: Receiver<String>,
    log: Arc<Mutex<Vec<String>>>,
}

impl Peer {
    /// Spawns `cmd` with piped stdout/stderr; `name` labels diagnostics.
    pub fn spawn(name: &str, mut cmd: Command) -> Peer {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: cannot start {cmd:?}: {e}"));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, lines) = mpsc::channel();
        // Invariant: both pipes were requested above, so take() returns Some.
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let out_log = Arc::clone(&log);
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                out_log
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(line.clone());
                // A closed receiver only means nobody waits for lines any more;
                // keep draining so the peer never blocks on a full pipe.
                let _ = tx.send(line);
            }
        });
        let err_log = Arc::clone(&log);
        thread::spawn(move || {
            let mut reader = BufReader::new(stderr);
            let mut buf = Vec::new();
            let _ = reader.read_to_end(&mut buf);
            let text = String::from_utf8_lossy(&buf);
            let mut log = err_log.lock().unwrap_or_else(|p| p.into_inner());
            log.extend(text.lines().map(|l| format!("[stderr] {l}")));
        });
        Peer {
            name: name.to_owned(),
            child: Some(child),
            lines,
            log,
        }
    }

    /// The peer's label.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Everything the peer printed so far (stderr lines prefixed `[stderr]`).
    pub fn log(&self) -> String {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .join("\n")
    }

    /// Waits for a stdout line starting with `prefix` and returns the rest of it
    /// (trimmed). Panics with the peer's output if it exits or times out first.
    pub fn wait_ready(&mut self, prefix: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix(prefix) {
                        return rest.trim().to_owned();
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "{}: no `{prefix}` line within {timeout:?}; output:\n{}",
                        self.name,
                        self.log()
                    )
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.as_mut().and_then(|c| c.wait().ok());
                    thread::sleep(Duration::from_millis(50)); // let the stderr reader finish
                    panic!(
                        "{}: exited ({status:?}) before `{prefix}`; output:\n{}",
                        self.name,
                        self.log()
                    )
                }
            }
        }
    }

    /// Waits until the peer closes stdout and exits, up to `timeout` (then kills it).
    /// Returns its exit status (None if it had to be killed) and its stdout lines.
    pub fn wait_exit(mut self, timeout: Duration) -> (Option<ExitStatus>, Vec<String>) {
        let deadline = Instant::now() + timeout;
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => lines.push(line),
                Err(RecvTimeoutError::Timeout) => {
                    lines.push(format!(
                        "<{}: timed out after {timeout:?}, killed>",
                        self.name
                    ));
                    return (None, lines);
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        let status = loop {
            let child = self.child.as_mut().expect("child present until drop");
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
                _ => break None,
            }
        };
        (status, lines)
    }

    /// The process id, while the process has not been killed by [`Peer::kill`].
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the process now (idempotent).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.kill();
    }
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

/// Fails the test with a clear message unless /usr/bin/python3 can import Ice.
pub fn require_python_ice() {
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    let result = CHECKED.get_or_init(|| {
        let out = Command::new(PYTHON)
            .args(["-c", "import Ice; print(Ice.stringVersion())"])
            .output()
            .map_err(|e| format!("cannot run {PYTHON}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{PYTHON} cannot import Ice ({}); install python3-zeroc-ice \
                 (or set FLOE_NO_INTEROP=1 to skip interop tests)",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    });
    if let Err(e) = result {
        panic!("{e}");
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
    ClientReport::run("py_client", cmd)
}

/// Runs the C++11 client against `endpoint` to completion.
pub fn run_cpp_client(endpoint: &str, extra: &[&str]) -> ClientReport {
    let mut cmd = Command::new(&cpp_peers().client);
    cmd.arg(endpoint).args(extra);
    ClientReport::run("cpp_client", cmd)
}

/// What an interop client printed: one result per check, and its summary.
#[derive(Debug)]
pub struct ClientReport {
    /// The client's label.
    pub name: String,
    /// Check name -> None for PASS, Some(detail) for FAIL.
    pub results: BTreeMap<String, Option<String>>,
    /// Check names in the order they were reported.
    pub order: Vec<String>,
    /// `name: why` of the checks the client cannot run (SKIP lines; they count as
    /// reported, not failed).
    pub skipped: Vec<String>,
    /// The SUMMARY line, if the client got that far.
    pub summary: Option<String>,
    /// Exit status (None if killed on timeout).
    pub status: Option<ExitStatus>,
    /// All stdout and stderr.
    pub output: String,
}

impl ClientReport {
    fn run(name: &str, cmd: Command) -> ClientReport {
        let peer = Peer::spawn(name, cmd);
        let log = Arc::clone(&peer.log);
        let (status, lines) = peer.wait_exit(CLIENT_TIMEOUT);
        thread::sleep(Duration::from_millis(20)); // let the stderr reader finish
        let output = log.lock().unwrap_or_else(|p| p.into_inner()).join("\n");
        ClientReport::parse(name, &lines, status, output)
    }

    /// Parses `PASS name`, `FAIL name: detail` and `SUMMARY ...` lines.
    pub fn parse(
        name: &str,
        lines: &[String],
        status: Option<ExitStatus>,
        output: String,
    ) -> ClientReport {
        let mut report = ClientReport {
            name: name.to_owned(),
            results: BTreeMap::new(),
            order: Vec::new(),
            skipped: Vec::new(),
            summary: None,
            status,
            output,
        };
        for line in lines {
            if let Some(check) = line.strip_prefix("PASS ") {
                report.record(check.trim(), None);
            } else if let Some(rest) = line.strip_prefix("FAIL ") {
                let (check, detail) = rest.split_once(": ").unwrap_or((rest, ""));
                report.record(check.trim(), Some(detail.to_owned()));
            } else if let Some(rest) = line.strip_prefix("SKIP ") {
                let (check, why) = rest.split_once(": ").unwrap_or((rest, ""));
                report.skipped.push(format!("{}: {why}", check.trim()));
                report.record(check.trim(), None);
            } else if line.starts_with("SUMMARY ") {
                report.summary = Some(line.clone());
            }
        }
        report
    }

    fn record(&mut self, check: &str, failure: Option<String>) {
        self.order.push(check.to_owned());
        self.results.insert(check.to_owned(), failure);
    }

    /// The failed checks with their details, plus checks of `expected` never reported.
    pub fn problems(&self, expected: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = self
            .order
            .iter()
            .filter_map(|c| self.results[c].as_ref().map(|d| format!("FAIL {c}: {d}")))
            .collect();
        for check in expected {
            if !self.results.contains_key(*check) {
                out.push(format!("MISSING {check}"));
            }
        }
        if self.summary.is_none() {
            out.push("no SUMMARY line (client crashed or timed out)".to_owned());
        }
        out
    }

    /// Panics with every problem unless all `expected` checks passed and the client
    /// exited successfully.
    pub fn assert_all_pass(&self, expected: &[&str]) {
        let problems = self.problems(expected);
        let exited_ok = self.status.is_some_and(|s| s.success());
        if !problems.is_empty() || !exited_ok {
            panic!(
                "{}: {} problem(s), exit {:?}:\n  {}\n--- output ---\n{}",
                self.name,
                problems.len(),
                self.status,
                problems.join("\n  "),
                self.output
            );
        }
        println!("{}: {}", self.name, self.summary.as_deref().unwrap_or(""));
        for skip in &self.skipped {
            println!("{}: SKIP {skip}", self.name);
        }
    }
}

/// Paths of the built C++11 peers.
pub struct CppPeers {
    /// cpp_server binary.
    pub server: PathBuf,
    /// cpp_client binary.
    pub client: PathBuf,
}

/// Builds (once per stamp) and returns the C++11 peers under `target/interop-cpp/`.
///
/// The stamp hashes the Slice and C++ sources, the flags and the slice2cpp version;
/// reruns with an unchanged stamp reuse the binaries. Each build happens in a
/// private directory and the binaries are renamed into place, so concurrent test
/// processes cannot see half-written files.
pub fn cpp_peers() -> &'static CppPeers {
    static PEERS: OnceLock<Result<CppPeers, String>> = OnceLock::new();
    match PEERS.get_or_init(build_cpp_peers) {
        Ok(peers) => peers,
        Err(e) => panic!("C++ interop peers unavailable: {e}"),
    }
}

const CXXFLAGS: &[&str] = &["-std=c++11", "-DICE_CPP11_MAPPING", "-O1", "-w"];
const LIBS: &[&str] = &["-lIce++11", "-lpthread"];

fn build_cpp_peers() -> Result<CppPeers, String> {
    let src = interop_dir();
    let out = target_dir().join("interop-cpp");
    std::fs::create_dir_all(&out).map_err(|e| format!("create {}: {e}", out.display()))?;
    let version = Command::new("slice2cpp")
        .arg("--version")
        .output()
        .map_err(|e| {
            format!("cannot run slice2cpp ({e}); install zeroc-ice-compilers and libzeroc-ice-dev")
        })?;
    let mut hasher = DefaultHasher::new();
    version.stdout.hash(&mut hasher);
    version.stderr.hash(&mut hasher);
    CXXFLAGS.hash(&mut hasher);
    LIBS.hash(&mut hasher);
    for file in [
        "Interop.ice",
        "ServerOnly.ice",
        "cpp_server.cpp",
        "cpp_client.cpp",
    ] {
        let text = std::fs::read(src.join(file)).map_err(|e| format!("read {file}: {e}"))?;
        file.hash(&mut hasher);
        text.hash(&mut hasher);
    }
    let stamp = format!("{:016x}", hasher.finish());
    let peers = CppPeers {
        server: out.join("cpp_server"),
        client: out.join("cpp_client"),
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
    println!("building C++ interop peers in {}", work.display());
    run_tool(
        Command::new("slice2cpp")
            .arg(format!("-I{}", src.display()))
            .arg("--output-dir")
            .arg(&work)
            .arg(src.join("Interop.ice"))
            .arg(src.join("ServerOnly.ice")),
    )?;
    let compile = |source: PathBuf, output: &str| {
        let mut cmd = Command::new("g++");
        cmd.args(CXXFLAGS)
            .arg(format!("-I{}", work.display()))
            .arg("-c")
            .arg(source)
            .arg("-o")
            .arg(work.join(output));
        cmd
    };
    run_parallel(vec![
        compile(work.join("Interop.cpp"), "Interop.o"),
        compile(work.join("ServerOnly.cpp"), "ServerOnly.o"),
        compile(src.join("cpp_server.cpp"), "cpp_server.o"),
        compile(src.join("cpp_client.cpp"), "cpp_client.o"),
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
        link(&["cpp_server.o", "Interop.o", "ServerOnly.o"], "cpp_server"),
        link(&["cpp_client.o", "Interop.o"], "cpp_client"),
    ])?;
    for bin in ["cpp_server", "cpp_client"] {
        std::fs::rename(work.join(bin), out.join(bin))
            .map_err(|e| format!("install {bin}: {e}"))?;
    }
    std::fs::write(&stamp_file, &stamp).map_err(|e| format!("write stamp: {e}"))?;
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

/// Runs node_client.js against `endpoint`, or returns None after printing why when
/// node, npm or the npm registry is unavailable (the Node peer is optional, except
/// under `CI=true`, where that fails the test).
pub fn run_node_client(endpoint: &str, extra: &[&str]) -> Option<ClientReport> {
    let dir = match node_peer() {
        Ok(dir) => dir,
        Err(why) => {
            optional_peer_missing("node client", why);
            return None;
        }
    };
    let mut cmd = Command::new("node");
    cmd.arg(interop_dir().join("node_client.js"))
        .arg(dir)
        .arg(endpoint)
        .args(extra);
    Some(ClientReport::run("node_client", cmd))
}

/// Whether this run is CI's (`CI=true`, as `.ci/run` is run).
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// An optional peer is missing: prints why, or under CI fails the test,
/// since `cargo xtask test` installs every peer there.
pub fn optional_peer_missing(peer: &str, why: &str) {
    if under_ci() {
        panic!("{peer} unavailable under CI=true: {why}");
    }
    println!("{peer} skipped: {why}");
}

/// Installs the npm packages (package.json beside node_client.js: `ice`,
/// `ws`, `playwright-core`) under `target/interop-node/` and compiles
/// Interop.ice there with slice2js (once per stamp). Returns the directory.
pub fn node_peer() -> Result<&'static Path, &'static str> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(build_node_peer)
        .as_ref()
        .map(|p| p.as_path())
        .map_err(|e| e.as_str())
}

fn build_node_peer() -> Result<PathBuf, String> {
    let dir = target_dir().join("interop-node");
    run_tool(Command::new("node").arg("--version"))
        .map_err(|e| format!("node unavailable: {e}"))?;
    node_packages::install(&dir).map_err(|e| format!("{e} (registry unavailable?)"))?;
    let ice = interop_dir().join("Interop.ice");
    let text = std::fs::read(&ice).map_err(|e| format!("read Interop.ice: {e}"))?;
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    let stamp = format!("{:016x}", hasher.finish());
    let stamp_file = dir.join("stamp");
    if std::fs::read_to_string(&stamp_file).is_ok_and(|s| s.trim() == stamp)
        && dir.join("Interop.js").exists()
    {
        return Ok(dir);
    }
    let work = dir.join(format!("gen-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| format!("create {}: {e}", work.display()))?;
    run_tool(
        Command::new("slice2js")
            .arg(format!("-I{}", interop_dir().display()))
            .arg("--output-dir")
            .arg(&work)
            .arg(&ice),
    )
    .map_err(|e| format!("slice2js unavailable or failed: {e}"))?;
    std::fs::rename(work.join("Interop.js"), dir.join("Interop.js"))
        .map_err(|e| format!("install Interop.js: {e}"))?;
    let _ = std::fs::remove_dir_all(&work);
    std::fs::write(&stamp_file, &stamp).map_err(|e| format!("write stamp: {e}"))?;
    Ok(dir)
}

/// The Maven artifact of Ice for Java.
pub const JAVA_ICE: &str = "com.zeroc:ice:3.7.10";

/// Runs JavaClient against `endpoint`, or returns None after printing why when
/// java, javac, mvn or Maven Central is unavailable (the Java peer is optional).
pub fn run_java_client(endpoint: &str, extra: &[&str]) -> Option<ClientReport> {
    let mut cmd = java_command("JavaClient")?;
    cmd.arg(endpoint).args(extra);
    Some(ClientReport::run("java_client", cmd))
}

/// `java -cp <Maven ice.jar>:<java_peer classes> main` (JavaServer also gets
/// `server-classes`), or None after printing why the Java peer is unavailable.
fn java_command(main: &str) -> Option<Command> {
    let dir = match java_peer() {
        Ok(dir) => dir,
        Err(why) => {
            println!("java peer skipped: {why}");
            return None;
        }
    };
    Some(java_command_on(
        &[&dir.join("ice.jar").display().to_string()],
        dir,
        main,
    ))
}

/// `java -cp <jars>:<dir>/classes[:<dir>/server-classes] main`.
fn java_command_on(jars: &[&str], dir: &Path, main: &str) -> Command {
    let mut classpath = format!("{}:{}", jars.join(":"), dir.join("classes").display());
    if main == "JavaServer" {
        classpath = format!("{classpath}:{}", dir.join("server-classes").display());
    }
    let mut cmd = Command::new("java");
    cmd.arg("-cp").arg(classpath).arg(main);
    cmd
}

/// Ice for Java 3.7.8 from Debian (`libzeroc-ice3.7-java`, as the other
/// Debian peers), with IceSSL and the bzip2 of `libcommons-compress-java`:
/// the Maven artifact [`JAVA_ICE`] has neither (Ice 3.7 ships IceSSL as the
/// separate `com.zeroc:icessl`, which mvn cannot fetch here; without
/// commons-compress Ice for Java neither compresses nor reads compressed
/// frames). The classes of [`java_peer`] run on it unchanged.
pub const JAVA_DEBIAN_JARS: &[&str] = &[
    "/usr/share/java/ice-3.7.8.jar",
    "/usr/share/java/icessl-3.7.8.jar",
    "/usr/share/java/commons-compress.jar",
];

/// Runs JavaClient on Debian's Ice for Java ([`JAVA_DEBIAN_JARS`]) against
/// `endpoint`, with `extra` arguments (for `ssl`, the IceSSL properties of
/// `TestCerts::java_args`), or returns None after printing why when the
/// Java peer is unavailable, as [`run_java_client`] does; missing Debian
/// jars fail the test under `CI=true`, where `cargo xtask test` installs them.
pub fn run_java_debian_client(endpoint: &str, extra: &[&str]) -> Option<ClientReport> {
    let mut cmd = java_debian_command("JavaClient")?;
    cmd.arg(endpoint).args(extra);
    Some(ClientReport::run("java3.7.8_client", cmd))
}

/// Starts JavaServer on Debian's Ice for Java ([`JAVA_DEBIAN_JARS`]) on a
/// free port: tcp, or `--Interop.Endpoints=ssl ...` with the IceSSL
/// properties in `extra`. None after printing why, as [`run_java_debian_client`].
pub fn start_java_debian_server(extra: &[&str]) -> Option<Server> {
    let mut cmd = java_debian_command("JavaServer")?;
    cmd.arg("0").args(extra);
    Some(Server::start("java3.7.8_server", cmd))
}

/// `java -cp <Debian jars>:<java_peer classes> main` (JavaServer also gets
/// `server-classes`), or None after printing why (see
/// [`run_java_debian_client`]).
fn java_debian_command(main: &str) -> Option<Command> {
    let dir = match java_peer() {
        Ok(dir) => dir,
        Err(why) => {
            println!("java peer skipped: {why}");
            return None;
        }
    };
    if let Some(jar) = JAVA_DEBIAN_JARS.iter().find(|j| !Path::new(j).is_file()) {
        optional_peer_missing(
            "Debian's Ice for Java",
            &format!(
                "{jar} not found: install the Debian packages libzeroc-ice3.7-java \
                 and libcommons-compress-java"
            ),
        );
        return None;
    }
    Some(java_command_on(JAVA_DEBIAN_JARS, dir, main))
}

/// Fetches Ice for Java with Maven into `target/interop-java/ice.jar` and compiles
/// Interop.ice (slice2java) and JavaClient.java into `classes/` there, and
/// ServerOnly.ice and JavaServer.java into `server-classes/` (once per stamp).
pub fn java_peer() -> Result<&'static Path, String> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(build_java_peer)
        .as_ref()
        .map(|p| p.as_path())
        .map_err(Clone::clone)
}

fn build_java_peer() -> Result<PathBuf, String> {
    let dir = target_dir().join("interop-java");
    std::fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    run_tool(Command::new("javac").arg("-version"))
        .map_err(|e| format!("javac unavailable: {e}"))?;
    let jar = dir.join("ice.jar");
    if !jar.exists() {
        run_tool(
            Command::new("mvn")
                .args(["-q", "-B", "dependency:copy"])
                .arg(format!("-Dartifact={JAVA_ICE}"))
                .arg(format!("-DoutputDirectory={}", dir.display()))
                .arg("-Dmdep.stripVersion=true"),
        )
        .map_err(|e| format!("mvn could not fetch {JAVA_ICE} (registry unavailable?): {e}"))?;
    }
    let mut hasher = DefaultHasher::new();
    for file in [
        "Interop.ice",
        "ServerOnly.ice",
        "JavaClient.java",
        "JavaServer.java",
    ] {
        let text =
            std::fs::read(interop_dir().join(file)).map_err(|e| format!("read {file}: {e}"))?;
        text.hash(&mut hasher);
    }
    let stamp = format!("{:016x}", hasher.finish());
    let stamp_file = dir.join("stamp");
    let classes = dir.join("classes");
    let server_classes = dir.join("server-classes");
    if std::fs::read_to_string(&stamp_file).is_ok_and(|s| s.trim() == stamp)
        && classes.exists()
        && server_classes.exists()
    {
        return Ok(dir);
    }
    let work = dir.join(format!("build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    // Interop.ice and JavaClient in classes/; ServerOnly.ice's types (which
    // clients must not know) and JavaServer in server-classes/.
    let out = work.join("classes");
    let server_out = work.join("server-classes");
    let compile = |slice: &str, gen: &str, classpath: String, main: &str, out: &Path| {
        let gen = work.join(gen);
        std::fs::create_dir_all(&gen).map_err(|e| format!("create {}: {e}", gen.display()))?;
        std::fs::create_dir_all(out).map_err(|e| format!("create {}: {e}", out.display()))?;
        run_tool(
            Command::new("slice2java")
                .arg(format!("-I{}", interop_dir().display()))
                .arg("--output-dir")
                .arg(&gen)
                .arg(interop_dir().join(slice)),
        )
        .map_err(|e| format!("slice2java unavailable or failed: {e}"))?;
        let mut javac = Command::new("javac");
        javac
            .args(["-nowarn", "-encoding", "UTF-8", "-cp"])
            .arg(classpath)
            .arg("-d")
            .arg(out);
        let sources = std::fs::read_dir(gen.join("Interop"))
            .map_err(|e| format!("read generated Java: {e}"))?;
        for entry in sources.flatten() {
            javac.arg(entry.path());
        }
        javac.arg(interop_dir().join(main));
        run_tool(&mut javac)
    };
    compile(
        "Interop.ice",
        "gen",
        jar.display().to_string(),
        "JavaClient.java",
        &out,
    )?;
    compile(
        "ServerOnly.ice",
        "gen-server",
        format!("{}:{}", jar.display(), out.display()),
        "JavaServer.java",
        &server_out,
    )?;
    for (built, installed) in [(&out, &classes), (&server_out, &server_classes)] {
        let _ = std::fs::remove_dir_all(installed);
        std::fs::rename(built, installed).map_err(|e| format!("install classes: {e}"))?;
    }
    let _ = std::fs::remove_dir_all(&work);
    std::fs::write(&stamp_file, &stamp).map_err(|e| format!("write stamp: {e}"))?;
    Ok(dir)
}

/// An `icegridnode` (node `node1`) with a collocated registry
/// (`IceGrid.Registry.DynamicRegistration=1`, any admin user and password)
/// in a temporary directory, on 127.0.0.1; stopped on drop.
pub struct IceGridNode {
    /// The node's process.
    pub node: Peer,
    /// The registry's client port (its `IceGrid/Locator`).
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl IceGridNode {
    /// Starts it and waits until the node answers.
    pub fn start() -> IceGridNode {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let d = dir.path();
        for sub in ["registry", "node"] {
            std::fs::create_dir(d.join(sub)).expect("mkdir");
        }
        let config = format!(
            "IceGrid.InstanceName=IceGrid\n\
             IceGrid.Registry.Client.Endpoints=tcp -h 127.0.0.1 -p {port}\n\
             IceGrid.Registry.Server.Endpoints=tcp -h 127.0.0.1\n\
             IceGrid.Registry.Internal.Endpoints=tcp -h 127.0.0.1\n\
             IceGrid.Registry.LMDB.Path={}\n\
             IceGrid.Registry.DynamicRegistration=1\n\
             IceGrid.Registry.AdminPermissionsVerifier=IceGrid/NullPermissionsVerifier\n\
             IceGrid.Node.CollocateRegistry=1\n\
             IceGrid.Node.Name=node1\n\
             IceGrid.Node.Endpoints=tcp -h 127.0.0.1\n\
             IceGrid.Node.Data={}\n\
             Ice.Default.Locator=IceGrid/Locator:tcp -h 127.0.0.1 -p {port}\n",
            d.join("registry").display(),
            d.join("node").display(),
        );
        let cfg = d.join("grid.cfg");
        std::fs::write(&cfg, config).expect("write config");
        let mut cmd = Command::new("icegridnode");
        cmd.arg(format!("--Ice.Config={}", cfg.display()));
        let node = Peer::spawn("icegridnode", cmd);
        let reg = IceGridNode {
            node,
            port,
            _dir: dir,
        };
        // The node prints its ready line only at exit when its stdout is a
        // pipe: wait until it answers `node ping` through the registry.
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let up = reg
                .admin_command("node ping node1")
                .output()
                .is_ok_and(|o| o.status.success());
            if up {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "icegridnode not up; output:\n{}",
                reg.node.log()
            );
            thread::sleep(Duration::from_millis(50));
        }
        reg
    }

    /// `IceGrid/Locator:tcp -h 127.0.0.1 -p <port>`.
    pub fn locator(&self) -> String {
        format!("IceGrid/Locator:tcp -h 127.0.0.1 -p {}", self.port)
    }

    /// `icegridadmin -e command`, to run.
    pub fn admin_command(&self, command: &str) -> Command {
        let mut cmd = Command::new("icegridadmin");
        cmd.arg(format!("--Ice.Default.Locator={}", self.locator()))
            .args(["-u", "test", "-p", "test", "-e", command]);
        cmd
    }

    /// Runs `icegridadmin -e command`; its stdout. Panics if it fails.
    pub fn admin(&self, command: &str) -> String {
        let out = self
            .admin_command(command)
            .output()
            .expect("icegridadmin runs");
        assert!(
            out.status.success(),
            "icegridadmin -e {command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `icegridadmin adapter list`.
    pub fn adapters(&self) -> std::collections::BTreeSet<String> {
        self.admin("adapter list")
            .lines()
            .map(|l| l.trim().to_string())
            .collect()
    }
}
