//! What `cargo xtask compare` writes besides the tables: the machine's
//! description, the tokio runtime and Java RMI notes and
//! `docs/performance.md`.

use std::fmt::Write as _;

use super::report::{targets, Cell, Results};
use super::{build, idle, Options, MALLOC_TUNABLES};
use crate::workspace_root;

/// floe on tokio's current-thread runtime vs the multi-thread one.
pub(super) fn runtime_comparison(results: &Results) -> String {
    let mut ct_faster = Vec::new();
    let mut mt_faster = Vec::new();
    let mut geo = 0.0;
    let mut n = 0;
    for (w, row) in results {
        let (Some(mt), Some(ct)) = (
            row.get("floe").and_then(Cell::median_us),
            row.get("floe-ct").and_then(Cell::median_us),
        ) else {
            continue;
        };
        geo += (ct / mt).ln();
        n += 1;
        if ct < mt {
            ct_faster.push(w.as_str());
        } else {
            mt_faster.push(w.as_str());
        }
    }
    if n == 0 {
        return "floe-ct vs floe: not measured".into();
    }
    format!(
        "floe-ct (tokio current-thread) vs floe (multi-thread): geometric mean time ratio {:.2} \
         over {n} workloads; current-thread faster on {} ({}), multi-thread faster on {} ({}).",
        (geo / n as f64).exp(),
        ct_faster.len(),
        ct_faster.join(", "),
        mt_faster.len(),
        mt_faster.join(", ")
    )
}

/// floe's default runtime (the `floe` column) against Java RMI on the
/// empty twoway call, with the target of [`targets`] and the other
/// columns of the same rounds.
pub(super) fn rmi_comparison(results: &Results) -> String {
    let us = |imp: &str| {
        results
            .get("latency")
            .and_then(|row| row.get(imp))
            .and_then(Cell::median_us)
    };
    let target = targets(&["latency".to_string()])
        .into_iter()
        .find(|t| t.against == "rmi");
    let (Some(floe), Some(rmi), Some(target)) = (us("floe"), us("rmi"), target) else {
        return "floe vs Java RMI (latency): not measured".into();
    };
    let verdict = match target.evaluate(results, "floe") {
        Some((_, true)) => "met",
        _ => "**not met**",
    };
    let others: Vec<String> = ["floe-ct", "floe-poll", "ice-cpp", "raw"]
        .iter()
        .filter_map(|imp| us(imp).map(|u| format!("{imp} {u:.1} µs")))
        .collect();
    format!(
        "floe (default runtime) vs Java RMI, empty twoway call (`latency`, medians): \
         floe {floe:.1} µs, rmi {rmi:.1} µs, floe/rmi time {:.2} (target: {}: {verdict}){}.",
        floe / rmi,
        target.describe(),
        if others.is_empty() {
            String::new()
        } else {
            format!("; same rounds: {}", others.join(", "))
        }
    )
}

