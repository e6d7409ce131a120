//! The `IceMX::Metrics` classes as the `Metrics` facet sends them:
//! [`MetricsValue`], a class instance written through floe-wire's class
//! encoding (one slice per class of the hierarchy, most-derived first).
//!
//! | map | class | its own members, after `Metrics`' |
//! |---|---|---|
//! | `Connection` | `ConnectionMetrics` | `receivedBytes`, `sentBytes` (long) |
//! | `Dispatch` | `DispatchMetrics` | `userException` (int), `size`, `replySize` (long) |
//! | `Invocation` | `InvocationMetrics` | `retry`, `userException` (int), `remotes`, `collocated` (`MetricsMap`) |
//! | `Remote` | `RemoteMetrics` → `ChildInvocationMetrics` | `size`, `replySize` (long) |
//! | others | `Metrics` | `id` (string), `total` (long), `current` (int), `totalLifetime` (long), `failures` (int) |

use std::sync::atomic::Ordering;

use floe_wire::class::{Value, ValuePtr};
use floe_wire::{Decoder, Encoder};

use super::{Entry, MapKind};

/// A snapshot of one metrics entry, as a class instance.
#[derive(Debug, Default)]
pub(crate) struct MetricsValue {
    kind: Option<MapKind>,
    id: String,
    total: i64,
    current: i32,
    total_lifetime: i64,
    failures: i32,
    received: i64,
    sent: i64,
    size: i64,
    reply_size: i64,
    user_exception: i32,
    retry: i32,
    remotes: Vec<ValuePtr>,
}

const METRICS: &str = "::IceMX::Metrics";
const CONNECTION: &str = "::IceMX::ConnectionMetrics";
const DISPATCH: &str = "::IceMX::DispatchMetrics";
const INVOCATION: &str = "::IceMX::InvocationMetrics";
const CHILD: &str = "::IceMX::ChildInvocationMetrics";
const REMOTE: &str = "::IceMX::RemoteMetrics";

/// Reads a counter, saturated to an `int` member.
fn int(v: &std::sync::atomic::AtomicI64) -> i32 {
    i32::try_from(v.load(Ordering::Relaxed)).unwrap_or(i32::MAX)
}

impl MetricsValue {
    /// The snapshot of `entry` of a map of `kind`.
    pub(crate) fn of(kind: MapKind, entry: &Entry) -> ValuePtr {
        let remotes = entry
            .remotes
            .as_ref()
            .map(|m| {
                m.entries()
                    .iter()
                    .map(|(_, e)| MetricsValue::of(MapKind::Remote, e))
                    .collect()
            })
            .unwrap_or_default();
        ValuePtr::new(MetricsValue {
            kind: Some(kind),
            id: entry.key.clone(),
            total: entry.total.load(Ordering::Relaxed),
            current: i32::try_from(entry.current()).unwrap_or(i32::MAX),
            total_lifetime: entry.total_lifetime.load(Ordering::Relaxed),
            failures: int(&entry.failures),
            received: entry.received.load(Ordering::Relaxed),
            sent: entry.sent.load(Ordering::Relaxed),
            size: entry.size.load(Ordering::Relaxed),
            reply_size: entry.reply_size.load(Ordering::Relaxed),
            user_exception: int(&entry.user_exception),
            retry: int(&entry.retry),
            remotes,
        })
    }

    fn write_base(&self, enc: &mut Encoder) {
        enc.start_slice(METRICS, None, true);
        enc.write_string(&self.id);
        enc.write_i64(self.total);
        enc.write_i32(self.current);
        enc.write_i64(self.total_lifetime);
        enc.write_i32(self.failures);
        enc.end_slice();
    }
}

impl Value for MetricsValue {
    fn ice_id(&self) -> &str {
        self.ice_ids()[0]
    }

    fn ice_ids(&self) -> &'static [&'static str] {
        match self.kind {
            Some(MapKind::Connection) => &[CONNECTION, METRICS],
            Some(MapKind::Dispatch) => &[DISPATCH, METRICS],
            Some(MapKind::Invocation) => &[INVOCATION, METRICS],
            Some(MapKind::Remote) => &[REMOTE, CHILD, METRICS],
            _ => &[METRICS],
        }
    }

    fn write_slices(&self, enc: &mut Encoder) {
        match self.kind {
            Some(MapKind::Connection) => {
                enc.start_slice(CONNECTION, None, false);
                enc.write_i64(self.received);
                enc.write_i64(self.sent);
                enc.end_slice();
            }
            Some(MapKind::Dispatch) => {
                enc.start_slice(DISPATCH, None, false);
                enc.write_i32(self.user_exception);
                enc.write_i64(self.size);
                enc.write_i64(self.reply_size);
                enc.end_slice();
            }
            Some(MapKind::Invocation) => {
                enc.start_slice(INVOCATION, None, false);
                enc.write_i32(self.retry);
                enc.write_i32(self.user_exception);
                enc.write_size(self.remotes.len());
                for r in &self.remotes {
                    enc.write_value(Some(r));
                }
                // `collocated`: floe has no collocated invocations.
                enc.write_size(0);
                enc.end_slice();
            }
            Some(MapKind::Remote) => {
                enc.start_slice(REMOTE, None, false);
                enc.end_slice();
                enc.start_slice(CHILD, None, false);
                enc.write_i64(self.size);
                enc.write_i64(self.reply_size);
                enc.end_slice();
            }
            _ => {}
        }
        self.write_base(enc);
    }

    fn read_slices(&mut self, dec: &mut Decoder) -> floe_wire::Result<()> {
        // Only sent, never received: the facet's operations take no
        // classes. Reading the base slice keeps the stream consistent.
        dec.start_slice()?;
        self.id = dec.read_string()?;
        self.total = dec.read_i64()?;
        self.current = dec.read_i32()?;
        self.total_lifetime = dec.read_i64()?;
        self.failures = dec.read_i32()?;
        dec.end_slice()
    }
}
