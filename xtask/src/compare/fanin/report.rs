//! The fan-in results: medians, floe-storm's ratios and targets per
//! (workload, client) row, lost events per column, and their renderings:
//! the Markdown tables and the `"fanin"` member of `target/compare.json`
//! (placed in the outputs by [`super::doc`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::super::report::{esc, fmt_opt, json_num, json_nums, median};
use super::{all_columns, column_of, BrokerKind, Client, Options, ROW_CLIENTS};

/// The share of the relay's MB/s that counts as reaching it.
pub const RAW_SHARE: f64 = 0.95;

/// One column's samples for one workload.
#[derive(Clone, Debug, Default)]
pub struct Cell {
    /// Payload MB/s (10⁶ bytes) received, one per round.
    pub mb_s: Vec<f64>,
    /// Events lost, one per round.
    pub lost: Vec<u64>,
    /// Broker CPU time (user + system) per GB of payload received, in
    /// seconds, one per round: how much machine the broker needs, which a
    /// loaded machine disturbs less than wall-clock speed.
    pub cpu_s_per_gb: Vec<f64>,
    /// Events sent per round (the last seen).
    pub sent: u64,
}

impl Cell {
    /// Median MB/s.
    pub fn median(&self) -> Option<f64> {
        median(&self.mb_s)
    }
    /// Median broker CPU seconds per GB.
    pub fn median_cpu(&self) -> Option<f64> {
        median(&self.cpu_s_per_gb)
    }
    /// Events lost over all rounds.
    pub fn lost_total(&self) -> u64 {
        self.lost.iter().sum()
    }
}

/// workload → column name → cell.
pub type Results = BTreeMap<String, BTreeMap<String, Cell>>;

/// The cell of `broker` in the (`workload`, `client`) row.
pub fn cell<'a>(
    results: &'a Results,
    workload: &str,
    client: Client,
    broker: BrokerKind,
) -> Option<&'a Cell> {
    results.get(workload)?.get(column_of(broker, client)?.name)
}

fn med(results: &Results, workload: &str, client: Client, broker: BrokerKind) -> Option<f64> {
    cell(results, workload, client, broker)?.median()
}

/// The speed target for a workload: 2× IceStorm at 10 KB, 1.3× above.
pub fn target_ratio(workload: &str) -> f64 {
    if workload.ends_with("_10000") {
        2.0
    } else {
        1.3
    }
}

/// floe-storm's median over `broker`'s in the row, if both were measured.
pub fn column_ratio(
    results: &Results,
    workload: &str,
    client: Client,
    broker: BrokerKind,
) -> Option<f64> {
    Some(
        med(results, workload, client, BrokerKind::FloeStorm)?
            / med(results, workload, client, broker)?,
    )
}

/// floe-storm's median over IceStorm's, same client.
pub fn ratio(results: &Results, workload: &str, client: Client) -> Option<f64> {
    column_ratio(results, workload, client, BrokerKind::IceStorm)
}

/// The relay a row's bar comes from: the ice relay with the row's client
/// (on a 2-core machine the client's CPU is in every column's figure), or
/// the raw relay when that was not measured.
pub fn floor(results: &Results, workload: &str, client: Client) -> Option<(BrokerKind, f64)> {
    [BrokerKind::IceRelay, BrokerKind::RawRelay]
        .into_iter()
        .find_map(|b| Some((b, med(results, workload, client, b)?)))
}

/// How a row's targets were judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// floe-storm reached the target ratio over IceStorm, nothing lost.
    Met,
    /// The target ratio was above [`RAW_SHARE`] of the relay's MB/s (see
    /// [`floor`]) and floe-storm reached that share, nothing lost.
    MetRawBar,
    /// Too slow, nothing lost.
    NotMet,
    /// floe-storm or IceStorm lost events (this many, both together): the
    /// row fails whatever the speed.
    Lost(u64),
}

impl Verdict {
    /// The table's `met` cell.
    pub fn describe(self) -> String {
        match self {
            Verdict::Met => "met".into(),
            Verdict::MetRawBar => "met (relay bar)".into(),
            Verdict::NotMet => "**not met**".into(),
            Verdict::Lost(n) => format!("**LOST {n}**"),
        }
    }

