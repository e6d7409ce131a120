//! Turns the samples of a compare run into medians, ratios and the
//! project's performance targets, and renders them as the terminal table,
//! `target/compare.json` and `docs/performance.md`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The samples of one (workload, implementation) cell, in run order.
#[derive(Clone, Debug, Default)]
pub struct Cell {
    /// Microseconds per call, one per round.
    pub us: Vec<f64>,
    /// Payload Mbit/s, one per round.
    pub mbit: Vec<f64>,
    /// Calls per round (the last seen).
    pub calls: f64,
    /// Calls per second, one per round (clients that print `calls_s`).
    pub calls_s: Vec<f64>,
}

impl Cell {
    /// Median microseconds per call.
    pub fn median_us(&self) -> Option<f64> {
        median(&self.us)
    }
    /// Median Mbit/s.
    pub fn median_mbit(&self) -> Option<f64> {
        median(&self.mbit)
    }
    /// Median calls per second.
    pub fn median_calls_s(&self) -> Option<f64> {
        median(&self.calls_s)
    }
}

/// The N of the concurrency rows `pipelined_N` and `clients_N`.
pub const CONCURRENCY_COUNTS: [usize; 4] = [1, 4, 16, 64];

/// The N of a concurrency row, `None` for any other workload.
pub fn concurrency_of(workload: &str) -> Option<usize> {
    let n = workload
        .strip_prefix("pipelined_")
        .or_else(|| workload.strip_prefix("clients_"))?;
    n.parse().ok()
}

/// Everything measured: workload → implementation → cell.
pub type Results = BTreeMap<String, BTreeMap<String, Cell>>;

/// Server RSS growth per idle connection, in bytes: implementation → one
/// value per round (the `idle` workload).
pub type IdleResults = BTreeMap<String, Vec<f64>>;

/// The `idle` rows: median server RSS per idle connection per implementation.
pub fn idle_table(idle: &IdleResults, impls: &[&str]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| workload | impl | median server RSS per idle connection | min–max | rounds |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|");
    let mut first = true;
    for imp in impls {
        let Some(v) = idle.get(*imp) else { continue };
        let min = v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = v.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(
            s,
            "| {} | {imp} | {} | {} | {} |",
            if first { "idle" } else { "" },
            fmt_kib(median(v)),
            if v.is_empty() {
                "—".to_string()
            } else {
                format!("{}–{}", fmt_kib(Some(min)), fmt_kib(Some(max)))
            },
            v.len()
        );
        first = false;
    }
    s
}

/// The `idle` target as a row of [`targets_table`]: floe's median RSS per
/// connection below `bound` bytes, with Ice C++'s figure beside it.
pub fn idle_target_rows(idle: &IdleResults, bound: f64) -> String {
    let ice = fmt_kib(idle.get("ice-cpp").and_then(|v| median(v)));
    let mut cols = String::new();
    for col in TARGET_COLUMNS {
        match idle.get(col).and_then(|v| median(v)) {
            Some(b) => {
                let _ = write!(
                    cols,
                    " {} | {} |",
                    fmt_kib(Some(b)),
                    if b < bound { "met" } else { "**not met**" }
                );
            }
            None => cols.push_str(" — | not measured |"),
        }
    }
    format!(
        "| idle | server RSS < {} per connection (ice-cpp: {ice}) |{cols}\n",
        fmt_kib(Some(bound))
    )
}

/// Bytes as `7.3 KiB`.
fn fmt_kib(b: Option<f64>) -> String {
    b.map_or_else(|| "—".to_string(), |b| format!("{:.1} KiB", b / 1024.0))
}

/// The median (mean of the middle two for an even count).
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    Some(if s.len() % 2 == 1 {
        s[m]
    } else {
        (s[m - 1] + s[m]) / 2.0
    })
}

/// Time-per-call ratio `a / b` of two implementations' medians.
pub fn time_ratio(results: &Results, workload: &str, a: &str, b: &str) -> Option<f64> {
    let row = results.get(workload)?;
    Some(row.get(a)?.median_us()? / row.get(b)?.median_us()?)
}

