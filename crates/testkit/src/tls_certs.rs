//! Test certificates for the `ssl` interop tests, made with rcgen at run
//! time into a fresh directory: a CA, a server certificate for 127.0.0.1
//! and localhost, a client certificate, and the bad ones the failure tests
//! need (another CA's, a wrong name, an expired one). PEM files, ECDSA
//! P-256 keys, as Ice for C++ and Python (OpenSSL) and floe (rustls) all
//! read them.

use std::path::PathBuf;

use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

/// A directory of PEM files (removed on drop):
///
/// | file | what |
/// |---|---|
/// | `ca.pem` | the trusted CA |
/// | `server.pem`, `server_key.pem` | CN=server, for 127.0.0.1 and localhost, by `ca` |
/// | `client.pem`, `client_key.pem` | CN=client, by `ca` |
/// | `banned_client.pem` (+ `_key`) | CN=banned, by `ca` |
/// | `other_ca.pem` | a CA nobody trusts |
/// | `rogue_server.pem`, `rogue_client.pem` (+ `_key`) | by `other_ca` |
/// | `wrongname.pem` (+ `_key`) | CN=wrongname, for wrong.example only, by `ca` |
/// | `expired.pem` (+ `_key`) | CN=expired, for 127.0.0.1, by `ca`, expired in 2021 |
///
/// A floe side gets the same settings as properties from
/// [`TestCerts::ice_ssl`].
pub struct TestCerts {
    /// The directory of the PEM files.
    pub dir: PathBuf,
}

struct Ca {
    cert: Certificate,
    key: KeyPair,
}

fn ca(name: &str) -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
    params.distinguished_name.push(DnType::CommonName, name);
    params
        .distinguished_name
        .push(DnType::OrganizationName, "floe tests");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let key = KeyPair::generate().expect("ca key");
    let cert = params.self_signed(&key).expect("self-signed ca");
    Ca { cert, key }
}

