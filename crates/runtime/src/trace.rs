//! `Ice.Trace.*` and `Ice.Warn.*` mapped onto `tracing`.
//!
//! floe reports everything through `tracing`; these properties, read like
//! Ice reads them, pick the level of each kind of event, so an Ice
//! configuration that turns tracing on makes the same events visible at
//! `INFO`/`WARN` without touching the subscriber's filter:
//!
//! | property | default | effect |
//! |---|---|---|
//! | `Ice.Trace.Network` | 0 | ≥ 1: connections established, accepted and closed at `INFO` (else `DEBUG`) |
//! | `Ice.Trace.Protocol` | 0 | ≥ 1: the header of every frame received at `INFO` (else `TRACE`) |
//! | `Ice.Trace.Retry` | 0 | ≥ 1: every retry at `INFO` (else `DEBUG`) |
//! | `Ice.Warn.Connections` | 0 | ≥ 1: connections lost with an error at `WARN` (else `DEBUG`) |
//! | `Ice.Warn.Dispatch` | 1 | ≥ 1: failed dispatches (servant panics, oneway failures) at `WARN` (else `DEBUG`) |
//!
//! Protocol errors from a peer (bad magic, oversized frames, ...) are always
//! logged at `WARN`: they close the connection and an operator should see them.

use crate::properties::Properties;

/// The trace and warning levels of a communicator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceLevels {
    /// `Ice.Trace.Network`.
    pub network: i64,
    /// `Ice.Trace.Protocol`.
    pub protocol: i64,
    /// `Ice.Trace.Retry`.
    pub retry: i64,
    /// `Ice.Warn.Connections` ≥ 1.
    pub warn_connections: bool,
    /// `Ice.Warn.Dispatch` ≥ 1.
    pub warn_dispatch: bool,
}

impl TraceLevels {
    /// Reads the levels from `props`, with Ice's defaults.
    ///
    /// ```
    /// use floe_runtime::{trace::TraceLevels, Properties};
    /// let props = Properties::new();
    /// props.set("Ice.Trace.Network", "2");
    /// let levels = TraceLevels::from_properties(&props);
    /// assert_eq!(levels.network, 2);
    /// assert!(levels.warn_dispatch); // Ice.Warn.Dispatch defaults to 1
    /// ```
    pub fn from_properties(props: &Properties) -> Self {
        TraceLevels {
            network: props.get_int_or("Ice.Trace.Network", 0),
            protocol: props.get_int_or("Ice.Trace.Protocol", 0),
            retry: props.get_int_or("Ice.Trace.Retry", 0),
            warn_connections: props.get_int_or("Ice.Warn.Connections", 0) > 0,
            warn_dispatch: props.get_int_or("Ice.Warn.Dispatch", 1) > 0,
        }
    }
}

/// Emits a `tracing` event at `$hi` when `$on` holds, else at `$lo`
/// (`tracing`'s macros need the level at compile time).
macro_rules! event_if {
    ($on:expr, $hi:ident, $lo:ident, $($arg:tt)*) => {
        if $on {
            ::tracing::$hi!($($arg)*)
        } else {
            ::tracing::$lo!($($arg)*)
        }
    };
}
pub(crate) use event_if;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_ice() {
        let levels = TraceLevels::from_properties(&Properties::new());
        assert_eq!(
            levels,
            TraceLevels {
                network: 0,
                protocol: 0,
                retry: 0,
                warn_connections: false,
                warn_dispatch: true,
            }
        );
    }

    #[test]
    fn reads_every_property() {
        let props = Properties::new();
        props.set("Ice.Trace.Network", "3");
        props.set("Ice.Trace.Protocol", "1");
        props.set("Ice.Trace.Retry", "2");
        props.set("Ice.Warn.Connections", "1");
        props.set("Ice.Warn.Dispatch", "0");
        let l = TraceLevels::from_properties(&props);
        assert_eq!((l.network, l.protocol, l.retry), (3, 1, 2));
        assert!(l.warn_connections && !l.warn_dispatch);
    }
}
