//! Builds the bench pairs `cargo xtask compare` runs: floe's
//! (`bench_{server,client}` of `benches/programs/`, also run with `--current-thread`,
//! with `--current-thread --floe.BusyPoll=50`, and with its `tracing` spans
//! recorded, `floe-traced`), the raw TCP baseline
//! (`raw_bench_{server,client}`, also with `--spin` and with `--tokio`), both in release, and the Ice for
//! C++ 3.7 pair (`benches/cpp/bench_{server,client}.cpp`, slice2cpp and
//! g++ -O2 into `target/bench-cpp/`), installing Debian's Ice packages
//! first if they are missing, and the tonic (gRPC) pair (`benches/tonic/`,
//! a standalone crate outside the workspace, into `target/bench-tonic/`),
//! and the Java RMI pair (`benches/java/`, javac into
//! `target/bench-java/`, run by the `java` on `PATH`).
//! The Ice C++ fan-in client of [`super::fanin`]
//! (`benches/cpp/fanin_client.cpp`) is compiled the same way.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use super::process::Pair;
use crate::{
    build_programs, cargo, install, on_path, release_dir, run_checked, workspace_root, DynError,
};

/// Workloads the raw baseline has an equivalent for.
pub const RAW_WORKLOADS: &[&str] = &["latency", "oneway", "byteseq_send", "byteseq_recv"];

/// The raw baseline with `--spin` (busy polling) runs only the round
/// trip: the floor for floe's `floe.BusyPoll`.
fn raw_spin_runs(workload: &str) -> bool {
    workload == "latency"
}

/// The raw baseline with `--tokio` (waiting through a tokio reactor) runs
/// the workloads where floe's targets are relative to raw: the floor for
/// any runtime built on tokio.
fn raw_tokio_runs(workload: &str) -> bool {
    matches!(workload, "latency" | "byteseq_send" | "byteseq_recv")
}

/// The `tracing` filter of the `floe-traced` column: floe's spans (one
/// per connection, invocation and dispatch) enabled, with a subscriber
/// that formats them (see `install_bench_tracing` in
/// benches/programs/src/lib.rs).
pub const TRACED_FILTER: &str = "floe_runtime=debug";

/// `floe-traced` runs the per-call workloads, where a span per call shows.
fn traced_runs(workload: &str) -> bool {
    matches!(workload, "latency" | "oneway")
}

/// How long `floe-poll` busy-polls after a write (`floe.BusyPoll`, µs).
pub const BUSY_POLL_US: u32 = 50;

/// Workloads the tonic (gRPC) pair has an equivalent for.
pub const TONIC_WORKLOADS: &[&str] = &["latency", "byteseq_send", "byteseq_recv"];

/// Workloads the Java RMI pair has an equivalent for.
pub const RMI_WORKLOADS: &[&str] = &["latency", "byteseq_send", "byteseq_recv"];

/// Builds every pair that can be built; a pair that cannot is left out with
/// a printed reason, so one missing implementation does not stop the rest.
pub fn pairs(build: bool) -> Result<Vec<Pair>, DynError> {
    let bin = release_dir();
    if build {
        build_programs(
            &[
                "bench_server",
                "bench_client",
                "raw_bench_server",
                "raw_bench_client",
            ],
            &[],
        )?;
    }
    let floe = floe_pair();
    let mut pairs = vec![
        floe.clone(),
        Pair {
            name: "floe-ct",
            extra_args: vec!["--current-thread".into()],
            ..floe.clone()
        },
        Pair {
            name: "floe-traced",
            extra_args: vec![format!("--Bench.Trace={TRACED_FILTER}")],
            workloads: Some(traced_runs),
            ..floe.clone()
        },
        Pair {
            name: "floe-poll",
            extra_args: vec![
                "--current-thread".into(),
                format!("--floe.BusyPoll={BUSY_POLL_US}"),
            ],
            // Every workload: floe-poll is a whole configuration, so that
            // every target is evaluated for it (busy polling changes only
            // the rows where someone waits for an answer).
            ..floe
        },
    ];
    match cpp_pair(build) {
        Ok(p) => pairs.push(p),
        Err(e) => println!("xtask: no ice-cpp column: {e}"),
    }
    match rmi_pair(build) {
        Ok(p) => pairs.push(p),
        Err(e) => println!("xtask: no rmi column: {e}"),
    }
    let raw = Pair {
        name: "raw",
        server: bin.join("raw_bench_server"),
        client: bin.join("raw_bench_client"),
        extra_args: Vec::new(),
        workloads: Some(|w| RAW_WORKLOADS.contains(&w)),
    };
    pairs.push(raw.clone());
    pairs.push(Pair {
        name: "raw-spin",
        extra_args: vec!["--spin".into()],
        workloads: Some(raw_spin_runs),
        ..raw.clone()
    });
    pairs.push(Pair {
        name: "raw-tokio",
        extra_args: vec!["--tokio".into()],
        workloads: Some(raw_tokio_runs),
        ..raw
    });
    match tonic_pair(build) {
        Ok(p) => pairs.push(p),
        Err(e) => println!("xtask: no tonic column: {e}"),
    }
    // A pair whose binaries are missing (`--no-build`) is left out, so
    // `--impls` can pick among the pairs that are there.
    pairs.retain(|p| {
        let missing = [&p.server, &p.client].into_iter().find(|b| !b.is_file());
        if let Some(bin) = missing {
            println!("xtask: no {} column: not built: {}", p.name, bin.display());
        }
        missing.is_none()
    });
    Ok(pairs)
}

