//! Active connection management (§1.5): heartbeats and idle close, run by
//! the connection task on a timer of `Timeout / 2`.

use std::time::Duration;

use bytes::Bytes;
use floe_wire::protocol::VALIDATE_CONNECTION;
use tokio::time::Instant;

use super::ConnectionInner;
use crate::error::Error;
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
#[derive(Clone, Debug)]
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
pub(crate) struct AcmMonitor {
    config: AcmConfig,
    /// The next run; the timer is created once and reset, not re-armed per
    /// loop iteration of the connection task (that would cost a timer-wheel
    /// insertion per frame).
    timer: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
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
    /// Last heartbeat we sent.
    last_beat: Instant,
}

impl AcmMonitor {
    pub(crate) fn new(config: AcmConfig) -> Self {
        let now = Instant::now();
        AcmMonitor {
            timer: config
                .timeout
                .map(|t| Box::pin(tokio::time::sleep_until(now + t / 2))),
            config,
            last_read: now,
            last_read_low: now,
            last_check: now,
            read_seen: false,
            last_beat: now,
        }
    }

    /// Records that bytes were read (a flag: no clock read per frame).
    pub(crate) fn read(&mut self) {
        self.read_seen = true;
    }

    /// Completes at the next monitor run (never when ACM is off).
    pub(crate) async fn tick(&mut self) {
        match &mut self.timer {
            Some(t) => t.as_mut().await,
            None => std::future::pending().await,
        }
    }

    /// One monitor run: heartbeat and close decisions. Returns the error to
    /// end the connection with when it must be dropped.
    pub(crate) fn check(&mut self, conn: &ConnectionInner, dispatching: usize) -> Option<Error> {
        let timeout = self.config.timeout?;
        let now = Instant::now();
        if let Some(t) = &mut self.timer {
            t.as_mut().reset(now + timeout / 2);
        }
        if std::mem::take(&mut self.read_seen) {
            // The read happened between the previous run and this one.
            self.last_read_low = self.last_check;
            self.last_read = now;
        }
        self.last_check = now;
        let last_write = Instant::from_std(conn.writer.last_write());
        let last_activity = self.last_read.max(last_write);
        // Ice's rule: a heartbeat when nothing (heartbeats included) went
        // over the connection for Timeout/4. The earliest time the last read
        // may have happened is used here, so a heartbeat is never late
        // (at worst one more is sent)...
        let quiet = now.duration_since(self.last_read_low.max(last_write).max(self.last_beat));
        let send_heartbeat = match self.config.heartbeat {
            AcmHeartbeat::Always => true,
            AcmHeartbeat::OnIdle => quiet >= timeout / 4,
            AcmHeartbeat::OnDispatch => dispatching > 0 && quiet >= timeout / 4,
            AcmHeartbeat::Off => false,
        };
        if send_heartbeat {
            let _ = conn
                .writer
                .send_uncounted(&mut [Bytes::from_static(&VALIDATE_CONNECTION)]);
            self.last_beat = now;
        }
        // ...and the latest one for idle close, so a connection is never
        // closed early: as with Ice's monitor, which runs every Timeout/2,
        // it closes between Timeout and 1.5 × Timeout after the last
        // traffic. Idle means no request or reply traffic; our own
        // heartbeats do not count.
        let silent = now.duration_since(last_activity);
        if silent < timeout {
            return None;
        }
        let pending = conn.requests.len() > 0;
        let idle = !pending && dispatching == 0;
        match self.config.close {
            AcmClose::OnIdle | AcmClose::OnInvocationAndIdle if idle => {
                tracing::debug!("ACM: closing idle connection");
                conn.begin_close();
                None
            }
            AcmClose::OnInvocation | AcmClose::OnInvocationAndIdle if pending => {
                Some(Error::ConnectionTimeout)
            }
            AcmClose::OnIdleForceful if idle => Some(Error::ConnectionTimeout),
            _ => None,
        }
    }
}
