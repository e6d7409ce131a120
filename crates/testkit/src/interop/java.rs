//! The Java peers: `JavaClient` and `JavaServer` compiled (slice2java,
//! javac) into `target/interop-java/`, run on Ice for Java from Maven
//! ([`JAVA_ICE`]) or from Debian ([`JAVA_DEBIAN_JARS`], which has IceSSL).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::{interop_dir, Server, CLIENT_TIMEOUT};
use crate::optional_peer_missing;
use crate::paths::target_dir;
use crate::report::ClientReport;
use crate::tool::run_tool;

/// The Maven artifact of Ice for Java.
pub const JAVA_ICE: &str = "com.zeroc:ice:3.7.10";

/// Runs JavaClient against `endpoint`, or returns None after printing why when
/// java, javac, mvn or Maven Central is unavailable (the Java peer is optional).
pub fn run_java_client(endpoint: &str, extra: &[&str]) -> Option<ClientReport> {
    let mut cmd = java_command("JavaClient")?;
    cmd.arg(endpoint).args(extra);
    Some(ClientReport::run("java_client", cmd, CLIENT_TIMEOUT))
}

/// `java -cp <Maven ice.jar>:<java_peer classes> main` (JavaServer also gets
/// `server-classes`), or None after printing why the Java peer is unavailable.
fn java_command(main: &str) -> Option<Command> {
    let dir = match java_peer() {
        Ok(dir) => dir,
        Err(why) => {
            println!("java peer skipped: {why}");
            return None;
        }
    };
    Some(java_command_on(
        &[&dir.join("ice.jar").display().to_string()],
        dir,
        main,
    ))
}

/// `java -cp <jars>:<dir>/classes[:<dir>/server-classes] main`.
fn java_command_on(jars: &[&str], dir: &Path, main: &str) -> Command {
    let mut classpath = format!("{}:{}", jars.join(":"), dir.join("classes").display());
    if main == "JavaServer" {
        classpath = format!("{classpath}:{}", dir.join("server-classes").display());
    }
    let mut cmd = Command::new("java");
    cmd.arg("-cp").arg(classpath).arg(main);
    cmd
}

/// Ice for Java 3.7.8 from Debian (`libzeroc-ice3.7-java`, as the other
/// Debian peers), with IceSSL and the bzip2 of `libcommons-compress-java`:
/// the Maven artifact [`JAVA_ICE`] has neither (Ice 3.7 ships IceSSL as the
/// separate `com.zeroc:icessl`, which mvn cannot fetch here; without
/// commons-compress Ice for Java neither compresses nor reads compressed
/// frames). The classes of [`java_peer`] run on it unchanged.
pub const JAVA_DEBIAN_JARS: &[&str] = &[
    "/usr/share/java/ice-3.7.8.jar",
    "/usr/share/java/icessl-3.7.8.jar",
    "/usr/share/java/commons-compress.jar",
];

/// Runs JavaClient on Debian's Ice for Java ([`JAVA_DEBIAN_JARS`]) against
/// `endpoint`, with `extra` arguments (for `ssl`, the IceSSL properties of
/// `TestCerts::java_args`), or returns None after printing why when the
/// Java peer is unavailable, as [`run_java_client`] does; missing Debian
/// jars fail the test under `CI=true`, where `cargo xtask test` installs them.
pub fn run_java_debian_client(endpoint: &str, extra: &[&str]) -> Option<ClientReport> {
    let mut cmd = java_debian_command("JavaClient")?;
    cmd.arg(endpoint).args(extra);
    Some(ClientReport::run("java3.7.8_client", cmd, CLIENT_TIMEOUT))
}

/// Starts JavaServer on Debian's Ice for Java ([`JAVA_DEBIAN_JARS`]) on a
/// free port: tcp, or `--Interop.Endpoints=ssl ...` with the IceSSL
/// properties in `extra`. None after printing why, as [`run_java_debian_client`].
pub fn start_java_debian_server(extra: &[&str]) -> Option<Server> {
    let mut cmd = java_debian_command("JavaServer")?;
    cmd.arg("0").args(extra);
    Some(Server::start("java3.7.8_server", cmd))
}

