//! IceSSL-compatible TLS for `ssl` endpoints, with rustls (the `ring`
//! provider).
//!
//! The IceSSL 3.7 properties, with their meanings:
//!
//! | property | meaning |
//! |---|---|
//! | `IceSSL.DefaultDir` | directory that relative file names below are in |
//! | `IceSSL.CAs` | PEM file (or directory of PEM files) of trusted CA certificates |
//! | `IceSSL.CertFile` | PEM file: this side's certificate chain (leaf first) |
//! | `IceSSL.KeyFile` | PEM file: its private key (PKCS#8, PKCS#1 or SEC1); default: the key in `CertFile` |
//! | `IceSSL.VerifyPeer` | 0: a client does not verify the server, a server does not ask for a certificate; 1: a client verifies, a server verifies a certificate if the client sends one; 2 (default): a server also requires one |
//! | `IceSSL.CheckCertName` | 1: a client checks that the server certificate is for the host in the endpoint (default 0, as Ice 3.7) |
//! | `IceSSL.VerifyDepthMax` | longest certificate chain a peer may present, its own certificate included (default 3; 0 = no limit) |
//! | `IceSSL.TrustOnly`, `.Client`, `.Server`, `.Server.<Adapter>` | subject filters: `;`-separated entries of `,`-separated RDNs (`CN=a, O=b`), all of which a subject must have; an entry starting with `!` rejects |
//!
//! PKCS#12 files and encrypted private keys (`IceSSL.Password`) are not
//! supported: they are refused with a message saying so.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::server::WebPkiClientVerifier;
use rustls::{CertificateError, RootCertStore};
use tokio::net::TcpStream;

use super::verify::{
    config_error, format_subject, subject_rdns, IceClientVerifier, IceServerVerifier, TrustOnly,
};
use crate::connection_info::TlsInfo;
use crate::error::{Error, Result};
use crate::properties::Properties;

/// The client side's rustls configuration from `IceSSL.*`.
pub(crate) struct TlsClient {
    config: Arc<rustls::ClientConfig>,
    verify: bool,
}

/// A server side's (one object adapter's) rustls configuration.
pub(crate) struct TlsServer {
    config: Arc<rustls::ServerConfig>,
    verify: bool,
}

/// A TLS stream over TCP, either side.
pub(crate) type TlsStream = tokio_rustls::TlsStream<TcpStream>;

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The IceSSL settings both sides share.
struct Settings {
    roots: Option<Arc<RootCertStore>>,
    chain: Vec<CertificateDer<'static>>,
    key: Option<PrivateKeyDer<'static>>,
    verify_peer: i64,
    depth_max: usize,
}

impl Settings {
    fn load(props: &Properties) -> Result<Settings> {
        let dir = props.get("IceSSL.DefaultDir").map(PathBuf::from);
        let path = |name: &str| {
            props
                .get(name)
                .filter(|v| !v.is_empty())
                .map(|v| match &dir {
                    Some(d) if Path::new(&v).is_relative() => d.join(v),
                    _ => PathBuf::from(v),
                })
        };
        let roots = path("IceSSL.CAs").map(|p| load_roots(&p)).transpose()?;
        let (chain, key) = match path("IceSSL.CertFile") {
            Some(cert) => {
                let key_file = path("IceSSL.KeyFile").unwrap_or_else(|| cert.clone());
                (load_chain(&cert)?, Some(load_key(&key_file, props)?))
            }
            None => (Vec::new(), None),
        };
        let depth = props.get_int_or("IceSSL.VerifyDepthMax", 3);
        Ok(Settings {
            roots,
            chain,
            key,
            verify_peer: props.get_int_or("IceSSL.VerifyPeer", 2),
            depth_max: if depth <= 0 {
                usize::MAX
            } else {
                depth as usize
            },
        })
    }
}

fn read_pem(path: &Path) -> Result<String> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ext == "p12" || ext == "pfx" {
        return Err(config_error(format!(
            "{}: PKCS#12 files are not supported, use PEM files (IceSSL.CertFile and IceSSL.KeyFile)",
            path.display()
        )));
    }
    std::fs::read_to_string(path)
        .map_err(|e| config_error(format!("cannot read {}: {e}", path.display())))
}

fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let text = read_pem(path)?;
    CertificateDer::pem_slice_iter(text.as_bytes())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| config_error(format!("{}: {e}", path.display())))
}

fn load_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let chain = load_certs(path)?;
    if chain.is_empty() {
        return Err(config_error(format!(
            "{}: no PEM certificate",
            path.display()
        )));
    }
    Ok(chain)
}

fn load_key(path: &Path, props: &Properties) -> Result<PrivateKeyDer<'static>> {
    let text = read_pem(path)?;
    if text.contains("ENCRYPTED") {
        let why = if props.get("IceSSL.Password").is_some() {
            "encrypted private keys are not supported (IceSSL.Password)"
        } else {
            "the private key is encrypted"
        };
        return Err(config_error(format!(
            "{}: {why}; use an unencrypted PEM key",
            path.display()
        )));
    }
    PrivateKeyDer::from_pem_slice(text.as_bytes())
        .map_err(|e| config_error(format!("{}: no usable private key: {e}", path.display())))
}

fn load_roots(path: &Path) -> Result<Arc<RootCertStore>> {
    let mut store = RootCertStore::empty();
    let files = if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| config_error(format!("cannot read {}: {e}", path.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        files
    } else {
        vec![path.to_path_buf()]
    };
    for file in files {
        for cert in load_certs(&file)? {
            store
                .add(cert)
                .map_err(|e| config_error(format!("{}: {e}", file.display())))?;
        }
    }
    Ok(Arc::new(store))
}

impl TlsClient {
    /// The client configuration from the communicator's `IceSSL.*`.
    pub(crate) fn from_properties(props: &Properties) -> Result<TlsClient> {
        let s = Settings::load(props)?;
        let provider = provider();
        let webpki = match &s.roots {
            Some(roots) if !roots.is_empty() => Some(
                WebPkiServerVerifier::builder_with_provider(roots.clone(), provider.clone())
                    .build()
                    .map_err(config_error)?,
            ),
            _ => None,
        };
        let verifier = IceServerVerifier {
            webpki,
            verify: s.verify_peer > 0,
            check_name: props.get_int_or("IceSSL.CheckCertName", 0) > 0,
            depth_max: s.depth_max,
            trust: TrustOnly::from_properties(
                props,
                &["IceSSL.TrustOnly", "IceSSL.TrustOnly.Client"],
            )?,
            provider: provider.clone(),
        };
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(config_error)?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier));
        let config = match s.key {
            Some(key) => builder
                .with_client_auth_cert(s.chain, key)
                .map_err(config_error)?,
            None => builder.with_no_client_auth(),
        };
        Ok(TlsClient {
            config: Arc::new(config),
            verify: s.verify_peer > 0,
        })
    }

    /// Runs the client handshake over `tcp` to `host` (the endpoint's host:
    /// the name checked with `IceSSL.CheckCertName`).
    pub(crate) async fn connect(&self, tcp: TcpStream, host: &str) -> Result<(TlsStream, TlsInfo)> {
        let name = ServerName::try_from(host.to_string())
            .map_err(|e| config_error(format!("`{host}` is not a valid server name: {e}")))?;
        let connector = tokio_rustls::TlsConnector::from(self.config.clone());
        let stream = connector
            .connect(name, tcp)
            .await
            .map_err(|e| handshake_error(&e))?;
        let info = info(stream.get_ref().1, self.verify);
        Ok((TlsStream::Client(stream), info))
    }
}

