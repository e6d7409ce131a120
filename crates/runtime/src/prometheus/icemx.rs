//! The IceMX views of a communicator as Prometheus metric families: a
//! prometheus-client [`Collector`] that reads every enabled view at each
//! scrape (the hot paths only bump the entries' atomics, as for the
//! `Metrics` admin facet). The families are listed in [`super`].

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Weak;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;

use super::family;
use crate::metrics::{map_lock, Entry, MapKind, MetricsAdmin};

/// Reads the views of a communicator's [`MetricsAdmin`], held weakly: a
/// registry does not keep a destroyed communicator's metrics alive.
#[derive(Debug)]
pub(crate) struct ViewsCollector {
    pub(crate) admin: Weak<MetricsAdmin>,
}

impl Collector for ViewsCollector {
    fn encode(&self, encoder: DescriptorEncoder) -> fmt::Result {
        match self.admin.upgrade() {
            Some(admin) => encode_rows(&rows(&admin), encoder),
            None => Ok(()),
        }
    }
}

/// One entry of one map of one view, read once.
#[derive(Debug)]
pub(super) struct Row {
    kind: MapKind,
    view: String,
    /// The invocation entry's id, for a `Remote` entry.
    invocation: Option<String>,
    id: String,
    total: u64,
    current: i64,
    lifetime_micros: u64,
    failures: u64,
    /// Failures by Ice exception type id.
    exceptions: Vec<(String, u64)>,
    received: u64,
    sent: u64,
    size: u64,
    reply_size: u64,
    user_exception: u64,
    retry: u64,
}

/// A counter's value (never negative).
fn count(v: &AtomicI64) -> u64 {
    u64::try_from(v.load(Ordering::Relaxed)).unwrap_or(0)
}

impl Row {
    fn of(kind: MapKind, view: &str, invocation: Option<&str>, entry: &Entry) -> Row {
        let exceptions = map_lock(&entry.failed)
            .iter()
            .map(|(name, n)| (name.clone(), u64::try_from(*n).unwrap_or(0)))
            .collect();
        Row {
            kind,
            view: view.to_string(),
            invocation: invocation.map(str::to_string),
            id: entry.key.clone(),
            total: count(&entry.total),
            current: entry.current(),
            lifetime_micros: count(&entry.total_lifetime),
            failures: count(&entry.failures),
            exceptions,
            received: count(&entry.received),
            sent: count(&entry.sent),
            size: count(&entry.size),
            reply_size: count(&entry.reply_size),
            user_exception: count(&entry.user_exception),
            retry: count(&entry.retry),
        }
    }

    fn labels(&self) -> Vec<(&'static str, &str)> {
        let mut labels = vec![("view", self.view.as_str())];
        if let Some(invocation) = &self.invocation {
            labels.push(("invocation", invocation.as_str()));
        }
        labels.push(("id", self.id.as_str()));
        labels
    }
}

/// Every entry of every enabled view, `Remote` entries after their
/// invocation's.
pub(super) fn rows(admin: &MetricsAdmin) -> Vec<Row> {
    let mut rows = Vec::new();
    for view in admin.view_names().0 {
        let Ok(maps) = admin.maps(&view) else {
            continue; // disabled or removed since the names were read
        };
        for (kind, entries) in maps {
            for entry in entries {
                rows.push(Row::of(kind, &view, None, &entry));
                for (_, remote) in entry.remotes.iter().flat_map(|m| m.entries()) {
                    rows.push(Row::of(MapKind::Remote, &view, Some(&entry.key), &remote));
                }
            }
        }
    }
    rows
}

/// The maps exported, with the metric name prefix of each (`Thread` is
/// always empty in floe and is left out).
const MAPS: [(MapKind, &str); 6] = [
    (MapKind::Connection, "icemx_connection"),
    (
        MapKind::ConnectionEstablishment,
        "icemx_connection_establishment",
    ),
    (MapKind::Dispatch, "icemx_dispatch"),
    (MapKind::EndpointLookup, "icemx_endpoint_lookup"),
    (MapKind::Invocation, "icemx_invocation"),
    (MapKind::Remote, "icemx_invocation_remote"),
];

