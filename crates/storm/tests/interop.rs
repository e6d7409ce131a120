//! floe-storm against real Ice 3.7 peers: Python publishers and
//! subscribers (`tests/peers/pubsub.py`), `icestormadmin`, and a real
//! IceStorm (IceBox) as the reference for admin output.
//!
//! Peers are started on 127.0.0.1 with free ports and always killed (see
//! [`Child`]). Set `FLOE_NO_INTEROP=1` to skip when the peers are missing.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use floe::runtime::Communicator;
use floe_storm::{Server, StormConfig};

const PYTHON: &str = "/usr/bin/python3";

/// Kills and reaps a child process when dropped.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether the real peers are there; panics with a clear message if not
/// (unless `FLOE_NO_INTEROP=1`, then returns false).
fn peers_available() -> bool {
    let python = Command::new(PYTHON)
        .args(["-c", "import Ice, IceStorm"])
        .output()
        .is_ok_and(|o| o.status.success());
    let admin = Command::new("icestormadmin")
        .arg("--version")
        .output()
        .is_ok();
    if python && admin {
        return true;
    }
    if std::env::var("FLOE_NO_INTEROP").as_deref() == Ok("1") {
        println!("FLOE_NO_INTEROP=1: real Ice peers missing, skipping");
        return false;
    }
    panic!(
        "real Ice peers missing (python3 Ice module: {python}, icestormadmin: {admin}); \
         install python3-zeroc-ice zeroc-ice-utils zeroc-icebox libzeroc-icestorm3.7, \
         or set FLOE_NO_INTEROP=1"
    );
}

fn peer_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/pubsub.py")
}

fn config(dir: &Path) -> StormConfig {
    StormConfig {
        topic_manager_endpoints: "tcp -h 127.0.0.1 -p 0".into(),
        publish_endpoints: "tcp -h 127.0.0.1 -p 0".into(),
        flush_timeout: Duration::from_millis(100),
        data_dir: dir.to_path_buf(),
        ..StormConfig::default()
    }
}

async fn start(dir: &Path) -> Server {
    Server::start(config(dir), Communicator::new())
        .await
        .unwrap()
}

fn tm_port(server: &Server) -> u16 {
    server.topic_manager_endpoints()[0].port
}