/// floe's pair with its default settings (the `floe` column), built by
/// [`pairs`].
pub fn floe_pair() -> Pair {
    let bin = release_dir();
    Pair {
        name: "floe",
        server: bin.join("bench_server"),
        client: bin.join("bench_client"),
        extra_args: Vec::new(),
        workloads: None,
    }
}

/// The Ice C++ pair, compiled into `target/bench-cpp/` when its sources are
/// newer than the binaries.
pub fn cpp_pair(build: bool) -> Result<Pair, DynError> {
    let root = workspace_root();
    let src = root.join("benches/cpp");
    let out = root.join("target/bench-cpp");
    let server_src = src.join("bench_server.cpp");
    let client_src = src.join("bench_client.cpp");
    if !server_src.is_file() || !client_src.is_file() {
        return Err(format!("{} has no bench_server.cpp/bench_client.cpp", src.display()).into());
    }
    let pair = Pair {
        name: "ice-cpp",
        server: out.join("bench_server"),
        client: out.join("bench_client"),
        extra_args: Vec::new(),
        workloads: None,
    };
    if !build {
        return Ok(pair);
    }
    let bench_o = cpp_bench_object(&out)?;
    // The client can route through Glacier2 (`--grid`).
    cpp_program(&server_src, &bench_o, &pair.server, &["-lIce++11"])?;
    cpp_program(
        &client_src,
        &bench_o,
        &pair.client,
        &["-lGlacier2++11", "-lIce++11"],
    )?;
    Ok(pair)
}

/// The Ice C++ fan-in client (`benches/cpp/fanin_client.cpp`, IceStorm's
/// C++ API from Debian's `libzeroc-ice-dev`), compiled into
/// `target/bench-cpp/fanin_client` when its sources are newer.
pub fn cpp_fanin_client(build: bool) -> Result<PathBuf, DynError> {
    let root = workspace_root();
    let main = root.join("benches/cpp/fanin_client.cpp");
    let out = root.join("target/bench-cpp");
    let bin = out.join("fanin_client");
    if build {
        if !main.is_file() {
            return Err(format!("{} not found", main.display()).into());
        }
        let bench_o = cpp_bench_object(&out)?;
        let header = Path::new("/usr/include/IceStorm/IceStorm.h");
        if !header.is_file() {
            return Err(format!(
                "{} not found (Debian package libzeroc-ice-dev)",
                header.display()
            )
            .into());
        }
        cpp_program(&main, &bench_o, &bin, &["-lIceStorm++11", "-lIce++11"])?;
    }
    if !bin.is_file() {
        return Err(format!("not built: {}", bin.display()).into());
    }
    Ok(bin)
}

/// Installs Debian's Ice packages if missing (unless `FLOE_NO_INTEROP=1`),
/// then `Bench.ice` through slice2cpp and g++ into `out/Bench.o` (when
/// stale), shared by every C++ program; returns its path.
fn cpp_bench_object(out: &Path) -> Result<PathBuf, DynError> {
    if std::env::var_os("FLOE_NO_INTEROP").is_some_and(|v| v == "1") {
        println!("xtask: FLOE_NO_INTEROP=1, not installing Ice packages");
    } else {
        install::debian_packages()?;
    }
    for tool in ["slice2cpp", "g++"] {
        if !on_path(tool) {
            return Err(format!("`{tool}` not found").into());
        }
    }
    std::fs::create_dir_all(out)?;
    let ice = workspace_root().join("benches/Bench.ice");
    let generated = out.join("Bench.cpp");
    if stale(&generated, &[ice.as_path()]) {
        run_checked(
            Command::new("slice2cpp")
                .arg("--output-dir")
                .arg(out)
                .arg(&ice),
        )?;
    }
    let bench_o = out.join("Bench.o");
    if stale(&bench_o, &[generated.as_path()]) {
        run_checked(gxx(out).arg("-c").arg(&generated).arg("-o").arg(&bench_o))?;
    }
    Ok(bench_o)
}

/// Links `main` with `bench_o` into `bin` (with `libs` and pthread) when
/// `bin` is older than either.
fn cpp_program(main: &Path, bench_o: &Path, bin: &Path, libs: &[&str]) -> Result<(), DynError> {
    if stale(bin, &[main, bench_o]) {
        // Invariant: every C++ program lives in the directory of Bench.o.
        let out = bench_o.parent().expect("Bench.o has a directory");
        run_checked(
            gxx(out)
                .arg(main)
                .arg(bench_o)
                .arg("-o")
                .arg(bin)
                .args(libs)
                .arg("-lpthread"),
        )?;
    }
    Ok(())
}

