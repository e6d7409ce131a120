//! Peer certificate checks of `ssl` connections, as IceSSL makes them:
//! rustls' WebPKI verification (chain to `IceSSL.CAs`, validity dates,
//! and the host name when `IceSSL.CheckCertName` is set), the chain length
//! limit (`IceSSL.VerifyDepthMax`) and the subject filters
//! (`IceSSL.TrustOnly*`).

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName};

use crate::error::{Error, Result};
use crate::properties::Properties;

/// An IceSSL setting that cannot be used, as the error that fails the
/// communicator's initialization.
pub(crate) fn config_error(what: impl std::fmt::Display) -> Error {
    Error::Initialization(format!("IceSSL: {what}"))
}

/// `IceSSL.TrustOnly*`: subject filters.
#[derive(Clone, Debug, Default)]
pub(crate) struct TrustOnly {
    accept: Vec<Vec<(String, String)>>,
    reject: Vec<Vec<(String, String)>>,
}

impl TrustOnly {
    /// The filters of every property in `names` that is set.
    pub(crate) fn from_properties(props: &Properties, names: &[&str]) -> Result<TrustOnly> {
        let mut t = TrustOnly::default();
        for name in names {
            if let Some(v) = props.get(name) {
                t.add(&v)
                    .map_err(|e| config_error(format!("{name}: {e}")))?;
            }
        }
        Ok(t)
    }

    fn add(&mut self, text: &str) -> std::result::Result<(), String> {
        for entry in split_outside_quotes(text, ';') {
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            let (reject, entry) = match entry.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, entry),
            };
            let mut rdns = Vec::new();
            for rdn in split_outside_quotes(entry, ',') {
                let (k, v) = rdn
                    .split_once('=')
                    .ok_or_else(|| format!("`{rdn}` is not KEY=value"))?;
                let v = v.trim();
                let v = v
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .unwrap_or(v);
                rdns.push((k.trim().to_ascii_uppercase(), v.to_string()));
            }
            if reject {
                self.reject.push(rdns);
            } else {
                self.accept.push(rdns);
            }
        }
        Ok(())
    }

    /// Whether the peer certificate `der` passes the filters.
    fn check(&self, der: &[u8]) -> std::result::Result<(), rustls::Error> {
        if self.accept.is_empty() && self.reject.is_empty() {
            return Ok(());
        }
        let subject = subject_rdns(der).unwrap_or_default();
        let matches = |entry: &Vec<(String, String)>| {
            entry.iter().all(|(k, v)| {
                subject
                    .iter()
                    .any(|(sk, sv)| sk.eq_ignore_ascii_case(k) && sv == v)
            })
        };
        let text = format_subject(&subject);
        if self.reject.iter().any(matches) {
            return Err(rustls::Error::General(format!(
                "peer certificate `{text}` is rejected by IceSSL.TrustOnly"
            )));
        }
        if !self.accept.is_empty() && !self.accept.iter().any(matches) {
            return Err(rustls::Error::General(format!(
                "peer certificate `{text}` is not trusted by IceSSL.TrustOnly"
            )));
        }
        Ok(())
    }
}

fn split_outside_quotes(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut quoted = false;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if c == '"' {
            quoted = !quoted;
        } else if c == sep && !quoted {
            parts.push(&text[start..i]);
            start = i + 1;
        }
    }
    parts.push(&text[start..]);
    parts
}

/// The subject of a DER certificate as (short name, value) pairs.
pub(crate) fn subject_rdns(der: &[u8]) -> Option<Vec<(String, String)>> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let registry = x509_parser::objects::oid_registry();
    let mut out = Vec::new();
    for rdn in cert.subject().iter() {
        for attr in rdn.iter() {
            let key = x509_parser::objects::oid2abbrev(attr.attr_type(), registry)
                .map(str::to_string)
                .unwrap_or_else(|_| attr.attr_type().to_id_string());
            let value = attr.as_str().map(str::to_string).unwrap_or_default();
            out.push((key, value));
        }
    }
    Some(out)
}

