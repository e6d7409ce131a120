//! `floe-storm admin` against `icestormadmin` 3.7.8: the same command list,
//! each against its own fresh floe-storm broker, gives the same stdout,
//! stderr and exit code, command by command. Peers bind 127.0.0.1 only.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use floe::runtime::Communicator;
use floe_storm::{Server, StormConfig};

/// Commands covering every admin command, their argument checks and their
/// user-exception messages, in an order where state matters.
const COMMANDS: &[&str] = &[
    "create a b",
    "create a",
    "topics",
    "link a b",
    "link a b 3",
    "links",
    "links IceStorm",
    "links Foo",
    "subscribers a",
    "subscribers a zz",
    "unlink a b",
    "unlink a b",
    "destroy zz",
    "destroy a zz",
    "current",
    "current Foo",
    "current IceStorm",
    "link a",
    "create",
    "bogus",
    "topics IceStorm",
    "topics Foo",
    "help",
    "create Foo/x",
    "link a zz",
    "subscribers",
    "destroy",
    "exit",
    "create c; topics",
    "link a b x",
    "create a; create q; topics",
    "link c q 7; links; topics",
    "current; current IceStorm; current",
    "subscribers c q",
    "destroy a b c",
    "quit; topics",
    "create 'x y'; topics",
    "link a b 2 3",
    "unlink a",
    "topics a b",
    "create IceStorm/n1; link IceStorm/n1 q 2; links",
    // Not `replica`: on a broker that is not replicated icestormadmin
    // prints "This topic is not replicated" and then fails on the null
    // node proxy (`::IceUtil::NullHandleException`); floe-storm admin
    // prints the first line only. Replicated: tests/replicated_admin.rs.
];

fn admin_available() -> bool {
    if Command::new("icestormadmin")
        .arg("--version")
        .output()
        .is_ok()
    {
        return true;
    }
    if std::env::var("FLOE_NO_INTEROP").as_deref() == Ok("1") {
        println!("FLOE_NO_INTEROP=1: icestormadmin missing, skipping");
        return false;
    }
    panic!("icestormadmin missing; install zeroc-ice-utils, or set FLOE_NO_INTEROP=1");
}

async fn start(dir: &Path) -> Server {
    let config = StormConfig {
        topic_manager_endpoints: "tcp -h 127.0.0.1 -p 0".into(),
        publish_endpoints: "tcp -h 127.0.0.1 -p 0".into(),
        flush_timeout: Duration::from_millis(100),
        data_dir: dir.to_path_buf(),
        ..StormConfig::default()
    };
    Server::start(config, Communicator::new()).await.unwrap()
}

/// Runs `program [pre] args -e command` off the async threads.
async fn run(program: &str, pre: &[&str], args: Vec<String>, command: &str) -> String {
    let mut cmd = Command::new(program);
    cmd.args(pre).args(args).args(["-e", command]);
    let command = command.to_string();
    tokio::task::spawn_blocking(move || {
        let out = cmd.output().expect("admin program runs");
        format!(
            "=== {command}\n--out\n{}--err\n{}rc={:?}\n",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            out.status.code()
        )
    })
    .await
    .unwrap()
}

async fn transcript(program: &str, pre: &[&str], args: impl Fn(u16) -> Vec<String>) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let port = server.topic_manager_endpoints()[0].port;
    let mut out = Vec::new();
    for c in COMMANDS {
        out.push(run(program, pre, args(port), c).await);
    }
    server.shutdown().await;
    out
}

fn default_manager(port: u16) -> Vec<String> {
    vec![format!(
        "--IceStormAdmin.TopicManager.Default=IceStorm/TopicManager:tcp -h 127.0.0.1 -p {port}"
    )]
}

fn finder(port: u16) -> Vec<String> {
    vec![
        "--IceStormAdmin.Host=127.0.0.1".to_string(),
        format!("--IceStormAdmin.Port={port}"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floe_storm_admin_prints_what_icestormadmin_prints() {
    if !admin_available() {
        return;
    }
    let ours = env!("CARGO_BIN_EXE_floe-storm");
    for args in [default_manager as fn(u16) -> Vec<String>, finder] {
        let theirs = transcript("icestormadmin", &[], args).await;
        let mine = transcript(ours, &["admin"], args).await;
        assert!(theirs[0].contains("rc=Some(0)"), "{}", theirs[0]);
        for (t, m) in theirs.iter().zip(&mine) {
            assert_eq!(m, t);
        }
        assert_eq!(mine.len(), COMMANDS.len());
    }
}
