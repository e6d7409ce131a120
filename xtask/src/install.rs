//! Installs the real Ice peers the interop tests talk to, only when missing.
//!
//! Required: the Debian Ice 3.7.8 packages (C++ library and compilers, the
//! Python and Java mappings, IceBox/IceStorm, IceGrid, Slice files, admin
//! tools), Chromium and openssl. Optional: the npm packages of the Node and
//! browser peers (`ice`, `ws`, `playwright-core`, into `target/interop-node/`)
//! and the Maven artifact `com.zeroc:ice:3.7.10`; failing to get those only
//! prints a line (the tests that need them then fail under `CI=true`).

use std::process::Command;

use floe_testkit::node_packages;

use crate::{on_path, run_checked, workspace_root, DynError};

/// The Debian packages every interop test may use.
pub const DEBIAN_PACKAGES: &[&str] = &[
    "python3-zeroc-ice",
    "zeroc-ice-compilers",
    "libzeroc-ice-dev",
    "zeroc-icebox",
    "libzeroc-icestorm3.7",
    "zeroc-ice-slice",
    "zeroc-ice-utils",
    // icegridnode, icegridregistry, icegridadmin (tests/grid.rs).
    "zeroc-icegrid",
    // glacier2router (tests/glacier2.rs).
    "zeroc-glacier2",
    // The headless browser of tests/browser.rs.
    "chromium",
    // Ice for Java 3.7.8 with IceSSL, and the bzip2 it compresses with
    // (tests/java_tls.rs, the Java server cells); openssl writes the
    // PKCS#12 keystores Java's IceSSL reads (floe-testkit's tls_certs.rs).
    "libzeroc-ice3.7-java",
    "libcommons-compress-java",
    "openssl",
    // The Prometheus server that scrapes `floe-storm --metrics`
    // (crates/storm/tests/prometheus.rs).
    "prometheus",
];

/// Installs whatever is missing of [`DEBIAN_PACKAGES`].
pub fn debian_packages() -> Result<(), DynError> {
    if !on_path("dpkg-query") || !on_path("apt-get") {
        return Err(
            "dpkg-query/apt-get not found: this task installs the Ice peers with \
                    Debian's packages; install them by hand or set FLOE_NO_INTEROP=1"
                .into(),
        );
    }
    let missing: Vec<&str> = DEBIAN_PACKAGES
        .iter()
        .copied()
        .filter(|p| !debian_installed(p))
        .collect();
    if missing.is_empty() {
        println!("xtask: Ice Debian packages present");
        return Ok(());
    }
    println!("xtask: installing {}", missing.join(" "));
    let root = is_root();
    run_checked(apt(root).arg("update"))?;
    run_checked(
        apt(root)
            .args(["install", "-y", "--no-install-recommends"])
            .args(&missing),
    )?;
    Ok(())
}

/// Whether dpkg reports `pkg` as installed.
fn debian_installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", pkg])
        .output()
        .map(|o| {
            o.status.success()
                && String::from_utf8_lossy(&o.stdout).contains("install ok installed")
        })
        .unwrap_or(false)
}

/// `apt-get`, through sudo unless we are root.
fn apt(root: bool) -> Command {
    let mut cmd = if root {
        Command::new("apt-get")
    } else {
        let mut c = Command::new("sudo");
        c.args(["-E", "apt-get"]);
        c
    };
    cmd.env("DEBIAN_FRONTEND", "noninteractive");
    cmd
}

/// Whether the effective user is root.
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Installs the npm packages of the Node and browser peers (Ice for
/// JavaScript, `ws`, `playwright-core`; crates/testkit/interop/package.json)
/// into `target/interop-node/` if npm exists and they are not there yet.
/// Never fails the run.
pub fn node_packages() {
    if !on_path("npm") {
        println!("xtask: npm not found; skipping the optional Node and browser peers");
        return;
    }
    let dir = workspace_root().join("target").join("interop-node");
    match node_packages::install(&dir) {
        Ok(false) => println!("xtask: npm packages present in {}", dir.display()),
        Ok(true) => println!(
            "xtask: installed {} in {}",
            node_packages::package_names().join(" "),
            dir.display()
        ),
        Err(e) => println!("xtask: optional npm install failed (continuing): {e}"),
    }
}

/// Fetches `com.zeroc:ice:3.7.10` into the local Maven repository if mvn
/// exists and it is not there yet. Never fails the run.
pub fn maven_ice() {
    if !on_path("mvn") {
        println!("xtask: mvn not found; skipping the optional Java Ice peer");
        return;
    }
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    if let Some(home) = &home {
        let jar = home.join(".m2/repository/com/zeroc/ice/3.7.10/ice-3.7.10.jar");
        if jar.is_file() {
            println!("xtask: Maven com.zeroc:ice:3.7.10 present");
            return;
        }
    }
    let mut cmd = Command::new("mvn");
    cmd.args([
        "-q",
        "-B",
        "dependency:get",
        "-Dartifact=com.zeroc:ice:3.7.10",
        "-Dtransitive=false",
    ]);
    if let Err(e) = run_checked(&mut cmd) {
        println!("xtask: optional Maven ice install failed (continuing): {e}");
    }
}
