//! [`ConnectionConfig`]: the settings a connection takes from the
//! communicator's or its object adapter's properties, read in one place.
//!
//! Connection settings come in Ice 3.8's names (`Ice.Connection.Client.*`
//! for outgoing connections; `<Adapter>.Connection.*`, then
//! `Ice.Connection.Server.*`, for the connections an adapter accepts), in
//! Ice 3.7's (`Ice.ACM.*`, `Ice.Override.CloseTimeout`, an endpoint's
//! `-t`) and in floe's own (`floe.*`). Where both name one thing, the 3.8
//! property wins; see [`Liveness`] for how the 3.8 idle timeout and 3.7's
//! ACM are chosen.

use std::time::Duration;

use super::core::liveness::Liveness;
pub(crate) use super::core::liveness::Side;
use super::core::{Limits, Policy};
use super::socket_buffers::SocketBuffers;
use crate::properties::Properties;
use crate::trace::TraceLevels;

/// Settings a connection takes from the communicator or adapter properties.
#[derive(Clone, Debug)]
pub(crate) struct ConnectionConfig {
    /// `Ice.MessageSizeMax` in bytes (0 = no limit).
    pub(crate) message_size_max: usize,
    /// `Ice.Compression.Level`.
    pub(crate) compression_level: u32,
    /// `Ice.BatchAutoFlushSize` in bytes (0 = off).
    pub(crate) batch_auto_flush_size: usize,
    /// `floe.OnewayBatchSize` in bytes (0 = off, the default): oneway
    /// requests that wait in the write queue leave as one BatchRequest of
    /// up to this size, never over `message_size_max`.
    pub(crate) oneway_batch_size: usize,
    /// Dispatches running at once per connection before it stops reading
    /// (`MaxDispatches`, see [`connection_config`]).
    pub(crate) max_dispatches: usize,
    /// The most parameter bytes the running dispatches of a connection may
    /// hold before it stops reading (`floe.MaxDispatchBytes`; a property of
    /// 0, the default, is `usize::MAX`: no limit).
    pub(crate) max_dispatch_bytes: usize,
    /// How long a graceful close waits for the peer (`CloseTimeout`, or
    /// `Ice.Override.CloseTimeout`).
    pub(crate) close_timeout: Duration,
    /// How long establishing a connection may take (`ConnectTimeout`; an
    /// endpoint's `-t` bounds an outgoing one too).
    pub(crate) connect_timeout: Option<Duration>,
    /// Heartbeats and closing of idle, inactive or silent connections.
    pub(crate) liveness: Liveness,
    /// How long a blocked write may make no progress before the connection
    /// is dropped with `TimeoutException` (`Ice.Default.Timeout`).
    pub(crate) write_timeout: Option<Duration>,
    /// `Ice.Trace.*` / `Ice.Warn.*` levels.
    pub(crate) trace: TraceLevels,
    /// The performance heuristics (`floe.BusyPoll` among them).
    pub(crate) policy: Policy,
    /// `Ice.Default.SlicedFormat`: how classes and user exceptions are
    /// written when the operation's metadata does not say.
    pub(crate) class_format: floe_wire::ClassFormat,
    /// The communicator's IceMX metrics, when a view is configured
    /// (`None`: nothing is observed, the common case).
    pub(crate) metrics: Option<std::sync::Arc<crate::metrics::MetricsAdmin>>,
    /// `Ice.TCP.RcvSize` / `Ice.TCP.SndSize`: the socket's kernel buffers.
    pub(crate) socket_buffers: SocketBuffers,
}

impl ConnectionConfig {
    /// The settings the protocol core needs.
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            batch_auto_flush_size: self.batch_auto_flush_size,
            max_dispatches: self.max_dispatches,
            max_dispatch_bytes: self.max_dispatch_bytes,
            close_timeout: self.close_timeout,
        }
    }
}

/// Ice 3.8's default `MaxDispatches`.
const DEFAULT_MAX_DISPATCHES: i64 = 100;