impl TlsServer {
    /// The configuration of the adapter `adapter` from `IceSSL.*`
    /// (`IceSSL.TrustOnly.Server.<adapter>` included).
    pub(crate) fn from_properties(props: &Properties, adapter: &str) -> Result<TlsServer> {
        let s = Settings::load(props)?;
        let Some(key) = s.key else {
            return Err(config_error(
                "an ssl endpoint needs a certificate: set IceSSL.CertFile (and IceSSL.KeyFile)",
            ));
        };
        let provider = provider();
        let trust = TrustOnly::from_properties(
            props,
            &[
                "IceSSL.TrustOnly",
                "IceSSL.TrustOnly.Server",
                &format!("IceSSL.TrustOnly.Server.{adapter}"),
            ],
        )?;
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(config_error)?;
        let builder = if s.verify_peer <= 0 {
            builder.with_no_client_auth()
        } else {
            let webpki = match &s.roots {
                Some(roots) if !roots.is_empty() => Some(
                    WebPkiClientVerifier::builder_with_provider(roots.clone(), provider.clone())
                        .build()
                        .map_err(config_error)?,
                ),
                _ => None,
            };
            builder.with_client_cert_verifier(Arc::new(IceClientVerifier {
                webpki,
                require: s.verify_peer >= 2,
                depth_max: s.depth_max,
                trust,
                provider,
            }))
        };
        let config = builder
            .with_single_cert(s.chain, key)
            .map_err(config_error)?;
        Ok(TlsServer {
            config: Arc::new(config),
            verify: s.verify_peer > 0,
        })
    }

    /// Runs the server handshake over an accepted `tcp`.
    pub(crate) async fn accept(&self, tcp: TcpStream) -> Result<(TlsStream, TlsInfo)> {
        let acceptor = tokio_rustls::TlsAcceptor::from(self.config.clone());
        let stream = acceptor
            .accept(tcp)
            .await
            .map_err(|e| handshake_error(&e))?;
        let info = info(stream.get_ref().1, self.verify);
        Ok((TlsStream::Server(stream), info))
    }
}

/// The peer information of an established TLS connection.
fn info(conn: &rustls::CommonState, verify: bool) -> TlsInfo {
    let certs: Vec<Bytes> = conn
        .peer_certificates()
        .unwrap_or_default()
        .iter()
        .map(|c| Bytes::copy_from_slice(c))
        .collect();
    let subject = certs
        .first()
        .and_then(|c| subject_rdns(c))
        .map(|r| format_subject(&r));
    TlsInfo {
        cipher: conn
            .negotiated_cipher_suite()
            .map(|s| format!("{:?}", s.suite()))
            .unwrap_or_default(),
        protocol: conn
            .protocol_version()
            .map(|v| format!("{v:?}"))
            .unwrap_or_default(),
        verified: verify && !certs.is_empty(),
        peer_certificates: certs,
        subject,
    }
}

/// A failed handshake as [`Error::Security`], with rustls' reason (a bad,
/// expired or untrusted certificate, a wrong name, a peer's alert, or a
/// peer that does not speak TLS); plain I/O failures stay what they are.
fn handshake_error(e: &std::io::Error) -> Error {
    if let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        return Error::Security(describe(tls));
    }
    if e.kind() == std::io::ErrorKind::InvalidData {
        return Error::Security(format!("TLS handshake failed: {e}"));
    }
    match Error::from_io(e) {
        Error::ConnectionLost(m) => Error::Security(format!(
            "the peer closed the connection during the TLS handshake ({m})"
        )),
        other => other,
    }
}

fn describe(e: &rustls::Error) -> String {
    use CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(c) => match c {
            C::Expired | C::ExpiredContext { .. } => {
                "the peer's certificate has expired".to_string()
            }
            C::NotValidYet | C::NotValidYetContext { .. } => {
                "the peer's certificate is not valid yet".to_string()
            }
            C::UnknownIssuer => {
                "the peer's certificate is not signed by a trusted CA (IceSSL.CAs)".to_string()
            }
            C::NotValidForName | C::NotValidForNameContext { .. } => {
                format!("the peer's certificate does not match the host name ({c:?})")
            }
            C::BadEncoding => "the peer's certificate is malformed".to_string(),
            other => format!("bad peer certificate: {other:?}"),
        },
        rustls::Error::NoCertificatesPresented => {
            "the peer presented no certificate (IceSSL.VerifyPeer=2)".to_string()
        }
        rustls::Error::AlertReceived(alert) => {
            format!("the peer refused the TLS handshake: alert {alert:?}")
        }
        rustls::Error::InvalidMessage(m) => {
            format!("the peer does not speak TLS: invalid message {m:?}")
        }
        rustls::Error::General(m) => m.clone(),
        other => format!("TLS handshake failed: {other}"),
    }
}