    /// The JSON `met` value.
    fn json(self) -> &'static str {
        match self {
            Verdict::Met => "true",
            Verdict::MetRawBar => "\"relay bar\"",
            Verdict::NotMet => "false",
            Verdict::Lost(_) => "\"lost\"",
        }
    }
}

/// The row's verdict: lost events first (floe-storm's and IceStorm's), then
/// speed (over IceStorm, or the relay's bar where the target is above it).
/// `None` when floe-storm was not measured, or nothing was lost and
/// IceStorm was not measured.
pub fn met(results: &Results, workload: &str, client: Client) -> Option<Verdict> {
    let floe = cell(results, workload, client, BrokerKind::FloeStorm)?;
    let ice = cell(results, workload, client, BrokerKind::IceStorm);
    let lost = floe.lost_total() + ice.map_or(0, Cell::lost_total);
    if lost > 0 {
        return Some(Verdict::Lost(lost));
    }
    let (speed, ice) = (floe.median()?, ice?.median()?);
    let want = target_ratio(workload) * ice;
    let bar = floor(results, workload, client).map(|(_, r)| RAW_SHARE * r);
    Some(if speed >= want {
        Verdict::Met
    } else if bar.is_some_and(|bar| bar < want && speed >= bar) {
        Verdict::MetRawBar
    } else {
        Verdict::NotMet
    })
}

/// Every column that lost events, as `workload / column: lost n of m`.
pub fn lost_events(results: &Results) -> Vec<String> {
    let mut v = Vec::new();
    for (w, row) in results {
        for (col, c) in row {
            if c.lost_total() > 0 {
                let sent = c.sent * c.lost.len() as u64;
                v.push(format!(
                    "fan-in {w} / {col}: lost {} of {sent} events",
                    c.lost_total()
                ));
            }
        }
    }
    v
}

/// The brokers of a row's columns, in table order.
const TABLE_BROKERS: [BrokerKind; 5] = BrokerKind::ALL;

/// The brokers of the replicated table ([`super::replicated`]).
const REPLICATED_BROKERS: [BrokerKind; 2] = [
    BrokerKind::FloeStormReplicated,
    BrokerKind::IceStormReplicated,
];

