//! The fan-in comparison's place in the outputs: its section of
//! `docs/performance.md` and its member of `target/compare.json`, each
//! replaced in place so that `--fanin` alone leaves the rest as the last
//! full run wrote it.

use std::fmt::Write as _;

use super::report::{Report, RAW_SHARE};

/// The heading of the fan-in section in `docs/performance.md`.
pub const SECTION_HEADING: &str = "## Fan-in through the broker (floe-storm vs IceStorm)";

/// The fan-in section of `docs/performance.md`.
pub fn document_section(report: &Report) -> String {
    let o = &report.options;
    let columns: Vec<&str> = o.columns.iter().map(|c| c.name).collect();
    let mut d = String::new();
    let _ = writeln!(
        d,
        "{SECTION_HEADING}\n\n\
         4 publishers → 1 subscriber through the broker, CODAC messages of \
         `benches/Bench.ice` (`Messages::publish{{Bytes,Floats,Data}}OneWay`), on 127.0.0.1: \
         **floe-storm** (`crates/storm`, release) and **IceStorm** 3.7 (`icebox` with \
         `libIceStormService`, Debian package), both with their default settings plus \
         `Ice.MessageSizeMax=102400` and nothing else (floe-storm's per-subscriber queue included). \
         Each broker is measured with two clients that speak only the IceStorm contract, one row \
         each: **floe** (`benches/programs/src/bin/fanin_client.rs`) and **ice-cpp** (Ice for C++ 3.7, C++11 \
         mapping, `benches/cpp/fanin_client.cpp`, IceStorm's C++ API). In both, each publisher \
         has its own communicator and connection and publishes with the oneway proxy \
         `getPublisher()->ice_oneway()` (floe: the publishers share one tokio runtime; ice-cpp: a \
         thread each), and the subscriber is an ordinary servant on a communicator and adapter \
         of its own, subscribed with `subscribeAndGetPublisher` and default QoS as a oneway \
         proxy (IceStorm's recommendation for throughput), decoding every event. All columns \
         of a workload send the same events per publisher (`sent` is all publishers \
         together, per run; {}). Events carry no sequence number, so order is not \
         checked. MB/s is payload received (10⁶ bytes) from the first timed publish to the \
         last event received; lost = sent − received once nothing arrived for 3 s, per column \
         and all rounds together: **a row where floe-storm or IceStorm lost any event fails** \
         (\"LOST n\"), and so does the comparison. **raw relay** (`benches/programs/src/bin/raw_fanin/`) is \
         the machine's bar: a relay process with one blocking thread per publisher that reads \
         frames of the sizes the Ice publishers send and writes every whole frame a read \
         completed, unchanged, to the subscriber's socket (no queue, no decoding), with a raw \
         client of its own (the same in both rows). **ice relay** is the same relay \
         (`raw_fanin ice-relay`) measured with the row's client: it answers the few setup \
         calls itself and hands out a publisher proxy with the subscriber's identity, so the \
         publishers' oneway requests are copied to the subscriber byte for byte. The client \
         shares the 2 cores with the broker, so the ice relay is the most a broker that \
         forwards each event as a message of its own can deliver to that client here (one \
         that sends a subscriber that is behind BatchRequests, as floe-storm does, can do \
         more: the subscriber reads and wakes once per batch). Its publishers wait in `write` whenever the subscriber \
         is behind; **queued relay** (`raw_fanin ice-relay-queued`, floe client) puts an \
         unbounded queue and a writer thread in front of the subscriber instead. Each cell is \
         the median over {} alternating round(s), `BENCH_SCALE={}`; columns: {}; ratio = \
         floe-storm / IceStorm with the same client. Targets, per client: ≥ 2× IceStorm at \
         10 KB, ≥ 1.3× at 100 KB and 1 MB, nothing lost; where that speed is above \
         {RAW_SHARE}× the ice relay's (same client, same run), {RAW_SHARE}× the ice relay is \
         the bar instead (\"met (relay bar)\"). CPU s/GB is the broker process's CPU time \
         (user + system) per GB of payload received (median). Load average (1, 5, 15 min) at \
         the start: {}; at the end: {}.\n",
        match o.events {
            Some(n) => format!("`--events {n}`: {n} per publisher in every workload"),
            None => format!(
                "`{}` sends at least {} per publisher at any scale, more than 40,000 in all",
                super::BURST_EVENTS.0,
                super::BURST_EVENTS.1
            ),
        },
        o.rounds,
        o.scale,
        columns.join(", "),
        report.load.0,
        report.load.1
    );
    let cc = super::super::doc::tcp_congestion_control();
    if !cc.is_empty() {
        let _ = writeln!(
            d,
            "TCP congestion control (the kernel's default): `{cc}`.\n"
        );
    }
    if let Some(bin) = &o.storm {
        let _ = writeln!(d, "floe-storm binary: `{}`.\n", bin.display());
    }
    d.push_str(&report.table);
    let errors = report.errors();
    if !errors.is_empty() {
        d.push_str("\nFailed runs and lost events:\n\n");
        for f in &errors {
            let _ = writeln!(d, "- {}", f.replace('\n', " "));
        }
    }
    d.push('\n');
    d
}