/// How a target compares floe with a reference.
#[derive(Clone, Copy, Debug)]
pub enum Bound {
    /// floe's time per call at most this times the reference's.
    TimeAtMost(f64),
    /// floe's speed (calls or bytes per second) at least this times the reference's.
    SpeedAtLeast(f64),
    /// floe strictly faster than the reference.
    Faster,
}

/// One performance target.
#[derive(Clone, Debug)]
pub struct Target {
    /// Workload row.
    pub workload: String,
    /// Reference implementation column.
    pub against: &'static str,
    /// The bound.
    pub bound: Bound,
}

impl Target {
    /// `latency ≤ 1.10× raw (time)` and the like.
    pub fn describe(&self) -> String {
        match self.bound {
            Bound::TimeAtMost(x) => format!("time ≤ {x:.2}× {}", self.against),
            Bound::SpeedAtLeast(x) => format!("speed ≥ {x:.2}× {}", self.against),
            Bound::Faster => format!("faster than {}", self.against),
        }
    }

    /// The speed ratio `against_time / floe_time` for column `floe` and
    /// whether the target is met; `None` if either was not measured.
    pub fn evaluate(&self, results: &Results, floe: &str) -> Option<(f64, bool)> {
        let time = time_ratio(results, &self.workload, floe, self.against)?;
        let met = match self.bound {
            Bound::TimeAtMost(x) => time <= x,
            Bound::SpeedAtLeast(x) => 1.0 / time >= x,
            Bound::Faster => time < 1.0,
        };
        Some((time, met))
    }
}

/// The project's targets for the workloads in `workloads`.
pub fn targets(workloads: &[String]) -> Vec<Target> {
    let mut t = Vec::new();
    let mut add = |w: &str, against: &'static str, bound: Bound| {
        if workloads.iter().any(|x| x == w) {
            t.push(Target {
                workload: w.to_string(),
                against,
                bound,
            });
        }
    };
    add("latency", "raw", Bound::TimeAtMost(1.10));
    add("latency", "ice-cpp", Bound::TimeAtMost(0.80));
    // Issue 40: Java RMI, the yardstick of the classic Ice-vs-RMI
    // comparisons: floe's time per empty call at most 0.8× RMI's.
    add("latency", "rmi", Bound::TimeAtMost(0.80));
    add("oneway", "ice-cpp", Bound::TimeAtMost(0.80));
    add("batch", "ice-cpp", Bound::TimeAtMost(0.80));
    add("byteseq_send", "raw", Bound::SpeedAtLeast(0.95));
    add("byteseq_recv", "raw", Bound::SpeedAtLeast(0.95));
    for w in ["fixed_send", "fixed_recv"] {
        add(w, "ice-cpp", Bound::SpeedAtLeast(2.0));
    }
    for w in ["strdbl_send", "strdbl_recv"] {
        add(w, "ice-cpp", Bound::SpeedAtLeast(1.5));
    }
    for w in workloads.iter().filter(|w| w.starts_with("codac_")) {
        add(w, "ice-cpp", Bound::Faster);
    }
    // Issue 25: over IceSSL, floe's time at most Ice C++'s on every row; the
    // ws latency row is compared with Ice C++ the same way.
    for w in [
        "ssl_latency",
        "ssl_byteseq_send",
        "ssl_byteseq_recv",
        "ws_latency",
    ] {
        add(w, "ice-cpp", Bound::TimeAtMost(1.0));
    }
    // Issue 25: at least 2× Ice C++'s calls/s at every N ≥ 4.
    for w in workloads
        .iter()
        .filter(|w| concurrency_of(w).is_some_and(|n| n >= 4))
    {
        add(w, "ice-cpp", Bound::SpeedAtLeast(2.0));
    }
    t
}

/// `v` with `digits` decimals, `—` when not measured.
pub(super) fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "—".to_string(), |x| format!("{x:.digits$}"))
}