/// Output of a command, trimmed; empty if it cannot run.
fn command_output(program: &str, args: &[&str]) -> String {
    std::process::Command::new(program)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// The kernel's default TCP congestion control (empty if unknown). Every
/// loopback connection of a comparison uses it: with `bbr` the kernel paces
/// each socket (hrtimers and deferred sends), which on the 2-core VM cost
/// every broker 14-30% of its 100 KB fan-in MB/s against `cubic`.
pub(super) fn tcp_congestion_control() -> String {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// What the machine is: cores, CPU model, kernel, TCP congestion control,
/// compilers, Ice.
pub(super) fn machine() -> Vec<(String, String)> {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let mut m = vec![
        ("nproc".to_string(), command_output("nproc", &[])),
        ("cpu".to_string(), cpu),
        ("kernel".to_string(), command_output("uname", &["-srm"])),
        (
            "tcp congestion control".to_string(),
            tcp_congestion_control(),
        ),
        ("rustc".to_string(), command_output("rustc", &["-V"])),
        (
            "g++".to_string(),
            command_output("g++", &["--version"])
                .lines()
                .next()
                .unwrap_or("")
                .to_string(),
        ),
        (
            "ice".to_string(),
            command_output("dpkg-query", &["-W", "-f=${Version}", "libzeroc-ice3.7"]),
        ),
        (
            "date".to_string(),
            command_output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        ),
    ];
    m.retain(|(_, v)| !v.is_empty());
    m
}

/// `docs/performance.md`.
pub(super) fn document(
    opts: &Options,
    machine: &[(String, String)],
    targets_table: &str,
    table: &str,
    runtime_note: &str,
    rmi_note: &str,
    failures: &[String],
) -> String {
    let mut d = String::new();
    let _ = writeln!(
        d,
        "# floe performance\n\n\
         Generated by `cargo xtask compare` (`xtask/src/compare.rs`); do not edit by hand, \
         rerun it. Hand-written analysis lives in `docs/performance-notes.md` and is \
         appended below.\n"
    );
    let _ = writeln!(d, "## Machine\n");
    for (k, v) in machine {
        let _ = writeln!(d, "- {k}: {v}");
    }
    let _ = writeln!(
        d,
        "\n## Method\n\n\
         Nine columns, each a server and a client process implementing \
         `benches/Bench.ice` (or its RMI equivalent) on 127.0.0.1: **floe** (`benches/programs/src/bin/bench_{{server,client}}.rs`, tokio multi-thread \
         runtime, default settings, the workspace's release profile: one codegen unit, no LTO), **floe-ct** (the same with `--current-thread` on both sides), \
         **floe-poll** (current-thread and `floe.BusyPoll={}` on both sides: after a write a \
         connection polls its socket for the answer for up to {} µs instead of sleeping, \
         trading CPU for latency; every workload, though only those where someone waits for \
         an answer change), **ice-cpp** \
         (Ice for C++ 3.7, C++11 mapping, `benches/cpp/`, g++ -O2), **rmi** (Java RMI, \
         plain JDK: `benches/java/`, one remote interface with `o()`, `sendByteSeq(byte[])` \
         and `recvByteSeq(int)`, javac and `java` with default settings, a registry and \
         the object on one loopback port; the JIT is warmed by 20,000 untimed calls \
         before `latency` and 200 before each 500 KB workload; only `latency`, \
         `byteseq_send`, `byteseq_recv`), **raw** (blocking \
         std TCP, `benches/programs/src/bin/raw_bench_{{server,client}}.rs`, messages of the same sizes as Ice's; only the workloads \
         that make sense without an RPC layer), **raw-spin** (the raw pair with `--spin`: \
         non-blocking sockets read in a busy loop, the floor for floe-poll; `latency` only), \
         **raw-tokio** (the raw pair with `--tokio`: each side waits for its socket through a \
         tokio current-thread runtime's reactor, as floe does, with no RPC work: the floor for \
         any runtime built on tokio; `latency`, `byteseq_send`, `byteseq_recv`) \
         and **tonic** (gRPC over HTTP/2, \
         `benches/tonic/`, prost messages with `bytes::Bytes` payloads, tokio current-thread \
         client, multi-thread server; only `latency`, `byteseq_send`, `byteseq_recv`). One server per implementation runs for the \
         whole comparison; each (round, workload, implementation) is a fresh client process \
         and connection; the order of implementations rotates every round. {} round(s), \
         `BENCH_SCALE={}` (a factor on every client's call counts; every client makes \
         the same untimed warm-up calls before a workload, the RMI client more for its JIT); each cell is the median over the rounds. Ratios are floe's median \
         time per call divided by the other's (below 1: floe is faster); for throughput \
         targets the speed ratio is its inverse. The machine is shared and noisy: treat \
         differences under ~10% on latency rows as noise.\n",
        build::BUSY_POLL_US,
        build::BUSY_POLL_US,
        opts.rounds,
        opts.scale
    );
    let _ = writeln!(
        d,
        "Transport rows (`ssl_latency`, `ssl_byteseq_send`, `ssl_byteseq_recv`, \
         `ws_latency`; floe's columns and ice-cpp): the clients' `latency` and `byteseq_*` \
         over `ssl` (rustls for floe, IceSSL/OpenSSL for Ice C++) and `ws`, against the same \
         servers, which then listen on tcp, ssl and ws (`--Bench.Endpoints`); a CA and a \
         server certificate (ECDSA P-256) are generated for the run and both \
         implementations read them through the same `IceSSL.*` properties. Concurrency \
         rows (reported in calls/s): `pipelined_N` keeps N `o()` calls in flight on one \
         connection (floe: one task keeping N call futures, starting the next as one \
         completes; Ice C++: AMI, each reply's callback sends \
         the next request), `clients_N` opens N connections (`ice_connectionId`), each \
         calling `o()` in a loop (floe: a task each; Ice C++: a thread each); 100,000 calls \
         in all times `BENCH_SCALE`; Ice C++ with its default thread pools.\n"
    );
    let _ = writeln!(
        d,
        "Memory allocator: {}\n\n\
         Idle connections (`idle` row): a fresh server per implementation and round, ACM \
         off; {} connections are opened and validated (the server's ValidateConnection \
         read) by a helper process and held; the server's `VmRSS` growth divided by \
         the connection count is reported (user-space memory only; kernel socket \
         buffers are not in `VmRSS`).\n",
        if opts.default_malloc {
            "glibc malloc with its default dynamic thresholds (`--default-malloc`).".to_string()
        } else {
            format!(
                "every server and client (all columns alike) runs with \
                 `GLIBC_TUNABLES={MALLOC_TUNABLES}` (fixed mmap/trim thresholds: freed \
                 messages stay in the heap instead of being unmapped and faulted in again; \
                 `--default-malloc` turns this off)."
            )
        },
        idle::CONNECTIONS
    );
    let _ = writeln!(d, "## Targets\n\n{targets_table}");
    let _ = writeln!(d, "## tokio runtime flavour\n\n{runtime_note}\n");
    let _ = writeln!(d, "## Java RMI\n\n{rmi_note}\n");
    let _ = writeln!(d, "## Results\n\n{table}");
    if !failures.is_empty() {
        let _ = writeln!(d, "## Failed runs\n");
        for f in failures {
            let _ = writeln!(d, "- {}", f.replace('\n', " "));
        }
        d.push('\n');
    }
    if let Ok(notes) = std::fs::read_to_string(workspace_root().join("docs/performance-notes.md")) {
        let _ = writeln!(d, "---\n\n{notes}");
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latency(cells: &[(&str, f64)]) -> Results {
        let mut r = Results::new();
        for (imp, us) in cells {
            r.entry("latency".into())
                .or_default()
                .entry(imp.to_string())
                .or_default()
                .us
                .push(*us);
        }
        r
    }

    #[test]
    fn rmi_note_gives_the_ratio_and_the_verdict() {
        let met = rmi_comparison(&latency(&[("floe", 40.0), ("rmi", 50.0), ("raw", 30.0)]));
        assert!(met.contains("floe/rmi time 0.80"), "{met}");
        assert!(met.contains("time ≤ 0.80× rmi: met"), "{met}");
        assert!(met.contains("same rounds: raw 30.0 µs"), "{met}");
        let not_met = rmi_comparison(&latency(&[("floe", 45.0), ("rmi", 50.0)]));
        assert!(
            not_met.contains("0.90") && not_met.contains("**not met**"),
            "{not_met}"
        );
        assert!(rmi_comparison(&latency(&[("floe", 45.0)])).contains("not measured"));
    }
}