/// `doc` with its fan-in section replaced by `section` (or inserted before
/// the hand-written notes, or appended).
pub fn replace_section(doc: &str, section: &str) -> String {
    if let Some(start) = doc.find(SECTION_HEADING) {
        let after = start + SECTION_HEADING.len();
        let end = [doc[after..].find("\n## "), doc[after..].find("\n---\n")]
            .into_iter()
            .flatten()
            .min()
            .map_or(doc.len(), |e| after + e + 1);
        return format!("{}{section}{}", &doc[..start], &doc[end..]);
    }
    match doc.find("\n---\n") {
        Some(at) => format!("{}{section}{}", &doc[..at + 1], &doc[at + 1..]),
        None => format!("{doc}\n{section}"),
    }
}

/// `json` (a `target/compare.json`) with its `"fanin"` member replaced by
/// `member` (one line), or added as the last member.
pub fn replace_json_member(json: &str, member: &str) -> String {
    let mut lines: Vec<String> = json
        .lines()
        .filter(|l| !l.trim_start().starts_with("\"fanin\":"))
        .map(String::from)
        .collect();
    // The closing brace of the top-level object, and the member before it.
    let Some(close) = lines.iter().rposition(|l| l.trim() == "}") else {
        return format!("{{\n  {member}\n}}\n");
    };
    if close > 0 {
        let prev = &mut lines[close - 1];
        let trimmed = prev.trim_end().trim_end_matches(',').to_string();
        if trimmed.trim() != "{" {
            *prev = format!("{trimmed},");
        }
    }
    lines.insert(close, format!("  {member}"));
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_member_is_replaced_or_added() {
        let base = "{\n  \"machine\": {},\n  \"targets\": [\n  ]\n}\n";
        let one = replace_json_member(base, "\"fanin\": {\"a\": 1}");
        assert_eq!(
            one,
            "{\n  \"machine\": {},\n  \"targets\": [\n  ],\n  \"fanin\": {\"a\": 1}\n}\n"
        );
        let two = replace_json_member(&one, "\"fanin\": {\"a\": 2}");
        assert_eq!(two, one.replace("\"a\": 1", "\"a\": 2"));
    }

    #[test]
    fn doc_section_is_replaced_or_inserted() {
        let doc = "# t\n\n## Results\n\nx\n\n---\n\nnotes\n";
        let s1 = format!("{SECTION_HEADING}\n\none\n\n");
        let d1 = replace_section(doc, &s1);
        assert!(d1.contains("x\n\n## Fan-in"), "{d1}");
        assert!(d1.ends_with("one\n\n---\n\nnotes\n"), "{d1}");
        let s2 = format!("{SECTION_HEADING}\n\ntwo\n\n");
        let d2 = replace_section(&d1, &s2);
        assert_eq!(d2, d1.replace("one", "two"));
    }
}