impl TestCerts {
    /// Makes every file in a new directory under the system's temp dir.
    pub fn generate() -> TestCerts {
        let dir = std::env::temp_dir().join(format!(
            "floe-tls-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&dir).expect("create cert dir");
        let certs = TestCerts { dir };
        let good = ca("floe test CA");
        let other = ca("untrusted CA");
        certs.write("ca.pem", &good.cert.pem());
        certs.write("other_ca.pem", &other.cert.pem());
        let local = ["127.0.0.1", "localhost"];
        certs.leaf("server", &good, "server", &local, true, false);
        certs.leaf("client", &good, "client", &[], false, false);
        certs.leaf("banned_client", &good, "banned", &[], false, false);
        certs.leaf("rogue_server", &other, "rogue", &local, true, false);
        certs.leaf("rogue_client", &other, "rogue", &[], false, false);
        certs.leaf(
            "wrongname",
            &good,
            "wrongname",
            &["wrong.example"],
            true,
            false,
        );
        certs.leaf("expired", &good, "expired", &local, true, true);
        certs
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.dir.join(name), text).expect("write cert file");
    }

    fn leaf(&self, file: &str, ca: &Ca, cn: &str, names: &[&str], server: bool, expired: bool) {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let mut params = CertificateParams::new(names).expect("leaf params");
        params.distinguished_name.push(DnType::CommonName, cn);
        params
            .distinguished_name
            .push(DnType::OrganizationName, "floe tests");
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![if server {
            ExtendedKeyUsagePurpose::ServerAuth
        } else {
            ExtendedKeyUsagePurpose::ClientAuth
        }];
        if expired {
            params.not_before = rcgen::date_time_ymd(2020, 1, 1);
            params.not_after = rcgen::date_time_ymd(2021, 1, 1);
        }
        let key = KeyPair::generate().expect("leaf key");
        let cert = params
            .signed_by(&key, &ca.cert, &ca.key)
            .expect("sign leaf");
        self.write(&format!("{file}.pem"), &cert.pem());
        self.write(&format!("{file}_key.pem"), &key.serialize_pem());
    }

    /// The path of `name` in the directory.
    pub fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// `IceSSL.*` settings for a side that presents `<cert>.pem` and
    /// trusts `<ca>.pem`, as `(name, value)` pairs (plus the plugin line
    /// Ice peers need; floe ignores it).
    pub fn ice_ssl(&self, cert: &str, ca: &str) -> Vec<(String, String)> {
        let mut v = vec![
            (
                "Ice.Plugin.IceSSL".to_string(),
                "IceSSL:createIceSSL".to_string(),
            ),
            (
                "IceSSL.DefaultDir".to_string(),
                self.dir.display().to_string(),
            ),
            ("IceSSL.CAs".to_string(), format!("{ca}.pem")),
        ];
        if !cert.is_empty() {
            v.push(("IceSSL.CertFile".to_string(), format!("{cert}.pem")));
            v.push(("IceSSL.KeyFile".to_string(), format!("{cert}_key.pem")));
        }
        v
    }

    /// [`TestCerts::ice_ssl`] as `--Name=value` arguments for an Ice peer.
    pub fn args(&self, cert: &str, ca: &str, extra: &[&str]) -> Vec<String> {
        self.ice_ssl(cert, ca)
            .into_iter()
            .map(|(k, v)| format!("--{k}={v}"))
            .chain(extra.iter().map(|s| s.to_string()))
            .collect()
    }

    /// IceSSL properties for Ice for Java as `--Name=value` arguments: Java's
    /// IceSSL reads no PEM files, only keystores, so this writes (once per
    /// name) the PKCS#12 keystore `<cert>.p12` (the key and certificate
    /// of `<cert>`, with `openssl pkcs12 -export`) and the PKCS#12
    /// truststore `<ca>_trust.p12` (the CA certificate as a trusted entry,
    /// with the JDK's `keytool -importcert`: Java ignores certificates
    /// without a key in a PKCS#12 file unless they carry its trust
    /// attribute, which keytool adds and Debian's openssl 3.0 cannot).
    /// An empty `cert` presents no certificate. Errs when openssl or
    /// keytool is missing or fails.
    pub fn java_args(&self, cert: &str, ca: &str, extra: &[&str]) -> Result<Vec<String>, String> {
        let pass = JAVA_STORE_PASSWORD;
        let mut v = vec![
            "--Ice.Plugin.IceSSL=com.zeroc.IceSSL.PluginFactory".to_string(),
            format!("--IceSSL.DefaultDir={}", self.dir.display()),
        ];
        if !cert.is_empty() {
            let store = format!("{cert}.p12");
            if !self.dir.join(&store).exists() {
                run_store_tool(
                    std::process::Command::new("openssl")
                        .args(["pkcs12", "-export", "-name", cert, "-passout"])
                        .arg(format!("pass:{pass}"))
                        .arg("-in")
                        .arg(self.dir.join(format!("{cert}.pem")))
                        .arg("-inkey")
                        .arg(self.dir.join(format!("{cert}_key.pem")))
                        .arg("-out")
                        .arg(self.dir.join(&store)),
                )?;
            }
            v.extend([
                format!("--IceSSL.Keystore={store}"),
                "--IceSSL.KeystoreType=PKCS12".to_string(),
                format!("--IceSSL.KeystorePassword={pass}"),
                // The key's own password: a PKCS#12 key has the store's.
                format!("--IceSSL.Password={pass}"),
            ]);
        }
        let trust = format!("{ca}_trust.p12");
        if !self.dir.join(&trust).exists() {
            run_store_tool(
                std::process::Command::new("keytool")
                    .args(["-importcert", "-noprompt", "-storetype", "PKCS12"])
                    .args(["-alias", ca, "-storepass", pass, "-file"])
                    .arg(self.dir.join(format!("{ca}.pem")))
                    .arg("-keystore")
                    .arg(self.dir.join(&trust)),
            )?;
        }
        v.extend([
            format!("--IceSSL.Truststore={trust}"),
            "--IceSSL.TruststoreType=PKCS12".to_string(),
            format!("--IceSSL.TruststorePassword={pass}"),
        ]);
        v.extend(extra.iter().map(|s| s.to_string()));
        Ok(v)
    }
}

/// The password of the PKCS#12 files [`TestCerts::java_args`] writes.
pub const JAVA_STORE_PASSWORD: &str = "floe-tests";

fn run_store_tool(cmd: &mut std::process::Command) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

impl Drop for TestCerts {
    fn drop(&mut self) {
        // FLOE_KEEP_TLS_CERTS=1 keeps the files, to try peers by hand.
        if std::env::var_os("FLOE_KEEP_TLS_CERTS").is_some() {
            eprintln!("test certificates kept in {}", self.dir.display());
            return;
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