/// The rows to render, in order: a (workload, client) pair for every
/// client with a column measured in that workload (the raw relay alone, with
/// its own client, shows in the floe row).
fn rows<'a>(
    results: &'a Results,
    workloads: &'a [String],
) -> impl Iterator<Item = (&'a String, Client)> + 'a {
    workloads.iter().flat_map(move |w| {
        let row = results.get(w);
        let has = move |c: Client| {
            all_columns()
                .any(|col| col.client == c && row.is_some_and(|r| r.contains_key(col.name)))
        };
        let only_raw = has(Client::Raw) && !ROW_CLIENTS.into_iter().any(has);
        ROW_CLIENTS
            .into_iter()
            .filter(move |c| has(*c) || (only_raw && *c == Client::Floe))
            .map(move |c| (w, c))
    })
}

/// The Markdown tables: speed, lost events and verdicts per (workload,
/// client), then the brokers' CPU per GB.
pub fn table(results: &Results, workloads: &[String]) -> String {
    let mut s = String::new();
    let titles = |suffix: &str| -> String {
        TABLE_BROKERS
            .iter()
            .map(|b| format!(" {} {suffix} |", b.title()))
            .collect()
    };
    let _ = writeln!(
        s,
        "| workload | client |{} ratio | target | floe-storm / ice relay | floe-storm / queued relay | floe-storm / raw relay | sent |{} met | rounds |",
        titles("MB/s"),
        titles("lost")
    );
    let _ = writeln!(
        s,
        "|---|---|{}---:|---:|---:|---:|---:|---:|{}---|---:|",
        "---:|".repeat(5),
        "---:|".repeat(5)
    );
    for (w, client) in rows(results, workloads) {
        let get = |b| cell(results, w, client, b);
        let mut mbs = String::new();
        let mut lost = String::new();
        for b in TABLE_BROKERS {
            let _ = write!(mbs, " {} |", fmt_opt(get(b).and_then(Cell::median), 1));
            let n = get(b).map_or("—".to_string(), |c| c.lost_total().to_string());
            let _ = write!(lost, " {n} |");
        }
        let r = |b| fmt_opt(column_ratio(results, w, client, b), 2);
        let floe = get(BrokerKind::FloeStorm);
        let _ = writeln!(
            s,
            "| {w} | {} |{mbs} {} | ≥ {:.1}× | {} | {} | {} | {} |{lost} {} | {} |",
            client.name(),
            fmt_opt(ratio(results, w, client), 2),
            target_ratio(w),
            r(BrokerKind::IceRelay),
            r(BrokerKind::QueuedRelay),
            r(BrokerKind::RawRelay),
            floe.map_or("—".to_string(), |c| c.sent.to_string()),
            met(results, w, client).map_or("not measured".into(), Verdict::describe),
            floe.map_or(0, |c| c.mb_s.len()),
        );
    }
    let _ = writeln!(
        s,
        "\n| workload | client |{}\n|---|---|{}",
        titles("CPU s/GB"),
        "---:|".repeat(5)
    );
    for (w, client) in rows(results, workloads) {
        let mut cpu = String::new();
        for b in TABLE_BROKERS {
            let c = cell(results, w, client, b).and_then(Cell::median_cpu);
            let _ = write!(cpu, " {} |", fmt_opt(c, 2));
        }
        let _ = writeln!(s, "| {w} | {} |{cpu}", client.name());
    }
    s
}

/// The `"fanin": {...}` member of `target/compare.json`, on one line:
/// per workload and client row, the cells of its columns (by broker), the
/// ratios, the events lost by floe-storm and IceStorm and the verdict.
pub fn json(results: &Results, workloads: &[String], opts: &Options) -> String {
    let mut s = format!(
        "\"fanin\": {{\"rounds\": {}, \"bench_scale\": {}, \"publishers\": 4, \"subscribers\": 1, \"results\": {{",
        opts.rounds, opts.scale
    );
    let mut last_w: Option<&String> = None;
    for (w, client) in rows(results, workloads) {
        if last_w != Some(w) {
            if last_w.is_some() {
                s.push_str("}, ");
            }
            let _ = write!(
                s,
                "\"{}\": {{\"events_per_publisher\": {}, ",
                esc(w),
                opts.events_per_publisher(w)
            );
        } else {
            s.push_str(", ");
        }
        last_w = Some(w);
        let _ = write!(s, "\"{}\": {{", client.name());
        for b in TABLE_BROKERS.iter().chain(&REPLICATED_BROKERS).copied() {
            let Some(c) = cell(results, w, client, b) else {
                continue;
            };
            let lost: Vec<String> = c.lost.iter().map(u64::to_string).collect();
            let _ = write!(
                s,
                "\"{}\": {{\"sent\": {}, \"median_mb_s\": {}, \"mb_s\": [{}], \"lost\": [{}], \"median_cpu_s_per_gb\": {}, \"cpu_s_per_gb\": [{}]}}, ",
                b.name(),
                c.sent,
                json_num(c.median()),
                json_nums(&c.mb_s),
                lost.join(", "),
                json_num(c.median_cpu()),
                json_nums(&c.cpu_s_per_gb)
            );
        }
        let verdict = met(results, w, client);
        let _ = write!(
            s,
            "\"ratio\": {}, \"target_ratio\": {}, \"raw_ratio\": {}, \"ice_relay_ratio\": {}, \"queued_relay_ratio\": {}, \"lost\": {}, \"met\": {}}}",
            json_num(ratio(results, w, client)),
            target_ratio(w),
            json_num(column_ratio(results, w, client, BrokerKind::RawRelay)),
            json_num(column_ratio(results, w, client, BrokerKind::IceRelay)),
            json_num(column_ratio(results, w, client, BrokerKind::QueuedRelay)),
            match verdict {
                Some(Verdict::Lost(n)) => n,
                _ => 0,
            },
            verdict.map_or("null", Verdict::json)
        );
    }
    if last_w.is_some() {
        s.push('}');
    }
    s.push_str("}}");
    s
}

/// What a fan-in comparison produced.
pub struct Report {
    /// Markdown: the results and targets tables.
    pub table: String,
    /// The `"fanin": {...}` member of `target/compare.json`, on one line.
    pub json: String,
    /// Runs that failed.
    pub failures: Vec<String>,
    /// Columns that lost events ([`lost_events`]).
    pub lost: Vec<String>,
    /// The options it ran with.
    pub options: Options,
    /// `/proc/loadavg` before and after the run.
    pub load: (String, String),
}

impl Report {
    /// The report of `results`.
    pub fn new(
        results: Results,
        failures: Vec<String>,
        options: Options,
        load: (String, String),
    ) -> Report {
        let mut table = table(&results, &options.workloads);
        if let Some(r) = replicated_table(&results, &options.workloads) {
            table.push_str(&r);
        }
        Report {
            table,
            json: json(&results, &options.workloads, &options),
            lost: lost_events(&results),
            failures,
            options,
            load,
        }
    }

    /// What makes the comparison fail: runs that failed, then every column
    /// that lost events.
    pub fn errors(&self) -> Vec<String> {
        self.failures.iter().chain(&self.lost).cloned().collect()
    }
}

/// Targets: replicated floe-storm over single floe-storm, and over
/// replicated IceStorm, same client.
const TARGET_VS_SINGLE: f64 = 0.9;
const TARGET_VS_ICESTORM: f64 = 1.5;

/// The replicated rows: per (workload, client) with replicated floe-storm
/// measured, the three brokers' MB/s, the two ratios and whether the
/// targets were met. `None` when no replicated column was measured.
fn replicated_table(results: &Results, workloads: &[String]) -> Option<String> {
    let mut s = String::new();
    for w in workloads {
        for client in ROW_CLIENTS {
            let Some(x3) = cell(results, w, client, BrokerKind::FloeStormReplicated) else {
                continue;
            };
            if s.is_empty() {
                let _ = writeln!(
                    s,
                    "\n| workload | client | floe-storm ×3 MB/s | floe-storm MB/s | IceStorm ×3 MB/s | ×3 / floe-storm | ×3 / IceStorm ×3 | lost ×3 / IceStorm ×3 | met (≥ {TARGET_VS_SINGLE}×, ≥ {TARGET_VS_ICESTORM}×) |\n|---|---|---:|---:|---:|---:|---:|---:|---|"
                );
            }
            let single = med(results, w, client, BrokerKind::FloeStorm);
            let ice = cell(results, w, client, BrokerKind::IceStormReplicated);
            let speed = x3.median();
            let r1 = speed.zip(single).map(|(a, b)| a / b);
            let r2 = speed.zip(ice.and_then(Cell::median)).map(|(a, b)| a / b);
            let lost = x3.lost_total() + ice.map_or(0, Cell::lost_total);
            let met = if lost > 0 {
                format!("**LOST {lost}**")
            } else {
                match (r1, r2) {
                    (Some(a), Some(b)) if a >= TARGET_VS_SINGLE && b >= TARGET_VS_ICESTORM => {
                        "met".into()
                    }
                    (Some(_), Some(_)) => "**not met**".into(),
                    _ => "not measured".into(),
                }
            };
            let _ = writeln!(
                s,
                "| {w} | {} | {} | {} | {} | {} | {} | {} / {} | {met} |",
                client.name(),
                fmt_opt(speed, 1),
                fmt_opt(single, 1),
                fmt_opt(ice.and_then(Cell::median), 1),
                fmt_opt(r1, 2),
                fmt_opt(r2, 2),
                x3.lost_total(),
                ice.map_or("—".into(), |c| c.lost_total().to_string()),
            );
        }
    }
    (!s.is_empty()).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::super::{all_workloads, COLUMNS};
    use super::*;

    fn put(r: &mut Results, w: &str, col: &str, mb: f64, lost: u64) {
        let c = r
            .entry(w.to_string())
            .or_default()
            .entry(col.to_string())
            .or_default();
        c.mb_s.push(mb);
        c.lost.push(lost);
        c.sent = 48_000;
    }

    #[test]
    fn ratios_and_targets() {
        const FLOE: Client = Client::Floe;
        let mut r = Results::new();
        put(&mut r, "fanin_bytes_10000", "floe-storm", 1000.0, 0);
        put(&mut r, "fanin_bytes_10000", "icestorm", 480.0, 0);
        put(&mut r, "fanin_bytes_100000", "floe-storm", 1300.0, 1);
        put(&mut r, "fanin_bytes_100000", "icestorm", 1000.0, 0);
        assert_eq!(met(&r, "fanin_bytes_10000", FLOE), Some(Verdict::Met));
        // Fast enough, but an event was lost.
        assert_eq!(met(&r, "fanin_bytes_100000", FLOE), Some(Verdict::Lost(1)));
        assert_eq!(met(&r, "fanin_bytes_1000000", FLOE), None);
        // 1.2× IceStorm: below 1.3×; the raw relay's bar (0.95 × 2,500 =
        // 2,375; no ice relay measured) is below 1.3× IceStorm (2,600) and
        // reached.
        put(&mut r, "fanin_bytes_1000000", "floe-storm", 2400.0, 0);
        put(&mut r, "fanin_bytes_1000000", "icestorm", 2000.0, 0);
        assert_eq!(met(&r, "fanin_bytes_1000000", FLOE), Some(Verdict::NotMet));
        put(&mut r, "fanin_bytes_1000000", "raw-relay", 2500.0, 0);
        assert_eq!(
            met(&r, "fanin_bytes_1000000", FLOE),
            Some(Verdict::MetRawBar)
        );
        let raw = column_ratio(&r, "fanin_bytes_1000000", FLOE, BrokerKind::RawRelay);
        assert!((raw.unwrap() - 0.96).abs() < 1e-9);
        // A raw relay far above the target does not lower it.
        put(&mut r, "fanin_floats_1000000", "floe-storm", 2400.0, 0);
        put(&mut r, "fanin_floats_1000000", "icestorm", 2000.0, 0);
        put(&mut r, "fanin_floats_1000000", "raw-relay", 4000.0, 0);
        assert_eq!(met(&r, "fanin_floats_1000000", FLOE), Some(Verdict::NotMet));
        // The relay with the row's client, when measured, sets the bar
        // instead of the raw relay: 0.95 × 2,500 = 2,375 is reached.
        put(&mut r, "fanin_floats_1000000", "ice-relay", 2500.0, 0);
        assert_eq!(
            met(&r, "fanin_floats_1000000", FLOE),
            Some(Verdict::MetRawBar)
        );
        // ... and a faster one raises it; the queued relay sets no bar.
        put(&mut r, "fanin_data_1000000", "floe-storm", 2400.0, 0);
        put(&mut r, "fanin_data_1000000", "icestorm", 2000.0, 0);
        put(&mut r, "fanin_data_1000000", "raw-relay", 2500.0, 0);
        put(&mut r, "fanin_data_1000000", "ice-relay", 2600.0, 0);
        put(&mut r, "fanin_data_1000000", "queued-relay", 2000.0, 0);
        assert_eq!(met(&r, "fanin_data_1000000", FLOE), Some(Verdict::NotMet));
        let t = table(&r, &all_workloads());
        assert!(
            t.contains("| fanin_bytes_1000000 | floe | 2400.0 | 2000.0 | — | — | 2500.0 | 1.20 | ≥ 1.3× | — | — | 0.96 | 48000 | 0 | 0 | — | — | 0 | met (relay bar) | 1 |"),
            "{t}"
        );
        assert!(
            t.contains("| fanin_data_1000000 | floe | 2400.0 | 2000.0 | 2600.0 | 2000.0 | 2500.0 | 1.20 | ≥ 1.3× | 0.92 | 1.20 | 0.96 |"),
            "{t}"
        );
        assert!(t.contains("| 1 | 0 | — | — | — | **LOST 1** |"), "{t}");
        // No ice-cpp column was measured: no ice-cpp rows.
        assert!(!t.contains("ice-cpp"), "{t}");
        // The raw relay alone shows in a floe row.
        let mut raw = Results::new();
        put(&mut raw, "fanin_bytes_10000", "raw-relay", 3000.0, 0);
        let t = table(&raw, &all_workloads());
        assert!(
            t.contains("| fanin_bytes_10000 | floe | — | — | — | — | 3000.0 |"),
            "{t}"
        );
        assert_eq!(t.matches("| fanin_bytes_10000 |").count(), 2, "{t}");
    }

    #[test]
    fn each_client_has_its_own_row_and_targets() {
        const CPP: Client = Client::IceCpp;
        let w = "fanin_bytes_10000";
        let mut r = Results::new();
        put(&mut r, w, "floe-storm", 1000.0, 0);
        put(&mut r, w, "icestorm", 450.0, 0);
        put(&mut r, w, "raw-relay", 3000.0, 0);
        put(&mut r, w, "floe-storm/ice-cpp", 900.0, 21_093);
        put(&mut r, w, "icestorm/ice-cpp", 800.0, 0);
        put(&mut r, w, "ice-relay/ice-cpp", 1200.0, 0);
        assert_eq!(met(&r, w, Client::Floe), Some(Verdict::Met));
        assert_eq!(met(&r, w, CPP), Some(Verdict::Lost(21_093)));
        assert_eq!(ratio(&r, w, CPP), Some(900.0 / 800.0));
        assert_eq!(floor(&r, w, CPP), Some((BrokerKind::IceRelay, 1200.0)));
        // The floe row has no ice relay: the raw relay is its bar.
        assert_eq!(
            floor(&r, w, Client::Floe),
            Some((BrokerKind::RawRelay, 3000.0))
        );
        let t = table(&r, &[w.to_string()]);
        assert!(
            t.contains("| fanin_bytes_10000 | ice-cpp | 900.0 | 800.0 | 1200.0 | — | 3000.0 | 1.12 | ≥ 2.0× | 0.75 | — | 0.30 | 48000 | 21093 | 0 | 0 | — | 0 | **LOST 21093** | 1 |"),
            "{t}"
        );
        assert!(
            t.contains("| fanin_bytes_10000 | floe | 1000.0 | 450.0 |"),
            "{t}"
        );
        assert_eq!(
            lost_events(&r),
            ["fan-in fanin_bytes_10000 / floe-storm/ice-cpp: lost 21093 of 48000 events"]
        );
        // IceStorm losing events fails the row too.
        put(&mut r, w, "icestorm", 450.0, 5);
        assert_eq!(met(&r, w, Client::Floe), Some(Verdict::Lost(5)));
        let opts = Options {
            rounds: 1,
            scale: 1.0,
            build: false,
            workloads: all_workloads(),
            columns: COLUMNS.to_vec(),
            events: None,
            storm: None,
        };
        let j = json(&r, &all_workloads(), &opts);
        assert_eq!(j.matches('{').count(), j.matches('}').count());
        assert_eq!(j.matches('[').count(), j.matches(']').count());
        assert!(!j.contains('\n'));
        assert!(
            j.contains("\"ice-cpp\": {\"floe-storm\": {\"sent\": 48000"),
            "{j}"
        );
        assert!(j.contains("\"lost\": 21093, \"met\": \"lost\"}"), "{j}");
        assert!(j.contains("\"events_per_publisher\": 12000"), "{j}");
        let report = Report::new(r, vec!["x failed".into()], opts, Default::default());
        assert_eq!(report.errors().len(), 3);
        let d = super::super::document_section(&report);
        assert!(d.starts_with(super::super::doc::SECTION_HEADING), "{d}");
        assert!(d.contains("- x failed\n"), "{d}");
    }
}
