//! The `Metrics` facet (`IceMX::MetricsAdmin`): the communicator's
//! metrics views ([`crate::metrics`]) read and switched remotely, as
//! `icegridadmin` and IceGrid GUI's metrics pages do.
//!
//! - `getMetricsViewNames()`: the enabled views, and the disabled ones as
//!   the out parameter;
//! - `enableMetricsView(name)` / `disableMetricsView(name)`;
//! - `getMetricsView(view, out timestamp)`: each map of the view (the
//!   application's own too, [`crate::MetricsProvider`]), as a sequence of
//!   `Metrics` class instances, and the time in ms since the Unix epoch;
//! - `getMapMetricsFailures(view, map)`: the failures of each entry of a
//!   map that has some;
//! - `getMetricsFailures(view, map, id)`: the failures of one entry.
//!
//! Operations on a view that does not exist raise
//! `IceMX::UnknownMetricsView`. The interface is `["format:sliced"]`:
//! class instances and the exception are written in the sliced format.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use floe_wire::{ClassFormat, Encoder};

use crate::error::user::UserError;
use crate::metrics::value::MetricsValue;
use crate::metrics::{Entry, MetricsAdmin, UnknownView};
use crate::object_model::servant::{DispatchError, Servant};

/// The facet's servant.
pub(super) fn facet(admin: Arc<MetricsAdmin>) -> Arc<dyn Servant> {
    super::facet("::IceMX::MetricsAdmin", move |current, params| {
        let mut dec = current.params_decoder(params)?;
        let unknown = |_: UnknownView| {
            let e = DispatchError::UserException(UserError::new(UnknownMetricsView));
            current.encode_user_exception(e, Some(ClassFormat::Sliced))
        };
        let reply = |write: &dyn Fn(&mut Encoder)| {
            current.encode_reply(|e| {
                e.set_class_format(ClassFormat::Sliced);
                write(e)
            })
        };
        match current.operation.as_str() {
            "getMetricsViewNames" => {
                let (enabled, disabled) = admin.view_names();
                Ok(reply(&|e| {
                    e.write(&disabled);
                    e.write(&enabled);
                }))
            }
            "enableMetricsView" | "disableMetricsView" => {
                let name = dec.read_string()?;
                let enable = current.operation == "enableMetricsView";
                admin.set_enabled(&name, enable).map_err(unknown)?;
                Ok(current.empty_reply())
            }
            "getMetricsView" => {
                let view = dec.read_string()?;
                let maps = admin.maps(&view).map_err(unknown)?;
                let provided = admin.provided_maps(&view).map_err(unknown)?;
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
                    .unwrap_or(0);
                Ok(reply(&|e| {
                    e.write_i64(now);
                    e.write_size(maps.len() + provided.len());
                    for (kind, entries) in &maps {
                        e.write_string(kind.name());
                        e.write_size(entries.len());
                        for entry in entries {
                            e.write_value(Some(&MetricsValue::of(*kind, entry)));
                        }
                    }
                    // Application-defined maps (IceStorm's `Topic`, ...).
                    for (name, values) in &provided {
                        e.write_string(name);
                        e.write_size(values.len());
                        for v in values {
                            e.write_value(Some(v));
                        }
                    }
                }))
            }
            "getMapMetricsFailures" => {
                let view = dec.read_string()?;
                let map = dec.read_string()?;
                let entries = admin.map_entries(&view, &map).map_err(unknown)?;
                let failed: Vec<&Arc<Entry>> = entries
                    .iter()
                    .filter(|e| e.failures.load(Ordering::Relaxed) > 0)
                    .collect();
                Ok(reply(&|e| {
                    e.write_size(failed.len());
                    for entry in &failed {
                        write_failures(e, &entry.key, Some(entry));
                    }
                }))
            }
            "getMetricsFailures" => {
                let view = dec.read_string()?;
                let map = dec.read_string()?;
                let id = dec.read_string()?;
                let entries = admin.map_entries(&view, &map).map_err(unknown)?;
                let entry = entries.iter().find(|e| e.key == id);
                // An unknown id answers an empty `MetricsFailures`.
                let id = if entry.is_some() { id } else { String::new() };
                Ok(reply(&|e| write_failures(e, &id, entry)))
            }
            _ => Err(DispatchError::operation_not_exist()),
        }
    })
}

/// `MetricsFailures`: the id, then the failures by exception type id.
fn write_failures(e: &mut Encoder, id: &str, entry: Option<&Arc<Entry>>) {
    e.write_string(id);
    let failed = entry
        .map(|x| crate::metrics::map_lock(&x.failed).clone())
        .unwrap_or_default();
    e.write_size(failed.len());
    for (name, count) in &failed {
        e.write_string(name);
        e.write_i32(*count);
    }
}

memberless_exception!(
    /// `IceMX::UnknownMetricsView` (no members).
    UnknownMetricsView,
    "::IceMX::UnknownMetricsView"
);
