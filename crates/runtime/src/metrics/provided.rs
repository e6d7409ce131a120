//! Application-defined metrics maps: what Ice lets a plugin add to the
//! `MetricsAdmin` (IceStorm's `Topic` and `Subscriber` maps are such).
//!
//! An application registers a [`MetricsProvider`] with
//! [`Communicator::add_metrics_provider`]. Nothing is observed as it
//! happens: when `getMetricsView` reads a view, each provider is asked
//! for its objects now ([`MetricsObject`]: attributes and counters), and
//! the view's settings for the map are applied to them as to the built-in
//! maps: `Map.<name>` selection and `Disabled`, `Accept.*`, `Reject.*`,
//! then `GroupBy` (default `id`). Objects that share a group key are
//! summed into one entry. A provider may report objects that are gone
//! ([`MetricsObject::detached`], with their last counters and `current`
//! 0): an entry made of such objects only is a detached entry, and the
//! map keeps the `RetainDetached` (default 10) detached last, as Ice's
//! maps keep theirs.
//!
//! An entry is written as a class instance of the provider's type ids,
//! most-derived first and ending with `::IceMX::Metrics`; the extra
//! [`MetricsField`]s go, in order, in the most-derived slice (the classes
//! in between, if any, have no members of their own).

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use floe_wire::class::{Value, ValuePtr};
use floe_wire::{Decoder, Encoder};

use super::attributes::Attributes;
use super::map::MapConfig;
use super::{MetricsAdmin, UnknownView, PREFIX};

/// A member of a `Metrics` subclass, after `Metrics`' own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricsField {
    /// A Slice `int`.
    Int(i32),
    /// A Slice `long`.
    Long(i64),
}

impl MetricsField {
    /// `self + other` when both are the same kind (saturating), else `self`.
    fn add(self, other: MetricsField) -> MetricsField {
        match (self, other) {
            (MetricsField::Int(a), MetricsField::Int(b)) => MetricsField::Int(a.saturating_add(b)),
            (MetricsField::Long(a), MetricsField::Long(b)) => {
                MetricsField::Long(a.saturating_add(b))
            }
            (a, _) => a,
        }
    }
}

/// One object of an application-defined map, as read now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetricsObject {
    /// Its attributes by name (`id` is the default `GroupBy`; an object
    /// without the attributes a map groups by is left out of it).
    pub attributes: Vec<(&'static str, String)>,
    /// `Metrics::total`.
    pub total: i64,
    /// `Metrics::current`.
    pub current: i32,
    /// `Metrics::totalLifetime`, in microseconds.
    pub total_lifetime: i64,
    /// `Metrics::failures`.
    pub failures: i32,
    /// The members of the provider's class, in Slice order.
    pub fields: Vec<MetricsField>,
    /// For an object that is gone, when it went: any number that is
    /// larger for one that went later. `None` for an object that exists.
    pub detached: Option<u64>,
}

impl Attributes for MetricsObject {
    fn get(&self, name: &str) -> Option<String> {
        self.attributes
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    }
}

/// A source of one application-defined metrics map.
pub trait MetricsProvider: Send + Sync + 'static {
    /// The map's name in the properties and in `MetricsView` (`Topic`).
    fn map_name(&self) -> &'static str;

    /// The class of its entries and its bases, most-derived first, ending
    /// with `::IceMX::Metrics` (`["::IceMX::TopicMetrics",
    /// "::IceMX::Metrics"]`).
    fn type_ids(&self) -> &'static [&'static str];

    /// Its objects now.
    fn objects(&self) -> Vec<MetricsObject>;
}

/// The providers registered with a communicator's [`MetricsAdmin`].
#[derive(Default)]
pub(crate) struct Providers(RwLock<Vec<Arc<dyn MetricsProvider>>>);

impl std::fmt::Debug for Providers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = self.0.read().unwrap_or_else(|p| p.into_inner());
        f.debug_list()
            .entries(list.iter().map(|p| p.map_name()))
            .finish()
    }
}

