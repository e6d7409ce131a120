//! Running the build tools of the peers (slice2cpp, g++, javac, npm, ...):
//! success or an error carrying the tool's output.

use std::process::Command;
use std::thread;

/// Runs `cmd` to completion; an error with its status and output unless it
/// succeeds.
pub fn run_tool(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Runs the commands two at a time (the machine has 2 cores); the first
/// error, after the batch it failed in.
pub fn run_parallel(mut cmds: Vec<Command>) -> Result<(), String> {
    while !cmds.is_empty() {
        let batch: Vec<Command> = cmds.drain(..cmds.len().min(2)).collect();
        let handles: Vec<_> = batch
            .into_iter()
            .map(|mut cmd| thread::spawn(move || run_tool(&mut cmd)))
            .collect();
        for h in handles {
            h.join().map_err(|_| "build thread panicked".to_owned())??;
        }
    }
    Ok(())
}
