//! The `ssl` and `ws` rows of `cargo xtask compare`: workloads
//! `ssl_latency`, `ssl_byteseq_send`, `ssl_byteseq_recv` and `ws_latency`
//! are the bench clients' `latency`/`byteseq_*` run over another transport.
//!
//! When a run has such rows, the servers of the pairs that run them (floe's
//! and Ice for C++'s) listen on three endpoints,
//! `--Bench.Endpoints=tcp -h 127.0.0.1 -p {port}:ssl -h 127.0.0.1 -p S:ws -h 127.0.0.1 -p W`
//! (`{port}` is the server's own free port, filled in by
//! [`super::process::Server::start_with`]; `S` and `W` are free ports chosen
//! here), with the IceSSL properties of [`Certificates`]; the client of a
//! transport row gets `--Bench.Endpoints=ssl -h 127.0.0.1 -p S` (or `ws`)
//! and the client's IceSSL properties. Both implementations read the same
//! PEM files with IceSSL's property meanings.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};

use super::process::{free_port, Pair, Server};
use crate::{workspace_root, DynError};

/// The transport rows, in report order.
pub const WORKLOADS: &[&str] = &[
    "ssl_latency",
    "ssl_byteseq_send",
    "ssl_byteseq_recv",
    "ws_latency",
];

/// Whether `workload` is a transport row.
pub fn is_transport_row(workload: &str) -> bool {
    WORKLOADS.contains(&workload)
}

/// A transport row's transport (`ssl`, `ws`) and the client workload it runs.
pub fn split(workload: &str) -> Option<(&str, &str)> {
    if !is_transport_row(workload) {
        return None;
    }
    workload.split_once('_')
}

/// A CA and a server certificate for 127.0.0.1 (ECDSA P-256, PEM), made
/// with rcgen at the start of a run into `dir`.
pub struct Certificates {
    dir: PathBuf,
}

impl Certificates {
    /// Writes `ca.pem`, `server.pem` and `server_key.pem` into `dir`
    /// (created, files replaced).
    pub fn generate(dir: &Path) -> Result<Certificates, DynError> {
        std::fs::create_dir_all(dir)?;
        let mut ca = CertificateParams::new(Vec::<String>::new())?;
        ca.distinguished_name
            .push(DnType::CommonName, "floe compare CA");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_key = KeyPair::generate()?;
        let ca_cert = ca.self_signed(&ca_key)?;
        let mut server = CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()])?;
        server
            .distinguished_name
            .push(DnType::CommonName, "bench server");
        server.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server_key = KeyPair::generate()?;
        let server_cert = server.signed_by(&server_key, &ca_cert, &ca_key)?;
        std::fs::write(dir.join("ca.pem"), ca_cert.pem())?;
        std::fs::write(dir.join("server.pem"), server_cert.pem())?;
        std::fs::write(dir.join("server_key.pem"), server_key.serialize_pem())?;
        Ok(Certificates {
            dir: dir.to_path_buf(),
        })
    }

    /// The IceSSL properties both sides share: the plugin (Ice for C++
    /// loads `libIceSSL++11`; floe ignores the line), the directory and
    /// the trusted CA.
    fn common(&self) -> Vec<String> {
        vec![
            "--Ice.Plugin.IceSSL=IceSSL:createIceSSL".into(),
            format!("--IceSSL.DefaultDir={}", self.dir.display()),
            "--IceSSL.CAs=ca.pem".into(),
        ]
    }

    /// A server's IceSSL properties: its certificate, and no client
    /// certificate asked for (`IceSSL.VerifyPeer=0`).
    pub fn server_args(&self) -> Vec<String> {
        let mut v = self.common();
        v.push("--IceSSL.CertFile=server.pem".into());
        v.push("--IceSSL.KeyFile=server_key.pem".into());
        v.push("--IceSSL.VerifyPeer=0".into());
        v
    }

    /// A client's IceSSL properties: it verifies the server against the CA
    /// and presents no certificate.
    pub fn client_args(&self) -> Vec<String> {
        self.common()
    }
}

/// The ssl and ws ports of one server.
#[derive(Clone, Copy, Debug)]
pub struct Ports {
    ssl: u16,
    ws: u16,
}