/// The entries of one application-defined map, as class instances.
pub(crate) type ProvidedMap = (&'static str, Vec<ValuePtr>);

impl MetricsAdmin {
    /// Adds `provider`'s map, in place of a map of the same name.
    pub(crate) fn add_provider(&self, provider: Arc<dyn MetricsProvider>) {
        let mut list = self.providers.0.write().unwrap_or_else(|p| p.into_inner());
        list.retain(|p| p.map_name() != provider.map_name());
        list.push(provider);
    }

    /// The application-defined maps of view `view` (none while it is
    /// disabled), each entry a class instance.
    ///
    /// # Errors
    ///
    /// [`UnknownView`].
    pub(crate) fn provided_maps(&self, view: &str) -> Result<Vec<ProvidedMap>, UnknownView> {
        let enabled = {
            let views = self.views.read().unwrap_or_else(|p| p.into_inner());
            views
                .iter()
                .find(|v| v.name == view)
                .ok_or_else(|| UnknownView(view.to_string()))?
                .enabled
        };
        if !enabled {
            return Ok(Vec::new());
        }
        let providers: Vec<Arc<dyn MetricsProvider>> = self
            .providers
            .0
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut out = Vec::new();
        for p in providers {
            if let Some(config) = self.provided_config(view, p.map_name()) {
                let entries = group(&config, p.objects())
                    .into_iter()
                    .map(|(id, agg)| {
                        ValuePtr::new(ProvidedValue {
                            ids: p.type_ids(),
                            id,
                            object: agg,
                        })
                    })
                    .collect();
                out.push((p.map_name(), entries));
            }
        }
        Ok(out)
    }

    /// The settings of map `map` in view `view`, as the built-in maps are
    /// configured, or `None` when `Map.*` selection leaves it out.
    fn provided_config(&self, view: &str, map: &str) -> Option<MapConfig> {
        let props = &self.properties;
        let view_prefix = format!("{PREFIX}{view}.");
        let maps_prefix = format!("{view_prefix}Map.");
        if props.with_prefix(&maps_prefix).is_empty() {
            return Some(MapConfig::read(props, &view_prefix));
        }
        let prefix = format!("{maps_prefix}{map}.");
        if props.with_prefix(&prefix).is_empty()
            || props.get_int_or(&format!("{prefix}Disabled"), 0) > 0
        {
            return None;
        }
        Some(MapConfig::read(props, &prefix))
    }
}

/// Groups `objects` by `config`'s key, summing the counters of a group;
/// of the groups whose objects are all detached, keeps the
/// `RetainDetached` that went last.
fn group(config: &MapConfig, objects: Vec<MetricsObject>) -> BTreeMap<String, MetricsObject> {
    let mut groups: BTreeMap<String, MetricsObject> = BTreeMap::new();
    for o in objects {
        let Some(key) = config.key(&o) else {
            continue;
        };
        match groups.get_mut(&key) {
            Some(g) => {
                g.total = g.total.saturating_add(o.total);
                g.current = g.current.saturating_add(o.current);
                g.total_lifetime = g.total_lifetime.saturating_add(o.total_lifetime);
                g.failures = g.failures.saturating_add(o.failures);
                for (a, b) in g.fields.iter_mut().zip(o.fields) {
                    *a = a.add(b);
                }
                // Detached while every object is; then when the last went.
                g.detached = g.detached.zip(o.detached).map(|(a, b)| a.max(b));
            }
            None => {
                groups.insert(key, o);
            }
        }
    }
    let mut detached: Vec<(u64, String)> = groups
        .iter()
        .filter_map(|(k, g)| Some((g.detached?, k.clone())))
        .collect();
    if detached.len() > config.retain {
        detached.sort_unstable();
        let forget = detached.len() - config.retain;
        for (_, key) in detached.into_iter().take(forget) {
            groups.remove(&key);
        }
    }
    groups
}

/// One entry of an application-defined map, as a class instance.
#[derive(Debug)]
struct ProvidedValue {
    ids: &'static [&'static str],
    id: String,
    object: MetricsObject,
}

