//! [`Liveness`]: which rules keep a connection alive and close it, Ice
//! 3.8's idle timeout ([`IdleConfig`], the default) or Ice 3.7's ACM
//! ([`AcmConfig`]), and the monitor the connection task runs for it.
//!
//! **Which one applies.** A connection follows ACM when any `Ice.ACM.*`
//! property of its side is set (`Timeout`, `Heartbeat` or `Close` under
//! `Ice.ACM.Client`, `<Adapter>.ACM`, `Ice.ACM.Server` or `Ice.ACM`) and
//! no Ice 3.8 liveness property is (`IdleTimeout`, `EnableIdleCheck` or
//! `InactivityTimeout` under `Ice.Connection.Client`,
//! `<Adapter>.Connection` or `Ice.Connection.Server`). Otherwise, and
//! when both are set, the 3.8 rules apply: with no property set at all, a
//! floe connection heartbeats every 30 s of silence, so idle connections
//! to Ice 3.7 and 3.8 peers at their defaults stay up (see
//! [`super::idle`]).

use std::time::{Duration, Instant};

use super::acm::{AcmAction, AcmConfig, AcmInputs, AcmMonitor};
use super::idle::{IdleConfig, IdleMonitor, IDLE_KEYS};
use crate::properties::Properties;

/// The liveness rules of one connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Liveness {
    /// Ice 3.8: idle timeout, idle check, inactivity timeout.
    Idle(IdleConfig),
    /// Ice 3.7: active connection management.
    Acm(AcmConfig),
}

const ACM_KEYS: [&str; 3] = ["Timeout", "Heartbeat", "Close"];

impl Liveness {
    /// The rules for `side`'s connections (see the module docs).
    pub(crate) fn from_properties(props: &Properties, side: Side<'_>) -> Self {
        let set = |prefix: &str, keys: &[&str]| {
            keys.iter()
                .any(|k| props.get(&format!("{prefix}.{k}")).is_some())
        };
        let prefixes = side.connection_prefixes();
        let idle_set = prefixes.iter().any(|p| set(p, &IDLE_KEYS));
        let acm_prefix = match side {
            Side::Client => "Ice.ACM.Client".to_string(),
            Side::Server(a) if set(&format!("{a}.ACM"), &ACM_KEYS) => format!("{a}.ACM"),
            Side::Server(_) => "Ice.ACM.Server".to_string(),
        };
        let acm_set = set(&acm_prefix, &ACM_KEYS) || set("Ice.ACM", &ACM_KEYS);
        if acm_set && !idle_set {
            Liveness::Acm(AcmConfig::from_properties(
                props,
                &acm_prefix,
                matches!(side, Side::Server(_)),
            ))
        } else {
            let prefixes: Vec<&str> = prefixes.iter().map(String::as_str).collect();
            Liveness::Idle(IdleConfig::from_properties(props, &prefixes))
        }
    }
}

/// The monitor of a connection's [`Liveness`] rules, run by its task.
#[derive(Debug)]
pub(crate) enum Monitor {
    Idle(IdleMonitor),
    Acm(AcmMonitor),
}

impl Monitor {
    pub(crate) fn new(liveness: &Liveness, now: Instant) -> Self {
        match liveness {
            Liveness::Idle(c) => Monitor::Idle(IdleMonitor::new(c.clone(), now)),
            Liveness::Acm(c) => Monitor::Acm(AcmMonitor::new(c.clone(), now)),
        }
    }

    /// How often [`Monitor::check`] runs; `None`: never.
    pub(crate) fn period(&self) -> Option<Duration> {
        match self {
            Monitor::Idle(m) => m.period(),
            Monitor::Acm(m) => m.period(),
        }
    }

    /// Records a read (`traffic`: it held a request or reply; `heartbeat`:
    /// a ValidateConnection).
    pub(crate) fn read(&mut self, traffic: bool, heartbeat: bool) {
        match self {
            Monitor::Idle(m) => m.read(traffic, heartbeat),
            // ACM counts every read, heartbeats included, as activity.
            Monitor::Acm(m) => m.read(),
        }
    }

    /// One run at `now`: what to send and whether to close.
    pub(crate) fn check(&mut self, now: Instant, inputs: AcmInputs) -> AcmAction {
        match self {
            Monitor::Idle(m) => m.check(now, inputs),
            Monitor::Acm(m) => m.check(now, inputs),
        }
    }
}

/// Where one side's connection settings are read from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Side<'a> {
    /// Outgoing connections: `Ice.Connection.Client.*`, `Ice.ACM.Client.*`.
    Client,
    /// Connections accepted by the named adapter: `<Adapter>.Connection.*`
    /// then `Ice.Connection.Server.*`; `<Adapter>.ACM.*` or
    /// `Ice.ACM.Server.*`.
    Server(&'a str),
}

impl Side<'_> {
    /// The Ice 3.8 property prefixes, most specific first.
    pub(crate) fn connection_prefixes(&self) -> Vec<String> {
        match self {
            Side::Client => vec!["Ice.Connection.Client".into()],
            Side::Server(a) => vec![format!("{a}.Connection"), "Ice.Connection.Server".into()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn liveness(pairs: &[(&str, &str)], side: Side<'_>) -> Liveness {
        let p = Properties::new();
        for (k, v) in pairs {
            p.set(k, v);
        }
        Liveness::from_properties(&p, side)
    }

    #[test]
    fn no_property_is_ice_3_8_at_its_defaults() {
        assert_eq!(
            liveness(&[], Side::Client),
            Liveness::Idle(IdleConfig::default())
        );
        assert_eq!(
            liveness(&[], Side::Server("A")),
            Liveness::Idle(IdleConfig::default())
        );
    }

    #[test]
    fn an_acm_property_alone_selects_acm() {
        let l = liveness(&[("Ice.ACM.Client.Timeout", "5")], Side::Client);
        assert!(matches!(l, Liveness::Acm(c) if c.timeout == Some(Duration::from_secs(5))));
        let l = liveness(&[("Ice.ACM.Heartbeat", "3")], Side::Server("A"));
        assert!(matches!(l, Liveness::Acm(_)));
        let l = liveness(&[("A.ACM.Timeout", "4")], Side::Server("A"));
        assert!(matches!(l, Liveness::Acm(c) if c.timeout == Some(Duration::from_secs(4))));
        // Another side's ACM settings do not count.
        let l = liveness(&[("Ice.ACM.Server.Timeout", "5")], Side::Client);
        assert_eq!(l, Liveness::Idle(IdleConfig::default()));
    }

    #[test]
    fn the_3_8_properties_win_over_acm() {
        let l = liveness(
            &[("Ice.ACM.Timeout", "5"), ("A.Connection.IdleTimeout", "20")],
            Side::Server("A"),
        );
        let Liveness::Idle(c) = l else {
            panic!("{l:?}")
        };
        assert_eq!(c.idle_timeout, Some(Duration::from_secs(20)));
        let l = liveness(
            &[
                ("Ice.ACM.Client.Timeout", "5"),
                ("Ice.Connection.Client.EnableIdleCheck", "0"),
            ],
            Side::Client,
        );
        assert!(matches!(l, Liveness::Idle(c) if !c.idle_check));
    }
}