/// The columns a floe row of [`table`] gives its time ratio to.
const RATIO_COLUMNS: [&str; 6] = ["ice-cpp", "rmi", "raw", "raw-spin", "raw-tokio", "tonic"];

/// One Markdown table per run: every workload × implementation row.
pub fn table(results: &Results, workloads: &[String], impls: &[&str]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "| workload | impl | median µs/call | median Mbit/s | min–max µs/call | rounds |"
    );
    for other in RATIO_COLUMNS {
        let _ = write!(s, " floe/{other} time |");
    }
    let _ = writeln!(
        s,
        "\n|---|---|---:|---:|---:|---:|{}",
        "---:|".repeat(RATIO_COLUMNS.len())
    );
    for w in workloads.iter().filter(|w| concurrency_of(w).is_none()) {
        let Some(row) = results.get(w) else { continue };
        for (i, imp) in impls.iter().enumerate() {
            let Some(cell) = row.get(*imp) else { continue };
            let min = cell.us.iter().copied().fold(f64::INFINITY, f64::min);
            let max = cell.us.iter().copied().fold(0.0, f64::max);
            let range = if cell.us.is_empty() {
                "—".to_string()
            } else {
                format!("{min:.1}–{max:.1}")
            };
            let ratios = if imp.starts_with("floe") {
                RATIO_COLUMNS
                    .map(|other| fmt_opt(time_ratio(results, w, imp, other), 2))
                    .join(" | ")
            } else {
                vec![""; RATIO_COLUMNS.len()].join(" | ")
            };
            let _ = writeln!(
                s,
                "| {} | {imp} | {} | {} | {range} | {} | {ratios} |",
                if i == 0 { w.as_str() } else { "" },
                fmt_opt(cell.median_us(), 2),
                fmt_opt(cell.median_mbit().filter(|m| *m > 0.0), 1),
                cell.us.len(),
            );
        }
    }
    s
}

/// The concurrency rows as a Markdown table of calls per second (empty
/// when the run has none): median, range, and floe's speed over Ice C++'s.
pub fn concurrency_table(results: &Results, workloads: &[String], impls: &[&str]) -> String {
    let mut s = String::new();
    for w in workloads.iter().filter(|w| concurrency_of(w).is_some()) {
        let Some(row) = results.get(w) else { continue };
        if s.is_empty() {
            let _ = writeln!(
                s,
                "| workload | impl | median calls/s | min–max calls/s | rounds | floe/ice-cpp speed |"
            );
            let _ = writeln!(s, "|---|---|---:|---:|---:|---:|");
        }
        let mut first = true;
        for imp in impls {
            let Some(cell) = row.get(*imp) else { continue };
            let min = cell.calls_s.iter().copied().fold(f64::INFINITY, f64::min);
            let max = cell.calls_s.iter().copied().fold(0.0, f64::max);
            let range = if cell.calls_s.is_empty() {
                "—".to_string()
            } else {
                format!("{min:.0}–{max:.0}")
            };
            let speed = if imp.starts_with("floe") {
                fmt_opt(time_ratio(results, w, imp, "ice-cpp").map(|t| 1.0 / t), 2)
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                "| {} | {imp} | {} | {range} | {} | {speed} |",
                if first { w.as_str() } else { "" },
                fmt_opt(cell.median_calls_s(), 0),
                cell.calls_s.len(),
            );
            first = false;
        }
    }
    s
}

/// The floe columns the targets are evaluated for.
pub const TARGET_COLUMNS: [&str; 3] = ["floe", "floe-ct", "floe-poll"];

