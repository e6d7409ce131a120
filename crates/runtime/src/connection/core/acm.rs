//! Active connection management (§1.5): heartbeats and idle close.
//!
//! The crate's `AcmMonitor` decides, without I/O or timers (sans-IO): the
//! connection task calls `AcmMonitor::check` every `AcmMonitor::period`
//! (`Timeout / 2`, as Ice's monitor runs) with the current time and the
//! connection's state, and carries out the `AcmAction` it returns (a
//! heartbeat frame, a graceful close, or ending the connection). The
//! settings, [`AcmConfig`], are public.

use std::time::{Duration, Instant};

use crate::properties::Properties;

/// `Heartbeat` setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcmHeartbeat {
    /// Never.
    Off,
    /// Only while a dispatch runs and the connection is silent.
    OnDispatch,
    /// Whenever the connection is silent.
    OnIdle,
    /// Every period.
    Always,
}

/// `Close` setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcmClose {
    /// Never.
    Off,
    /// Gracefully when idle.
    OnIdle,
    /// Forcefully when requests wait for too long without traffic.
    OnInvocation,
    /// Both.
    OnInvocationAndIdle,
    /// Forcefully when idle.
    OnIdleForceful,
}

/// ACM settings for one connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AcmConfig {
    /// Idle period; `None` disables ACM.
    pub timeout: Option<Duration>,
    /// Heartbeat policy.
    pub heartbeat: AcmHeartbeat,
    /// Close policy.
    pub close: AcmClose,
}

impl AcmConfig {
    /// Reads `<prefix>.Timeout/Heartbeat/Close` (e.g. `Ice.ACM.Client`)
    /// falling back to `Ice.ACM.*`, then to the defaults of §1.5.
    pub fn from_properties(props: &Properties, prefix: &str, server: bool) -> Self {
        let get = |k: &str, d: i64| {
            props
                .get(&format!("{prefix}.{k}"))
                .or_else(|| props.get(&format!("Ice.ACM.{k}")))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(d)
        };
        let timeout = get("Timeout", 60);
        let heartbeat = match get("Heartbeat", 1) {
            0 => AcmHeartbeat::Off,
            2 => AcmHeartbeat::OnIdle,
            3 => AcmHeartbeat::Always,
            _ => AcmHeartbeat::OnDispatch,
        };
        let close = match get("Close", if server { 2 } else { 3 }) {
            0 => AcmClose::Off,
            1 => AcmClose::OnIdle,
            2 => AcmClose::OnInvocation,
            4 => AcmClose::OnIdleForceful,
            _ => AcmClose::OnInvocationAndIdle,
        };
        AcmConfig {
            timeout: (timeout > 0).then(|| Duration::from_secs(timeout as u64)),
            heartbeat,
            close,
        }
    }
}

/// Per-connection ACM state, owned by the connection task.
#[derive(Debug)]
pub(crate) struct AcmMonitor {
    config: AcmConfig,
    /// Latest time known to be after the last read: the monitor run that
    /// first saw the read (see `read_seen`).
    last_read: Instant,
    /// Earliest time the last read may have happened: the monitor run before
    /// the one that saw it.
    last_read_low: Instant,
    /// The previous monitor run.
    last_check: Instant,
    /// Set on every read, turned into `last_read` by the next monitor run;
    /// reading the clock per frame would cost more than the whole check.
    read_seen: bool,
    /// As `last_read`, for requests and replies we wrote.
    last_write: Instant,
    /// As `last_read_low`, for writes.
    last_write_low: Instant,
    /// Last heartbeat we sent.
    last_beat: Instant,
}

/// What a monitor run sees of the connection besides its reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AcmInputs {
    /// A request or reply was written since the previous run (heartbeats
    /// excluded): a flag, as for reads, so that sends read no clock.
    pub(crate) wrote: bool,
    /// Our own requests wait for replies.
    pub(crate) pending_requests: bool,
    /// Dispatches of the peer's requests still run.
    pub(crate) dispatching: usize,
}

/// What the connection task must do after a monitor run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AcmAction {
    /// Send a heartbeat (a ValidateConnection frame, not counted as
    /// activity).
    pub(crate) heartbeat: bool,
    /// Close the connection.
    pub(crate) close: Option<AcmCloseAction>,
}

/// How an ACM close happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AcmCloseAction {
    /// A graceful close (§1.4): the connection was idle.
    Graceful,
    /// End the connection at once with `ConnectionTimeout`.
    Forceful,
}

impl AcmMonitor {
    /// A monitor for a connection that starts at `now`.
    pub(crate) fn new(config: AcmConfig, now: Instant) -> Self {
        AcmMonitor {
            config,
            last_read: now,
            last_read_low: now,
            last_check: now,
            read_seen: false,
            last_write: now,
            last_write_low: now,
            last_beat: now,
        }
    }

    /// How often [`AcmMonitor::check`] runs: `Timeout / 2`, or never when
    /// ACM is off.
    pub(crate) fn period(&self) -> Option<Duration> {
        self.config.timeout.map(|t| t / 2)
    }

    /// Records that bytes were read (a flag: no clock read per frame).
    pub(crate) fn read(&mut self) {
        self.read_seen = true;
    }

    /// One monitor run at `now`: the heartbeat and close decisions.
    pub(crate) fn check(&mut self, now: Instant, inputs: AcmInputs) -> AcmAction {
        let Some(timeout) = self.config.timeout else {
            return AcmAction::default();
        };
        if std::mem::take(&mut self.read_seen) {
            // The read happened between the previous run and this one.
            self.last_read_low = self.last_check;
            self.last_read = now;
        }
        if inputs.wrote {
            self.last_write_low = self.last_check;
            self.last_write = now;
        }
        self.last_check = now;
        let last_activity = self.last_read.max(self.last_write);
        // Ice's rule: a heartbeat when nothing (heartbeats included) went
        // over the connection for Timeout/4. The earliest times the last
        // read and write may have happened are used here, so a heartbeat is
        // never late (at worst one more is sent)...
        let last_low = self.last_read_low.max(self.last_write_low);
        let quiet = now.saturating_duration_since(last_low.max(self.last_beat));
        let heartbeat = match self.config.heartbeat {
            AcmHeartbeat::Always => true,
            AcmHeartbeat::OnIdle => quiet >= timeout / 4,
            AcmHeartbeat::OnDispatch => inputs.dispatching > 0 && quiet >= timeout / 4,
            AcmHeartbeat::Off => false,
        };
        if heartbeat {
            self.last_beat = now;
        }
        // ...and the latest one for idle close, so a connection is never
        // closed early: as with Ice's monitor, which runs every Timeout/2,
        // it closes between Timeout and 1.5 × Timeout after the last
        // traffic. Idle means no request or reply traffic; our own
        // heartbeats do not count.
        let silent = now.saturating_duration_since(last_activity);
        let close = if silent < timeout {
            None
        } else {
            let pending = inputs.pending_requests;
            let idle = !pending && inputs.dispatching == 0;
            match self.config.close {
                AcmClose::OnIdle | AcmClose::OnInvocationAndIdle if idle => {
                    Some(AcmCloseAction::Graceful)
                }
                AcmClose::OnInvocation | AcmClose::OnInvocationAndIdle if pending => {
                    Some(AcmCloseAction::Forceful)
                }
                AcmClose::OnIdleForceful if idle => Some(AcmCloseAction::Forceful),
                _ => None,
            }
        };
        AcmAction { heartbeat, close }
    }
}

#[cfg(test)]
#[path = "acm_tests.rs"]
mod tests;
