//! The checks of `tests/grid_node.rs` on what a node-activated server
//! writes (`Ice.StdOut`, `Ice.StdErr`, `Ice.ProgramName`) and on its
//! `Properties` and `Logger` admin facets, through `icegridadmin`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::support::{calls, peer_script, Registry, Side};
use floe_testkit::Peer;

/// A directory for the servers' output files that the servers can write
/// to (a node running as root starts them as `nobody`).
pub fn output_dir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
        .expect("chmod output dir");
    dir
}

/// Polls `what` for up to 10 s until `done` holds for its result.
fn wait_for(what: impl Fn() -> String, done: impl Fn(&str) -> bool, context: &str) -> String {
    let t = Instant::now();
    loop {
        let text = what();
        if done(&text) {
            return text;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{context}; got:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Whether `line` is an Ice log line (`-- MM/DD/YY HH:MM:SS.mmm `,
/// `-!` or `!!`) with the prefix `program: `.
fn is_log_line(line: &str, program: &str) -> bool {
    let date_ok = |d: &str| {
        d.len() == 21
            && d.char_indices().all(|(i, c)| match i {
                2 | 5 => c == '/',
                8 => c == ' ',
                11 | 14 => c == ':',
                17 => c == '.',
                _ => c.is_ascii_digit(),
            })
    };
    ["-- ", "-! ", "!! "].iter().any(|k| line.starts_with(k))
        && line.get(3..24).is_some_and(date_ok)
        && line
            .get(24..)
            .is_some_and(|rest| rest.starts_with(&format!(" {program}: ")))
}

/// Server `id` (started `starts` times with these files) has printed its
/// `READY` line that many times to `<out>/<id>.out` (appended), shows it
/// with `server show ID stdout`, writes `server stdout` messages there
/// (`Process::writeMessage`, when `admin`), and logs to `<id>.err` with
/// its id as prefix (`Ice.ProgramName`, set by the node).
pub fn output_checks(reg: &Registry, id: &str, out: &Path, starts: usize, admin: bool) {
    let stdout = out.join(format!("{id}.out"));
    let stderr = out.join(format!("{id}.err"));
    wait_for(
        || read(&stdout),
        |t| t.lines().filter(|l| l.starts_with("READY ")).count() == starts,
        &format!("{id}: {starts} READY lines in {}", stdout.display()),
    );
    let shown = reg.admin(&format!("server show {id} stdout"));
    assert!(
        shown.contains("READY "),
        "server show {id} stdout:\n{shown}"
    );
    if admin {
        let message = format!("written by icegridadmin to {id} ({starts})");
        reg.admin(&format!("server stdout {id} \"{message}\""));
        wait_for(
            || read(&stdout),
            |t| t.lines().any(|l| l == message),
            &format!("`{message}` in {}", stdout.display()),
        );
    }
    wait_for(
        || read(&stderr),
        |t| t.lines().any(|l| is_log_line(l, id)),
        &format!("log lines prefixed `{id}: ` in {}", stderr.display()),
    );
}

/// The `Properties` and `Logger` facets of the running server `id`: its
/// descriptor is `xml` with `{setting}` (deployed from `file` with
/// `first`).
pub fn facet_checks(reg: &Registry, id: &str, file: &Path, xml: &str) {
    assert_eq!(
        reg.admin(&format!("server property {id} Ice.ProgramName"))
            .trim(),
        id
    );
    let all = reg.admin(&format!("server properties {id}"));
    for line in [
        format!("Ice.ProgramName={id}"),
        "Test.Setting=first".to_string(),
        format!("BenchAdapter.AdapterId={id}.BenchAdapter"),
    ] {
        assert!(all.lines().any(|l| l == line), "{line} in:\n{all}");
    }

    // Logger: the kept messages, then a remote logger.
    let log = reg.admin(&format!("server show {id} log"));
    assert!(
        log.lines().any(|l| is_log_line(l, id)),
        "server show {id} log:\n{log}"
    );
    let mut follow = Peer::spawn(
        "icegridadmin --follow",
        reg.admin_command(&format!("server show --follow --tail 1 {id} log")),
    );
    follow.wait_ready("server `", Duration::from_secs(10));
    let accepted = |p: &Peer| p.log().matches("accepted").count();
    let before = wait_for(
        || follow.log(),
        |t| t.lines().any(|l| is_log_line(l, id)),
        "the remote logger's first message",
    )
    .matches("accepted")
    .count();
    // A new connection to the server: it logs that it accepted it.
    let proxy = format!("a@{id}.BenchAdapter");
    assert!(calls(Side::Floe, reg, &proxy, 1, false).is_ok(), "{proxy}");
    wait_for(
        || follow.log(),
        |_| accepted(&follow) > before,
        "the new message at the remote logger",
    );
    let pid = follow.pid().expect("icegridadmin running");
    Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill runs");
    let _ = follow.wait_exit(Duration::from_secs(10));

    // Properties::setProperties: the node updates the running server.
    let pid = reg.admin(&format!("server pid {id}"));
    std::fs::write(file, xml.replace("{setting}", "second")).expect("descriptor");
    reg.admin(&format!(
        "application update --no-restart \"{}\"",
        file.display()
    ));
    assert_eq!(
        reg.admin(&format!("server property {id} Test.Setting"))
            .trim(),
        "second"
    );
    assert_eq!(
        reg.admin(&format!("server pid {id}")),
        pid,
        "{id} not restarted"
    );
}

/// The `total` of entry `operation` in the `Dispatch` map of the deployed
/// server `id`'s metrics view `ByOperation` (`IceMX.Metrics.ByOperation.
/// GroupBy=operation`), read by an Ice for Python admin client through the
/// registry (`IceGrid::Admin::getServerAdmin`, facet `Metrics`).
pub fn dispatched(reg: &Registry, id: &str, operation: &str) -> u64 {
    let mut cmd = Command::new(floe_testkit::PYTHON);
    cmd.arg(peer_script())
        .args(["metrics", &reg.locator(), id, "ByOperation"]);
    let out = Peer::spawn("metrics client", cmd).wait_output(Duration::from_secs(20));
    assert!(out.lines().any(|l| l == "end"), "{id} metrics:\n{out}");
    println!("{id} ByOperation view:\n{out}");
    out.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.len() == 5 && f[0] == "Dispatch" && f[1] == operation)
                .then(|| f[2].parse::<u64>().ok())?
        })
        .sum()
}
