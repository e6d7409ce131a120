//! Helpers of the ssl/ws/wss interop tests: argument lists, the test
//! certificates as floe properties, one-ping probes from Ice for Python
//! and from floe, and the error checks.
#![allow(dead_code)]

use std::process::Command;

use floe_runtime::{Communicator, Error, Properties};
use floe_testkit::interop::interop_dir;
use floe_testkit::tls_certs::TestCerts;
use floe_testkit::{require_python_ice, PYTHON};

/// The adapter endpoint of the ssl servers.
pub const SSL_ANY_PORT: &str = "ssl -h 127.0.0.1 -p 0";

/// The ssl endpoint of a server listening on `port`.
pub fn ssl_endpoint(port: u16) -> String {
    format!("ssl -h 127.0.0.1 -p {port}")
}

pub fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Runs py_tls_probe.py: one ice_ping of `proxy`; its one output line.
pub fn py_probe(proxy: &str, args: &[String]) -> String {
    require_python_ice();
    let out = Command::new(PYTHON)
        .arg(interop_dir().join("py_tls_probe.py"))
        .arg(proxy)
        .args(args)
        .output()
        .expect("run py_tls_probe.py");
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        out.status.success() && !stdout.is_empty(),
        "py_tls_probe.py failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The error of one ice_ping from a floe client with `props` to `proxy`.
pub async fn floe_ping(props: Properties, proxy: &str) -> Result<(), Error> {
    let comm = Communicator::with_properties(props);
    let r = comm.string_to_proxy(proxy)?.ice_ping().await;
    comm.destroy().await;
    r
}

pub fn expect_security(r: Result<(), Error>, fragment: &str) {
    match r {
        Err(Error::Security(m)) => assert!(
            m.contains(fragment),
            "SecurityException `{m}` does not mention `{fragment}`"
        ),
        other => panic!("expected a SecurityException ({fragment}), got {other:?}"),
    }
}

/// The test certificates as floe properties.
pub trait TlsProperties {
    /// [`TestCerts::ice_ssl`] set on floe properties.
    fn properties(&self, cert: &str, ca: &str) -> Properties;
}

impl TlsProperties for TestCerts {
    fn properties(&self, cert: &str, ca: &str) -> Properties {
        let props = Properties::new();
        for (k, v) in self.ice_ssl(cert, ca) {
            props.set(&k, &v);
        }
        props
    }
}
