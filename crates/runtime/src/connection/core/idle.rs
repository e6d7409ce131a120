//! Ice 3.8's connection liveness: the idle timeout, its heartbeats and
//! idle check, and the inactivity timeout, decided without I/O or timers.
//!
//! Ice 3.8 replaced ACM (`Ice.ACM.*`, [`super::acm`]) with three settings
//! per connection ([`IdleConfig`]):
//!
//! - **`IdleTimeout`** (60 s): each side writes a heartbeat (a
//!   ValidateConnection frame) when it has written nothing for half of it,
//!   and with **`EnableIdleCheck`** (on) a side that has read nothing for
//!   the whole idle timeout aborts the connection.
//! - **`InactivityTimeout`** (300 s): a connection with no request of ours
//!   waiting for a reply and no dispatch running, and no request or reply
//!   traffic, is closed gracefully after that long.
//!
//! floe goes one step further so that an idle connection to an Ice 3.7
//! peer at its defaults stays up too: a 3.7 peer heartbeats only while it
//! dispatches (`Ice.ACM.Heartbeat=1`), so an idle 3.7 peer is silent and a
//! plain 3.8 idle check would abort its connection after a minute. Here
//! the idle check is armed once the peer has sent a heartbeat (any 3.8
//! peer does within half its idle timeout; a 3.7 peer when it heartbeats)
//! and whenever requests of ours wait for replies. A peer that heartbeats
//! and then goes silent is still detected, as is a silent peer that owes
//! us a reply; a 3.7 peer that never heartbeats and owes nothing is left
//! to TCP (it closes its socket when it exits). floe's own heartbeats keep
//! a 3.7 peer's ACM from closing the connection as idle (3.7 counts any
//! read as activity).
//!
//! The connection task calls `IdleMonitor::check` every
//! `IdleMonitor::period` and carries out the `AcmAction` it returns, as
//! for ACM.

use std::time::{Duration, Instant};

use super::acm::{AcmAction, AcmCloseAction, AcmInputs};
use crate::properties::Properties;

/// Ice 3.8's liveness settings of one connection (`Ice.Connection.Client.*`,
/// `Ice.Connection.Server.*` or `<Adapter>.Connection.*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleConfig {
    /// `IdleTimeout` (default 60 s; 0 = `None`: no heartbeats and no idle
    /// check).
    pub idle_timeout: Option<Duration>,
    /// `EnableIdleCheck` (default on): abort a connection that read
    /// nothing for the idle timeout (armed as described in the module
    /// docs).
    pub idle_check: bool,
    /// `InactivityTimeout` (default 300 s; 0 = `None`: never).
    pub inactivity_timeout: Option<Duration>,
}

impl Default for IdleConfig {
    /// Ice 3.8's defaults: 60 s idle timeout with the idle check, 300 s
    /// inactivity timeout.
    fn default() -> Self {
        IdleConfig {
            idle_timeout: Some(Duration::from_secs(60)),
            idle_check: true,
            inactivity_timeout: Some(Duration::from_secs(300)),
        }
    }
}

/// The names of the settings [`IdleConfig`] reads.
pub(crate) const IDLE_KEYS: [&str; 3] = ["IdleTimeout", "EnableIdleCheck", "InactivityTimeout"];

impl IdleConfig {
    /// Reads the settings from the first of `prefixes` that sets each one
    /// (e.g. `["MyAdapter.Connection", "Ice.Connection.Server"]`), else
    /// Ice 3.8's defaults. Timeouts are in seconds.
    ///
    /// ```
    /// use std::time::Duration;
    /// use floe_runtime::{IdleConfig, Properties};
    ///
    /// let props = Properties::new();
    /// props.set("Ice.Connection.Client.IdleTimeout", "10");
    /// let c = IdleConfig::from_properties(&props, &["Ice.Connection.Client"]);
    /// assert_eq!(c.idle_timeout, Some(Duration::from_secs(10)));
    /// assert_eq!(c.inactivity_timeout, Some(Duration::from_secs(300)));
    /// ```
    pub fn from_properties(props: &Properties, prefixes: &[&str]) -> Self {
        let get = |key: &str| {
            prefixes
                .iter()
                .find_map(|p| props.get(&format!("{p}.{key}")))
                .and_then(|v| v.trim().parse::<i64>().ok())
        };
        let seconds = |v: Option<i64>, default: u64| match v {
            None => Some(Duration::from_secs(default)),
            Some(s) if s <= 0 => None,
            Some(s) => Some(Duration::from_secs(s as u64)),
        };
        IdleConfig {
            idle_timeout: seconds(get("IdleTimeout"), 60),
            idle_check: get("EnableIdleCheck").is_none_or(|v| v > 0),
            inactivity_timeout: seconds(get("InactivityTimeout"), 300),
        }
    }
}