/// The base class.
const METRICS: &str = "::IceMX::Metrics";

impl Value for ProvidedValue {
    fn ice_id(&self) -> &str {
        self.ids.first().copied().unwrap_or(METRICS)
    }

    fn ice_ids(&self) -> &'static [&'static str] {
        self.ids
    }

    fn write_slices(&self, enc: &mut Encoder) {
        let derived = self.ids.iter().filter(|id| **id != METRICS);
        for (i, id) in derived.enumerate() {
            enc.start_slice(id, None, false);
            if i == 0 {
                for f in &self.object.fields {
                    match *f {
                        MetricsField::Int(v) => enc.write_i32(v),
                        MetricsField::Long(v) => enc.write_i64(v),
                    }
                }
            }
            enc.end_slice();
        }
        enc.start_slice(METRICS, None, true);
        enc.write_string(&self.id);
        enc.write_i64(self.object.total);
        enc.write_i32(self.object.current);
        enc.write_i64(self.object.total_lifetime);
        enc.write_i32(self.object.failures);
        enc.end_slice();
    }

    fn read_slices(&mut self, dec: &mut Decoder) -> floe_wire::Result<()> {
        // Only sent, never received (see `MetricsValue`): the slices are
        // skipped.
        for _ in 0..self.ids.len() {
            dec.start_slice()?;
            dec.end_slice()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::Properties;

    fn object(id: &str, service: &str, published: i64) -> MetricsObject {
        MetricsObject {
            attributes: vec![("id", id.to_string()), ("service", service.to_string())],
            total: 1,
            current: 1,
            fields: vec![MetricsField::Long(published), MetricsField::Long(0)],
            ..MetricsObject::default()
        }
    }

    #[test]
    fn groups_sum_and_rules_filter() {
        let props = Properties::new();
        props.set("IceMX.Metrics.V.GroupBy", "service");
        props.set("IceMX.Metrics.V.Reject.id", "^hidden$");
        let config = MapConfig::read(&props, "IceMX.Metrics.V.");
        let groups = group(
            &config,
            vec![
                object("a", "S", 2),
                object("b", "S", 3),
                object("hidden", "S", 100),
            ],
        );
        assert_eq!(groups.len(), 1);
        let s = &groups["S"];
        assert_eq!((s.total, s.current), (2, 2));
        assert_eq!(s.fields[0], MetricsField::Long(5));
    }

    #[test]
    fn detached_entries_are_kept_up_to_retain_detached_last_gone_first() {
        let props = Properties::new();
        props.set("IceMX.Metrics.V.RetainDetached", "2");
        let config = MapConfig::read(&props, "IceMX.Metrics.V.");
        let gone = |id: &str, service: &str, at: u64| MetricsObject {
            current: 0,
            detached: Some(at),
            ..object(id, service, 1)
        };
        let groups = group(
            &config,
            vec![
                object("live", "S", 1),
                gone("a", "S", 1),
                gone("b", "S", 4),
                gone("c", "S", 2),
                gone("d", "S", 3),
            ],
        );
        let ids: Vec<&str> = groups.keys().map(String::as_str).collect();
        assert_eq!(ids, ["b", "d", "live"]);
        assert_eq!(groups["b"].current, 0);

        // Grouped, a group with an object that exists is not detached, and
        // counts the detached ones beside it.
        props.set("IceMX.Metrics.V.GroupBy", "service");
        props.set("IceMX.Metrics.V.RetainDetached", "0");
        let config = MapConfig::read(&props, "IceMX.Metrics.V.");
        let groups = group(
            &config,
            vec![object("live", "S", 1), gone("a", "S", 1), gone("x", "T", 1)],
        );
        assert_eq!(groups.len(), 1);
        assert_eq!((groups["S"].total, groups["S"].current), (2, 1));
    }
}