/// A counter family of `rows` named `prefix` + `suffix`.
fn counter(
    e: &mut DescriptorEncoder,
    rows: &[&Row],
    (name, help): (String, String),
    value: impl Fn(&Row) -> u64,
) -> fmt::Result {
    family(
        e,
        (&name, &help, MetricType::Counter),
        rows.iter()
            .map(|r| (r.labels(), ConstCounter::new(value(r)))),
    )
}

/// Writes the families of [`super`]'s table for `rows`.
pub(super) fn encode_rows(rows: &[Row], mut encoder: DescriptorEncoder) -> fmt::Result {
    let e = &mut encoder;
    for (kind, prefix) in MAPS {
        let rows: Vec<&Row> = rows.iter().filter(|r| r.kind == kind).collect();
        let map = kind.name();
        let named =
            |suffix: &str, help: &str| (format!("{prefix}{suffix}"), format!("{map}: {help}"));
        counter(e, &rows, named("", "objects observed."), |r| r.total)?;
        family(
            e,
            (
                &format!("{prefix}_current"),
                &format!("{map}: objects observed now."),
                MetricType::Gauge,
            ),
            rows.iter()
                .map(|r| (r.labels(), ConstGauge::new(r.current))),
        )?;
        family(
            e,
            (
                &format!("{prefix}_lifetime_seconds"),
                &format!("{map}: lifetimes of the objects that ended, summed."),
                MetricType::Counter,
            ),
            rows.iter().map(|r| {
                let seconds = r.lifetime_micros as f64 / 1e6;
                (r.labels(), ConstCounter::new(seconds))
            }),
        )?;
        counter(e, &rows, named("_failures", "objects that failed."), |r| {
            r.failures
        })?;
        family(
            e,
            (
                &format!("{prefix}_exceptions"),
                &format!("{map}: failures by Ice exception type id."),
                MetricType::Counter,
            ),
            rows.iter().flat_map(|r| {
                r.exceptions.iter().map(|(name, n)| {
                    let mut labels = r.labels();
                    labels.push(("exception", name.as_str()));
                    (labels, ConstCounter::new(*n))
                })
            }),
        )?;
        match kind {
            MapKind::Connection => {
                counter(e, &rows, named("_received_bytes", "bytes received."), |r| {
                    r.received
                })?;
                counter(e, &rows, named("_sent_bytes", "bytes sent."), |r| r.sent)?;
            }
            MapKind::Dispatch | MapKind::Remote => {
                let (size, reply) = ("request parameters' bytes.", "reply bytes.");
                counter(e, &rows, named("_request_bytes", size), |r| r.size)?;
                counter(e, &rows, named("_reply_bytes", reply), |r| r.reply_size)?;
            }
            _ => {}
        }
        if matches!(kind, MapKind::Dispatch | MapKind::Invocation) {
            let help = "user exceptions raised.";
            counter(e, &rows, named("_user_exceptions", help), |r| {
                r.user_exception
            })?;
        }
        if kind == MapKind::Invocation {
            counter(e, &rows, named("_retries", "retries."), |r| r.retry)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::properties::Properties;
    use prometheus_client::registry::Registry;

    #[test]
    fn views_as_openmetrics_text() {
        let props = Properties::new();
        props.set("IceMX.Metrics.ByOp.Map.Dispatch.GroupBy", "operation");
        let admin = MetricsAdmin::from_properties(&props).expect("a view");
        let mut registry = Registry::default();
        registry.register_collector(Box::new(ViewsCollector {
            admin: Arc::downgrade(&admin),
        }));
        let text = super::super::encode(&registry).unwrap();
        for line in [
            "# TYPE icemx_dispatch counter",
            "# TYPE icemx_dispatch_current gauge",
            "# TYPE icemx_connection_sent_bytes counter",
            "# TYPE icemx_invocation_remote_reply_bytes counter",
            "# EOF",
        ] {
            assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
        }
        drop(admin);
        let text = super::super::encode(&registry).unwrap();
        assert_eq!(text.trim(), "# EOF");
    }
}