impl Ports {
    /// Two ports that were free a moment ago.
    pub fn free() -> Result<Ports, DynError> {
        let ssl = free_port()?;
        let mut ws = free_port()?;
        while ws == ssl {
            ws = free_port()?;
        }
        Ok(Ports { ssl, ws })
    }

    /// The server's arguments: tcp on its own port (`{port}`), ssl and ws
    /// on these, and the IceSSL server properties.
    pub fn server_args(&self, certs: &Certificates) -> Vec<String> {
        let mut v = vec![format!(
            "--Bench.Endpoints=tcp -h 127.0.0.1 -p {{port}}:ssl -h 127.0.0.1 -p {}:ws -h 127.0.0.1 -p {}",
            self.ssl, self.ws
        )];
        v.extend(certs.server_args());
        v
    }

    /// A client's arguments for `transport` (`ssl` or `ws`).
    pub fn client_args(&self, transport: &str, certs: &Certificates) -> Vec<String> {
        let port = if transport == "ssl" {
            self.ssl
        } else {
            self.ws
        };
        let mut v = vec![format!(
            "--Bench.Endpoints={transport} -h 127.0.0.1 -p {port}"
        )];
        if transport == "ssl" {
            v.extend(certs.client_args());
        }
        v
    }
}

/// What a run needs for its transport rows: nothing when it has none,
/// else the certificates (in `target/compare-certs/`).
pub struct Setup {
    certs: Option<Certificates>,
}

impl Setup {
    /// The setup for a run of `workloads`.
    pub fn new(workloads: &[String]) -> Result<Setup, DynError> {
        let certs = if workloads.iter().any(|w| is_transport_row(w)) {
            Some(Certificates::generate(
                &workspace_root().join("target/compare-certs"),
            )?)
        } else {
            None
        };
        Ok(Setup { certs })
    }

    /// Starts `pair`'s server: with ssl and ws endpoints besides tcp when
    /// the run has transport rows and the pair runs them.
    pub fn start(&self, pair: &Pair, log: &Path) -> Result<(Server, Option<Ports>), DynError> {
        match &self.certs {
            Some(certs) if WORKLOADS.iter().any(|w| pair.supports(w)) => {
                let ports = Ports::free()?;
                let server = Server::start_with(pair, log, &ports.server_args(certs))?;
                Ok((server, Some(ports)))
            }
            _ => Ok((Server::start(pair, log)?, None)),
        }
    }

    /// The client arguments and client workload of row `workload` against
    /// a server listening on `ports`: for a transport row, its endpoint and
    /// (ssl) IceSSL properties and the plain workload; else none and
    /// `workload` itself.
    pub fn client<'w>(&self, workload: &'w str, ports: Option<&Ports>) -> (Vec<String>, &'w str) {
        match (split(workload), ports, &self.certs) {
            (Some((transport, inner)), Some(ports), Some(certs)) => {
                (ports.client_args(transport, certs), inner)
            }
            _ => (Vec::new(), workload),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_split_into_transport_and_workload() {
        assert_eq!(split("ssl_byteseq_recv"), Some(("ssl", "byteseq_recv")));
        assert_eq!(split("ws_latency"), Some(("ws", "latency")));
        assert_eq!(split("latency"), None);
        assert_eq!(split("codac_bytes_oneway_10000"), None);
    }

    #[test]
    fn endpoints_name_the_ports() {
        let p = Ports {
            ssl: 7001,
            ws: 7002,
        };
        let dir = std::env::temp_dir().join(format!("floe-xtask-certs-{}", std::process::id()));
        let certs = Certificates::generate(&dir).unwrap();
        let s = p.server_args(&certs);
        assert_eq!(
            s[0],
            "--Bench.Endpoints=tcp -h 127.0.0.1 -p {port}:ssl -h 127.0.0.1 -p 7001:ws -h 127.0.0.1 -p 7002"
        );
        assert!(s.iter().any(|a| a == "--IceSSL.VerifyPeer=0"));
        let c = p.client_args("ws", &certs);
        assert_eq!(c, ["--Bench.Endpoints=ws -h 127.0.0.1 -p 7002"]);
        let c = p.client_args("ssl", &certs);
        assert!(c.iter().any(|a| a == "--IceSSL.CAs=ca.pem"));
        assert!(std::fs::read_to_string(dir.join("server.pem"))
            .unwrap()
            .starts_with("-----BEGIN CERTIFICATE-----"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