/// `java -cp <Debian jars>:<java_peer classes> main` (JavaServer also gets
/// `server-classes`), or None after printing why (see
/// [`run_java_debian_client`]).
fn java_debian_command(main: &str) -> Option<Command> {
    let dir = match java_peer() {
        Ok(dir) => dir,
        Err(why) => {
            println!("java peer skipped: {why}");
            return None;
        }
    };
    if let Some(jar) = JAVA_DEBIAN_JARS.iter().find(|j| !Path::new(j).is_file()) {
        optional_peer_missing(
            "Debian's Ice for Java",
            &format!(
                "{jar} not found: install the Debian packages libzeroc-ice3.7-java \
                 and libcommons-compress-java"
            ),
        );
        return None;
    }
    Some(java_command_on(JAVA_DEBIAN_JARS, dir, main))
}

/// Fetches Ice for Java with Maven into `target/interop-java/ice.jar` and compiles
/// Interop.ice (slice2java) and JavaClient.java into `classes/` there, and
/// ServerOnly.ice and JavaServer.java into `server-classes/` (once per stamp).
pub fn java_peer() -> Result<&'static Path, String> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(build_java_peer)
        .as_ref()
        .map(|p| p.as_path())
        .map_err(Clone::clone)
}

fn build_java_peer() -> Result<PathBuf, String> {
    let dir = target_dir().join("interop-java");
    std::fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    run_tool(Command::new("javac").arg("-version"))
        .map_err(|e| format!("javac unavailable: {e}"))?;
    let jar = dir.join("ice.jar");
    if !jar.exists() {
        run_tool(
            Command::new("mvn")
                .args(["-q", "-B", "dependency:copy"])
                .arg(format!("-Dartifact={JAVA_ICE}"))
                .arg(format!("-DoutputDirectory={}", dir.display()))
                .arg("-Dmdep.stripVersion=true"),
        )
        .map_err(|e| format!("mvn could not fetch {JAVA_ICE} (registry unavailable?): {e}"))?;
    }
    let mut hasher = DefaultHasher::new();
    for file in [
        "Interop.ice",
        "ServerOnly.ice",
        "JavaClient.java",
        "JavaServer.java",
    ] {
        let text =
            std::fs::read(interop_dir().join(file)).map_err(|e| format!("read {file}: {e}"))?;
        text.hash(&mut hasher);
    }
    let stamp = format!("{:016x}", hasher.finish());
    let stamp_file = dir.join("stamp");
    let classes = dir.join("classes");
    let server_classes = dir.join("server-classes");
    if std::fs::read_to_string(&stamp_file).is_ok_and(|s| s.trim() == stamp)
        && classes.exists()
        && server_classes.exists()
    {
        return Ok(dir);
    }
    let work = dir.join(format!("build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    // Interop.ice and JavaClient in classes/; ServerOnly.ice's types (which
    // clients must not know) and JavaServer in server-classes/.
    let out = work.join("classes");
    let server_out = work.join("server-classes");
    let compile = |slice: &str, gen: &str, classpath: String, main: &str, out: &Path| {
        let gen = work.join(gen);
        std::fs::create_dir_all(&gen).map_err(|e| format!("create {}: {e}", gen.display()))?;
        std::fs::create_dir_all(out).map_err(|e| format!("create {}: {e}", out.display()))?;
        run_tool(
            Command::new("slice2java")
                .arg(format!("-I{}", interop_dir().display()))
                .arg("--output-dir")
                .arg(&gen)
                .arg(interop_dir().join(slice)),
        )
        .map_err(|e| format!("slice2java unavailable or failed: {e}"))?;
        let mut javac = Command::new("javac");
        javac
            .args(["-nowarn", "-encoding", "UTF-8", "-cp"])
            .arg(classpath)
            .arg("-d")
            .arg(out);
        let sources = std::fs::read_dir(gen.join("Interop"))
            .map_err(|e| format!("read generated Java: {e}"))?;
        for entry in sources.flatten() {
            javac.arg(entry.path());
        }
        javac.arg(interop_dir().join(main));
        run_tool(&mut javac)
    };
    compile(
        "Interop.ice",
        "gen",
        jar.display().to_string(),
        "JavaClient.java",
        &out,
    )?;
    compile(
        "ServerOnly.ice",
        "gen-server",
        format!("{}:{}", jar.display(), out.display()),
        "JavaServer.java",
        &server_out,
    )?;
    for (built, installed) in [(&out, &classes), (&server_out, &server_classes)] {
        let _ = std::fs::remove_dir_all(installed);
        std::fs::rename(built, installed).map_err(|e| format!("install classes: {e}"))?;
    }
    let _ = std::fs::remove_dir_all(&work);
    std::fs::write(&stamp_file, &stamp).map_err(|e| format!("write stamp: {e}"))?;
    Ok(dir)
}
