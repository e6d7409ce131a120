//! [`Prometheus`]: a real Prometheus server (Debian's `prometheus`)
//! scraping one target every second, its storage in a temporary
//! directory, and its HTTP query API read back as [`Sample`]s.
//!
//! The tests that use it check what a scrape *after* their run saw:
//! [`Prometheus::latest`] waits for a sample whose own timestamp (the
//! scrape's start, `timestamp()`) is later than a moment the test took
//! with [`now_secs`] when its clients were done.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::{free_port, optional_peer_missing, Peer};

/// Whether Debian's `prometheus` is installed; says so when it is not
/// (and fails under `CI=true`, where `cargo xtask test` installs it).
pub fn available() -> bool {
    let found = Command::new("prometheus")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        optional_peer_missing(
            "prometheus",
            "no prometheus binary (apt-get install prometheus)",
        );
    }
    found
}

/// `GET path` on `addr` over HTTP/1.0: status code and body.
///
/// # Errors
///
/// When the connection or the exchange fails.
pub fn http_get(addr: SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok((status, body.to_owned()))
}

/// `s` percent-encoded for a URL's query.
fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Seconds since the Unix epoch, as Prometheus's timestamps.
///
/// # Panics
///
/// With a clock before 1970.
pub fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_secs_f64()
}

/// One sample of an instant query's result vector.
#[derive(Clone, Debug)]
pub struct Sample {
    /// The series' labels (`__name__` included), as JSON.
    pub labels: serde_json::Value,
    /// The evaluation time, in seconds.
    pub time: f64,
    /// The value.
    pub value: f64,
}

/// A real Prometheus scraping one target every second; killed on drop.
pub struct Prometheus {
    peer: Peer,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    /// Starts Prometheus on a free port of 127.0.0.1 with a job `job`
    /// scraping `target` every second, and waits until it is ready.
    ///
    /// # Panics
    ///
    /// When it cannot be started or is not ready within 60 s.
    pub fn start(job: &str, target: SocketAddr) -> Prometheus {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
                 scrape_configs:\n  - job_name: {job}\n    static_configs:\n\
                 \x20     - targets: ['{target}']\n"
            ),
        )
        .expect("write prometheus.yml");
        let addr: SocketAddr = ([127, 0, 0, 1], free_port()).into();
        let mut cmd = Command::new("prometheus");
        cmd.arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .arg("--log.level=warn");
        let peer = Peer::spawn("prometheus", cmd);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !matches!(http_get(addr, "/-/ready"), Ok((200, _))) {
            assert!(
                Instant::now() < deadline,
                "prometheus not ready on {addr}: {}",
                peer.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Prometheus {
            peer,
            addr,
            _dir: dir,
        }
    }

    /// What Prometheus printed (for diagnostics).
    pub fn log(&self) -> String {
        self.peer.log()
    }

    /// `/api/v1/query?query=QUERY`: the result vector's samples, and the
    /// raw answer.
    ///
    /// # Panics
    ///
    /// When the query fails or the answer is not a vector.
    pub fn query(&self, query: &str) -> (Vec<Sample>, String) {
        let path = format!("/api/v1/query?query={}", url_encode(query));
        let (status, body) = http_get(self.addr, &path)
            .unwrap_or_else(|e| panic!("prometheus {path}: {e}; {}", self.log()));
        assert_eq!(status, 200, "prometheus {path}: {body}");
        let json: serde_json::Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        assert_eq!(json["status"], "success", "{body}");
        let samples = json["data"]["result"]
            .as_array()
            .unwrap_or_else(|| panic!("no result vector: {body}"))
            .iter()
            .map(|r| {
                let v = &r["value"];
                let value = v[1].as_str().and_then(|s| s.parse().ok());
                Sample {
                    labels: r["metric"].clone(),
                    time: v[0].as_f64().unwrap_or_else(|| panic!("no time: {body}")),
                    value: value.unwrap_or_else(|| panic!("no value: {body}")),
                }
            })
            .collect();
        (samples, body)
    }

    /// The latest samples of `selector` (a metric name with or without
    /// `{labels}`), once every one of them comes from a scrape that
    /// started after `after` (seconds since the epoch, [`now_secs`]).
    ///
    /// # Panics
    ///
    /// When no such scrape shows within 30 s.
    pub fn latest(&self, selector: &str, after: f64) -> Vec<Sample> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (scraped, body) = self.query(&format!("timestamp({selector})"));
            if !scraped.is_empty() && scraped.iter().all(|s| s.value > after) {
                let (samples, body) = self.query(selector);
                println!("{selector}: {body}");
                return samples;
            }
            assert!(
                Instant::now() < deadline,
                "{selector}: no scrape after {after} in 30 s: {body}\nprometheus: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}