/// The tonic pair, built in release from `benches/tonic/` (its own
/// Cargo.lock, `--locked`) into `target/bench-tonic/`, apart from the
/// workspace so tonic's dependencies never enter the default build.
fn tonic_pair(build: bool) -> Result<Pair, DynError> {
    let root = workspace_root();
    let manifest = root.join("benches/tonic/Cargo.toml");
    if !manifest.is_file() {
        return Err(format!("{} not found", manifest.display()).into());
    }
    let target = root.join("target/bench-tonic");
    let bin = target.join("release");
    let pair = Pair {
        name: "tonic",
        server: bin.join("tonic_bench_server"),
        client: bin.join("tonic_bench_client"),
        extra_args: Vec::new(),
        workloads: Some(|w| TONIC_WORKLOADS.contains(&w)),
    };
    if build {
        run_checked(
            cargo()
                .args(["build", "--release", "--locked", "--manifest-path"])
                .arg(&manifest)
                .arg("--target-dir")
                .arg(&target),
        )?;
    }
    for b in [&pair.server, &pair.client] {
        if !b.is_file() {
            return Err(format!("not built: {}", b.display()).into());
        }
    }
    Ok(pair)
}

/// The Java RMI pair: `benches/java/*.java` compiled by javac into
/// `target/bench-java/classes/` when a source is newer than the classes,
/// and the `bench_server`/`bench_client` scripts beside them that run
/// `java` (plain JDK settings) on those classes with the usual arguments.
fn rmi_pair(build: bool) -> Result<Pair, DynError> {
    let root = workspace_root();
    let src = root.join("benches/java");
    let out = root.join("target/bench-java");
    let classes = out.join("classes");
    let pair = Pair {
        name: "rmi",
        server: out.join("bench_server"),
        client: out.join("bench_client"),
        extra_args: Vec::new(),
        workloads: Some(|w| RMI_WORKLOADS.contains(&w)),
    };
    if !build {
        return Ok(pair);
    }
    let sources: Vec<PathBuf> = ["Bench", "BenchServer", "BenchClient"]
        .iter()
        .map(|c| src.join(format!("{c}.java")))
        .collect();
    if let Some(missing) = sources.iter().find(|s| !s.is_file()) {
        return Err(format!("{} not found", missing.display()).into());
    }
    for tool in ["javac", "java"] {
        if !on_path(tool) {
            return Err(format!(
                "`{tool}` not found (a JDK, e.g. Debian's openjdk-17-jdk-headless)"
            )
            .into());
        }
    }
    let inputs: Vec<&Path> = sources.iter().map(PathBuf::as_path).collect();
    let outputs = ["BenchServer.class", "BenchClient.class"].map(|c| classes.join(c));
    if outputs.iter().any(|o| stale(o, &inputs)) {
        std::fs::create_dir_all(&classes)?;
        run_checked(
            Command::new("javac")
                .args(["-Xlint:all", "-Werror", "-d"])
                .arg(&classes)
                .args(&sources),
        )?;
    }
    for (script, class) in [(&pair.server, "BenchServer"), (&pair.client, "BenchClient")] {
        java_script(script, class)?;
    }
    Ok(pair)
}

/// Writes `script` (if its text changed), an executable that runs `class`
/// from the `classes/` directory beside it with its arguments; `exec`, so
/// that the process xtask starts (and kills) is the JVM.
fn java_script(script: &Path, class: &str) -> Result<(), DynError> {
    use std::os::unix::fs::PermissionsExt;
    let text = format!(
        "#!/bin/sh\n\
         # Written by `cargo xtask compare` (xtask/src/compare/build.rs).\n\
         exec java -cp \"$(dirname \"$0\")/classes\" {class} \"$@\"\n"
    );
    if std::fs::read_to_string(script).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(script, text)?;
        std::fs::set_permissions(script, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// `g++ -O2 -std=c++11 -DICE_CPP11_MAPPING -I out` (as `benches/cpp/build.sh`).
fn gxx(out: &Path) -> Command {
    let mut cmd = Command::new("g++");
    cmd.args(["-O2", "-std=c++11", "-DICE_CPP11_MAPPING", "-I"])
        .arg(out);
    cmd
}

/// Whether `target` is missing or older than any existing input.
fn stale(target: &Path, inputs: &[&Path]) -> bool {
    let modified = |p: &Path| p.metadata().and_then(|m| m.modified()).ok();
    let Some(t) = modified(target) else {
        return true;
    };
    inputs
        .iter()
        .filter_map(|i| modified(i))
        .any(|m: SystemTime| m > t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_columns_run_the_workloads_they_are_floors_for() {
        assert!(raw_spin_runs("latency") && !raw_spin_runs("byteseq_send"));
        assert!(raw_tokio_runs("latency") && raw_tokio_runs("byteseq_recv"));
        assert!(!raw_tokio_runs("oneway") && !raw_tokio_runs("codac_bytes_twoway_10000"));
    }
}