/// The targets as a Markdown table, for every [`TARGET_COLUMNS`] column.
pub fn targets_table(results: &Results, targets: &[Target]) -> String {
    let mut s = String::new();
    let _ = write!(s, "| workload | target |");
    for col in TARGET_COLUMNS {
        let _ = write!(s, " {col} (time ratio) | met |");
    }
    let _ = writeln!(s, "\n|---|---|{}", "---:|---|".repeat(TARGET_COLUMNS.len()));
    for t in targets {
        let mut cols = String::new();
        for col in TARGET_COLUMNS {
            match t.evaluate(results, col) {
                Some((r, met)) => {
                    let _ = write!(
                        cols,
                        " {r:.2} | {} |",
                        if met { "met" } else { "**not met**" }
                    );
                }
                None => cols.push_str(" — | not measured |"),
            }
        }
        let _ = writeln!(s, "| {} | {} |{cols}", t.workload, t.describe());
    }
    s
}

/// `target/compare.json`: machine, settings, every sample and the targets.
pub fn json(
    results: &Results,
    idle: &IdleResults,
    targets: &[Target],
    machine: &[(String, String)],
    settings: &[(String, String)],
) -> String {
    let mut s = String::from("{\n  \"machine\": {");
    let kv = |pairs: &[(String, String)]| {
        pairs
            .iter()
            .map(|(k, v)| format!("\"{}\": \"{}\"", esc(k), esc(v)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    s.push_str(&kv(machine));
    s.push_str("},\n  \"settings\": {");
    s.push_str(&kv(settings));
    s.push_str("},\n  \"results\": {");
    let mut first_w = true;
    for (w, row) in results {
        let _ = write!(
            s,
            "{}\n    \"{}\": {{",
            if first_w { "" } else { "," },
            esc(w)
        );
        first_w = false;
        let mut first_i = true;
        for (imp, cell) in row {
            let _ = write!(
                s,
                "{}\n      \"{}\": {{\"calls\": {}, \"median_us\": {}, \"median_mbit_s\": {}, \"median_calls_s\": {}, \"us\": [{}], \"mbit_s\": [{}], \"calls_s\": [{}]}}",
                if first_i { "" } else { "," },
                esc(imp),
                cell.calls,
                json_num(cell.median_us()),
                json_num(cell.median_mbit()),
                json_num(cell.median_calls_s()),
                json_nums(&cell.us),
                json_nums(&cell.mbit),
                json_nums(&cell.calls_s),
            );
            first_i = false;
        }
        s.push_str("\n    }");
    }
    s.push_str("\n  },\n  \"idle_bytes_per_connection\": {");
    let mut first_i = true;
    for (imp, v) in idle {
        let nums: Vec<String> = v.iter().map(|x| format!("{x:.0}")).collect();
        let _ = write!(
            s,
            "{}\n    \"{}\": {{\"median\": {}, \"rounds\": [{}]}}",
            if first_i { "" } else { "," },
            esc(imp),
            json_num(median(v)),
            nums.join(", ")
        );
        first_i = false;
    }
    s.push_str("\n  },\n  \"targets\": [");
    let mut first = true;
    for t in targets {
        for col in TARGET_COLUMNS {
            let (ratio, met) = match t.evaluate(results, col) {
                Some((r, m)) => (format!("{r:.4}"), m.to_string()),
                None => ("null".into(), "null".into()),
            };
            let _ = write!(
                s,
                "{}\n    {{\"workload\": \"{}\", \"target\": \"{}\", \"impl\": \"{col}\", \"time_ratio\": {ratio}, \"met\": {met}}}",
                if first { "" } else { "," },
                esc(&t.workload),
                esc(&t.describe()),
            );
            first = false;
        }
    }
    s.push_str("\n  ]\n}\n");
    s
}

/// A JSON number with 3 decimals, `null` when not measured.
pub(super) fn json_num(v: Option<f64>) -> String {
    v.map_or_else(|| "null".into(), |x| format!("{x:.3}"))
}

/// The elements of a JSON array of numbers with 3 decimals (`1.000, 2.500`).
pub(super) fn json_nums(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{x:.3}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `s` escaped for a JSON string.
pub(super) fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(cells: &[(&str, &str, f64)]) -> Results {
        let mut r = Results::new();
        for (w, i, us) in cells {
            r.entry(w.to_string())
                .or_default()
                .entry(i.to_string())
                .or_default()
                .us
                .push(*us);
        }
        r
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn targets_compare_time_and_speed() {
        let r = results(&[
            ("latency", "floe", 50.0),
            ("latency", "raw", 40.0),
            ("latency", "ice-cpp", 70.0),
            ("latency", "rmi", 62.5),
            ("fixed_send", "floe", 100.0),
            ("fixed_send", "ice-cpp", 250.0),
        ]);
        let w: Vec<String> = ["latency", "fixed_send"].map(String::from).to_vec();
        let t = targets(&w);
        assert_eq!(t.len(), 4);
        // 50/40 = 1.25 > 1.10: not met.
        assert_eq!(t[0].evaluate(&r, "floe"), Some((1.25, false)));
        // 50/70 = 0.71 ≤ 0.80: met.
        assert!(t[1].evaluate(&r, "floe").unwrap().1);
        // 50/62.5 = 0.80 ≤ 0.80: met.
        assert_eq!(t[2].against, "rmi");
        assert_eq!(t[2].evaluate(&r, "floe"), Some((0.8, true)));
        assert!(t[2].evaluate(&r, "floe-poll").is_none());
        // Speed 2.5× ≥ 2×: met.
        assert!(t[3].evaluate(&r, "floe").unwrap().1);
        assert!(t[3].evaluate(&r, "floe-ct").is_none());
    }

    #[test]
    fn floe_rows_have_a_ratio_per_other_column() {
        let r = results(&[("latency", "floe", 40.0), ("latency", "rmi", 50.0)]);
        let w = vec!["latency".to_string()];
        let t = super::table(&r, &w, &["floe", "rmi"]);
        let header = t.lines().next().unwrap();
        assert!(header.contains("| floe/rmi time |"), "{header}");
        let cells = |line: &str| line.matches('|').count();
        assert!(t.lines().all(|l| cells(l) == cells(header)), "{t}");
        // floe/ice-cpp not measured, floe/rmi 0.80.
        assert!(t.contains("| latency | floe | 40.00 | — | 40.0–40.0 | 1 | — | 0.80 | — |"));
    }

    #[test]
    fn concurrency_rows_have_speed_targets_from_four() {
        let w: Vec<String> = ["pipelined_1", "pipelined_4", "clients_64", "ssl_latency"]
            .map(String::from)
            .to_vec();
        let t = targets(&w);
        let names: Vec<&str> = t.iter().map(|t| t.workload.as_str()).collect();
        assert_eq!(names, ["ssl_latency", "pipelined_4", "clients_64"]);
        let mut r = results(&[
            ("clients_64", "floe", 10.0),
            ("clients_64", "ice-cpp", 25.0),
        ]);
        for (imp, calls_s) in [("floe", 100_000.0), ("ice-cpp", 40_000.0)] {
            r.get_mut("clients_64")
                .unwrap()
                .get_mut(imp)
                .unwrap()
                .calls_s
                .push(calls_s);
        }
        // 25/10 = 2.5× the calls/s: met.
        assert_eq!(t[2].evaluate(&r, "floe"), Some((0.4, true)));
        let table = concurrency_table(&r, &w, &["floe", "ice-cpp"]);
        assert!(table.contains("| clients_64 | floe | 100000 | 100000–100000 | 1 | 2.50 |"));
        assert!(table.contains("| ice-cpp | 40000 |"));
        // Concurrency rows are not in the µs/call table.
        assert!(!super::table(&r, &w, &["floe"]).contains("clients_64"));
    }

    #[test]
    fn json_is_balanced() {
        let r = results(&[("latency", "floe", 50.0)]);
        let mut idle = IdleResults::new();
        idle.insert("floe".into(), vec![4096.0, 5000.0]);
        let j = json(&r, &idle, &targets(&["latency".into()]), &[], &[]);
        assert_eq!(j.matches('{').count(), j.matches('}').count());
        assert_eq!(j.matches('[').count(), j.matches(']').count());
    }
}