/// Runs a blocking command off the async threads; returns (status, stdout, stderr).
async fn run(mut cmd: Command) -> (bool, String, String) {
    tokio::task::spawn_blocking(move || {
        let out = cmd.output().expect("peer runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    })
    .await
    .unwrap()
}

async fn admin(port: u16, command: &str) -> (bool, String, String) {
    let mut cmd = Command::new("icestormadmin");
    cmd.arg(format!(
        "--IceStormAdmin.TopicManager.Default=IceStorm/TopicManager:tcp -h 127.0.0.1 -p {port}"
    ))
    .args(["-e", command]);
    run(cmd).await
}

async fn pubsub(port: u16, args: &[&str]) -> serde_like::Json {
    let mut cmd = Command::new(PYTHON);
    cmd.arg(peer_script()).arg(port.to_string()).args(args);
    let (ok, out, err) = run(cmd).await;
    assert!(ok, "pubsub.py failed: {err}");
    serde_like::parse(out.trim())
        .unwrap_or_else(|e| panic!("bad peer output {e}: {}", &out[..out.len().min(300)]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_publisher_and_subscribers_get_events_byte_for_byte() {
    if !peers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let out = pubsub(tm_port(&server), &["basic"]).await;
    let received = out.get("received").as_array();
    let published = out.get("published").as_array();
    assert_eq!(published.len(), 7);
    assert_eq!(received.len(), out.get("expected").as_i64() as usize);
    // Twoway publishers got an immediate empty 1.1 reply.
    for r in out.get("twoway_replies").as_array() {
        assert_eq!(r.as_str(), "060000000101");
    }
    for sub in ["twoway", "oneway", "ordered", "batch"] {
        let got: Vec<_> = received
            .iter()
            .filter(|r| r.get("sub").as_str() == sub && r.get("op").as_str() != "only")
            .collect();
        assert_eq!(got.len(), published.len(), "{sub}");
        for p in published {
            let r = got
                .iter()
                .find(|r| r.get("op").as_str() == p.get("op").as_str())
                .unwrap_or_else(|| panic!("{sub} missed {}", p.get("op").as_str()));
            for field in ["mode", "ctx", "params"] {
                assert_eq!(r.get(field), p.get(field), "{sub} {field}");
            }
            assert_eq!(r.get("id").as_str(), format!("sub-{sub}"));
        }
    }
    let only: Vec<_> = received
        .iter()
        .filter(|r| r.get("op").as_str() == "only")
        .collect();
    assert_eq!(only.len(), 1);
    assert_eq!(only[0].get("sub").as_str(), "twoway");
    // The datagram subscriber got everything but the 100 KB event, which
    // cannot be sent as a datagram; like IceStorm, that failure removes it
    // (retryCount 0).
    let dgram: Vec<&str> = received
        .iter()
        .filter(|r| r.get("sub").as_str() == "datagram")
        .map(|r| r.get("op").as_str())
        .collect();
    assert_eq!(
        dgram,
        ["o", "structs", "anyop", "enums", "ice_ping", "batched"]
    );
    let subs = server.broker().topic("demo").unwrap().subscriber_ids();
    assert!(!subs.iter().any(|id| id.name == "sub-datagram"), "{subs:?}");
    assert_eq!(subs.len(), 4);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fan_in_of_four_publishers_keeps_each_publishers_order() {
    if !peers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let n = 300;
    let out = pubsub(tm_port(&server), &["fanin", &n.to_string()]).await;
    let received = out.get("received").as_array();
    assert_eq!(received.len(), 4 * n);
    let mut next = [0u32; 4];
    for r in received {
        let p = hex(r.get("params").as_str());
        let publisher = u32::from_le_bytes([p[6], p[7], p[8], p[9]]) as usize;
        let seq = u32::from_le_bytes([p[10], p[11], p[12], p[13]]);
        assert_eq!(seq, next[publisher], "publisher {publisher} out of order");
        next[publisher] += 1;
    }
    assert_eq!(next, [n as u32; 4]);
    let topic = server.broker().topic("demo").unwrap();
    let c = topic.counters();
    assert_eq!(
        c.events_in.load(std::sync::atomic::Ordering::Relaxed),
        4 * n as u64
    );
    assert_eq!(c.dropped.load(std::sync::atomic::Ordering::Relaxed), 0);
    server.shutdown().await;
}

/// The admin session used against floe-storm and the real IceStorm.
const ADMIN_SESSION: &[&str] = &[
    "create news news2 t3",
    "topics",
    "link news news2 5",
    "link news t3",
    "links",
    "subscribers news",
    "unlink news t3",
    "links",
    "destroy t3",
    "topics",
    "create news",
    "destroy nope",
    "current",
];

async fn admin_session(port: u16) -> Vec<String> {
    let mut out = Vec::new();
    for c in ADMIN_SESSION {
        let (ok, stdout, stderr) = admin(port, c).await;
        // Keep the exception name of error lines, not file:line prefixes.
        let err: Vec<&str> = stderr
            .lines()
            .filter_map(|l| l.split("::").last())
            .collect();
        out.push(format!(
            "{c} -> ok={ok} out={:?} err={err:?}",
            stdout.trim()
        ));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn icestormadmin_sees_floe_storm_as_it_sees_icestorm() {
    if !peers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let ours = admin_session(tm_port(&server)).await;
    server.shutdown().await;
    let expected = [
        "create news news2 t3 -> ok=true out=\"\" err=[]",
        "topics -> ok=true out=\"news\\nnews2\\nt3\" err=[]",
        "links -> ok=true out=\"news to news2 with cost 5\\nnews to t3 with cost 0\" err=[]",
        "subscribers news -> ok=true out=\"news: subscribers:\\n\\tIceStorm/topic.news2\\n\\tIceStorm/topic.t3\" err=[]",
        "unlink news t3 -> ok=true out=\"\" err=[]",
        "destroy t3 -> ok=true out=\"\" err=[]",
        "current -> ok=true out=\"IceStorm/TopicManager\" err=[]",
    ];
    for e in expected {
        assert!(ours.iter().any(|l| l == e), "missing {e:?} in {ours:#?}");
    }

    // The same session against the real IceStorm gives the same transcript.
    let reference = RealIceStorm::start();
    let theirs = admin_session(reference.port).await;
    assert_eq!(ours, theirs);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_keeps_topics_subscribers_and_links() {
    if !peers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let port = tm_port(&server);
    pubsub(port, &["basic"]).await; // topic "demo" with four subscribers
    admin(port, "create other").await;
    admin(port, "link demo other 7").await;
    server.shutdown().await;

    let server = start(dir.path()).await;
    let port = tm_port(&server);
    let (_, topics, _) = admin(port, "topics").await;
    assert_eq!(topics.trim(), "demo\nother");
    let (_, subs, _) = admin(port, "subscribers demo").await;
    assert_eq!(
        subs.trim(),
        "demo: subscribers:\n\tsub-twoway\n\tsub-oneway\n\tsub-ordered\n\tsub-batch\n\tIceStorm/topic.other"
    );
    let (_, links, _) = admin(port, "links").await;
    assert_eq!(links.trim(), "demo to other with cost 7");
    server.shutdown().await;
}

/// Starts the `floe-storm` binary; returns it and its TopicManager port.
fn spawn_binary(dir: &Path) -> (Child, u16) {
    let mut child = Child(
        Command::new(env!("CARGO_BIN_EXE_floe-storm"))
            .args([
                "--IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p 0",
                "--IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p 0",
                "--data-dir",
            ])
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("floe-storm starts"),
    );
    let stdout = child.0.stdout.take().expect("piped");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    assert!(line.starts_with("floe-storm ready "), "{line}");
    let port = line
        .split("TopicManager=")
        .nth(1)
        .and_then(|s| s.split(" -p ").nth(1))
        .and_then(|s| s.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line}"));
    (child, port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_state_survives_sigkill() {
    if !peers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (mut child, port) = spawn_binary(dir.path());
    let (ok, _, err) = admin(port, "create durable1 durable2").await;
    assert!(ok, "{err}");
    admin(port, "link durable1 durable2 4").await;
    // SIGKILL right after the replies: nothing gets a chance to flush.
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    drop(child);
    let (mut child, port) = spawn_binary(dir.path());
    let (_, topics, _) = admin(port, "topics").await;
    assert_eq!(topics.trim(), "durable1\ndurable2");
    let (_, links, _) = admin(port, "links").await;
    assert_eq!(links.trim(), "durable1 to durable2 with cost 4");
    // SIGTERM: graceful shutdown, exit status 0.
    let pid = child.0.id().to_string();
    let (ok, _, _) = run({
        let mut c = Command::new("kill");
        c.args(["-TERM", &pid]);
        c
    })
    .await;
    assert!(ok);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(Instant::now() < deadline, "floe-storm ignored SIGTERM");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A real IceStorm in IceBox on free ports, killed on drop.
struct RealIceStorm {
    port: u16,
    _child: Child,
    _dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl RealIceStorm {
    fn start() -> RealIceStorm {
        let dir = tempfile::tempdir().unwrap();
        let (tm, publish) = (free_port(), free_port());
        let service = dir.path().join("config.service");
        std::fs::write(
            &service,
            format!(
                "IceStorm.InstanceName=IceStorm\n\
                 IceStorm.TopicManager.Endpoints=tcp -h 127.0.0.1 -p {tm}\n\
                 IceStorm.Publish.Endpoints=tcp -h 127.0.0.1 -p {publish}\n\
                 IceStorm.Discard.Interval=1\n\
                 IceStorm.LMDB.Path={}\n",
                dir.path().display()
            ),
        )
        .unwrap();
        let child = Child(
            Command::new("icebox")
                .arg(format!(
                    "--IceBox.Service.IceStorm=IceStormService,37:createIceStorm --Ice.Config={}",
                    service.display()
                ))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("icebox (zeroc-icebox) is installed"),
        );
        let deadline = Instant::now() + Duration::from_secs(15);
        while std::net::TcpStream::connect(("127.0.0.1", tm)).is_err() {
            assert!(Instant::now() < deadline, "IceStorm did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        RealIceStorm {
            port: tm,
            _child: child,
            _dir: dir,
        }
    }
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A minimal JSON reader for the peer's output (objects, arrays, strings,
/// integers): enough for tests, no extra dependency.
mod serde_like {
    use std::collections::BTreeMap;

    #[derive(Debug, Clone, PartialEq)]
    pub enum Json {
        Null,
        Num(i64),
        Float(f64),
        Str(String),
        Arr(Vec<Json>),
        Obj(BTreeMap<String, Json>),
    }

    impl Json {
        pub fn get(&self, k: &str) -> &Json {
            match self {
                Json::Obj(m) => m.get(k).unwrap_or(&Json::Null),
                _ => &Json::Null,
            }
        }
        pub fn as_array(&self) -> &[Json] {
            match self {
                Json::Arr(v) => v,
                _ => &[],
            }
        }
        pub fn as_str(&self) -> &str {
            match self {
                Json::Str(s) => s,
                _ => "",
            }
        }
        pub fn as_i64(&self) -> i64 {
            match self {
                Json::Num(n) => *n,
                _ => -1,
            }
        }
    }

    pub fn parse(s: &str) -> Result<Json, String> {
        let mut p = P {
            b: s.as_bytes(),
            i: 0,
        };
        let v = p.value()?;
        Ok(v)
    }

    struct P<'a> {
        b: &'a [u8],
        i: usize,
    }

    impl P<'_> {
        fn ws(&mut self) {
            while self.i < self.b.len() && self.b[self.i].is_ascii_whitespace() {
                self.i += 1;
            }
        }
        fn eat(&mut self, c: u8) -> Result<(), String> {
            self.ws();
            if self.b.get(self.i) == Some(&c) {
                self.i += 1;
                Ok(())
            } else {
                Err(format!("expected {} at {}", c as char, self.i))
            }
        }
        fn value(&mut self) -> Result<Json, String> {
            self.ws();
            match self.b.get(self.i) {
                Some(b'{') => {
                    self.i += 1;
                    let mut m = BTreeMap::new();
                    self.ws();
                    if self.b.get(self.i) == Some(&b'}') {
                        self.i += 1;
                        return Ok(Json::Obj(m));
                    }
                    loop {
                        self.ws();
                        let k = self.string()?;
                        self.eat(b':')?;
                        let v = self.value()?;
                        m.insert(k, v);
                        self.ws();
                        match self.b.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b'}') => {
                                self.i += 1;
                                return Ok(Json::Obj(m));
                            }
                            _ => return Err(format!("bad object at {}", self.i)),
                        }
                    }
                }
                Some(b'[') => {
                    self.i += 1;
                    let mut v = Vec::new();
                    self.ws();
                    if self.b.get(self.i) == Some(&b']') {
                        self.i += 1;
                        return Ok(Json::Arr(v));
                    }
                    loop {
                        v.push(self.value()?);
                        self.ws();
                        match self.b.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b']') => {
                                self.i += 1;
                                return Ok(Json::Arr(v));
                            }
                            _ => return Err(format!("bad array at {}", self.i)),
                        }
                    }
                }
                Some(b'"') => Ok(Json::Str(self.string()?)),
                Some(b'n') => {
                    self.i += 4;
                    Ok(Json::Null)
                }
                _ => {
                    let start = self.i;
                    while self.i < self.b.len()
                        && (self.b[self.i].is_ascii_digit()
                            || matches!(self.b[self.i], b'-' | b'+' | b'.' | b'e' | b'E'))
                    {
                        self.i += 1;
                    }
                    let text = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("");
                    text.parse()
                        .map(Json::Num)
                        .or_else(|_| text.parse().map(Json::Float))
                        .map_err(|_| format!("bad value at {start}"))
                }
            }
        }
        fn string(&mut self) -> Result<String, String> {
            self.eat(b'"')?;
            let mut s = String::new();
            while let Some(&c) = self.b.get(self.i) {
                self.i += 1;
                match c {
                    b'"' => return Ok(s),
                    b'\\' => {
                        let e = *self.b.get(self.i).ok_or("eof")?;
                        self.i += 1;
                        match e {
                            b'n' => s.push('\n'),
                            b't' => s.push('\t'),
                            b'u' => {
                                let h = std::str::from_utf8(&self.b[self.i..self.i + 4])
                                    .map_err(|e| e.to_string())?;
                                let cp = u32::from_str_radix(h, 16).map_err(|e| e.to_string())?;
                                s.push(char::from_u32(cp).unwrap_or('?'));
                                self.i += 4;
                            }
                            other => s.push(other as char),
                        }
                    }
                    c => s.push(c as char),
                }
            }
            Err("unterminated string".into())
        }
    }
}

/// Sorted (subscriber, operation, mode, context, params) tuples.
fn deliveries(out: &serde_like::Json) -> Vec<String> {
    let mut v: Vec<String> = out
        .get("received")
        .as_array()
        .iter()
        .map(|r| {
            format!(
                "{} {} {:?} {:?} {}",
                r.get("sub").as_str(),
                r.get("op").as_str(),
                r.get("mode"),
                r.get("ctx"),
                r.get("params").as_str()
            )
        })
        .collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_equal_the_real_icestorms() {
    if !peers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let ours = pubsub(tm_port(&server), &["basic"]).await;
    server.shutdown().await;
    let reference = RealIceStorm::start();
    let theirs = pubsub(reference.port, &["basic"]).await;
    assert_eq!(deliveries(&ours), deliveries(&theirs));
    assert_eq!(ours.get("twoway_replies"), theirs.get("twoway_replies"));
}

/// icestormadmin with two managers: `Floe/…` (floe-storm) and `IceStorm/…` (real).
async fn admin2(floe_port: u16, real_port: u16, command: &str) -> (bool, String, String) {
    let mut cmd = Command::new("icestormadmin");
    cmd.arg(format!(
        "--IceStormAdmin.TopicManager.A=Floe/TopicManager:tcp -h 127.0.0.1 -p {floe_port}"
    ))
    .arg(format!(
        "--IceStormAdmin.TopicManager.B=IceStorm/TopicManager:tcp -h 127.0.0.1 -p {real_port}"
    ))
    .args(["-e", command]);
    run(cmd).await
}

async fn federation(pub_tm: &str, sub_tm: &str, count: usize) -> Vec<serde_like::Json> {
    let mut cmd = Command::new(PYTHON);
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/fed.py"))
        .args([pub_tm, sub_tm, &count.to_string()]);
    let (ok, out, err) = run(cmd).await;
    assert!(ok, "fed.py failed: {err}");
    let json = serde_like::parse(out.trim()).unwrap();
    json.get("received").as_array().to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn federation_with_a_real_icestorm_in_both_directions() {
    if !peers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        StormConfig {
            instance_name: "Floe".into(),
            ..config(dir.path())
        },
        Communicator::new(),
    )
    .await
    .unwrap();
    let reference = RealIceStorm::start();
    let (fp, rp) = (tm_port(&server), reference.port);
    for c in [
        "create Floe/fed IceStorm/fed",
        // floe-storm -> IceStorm: floe calls getLinkProxy on the real broker
        // and forwards to its TopicLink object.
        "link Floe/fed IceStorm/fed 5",
    ] {
        let (ok, _, err) = admin2(fp, rp, c).await;
        assert!(ok, "{c}: {err}");
    }
    let (_, links, _) = admin2(fp, rp, "links Floe").await;
    assert_eq!(links.trim(), "fed to fed with cost 5");
    let floe_tm = format!("Floe/TopicManager:tcp -h 127.0.0.1 -p {fp}");
    let real_tm = format!("IceStorm/TopicManager:tcp -h 127.0.0.1 -p {rp}");
    let n = 30;
    let got = federation(&floe_tm, &real_tm, n).await;
    let ops: Vec<&str> = got.iter().map(|r| r.get("op").as_str()).collect();
    let want: Vec<String> = (0..n)
        .filter(|i| i % 3 != 2)
        .map(|i| format!("ev{i}"))
        .collect();
    assert_eq!(ops, want, "floe-storm -> IceStorm");
    assert_eq!(got[1].get("params").as_str(), "0a000000010101000000");

    // IceStorm -> floe-storm: the real broker calls our getLinkProxy and
    // our forward().
    let (ok, _, err) = admin2(fp, rp, "unlink Floe/fed IceStorm/fed").await;
    assert!(ok, "{err}");
    let (ok, _, err) = admin2(fp, rp, "link IceStorm/fed Floe/fed 5").await;
    assert!(ok, "{err}");
    let got = federation(&real_tm, &floe_tm, n).await;
    let ops: Vec<&str> = got.iter().map(|r| r.get("op").as_str()).collect();
    assert_eq!(ops, want, "IceStorm -> floe-storm");
    server.shutdown().await;
}

async fn failure_rounds(port: u16) -> (Vec<Vec<String>>, i64) {
    let mut cmd = Command::new(PYTHON);
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/failures.py"))
        .args([&port.to_string(), "1"]);
    let (ok, out, err) = run(cmd).await;
    assert!(ok, "failures.py failed: {err}");
    let json = serde_like::parse(out.trim()).unwrap();
    let rounds = json
        .get("rounds")
        .as_array()
        .iter()
        .map(|r| r.as_array().iter().map(|s| s.as_str().to_owned()).collect())
        .collect();
    (rounds, json.get("live").as_i64())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriber_failures_are_handled_like_icestorm() {
    if !peers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        StormConfig {
            discard_interval: Duration::from_secs(1),
            ..config(dir.path())
        },
        Communicator::new(),
    )
    .await
    .unwrap();
    let (ours, live) = failure_rounds(tm_port(&server)).await;
    server.shutdown().await;
    // ObjectNotExist and retryCount 0 go at the first failure; retryCount n
    // survives n failures (offline for Discard.Interval each time); -1 never goes.
    let want: Vec<Vec<&str>> = vec![
        vec!["r2", "rinf", "ord1", "live"],
        vec!["r2", "rinf", "live"],
        vec!["rinf", "live"],
        vec!["rinf", "live"],
    ];
    assert_eq!(ours, want);
    assert_eq!(live, 4);

    // IceStorm 3.7.8 decides the same, but lists a failed subscriber until
    // the next event reaps it: its round r+1 is our round r.
    let reference = RealIceStorm::start();
    let (theirs, their_live) = failure_rounds(reference.port).await;
    assert_eq!(ours[..3], theirs[1..]);
    assert_eq!(their_live, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_subscriber_does_not_delay_the_others() {
    if !peers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let n = 300;
    let out = pubsub(tm_port(&server), &["stall", &n.to_string()]).await;
    let received = out.get("received").as_array();
    assert_eq!(received.len(), n);
    let ops: Vec<&str> = received.iter().map(|r| r.get("op").as_str()).collect();
    let want: Vec<String> = (0..n).map(|k| format!("e{k}")).collect();
    assert_eq!(ops, want);
    // The stalled servant saw at most the 5 outstanding twoway requests
    // (one dispatched, the rest waiting in its thread pool).
    assert!(out.get("stalled_received").as_i64() <= 5);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn icestormadmin_finds_the_manager_through_the_finder() {
    if !peers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        StormConfig {
            instance_name: "Other".into(),
            ..config(dir.path())
        },
        Communicator::new(),
    )
    .await
    .unwrap();
    // No manager proxy: icestormadmin asks IceStorm/Finder at Host:Port.
    let mut cmd = Command::new("icestormadmin");
    cmd.arg("--IceStormAdmin.Host=127.0.0.1")
        .arg(format!("--IceStormAdmin.Port={}", tm_port(&server)))
        .args(["-e", "create x; topics; current"]);
    let (ok, out, err) = run(cmd).await;
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "x\nOther/TopicManager");
    server.shutdown().await;
}

/// Replaces every port number after `-p ` with `N`.
fn without_ports(s: &str) -> String {
    let mut out = Vec::new();
    let mut after_p = false;
    for word in s.split(' ') {
        if after_p && word.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            let rest: String = word.chars().skip_while(char::is_ascii_digit).collect();
            out.push(format!("N{rest}"));
        } else {
            out.push(word.to_owned());
        }
        after_p = word == "-p";
    }
    out.join(" ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encoding_1_0_clients_see_what_icestorm_sends() {
    if !peers_available() {
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/enc10.py");
    let session = |port: u16| {
        let mut cmd = Command::new(PYTHON);
        cmd.arg(&script).arg(port.to_string());
        async move {
            let (ok, out, err) = run(cmd).await;
            assert!(ok, "enc10.py failed: {err}");
            without_ports(&out)
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let ours = session(tm_port(&server)).await;
    server.shutdown().await;
    let reference = RealIceStorm::start();
    let theirs = session(reference.port).await;
    assert_eq!(ours, theirs);
    assert!(ours.contains("badqos invalid reliability: x"), "{ours}");
}