/// Reads the settings of `side`'s connections from `props`.
///
/// - `MaxDispatches`: `<Adapter>.Connection.MaxDispatches`, then
///   `Ice.Connection.Server.MaxDispatches` (or
///   `Ice.Connection.Client.MaxDispatches` for outgoing connections that
///   dispatch, bidirectionally), then floe's `<Adapter>.MaxDispatches` and
///   `floe.MaxDispatches`; default 100 as in Ice 3.8; 0 or less = no limit.
/// - `ConnectTimeout` / `CloseTimeout` (seconds, default 10; 0 = none):
///   the 3.8 properties, else `Ice.Override.CloseTimeout` (ms) for the
///   close.
/// - Liveness: [`Liveness::from_properties`].
/// - `floe.OnewayBatchSize` (KB, default 0 = off): see
///   [`ConnectionConfig::oneway_batch_size`].
/// - `Ice.TCP.RcvSize` / `Ice.TCP.SndSize` (bytes, default: the OS's):
///   [`SocketBuffers`].
pub(crate) fn connection_config(props: &Properties, side: Side<'_>) -> ConnectionConfig {
    let prefixes = side.connection_prefixes();
    let adapter = match side {
        Side::Server(a) => Some(a),
        Side::Client => None,
    };
    let int = |key: &str| props.get(key).and_then(|v| v.trim().parse::<i64>().ok());
    let connection_int = |key: &str| prefixes.iter().find_map(|p| int(&format!("{p}.{key}")));
    let per_adapter = |key: &str| adapter.and_then(|a| int(&format!("{a}.{key}")));
    let kb = per_adapter("MessageSizeMax")
        .unwrap_or_else(|| props.get_int_or("Ice.MessageSizeMax", 1024));
    let flush_kb = props.get_int_or("Ice.BatchAutoFlushSize", 1024);
    let message_size_max = if kb < 1 {
        0
    } else {
        (kb as usize).saturating_mul(1024)
    };
    let oneway_batch_kb = props
        .get_int_or("floe.OnewayBatchSize", 0)
        .clamp(0, 1 << 20);
    let seconds = |s: i64| (s > 0).then(|| Duration::from_secs(s as u64));
    let max_dispatches = connection_int("MaxDispatches")
        .or_else(|| per_adapter("MaxDispatches"))
        .or_else(|| int("floe.MaxDispatches"))
        .unwrap_or(DEFAULT_MAX_DISPATCHES);
    ConnectionConfig {
        message_size_max,
        oneway_batch_size: match (oneway_batch_kb as usize * 1024, message_size_max) {
            (size, 0) => size,
            (size, max) => size.min(max),
        },
        compression_level: props.get_int_or("Ice.Compression.Level", 1).clamp(1, 9) as u32,
        batch_auto_flush_size: if flush_kb < 1 {
            0
        } else {
            (flush_kb as usize).saturating_mul(1024)
        },
        max_dispatches: match max_dispatches {
            n if n <= 0 => usize::MAX,
            n => usize::try_from(n).unwrap_or(usize::MAX),
        },
        // 0 (or less): no limit.
        max_dispatch_bytes: match per_adapter("MaxDispatchBytes")
            .unwrap_or_else(|| props.get_int_or("floe.MaxDispatchBytes", 0))
        {
            n if n <= 0 => usize::MAX,
            n => usize::try_from(n).unwrap_or(usize::MAX),
        },
        close_timeout: match connection_int("CloseTimeout") {
            Some(s) => seconds(s).unwrap_or(Duration::MAX),
            None => Duration::from_millis(
                props.get_int_or("Ice.Override.CloseTimeout", 10_000).max(1) as u64,
            ),
        },
        connect_timeout: seconds(connection_int("ConnectTimeout").unwrap_or(10)),
        liveness: Liveness::from_properties(props, side),
        write_timeout: {
            let t = props.get_int_or("Ice.Default.Timeout", 60_000);
            (t > 0).then(|| Duration::from_millis(t as u64))
        },
        trace: TraceLevels::from_properties(props),
        policy: Policy {
            busy_poll: match props.get_int_or("floe.BusyPoll", 0) {
                us if us > 0 => Some(Duration::from_micros(us.min(1_000_000) as u64)),
                _ => None,
            },
            caller_spin: match props.get_int_or(
                "floe.CallerSpin",
                super::core::policy::CALLER_SPIN.as_micros() as i64,
            ) {
                us if us > 0 => Some(Duration::from_micros(us.min(1_000_000) as u64)),
                _ => None,
            },
            caller_spin_current_thread: props.get("floe.CallerSpin").is_some(),
            ..Policy::default()
        },
        class_format: if props.get_int_or("Ice.Default.SlicedFormat", 0) != 0 {
            floe_wire::ClassFormat::Sliced
        } else {
            floe_wire::ClassFormat::Compact
        },
        metrics: None,
        socket_buffers: SocketBuffers::from_properties(props),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Properties {
        let p = Properties::new();
        for (k, v) in pairs {
            p.set(k, v);
        }
        p
    }

    #[test]
    fn ice_3_8_defaults() {
        let c = connection_config(&Properties::new(), Side::Client);
        assert_eq!(c.max_dispatches, 100);
        assert_eq!(c.connect_timeout, Some(Duration::from_secs(10)));
        assert_eq!(c.close_timeout, Duration::from_secs(10));
    }

    #[test]
    fn the_3_8_names_win_then_the_adapter_then_floe() {
        let p = props(&[
            ("A.Connection.MaxDispatches", "7"),
            ("Ice.Connection.Server.MaxDispatches", "8"),
            ("A.MaxDispatches", "9"),
            ("floe.MaxDispatches", "10"),
        ]);
        assert_eq!(connection_config(&p, Side::Server("A")).max_dispatches, 7);
        assert_eq!(connection_config(&p, Side::Server("B")).max_dispatches, 8);
        assert_eq!(connection_config(&p, Side::Client).max_dispatches, 10);
        let p = props(&[("A.MaxDispatches", "9"), ("floe.MaxDispatches", "0")]);
        assert_eq!(connection_config(&p, Side::Server("A")).max_dispatches, 9);
        assert_eq!(
            connection_config(&p, Side::Client).max_dispatches,
            usize::MAX
        );
    }

    #[test]
    fn caller_spin_is_on_for_the_multi_thread_runtime_unless_set() {
        let spin = |pairs: &[(&str, &str)], multi_thread: bool| {
            let policy = connection_config(&props(pairs), Side::Client).policy;
            policy.for_runtime(multi_thread).caller_spin
        };
        let default = Some(Duration::from_micros(50));
        assert_eq!(spin(&[], true), default);
        assert_eq!(spin(&[], false), None);
        let set = [("floe.CallerSpin", "20")];
        assert_eq!(spin(&set, true), Some(Duration::from_micros(20)));
        assert_eq!(spin(&set, false), Some(Duration::from_micros(20)));
        let off = [("floe.CallerSpin", "0")];
        assert_eq!(spin(&off, true), None);
        assert_eq!(spin(&off, false), None);
    }

    #[test]
    fn oneway_batches_are_off_unless_set_and_within_the_message_size_max() {
        let size = |pairs: &[(&str, &str)]| {
            connection_config(&props(pairs), Side::Client).oneway_batch_size
        };
        assert_eq!(size(&[]), 0);
        assert_eq!(size(&[("floe.OnewayBatchSize", "64")]), 64 * 1024);
        let small = [("floe.OnewayBatchSize", "64"), ("Ice.MessageSizeMax", "16")];
        assert_eq!(size(&small), 16 * 1024);
        let unlimited = [("floe.OnewayBatchSize", "64"), ("Ice.MessageSizeMax", "0")];
        assert_eq!(size(&unlimited), 64 * 1024);
        assert_eq!(size(&[("floe.OnewayBatchSize", "-1")]), 0);
        let huge = [
            ("floe.OnewayBatchSize", "99999999"),
            ("Ice.MessageSizeMax", "0"),
        ];
        assert_eq!(size(&huge), 1 << 30, "at most 1 GiB");
        assert_eq!(size(&huge[..1]), 1 << 20, "the default Ice.MessageSizeMax");
    }

    #[test]
    fn timeouts_in_seconds_override_the_3_7_close_timeout() {
        let p = props(&[
            ("Ice.Override.CloseTimeout", "2500"),
            ("Ice.Connection.Server.CloseTimeout", "3"),
            ("Ice.Connection.Client.ConnectTimeout", "0"),
        ]);
        assert_eq!(
            connection_config(&p, Side::Client).close_timeout,
            Duration::from_millis(2500)
        );
        assert_eq!(
            connection_config(&p, Side::Server("A")).close_timeout,
            Duration::from_secs(3)
        );
        assert_eq!(connection_config(&p, Side::Client).connect_timeout, None);
    }
}