/// Per-connection state of the Ice 3.8 liveness rules, owned by the
/// connection task.
#[derive(Debug)]
pub(crate) struct IdleMonitor {
    config: IdleConfig,
    /// The monitor run that first saw the last read (a read happened
    /// before it: the latest time it can have been).
    last_read: Instant,
    /// The run before the one that saw our last write (the earliest time
    /// it can have been), or our last heartbeat.
    last_write_low: Instant,
    /// The previous monitor run.
    last_check: Instant,
    /// Bytes were read since the previous run (a flag: no clock per read).
    read_seen: bool,
    /// A request or reply was read since the previous run.
    traffic_seen: bool,
    /// The peer sent a heartbeat: it keeps the connection alive itself, so
    /// its silence means it is gone.
    armed: bool,
    /// Since when the connection is known to be inactive.
    inactive_since: Option<Instant>,
}

impl IdleMonitor {
    /// A monitor for a connection that starts at `now`.
    pub(crate) fn new(config: IdleConfig, now: Instant) -> Self {
        IdleMonitor {
            config,
            last_read: now,
            last_write_low: now,
            last_check: now,
            read_seen: false,
            traffic_seen: false,
            armed: false,
            inactive_since: None,
        }
    }

    /// How often [`IdleMonitor::check`] runs: a quarter of the shorter
    /// timeout, so a heartbeat is never more than half the idle timeout
    /// late and a close at most a quarter of its timeout late; `None` when
    /// both timeouts are off.
    pub(crate) fn period(&self) -> Option<Duration> {
        match (self.config.idle_timeout, self.config.inactivity_timeout) {
            (None, None) => None,
            (Some(a), Some(b)) => Some(a.min(b) / 4),
            (Some(t), None) | (None, Some(t)) => Some(t / 4),
        }
    }

    /// Records a read: `traffic` when it held a request or reply,
    /// `heartbeat` when it held a ValidateConnection after the connection
    /// was established.
    pub(crate) fn read(&mut self, traffic: bool, heartbeat: bool) {
        self.read_seen = true;
        self.traffic_seen |= traffic;
        self.armed |= heartbeat;
    }

    /// One monitor run at `now`.
    pub(crate) fn check(&mut self, now: Instant, inputs: AcmInputs) -> AcmAction {
        if std::mem::take(&mut self.read_seen) {
            self.last_read = now;
        }
        if inputs.wrote {
            self.last_write_low = self.last_check.max(self.last_write_low);
        }
        self.last_check = now;
        let active = inputs.pending_requests
            || inputs.dispatching > 0
            || inputs.wrote
            || std::mem::take(&mut self.traffic_seen);
        if active {
            self.inactive_since = None;
        } else if self.inactive_since.is_none() {
            self.inactive_since = Some(now);
        }
        let mut action = AcmAction::default();
        if let Some(idle) = self.config.idle_timeout {
            // Nothing written for half the idle timeout (counted from the
            // earliest time the last write can have been): a heartbeat.
            if now.saturating_duration_since(self.last_write_low) >= idle / 2 {
                action.heartbeat = true;
                self.last_write_low = now;
            }
            // Nothing read for the whole idle timeout (counted from the
            // latest time the last read can have been), from a peer that
            // heartbeats or owes us a reply: it is gone.
            let watched = self.armed || inputs.pending_requests;
            if self.config.idle_check
                && watched
                && now.saturating_duration_since(self.last_read) >= idle
            {
                action.close = Some(AcmCloseAction::Forceful);
                return action;
            }
        }
        if let (Some(limit), Some(since)) = (self.config.inactivity_timeout, self.inactive_since) {
            if now.saturating_duration_since(since) >= limit {
                action.close = Some(AcmCloseAction::Graceful);
            }
        }
        action
    }
}

#[cfg(test)]
#[path = "idle_tests.rs"]
mod tests;
