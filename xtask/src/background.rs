//! A long install running in the background (pip's build of Ice 3.8 for
//! Python, `cargo install cargo-deny`) while the checks run: waited for
//! once, its log's tail in the error when it fails.

use std::path::Path;
use std::process::Child;
use std::time::Instant;

use crate::DynError;

/// Waits for `child`, started at `started` with its output in `log`, and
/// returns the seconds it took; `what` names it in the error, which ends
/// with the last 20 lines of the log.
pub fn wait(mut child: Child, log: &Path, started: Instant, what: &str) -> Result<u64, DynError> {
    let status = child.wait()?;
    let took = started.elapsed().as_secs();
    if status.success() {
        return Ok(took);
    }
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = &lines[lines.len().saturating_sub(20)..];
    Err(format!(
        "{what} failed ({status}) after {took} s:\n{}",
        tail.join("\n")
    )
    .into())
}