pub(crate) fn format_subject(rdns: &[(String, String)]) -> String {
    rdns.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_depth(
    intermediates: &[CertificateDer<'_>],
    max: usize,
) -> std::result::Result<(), rustls::Error> {
    if intermediates.len().saturating_add(1) > max {
        return Err(rustls::Error::General(format!(
            "the peer's certificate chain ({} certificates) exceeds IceSSL.VerifyDepthMax={max}",
            intermediates.len() + 1
        )));
    }
    Ok(())
}

/// The handshake signature checks of a verifier with a `provider` field:
/// the provider's algorithms, as rustls' own verifiers do.
macro_rules! handshake_signatures {
    () => {
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
            let algorithms = &self.provider.signature_verification_algorithms;
            rustls::crypto::verify_tls12_signature(message, cert, dss, algorithms)
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
            let algorithms = &self.provider.signature_verification_algorithms;
            rustls::crypto::verify_tls13_signature(message, cert, dss, algorithms)
        }

        fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
            let algorithms = &self.provider.signature_verification_algorithms;
            algorithms.supported_schemes()
        }
    };
}

/// Checks server certificates as IceSSL's client does.
#[derive(Debug)]
pub(crate) struct IceServerVerifier {
    /// `None`: no `IceSSL.CAs`, nothing can be trusted.
    pub(crate) webpki: Option<Arc<WebPkiServerVerifier>>,
    pub(crate) verify: bool,
    pub(crate) check_name: bool,
    pub(crate) depth_max: usize,
    pub(crate) trust: TrustOnly,
    pub(crate) provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for IceServerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        if self.verify {
            check_depth(intermediates, self.depth_max)?;
            let webpki = self
                .webpki
                .as_ref()
                .ok_or(rustls::Error::InvalidCertificate(
                    CertificateError::UnknownIssuer,
                ))?;
            match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
                Ok(_) => {}
                // The chain is good; only the name differs, and
                // IceSSL.CheckCertName is off.
                Err(rustls::Error::InvalidCertificate(
                    CertificateError::NotValidForName
                    | CertificateError::NotValidForNameContext { .. },
                )) if !self.check_name => {}
                Err(e) => return Err(e),
            }
        }
        self.trust.check(end_entity)?;
        Ok(ServerCertVerified::assertion())
    }

    handshake_signatures!();
}

/// Checks client certificates as an IceSSL server does.
#[derive(Debug)]
pub(crate) struct IceClientVerifier {
    pub(crate) webpki: Option<Arc<dyn ClientCertVerifier>>,
    pub(crate) require: bool,
    pub(crate) depth_max: usize,
    pub(crate) trust: TrustOnly,
    pub(crate) provider: Arc<CryptoProvider>,
}

impl ClientCertVerifier for IceClientVerifier {
    fn client_auth_mandatory(&self) -> bool {
        self.require
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.webpki.as_ref().map_or(&[], |v| v.root_hint_subjects())
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> std::result::Result<ClientCertVerified, rustls::Error> {
        check_depth(intermediates, self.depth_max)?;
        let webpki = self
            .webpki
            .as_ref()
            .ok_or(rustls::Error::InvalidCertificate(
                CertificateError::UnknownIssuer,
            ))?;
        webpki.verify_client_cert(end_entity, intermediates, now)?;
        self.trust.check(end_entity)?;
        Ok(ClientCertVerified::assertion())
    }

    handshake_signatures!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_only_parses_accept_and_reject_entries() {
        let mut t = TrustOnly::default();
        t.add("CN=client, O=\"floe, tests\"; !CN=evil").unwrap();
        assert_eq!(t.accept.len(), 1);
        assert_eq!(
            t.accept[0],
            vec![
                ("CN".to_string(), "client".to_string()),
                ("O".to_string(), "floe, tests".to_string())
            ]
        );
        assert_eq!(t.reject, vec![vec![("CN".to_string(), "evil".to_string())]]);
        assert!(t.add("CN").is_err());
    }

    #[test]
    fn depth_counts_the_peer_certificate() {
        let c = CertificateDer::from(vec![0u8]);
        assert!(check_depth(&[], 1).is_ok());
        assert!(check_depth(std::slice::from_ref(&c), 1).is_err());
        assert!(check_depth(&[c.clone(), c], 3).is_ok());
    }
}
