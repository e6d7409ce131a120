//! Runs the example as its README says: the floe server with the floe
//! client and with the Python client, then the Python server with the floe
//! client (real Ice 3.7 peers; skipped with `FLOE_NO_INTEROP=1`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};

const PYTHON: &str = "/usr/bin/python3";

/// Starts a server and returns it with the endpoint it printed.
fn start(mut cmd: Command) -> (Child, String, BufReader<std::process::ChildStdout>) {
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

fn floe_client(endpoint: &str, shutdown: bool) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_client"));
    cmd.arg(format!("--Hello.Proxy=hello:{endpoint}"));
    if shutdown {
        cmd.arg("--shutdown");
    }
    cmd
}

fn python(script: &str) -> Command {
    let mut cmd = Command::new(PYTHON);
    cmd.arg(format!("{}/python/{script}", env!("CARGO_MANIFEST_DIR")));
    cmd
}

fn interop() -> bool {
    std::env::var_os("FLOE_NO_INTEROP").is_none_or(|v| v != "1")
}

/// Waits for the server to exit 0 and returns the rest of its output.
fn finish(mut child: Child, out: BufReader<std::process::ChildStdout>) -> String {
    let rest: Vec<String> = out.lines().map_while(Result::ok).collect();
    assert!(child.wait().expect("the server exits").success());
    rest.join("\n")
}

#[test]
fn floe_server_with_floe_and_python_clients() {
    let mut server = Command::new(env!("CARGO_BIN_EXE_server"));
    server.arg("--Hello.Endpoints=tcp -h 127.0.0.1 -p 0");
    let (child, endpoint, out) = start(server);
    let printed = run(floe_client(&endpoint, !interop())).stdout;
    assert_eq!(
        String::from_utf8_lossy(&printed).trim(),
        "said hello 4 times"
    );
    let mut greetings = 4;
    if interop() {
        let mut py = python("client.py");
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
fn python_server_with_the_floe_client() {
    if !interop() {
        return;
    }
    let mut server = python("server.py");
    server.arg("--Hello.Endpoints=tcp -h 127.0.0.1 -p 0");
    let (child, endpoint, out) = start(server);
    run(floe_client(&endpoint, true));
    let log = finish(child, out);
    assert_eq!(log.matches("Hello World!").count(), 4, "{log}");
}
