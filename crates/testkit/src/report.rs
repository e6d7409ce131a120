//! What interop clients print: one `PASS <check>`, `FAIL <check>: <detail>`
//! or `SKIP <check>: <why>` line per check, then a `SUMMARY ...` line;
//! [`ReportLine`] reads one line, [`ClientReport`] a whole run.

use std::collections::BTreeMap;
use std::process::{Command, ExitStatus};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crate::peer::Peer;

/// One line of a client's report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportLine<'a> {
    /// `PASS <check>`.
    Pass(&'a str),
    /// `FAIL <check>: <detail>` (the detail may be empty).
    Fail(&'a str, &'a str),
    /// `SKIP <check>: <why>`: a check the client cannot run.
    Skip(&'a str, &'a str),
    /// `SUMMARY ...`.
    Summary,
}

impl ReportLine<'_> {
    /// The report line `line` is, if it is one (check names trimmed).
    pub fn parse(line: &str) -> Option<ReportLine<'_>> {
        if let Some(check) = line.strip_prefix("PASS ") {
            Some(ReportLine::Pass(check.trim()))
        } else if let Some(rest) = line.strip_prefix("FAIL ") {
            let (check, detail) = rest.split_once(": ").unwrap_or((rest, ""));
            Some(ReportLine::Fail(check.trim(), detail))
        } else if let Some(rest) = line.strip_prefix("SKIP ") {
            let (check, why) = rest.split_once(": ").unwrap_or((rest, ""));
            Some(ReportLine::Skip(check.trim(), why))
        } else if line.starts_with("SUMMARY ") {
            Some(ReportLine::Summary)
        } else {
            None
        }
    }
}

/// What an interop client printed: one result per check, and its summary.
#[derive(Debug)]
pub struct ClientReport {
    /// The client's label.
    pub name: String,
    /// Check name -> None for PASS, Some(detail) for FAIL.
    pub results: BTreeMap<String, Option<String>>,
    /// Check names in the order they were reported.
    pub order: Vec<String>,
    /// `name: why` of the checks the client cannot run (SKIP lines; they count as
    /// reported, not failed).
    pub skipped: Vec<String>,
    /// The SUMMARY line, if the client got that far.
    pub summary: Option<String>,
    /// Exit status (None if killed on timeout).
    pub status: Option<ExitStatus>,
    /// All stdout and stderr.
    pub output: String,
}

impl ClientReport {
    /// Runs the client `cmd` to completion (killed after `timeout`) and
    /// reads its report.
    pub fn run(name: &str, cmd: Command, timeout: Duration) -> ClientReport {
        let peer = Peer::spawn(name, cmd);
        let log = Arc::clone(&peer.log);
        let (status, lines) = peer.wait_exit(timeout);
        thread::sleep(Duration::from_millis(20)); // let the stderr reader finish
        let output = log.lock().unwrap_or_else(|p| p.into_inner()).join("\n");
        ClientReport::parse(name, &lines, status, output)
    }

    /// Parses `PASS name`, `FAIL name: detail`, `SKIP name: why` and
    /// `SUMMARY ...` lines.
    pub fn parse(
        name: &str,
        lines: &[String],
        status: Option<ExitStatus>,
        output: String,
    ) -> ClientReport {
        let mut report = ClientReport {
            name: name.to_owned(),
            results: BTreeMap::new(),
            order: Vec::new(),
            skipped: Vec::new(),
            summary: None,
            status,
            output,
        };
        for line in lines {
            match ReportLine::parse(line) {
                Some(ReportLine::Pass(check)) => report.record(check, None),
                Some(ReportLine::Fail(check, detail)) => {
                    report.record(check, Some(detail.to_owned()));
                }
                Some(ReportLine::Skip(check, why)) => {
                    report.skipped.push(format!("{check}: {why}"));
                    report.record(check, None);
                }
                Some(ReportLine::Summary) => report.summary = Some(line.clone()),
                None => {}
            }
        }
        report
    }

    fn record(&mut self, check: &str, failure: Option<String>) {
        self.order.push(check.to_owned());
        self.results.insert(check.to_owned(), failure);
    }

    /// The failed checks with their details, plus checks of `expected` never reported.
    pub fn problems(&self, expected: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = self
            .order
            .iter()
            .filter_map(|c| self.results[c].as_ref().map(|d| format!("FAIL {c}: {d}")))
            .collect();
        for check in expected {
            if !self.results.contains_key(*check) {
                out.push(format!("MISSING {check}"));
            }
        }
        if self.summary.is_none() {
            out.push("no SUMMARY line (client crashed or timed out)".to_owned());
        }
        out
    }

    /// Panics with every problem unless all `expected` checks passed and the client
    /// exited successfully.
    ///
    /// # Panics
    ///
    /// As said.
    pub fn assert_all_pass(&self, expected: &[&str]) {
        let problems = self.problems(expected);
        let exited_ok = self.status.is_some_and(|s| s.success());
        if !problems.is_empty() || !exited_ok {
            panic!(
                "{}: {} problem(s), exit {:?}:\n  {}\n--- output ---\n{}",
                self.name,
                problems.len(),
                self.status,
                problems.join("\n  "),
                self.output
            );
        }
        println!("{}: {}", self.name, self.summary.as_deref().unwrap_or(""));
        for skip in &self.skipped {
            println!("{}: SKIP {skip}", self.name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_a_report() {
        assert_eq!(
            ReportLine::parse("PASS ping "),
            Some(ReportLine::Pass("ping"))
        );
        assert_eq!(
            ReportLine::parse("FAIL 1.0/ops.x: got 1: want 2"),
            Some(ReportLine::Fail("1.0/ops.x", "got 1: want 2"))
        );
        assert_eq!(
            ReportLine::parse("FAIL bare"),
            Some(ReportLine::Fail("bare", ""))
        );
        assert_eq!(
            ReportLine::parse("SKIP compress: no bzip2"),
            Some(ReportLine::Skip("compress", "no bzip2"))
        );
        assert_eq!(
            ReportLine::parse("SUMMARY 3 passed"),
            Some(ReportLine::Summary)
        );
        assert_eq!(ReportLine::parse("READY 4061"), None);
    }

    #[test]
    fn a_report_counts_skips_as_reported() {
        let lines: Vec<String> = ["PASS a", "SKIP b: why", "FAIL c: bad", "SUMMARY x"]
            .iter()
            .map(|l| l.to_string())
            .collect();
        let report = ClientReport::parse("client", &lines, None, String::new());
        assert_eq!(report.order, ["a", "b", "c"]);
        assert_eq!(report.skipped, ["b: why"]);
        assert_eq!(
            report.problems(&["a", "b", "c", "d"]),
            ["FAIL c: bad", "MISSING d"]
        );
    }
}
