//! IceMX metrics: what the `Metrics` admin facet
//! ([`crate::admin`], `IceMX::MetricsAdmin`) reports, configured as in
//! Ice by the properties `IceMX.Metrics.<view>.*`.
//!
//! - Each distinct `<view>` in `IceMX.Metrics.<view>.<setting>` is a
//!   view; `IceMX.Metrics.<view>.Disabled=1` starts it disabled.
//! - A view has the maps `Connection`, `ConnectionEstablishment`,
//!   `Dispatch`, `EndpointLookup`, `Invocation` (each entry with a
//!   `Remote` sub-map) and `Thread` (always empty: floe's tasks are not
//!   threads). With any `IceMX.Metrics.<view>.Map.<map>.*` property, only
//!   the maps named so exist, each configured by its own prefix; without,
//!   every map takes the view's settings. `Map.<map>.Disabled=1` leaves a
//!   map out.
//! - A map's settings: `GroupBy` (default `id`; attribute names joined by
//!   separators, e.g. `parent-id`), `Accept.<attribute>` and
//!   `Reject.<attribute>` (regular expressions, matched anywhere in the
//!   value), `RetainDetached` (default 10). [`attributes`] lists the
//!   attributes.
//!
//! Applications add maps of their own with a [`provided::MetricsProvider`]
//! (floe-storm's `Topic` and `Subscriber`).
//!
//! With no `IceMX.Metrics.*` property (the default), or with
//! `Ice.Admin.Facets` leaving out `Metrics`, nothing is observed: the
//! communicator has no [`MetricsAdmin`], and the hot paths pay one
//! branch ([`active`] for invocations, an `Option` for connections and
//! dispatches).

pub(crate) mod attributes;
pub(crate) mod clock;
mod config;
mod map;
pub(crate) mod observe;
mod observer;
pub(crate) mod provided;
pub(crate) mod value;

#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::properties::Properties;
use attributes::{Attributes, Token};
pub(crate) use clock::Tick;
pub(crate) use map::lock as map_lock;
pub(crate) use map::Entry;
use map::{MapConfig, MetricsMap, MEMO_SLOTS};
use observer::Group;
pub(crate) use observer::Observer;

/// The property prefix of the views.
const PREFIX: &str = "IceMX.Metrics.";

/// The property that starts a Prometheus scrape endpoint on `HOST:PORT`
/// (feature `prometheus`; see `floe_runtime::prometheus`).
pub const PROMETHEUS_ENDPOINT: &str = "Floe.Prometheus.Endpoint";

/// The view observed for [`PROMETHEUS_ENDPOINT`] when no view is
/// configured.
const PROMETHEUS_VIEW: &str = "Prometheus";

/// The kinds of map (and `Remote`, the sub-map of invocations).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MapKind {
    Connection,
    ConnectionEstablishment,
    Dispatch,
    EndpointLookup,
    Invocation,
    Thread,
    Remote,
}

impl MapKind {
    /// The number of kinds.
    const COUNT: usize = 7;

    /// The maps of a view, in name order.
    const VIEW_MAPS: [MapKind; 6] = [
        MapKind::Connection,
        MapKind::ConnectionEstablishment,
        MapKind::Dispatch,
        MapKind::EndpointLookup,
        MapKind::Invocation,
        MapKind::Thread,
    ];

    /// The map's name in the properties and in `MetricsView`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            MapKind::Connection => "Connection",
            MapKind::ConnectionEstablishment => "ConnectionEstablishment",
            MapKind::Dispatch => "Dispatch",
            MapKind::EndpointLookup => "EndpointLookup",
            MapKind::Invocation => "Invocation",
            MapKind::Thread => "Thread",
            MapKind::Remote => "Remote",
        }
    }
}

/// Communicators that observe metrics, process-wide: 0 lets invocations
/// skip the lookup of their communicator's [`MetricsAdmin`].
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// Whether any communicator of the process observes metrics.
#[inline]
pub(crate) fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed) != 0
}

/// One view: its maps, empty while disabled.
#[derive(Debug)]
struct View {
    name: String,
    enabled: bool,
    maps: Vec<Arc<MetricsMap>>,
    /// The map of each kind (indexed by `MapKind as usize`), as found in
    /// `maps`, so that observing looks up no name.
    by_kind: [Option<Arc<MetricsMap>>; MapKind::COUNT],
}

impl View {
    /// A view of `maps` (of distinct kinds).
    fn new(name: String, enabled: bool, maps: Vec<Arc<MetricsMap>>) -> View {
        let mut by_kind: [Option<Arc<MetricsMap>>; MapKind::COUNT] = Default::default();
        for m in &maps {
            by_kind[m.kind as usize] = Some(m.clone());
        }
        View {
            name,
            enabled,
            maps,
            by_kind,
        }
    }
}

/// The metrics of a communicator: its views and their maps.
#[derive(Debug)]
pub(crate) struct MetricsAdmin {
    properties: Properties,
    views: RwLock<Vec<View>>,
    /// Application-defined maps ([`provided`]).
    providers: provided::Providers,
    /// The hits of recently observed tokens, across the views, so that
    /// observing the same object again compares its token once and
    /// takes no map's lock. Cleared when a view is rebuilt.
    memo: Mutex<Memo>,
}

/// The groups of recently observed tokens (see [`MetricsAdmin::observe`]):
/// [`MEMO_SLOTS`] for each kind with tokens (dispatches, invocations).
#[derive(Debug, Default)]
struct Memo {
    slots: Vec<(MapKind, Token, Arc<Group>)>,
    /// The slot the next new token takes once `slots` is full.
    next: usize,
}

impl Memo {
    /// Remembers the group of `token`.
    fn insert(&mut self, kind: MapKind, token: Token, group: Arc<Group>) {
        let slot = (kind, token, group);
        if self.slots.len() < MEMO_SLOTS * 2 {
            self.slots.push(slot);
        } else {
            let at = self.next % self.slots.len();
            self.slots[at] = slot;
            self.next = at + 1;
        }
    }
}

/// The entries of one map, for `getMetricsView`.
pub(crate) type MapSnapshot = (MapKind, Vec<Arc<Entry>>);

/// `enableMetricsView` and friends on a view that does not exist.
#[derive(Debug, thiserror::Error)]
#[error("unknown metrics view {0}")]
pub(crate) struct UnknownView(pub(crate) String);

impl MetricsAdmin {
    /// The metrics of a communicator with `props`, or `None` when no view
    /// is configured or `Ice.Admin.Facets` leaves out `Metrics`.
    ///
    /// With [`PROMETHEUS_ENDPOINT`] set (and the `prometheus` feature),
    /// metrics are observed for it whatever `Ice.Admin.Facets` says, in a
    /// view named `Prometheus` with the default settings when no view is
    /// configured.
    pub(crate) fn from_properties(props: &Properties) -> Option<Arc<MetricsAdmin>> {
        let exported = cfg!(feature = "prometheus")
            && props
                .get(PROMETHEUS_ENDPOINT)
                .is_some_and(|v| !v.trim().is_empty());
        let facets = props.get_list("Ice.Admin.Facets");
        if !exported && !facets.is_empty() && !facets.iter().any(|f| f == "Metrics") {
            return None;
        }
        let mut names: Vec<String> = props
            .with_prefix(PREFIX)
            .keys()
            .filter_map(|k| k[PREFIX.len()..].split('.').next().map(str::to_string))
            .filter(|n| !n.is_empty())
            .collect();
        names.dedup();
        if names.is_empty() {
            if !exported {
                return None;
            }
            names.push(PROMETHEUS_VIEW.to_string());
        }
        let views = names.into_iter().map(|n| build_view(props, n)).collect();
        ACTIVE.fetch_add(1, Ordering::Relaxed);
        Some(Arc::new(MetricsAdmin {
            properties: props.clone(),
            views: RwLock::new(views),
            providers: provided::Providers::default(),
            memo: Mutex::default(),
        }))
    }

    /// Attaches an object of `kind` to the maps of every enabled view
    /// that count it; `None` when none does.
    pub(crate) fn observe<A: Attributes>(&self, kind: MapKind, attrs: &A) -> Option<Observer> {
        // Without the views' lock: a rebuilt view clears the memo before
        // `set_enabled` returns, so a remembered group of an old map is an
        // object observed before the rebuild, as one attached under the
        // lock and still current then.
        match self.observe_memo(kind, attrs) {
            Some(group) => Observer::new(group),
            None => self.observe_new(kind, attrs),
        }
    }

    /// [`MetricsAdmin::observe`] of a token not remembered: attaches the
    /// object through the maps.
    #[inline(never)]
    fn observe_new(&self, kind: MapKind, attrs: &dyn Attributes) -> Option<Observer> {
        let views = self.views.read().unwrap_or_else(|p| p.into_inner());
        let mut entries = Vec::new();
        let mut memoizable = true;
        for map in views
            .iter()
            .filter_map(|v| v.by_kind[kind as usize].as_ref())
        {
            memoizable &= map.memoizable();
            if let Some(entry) = map.attach(attrs) {
                entries.push(entry);
            }
        }
        let token = attrs.token().filter(|_| memoizable);
        let group = Arc::new(Group::new(entries, token.is_some()));
        if let Some(token) = token {
            // Under the views' lock: were a view rebuilt between the
            // attach and this insert, its clearing of the memo would come
            // first and the group of its old maps would stay remembered.
            map_lock(&self.memo).insert(kind, token, group.clone());
        }
        drop(views);
        Observer::new(group)
    }

    /// Attaches an object of `kind` to the maps of every enabled view
    /// that count it and `reads` attribute `attr` (when `reads`), or do
    /// not (when not); nothing is remembered. `None` when no such map
    /// counts it. A connection's `state` changes while it lives: the maps
    /// that group or filter by it are observed apart
    /// (`crate::connection::observe::StateObserver`).
    pub(crate) fn observe_where(
        &self,
        kind: MapKind,
        attrs: &dyn Attributes,
        attr: &str,
        reads: bool,
    ) -> Option<Observer> {
        let views = self.views.read().unwrap_or_else(|p| p.into_inner());
        let entries = views
            .iter()
            .filter_map(|v| v.by_kind[kind as usize].as_ref())
            .filter(|m| m.reads(attr) == reads)
            .filter_map(|m| m.attach(attrs))
            .collect();
        drop(views);
        Observer::new(Arc::new(Group::new(entries, false)))
    }

    /// Whether a map of `kind` of an enabled view reads attribute `attr`.
    pub(crate) fn reads(&self, kind: MapKind, attr: &str) -> bool {
        let views = self.views.read().unwrap_or_else(|p| p.into_inner());
        views
            .iter()
            .filter_map(|v| v.by_kind[kind as usize].as_ref())
            .any(|m| m.reads(attr))
    }

    /// [`MetricsAdmin::observe`] of a remembered token: counts the object
    /// in the entries of its group without their maps' locks. `None` when
    /// the token is not remembered. A group with an evicted entry, or
    /// whose children were of no use, is remembered afresh.
    fn observe_memo<A: Attributes>(&self, kind: MapKind, attrs: &A) -> Option<Arc<Group>> {
        let mut memo = map_lock(&self.memo);
        let (_, _, group) = memo
            .slots
            .iter_mut()
            .find(|(k, t, _)| *k == kind && attrs.is(t))?;
        match group.count(attrs) {
            Some(entries) => *group = Arc::new(Group::new(entries, true)),
            None if group.is_stale() => *group = Arc::new(Group::new(group.entries(), true)),
            None => {}
        }
        Some(group.clone())
    }

    /// The enabled and the disabled views' names.
    pub(crate) fn view_names(&self) -> (Vec<String>, Vec<String>) {
        let views = self.views.read().unwrap_or_else(|p| p.into_inner());
        let (on, off): (Vec<&View>, Vec<&View>) = views.iter().partition(|v| v.enabled);
        let names = |v: Vec<&View>| v.into_iter().map(|v| v.name.clone()).collect();
        (names(on), names(off))
    }

    /// Enables or disables view `name` (as Ice, by setting its `Disabled`
    /// property; enabling starts it afresh).
    ///
    /// # Errors
    ///
    /// [`UnknownView`].
    pub(crate) fn set_enabled(&self, name: &str, enabled: bool) -> Result<(), UnknownView> {
        let mut views = self.views.write().unwrap_or_else(|p| p.into_inner());
        let view = views
            .iter_mut()
            .find(|v| v.name == name)
            .ok_or_else(|| UnknownView(name.to_string()))?;
        if view.enabled != enabled {
            let flag = if enabled { "0" } else { "1" };
            self.properties
                .set(&format!("{PREFIX}{name}.Disabled"), flag);
            *view = build_view(&self.properties, name.to_string());
            // Groups of the old maps must not be counted in again.
            *map_lock(&self.memo) = Memo::default();
        }
        Ok(())
    }

    /// The maps of view `name` (none while it is disabled).
    ///
    /// # Errors
    ///
    /// [`UnknownView`].
    pub(crate) fn maps(&self, name: &str) -> Result<Vec<MapSnapshot>, UnknownView> {
        let views = self.views.read().unwrap_or_else(|p| p.into_inner());
        let view = views
            .iter()
            .find(|v| v.name == name)
            .ok_or_else(|| UnknownView(name.to_string()))?;
        Ok(view
            .maps
            .iter()
            .map(|m| (m.kind, m.entries().into_iter().map(|(_, e)| e).collect()))
            .collect())
    }

    /// The entries of map `map` of view `view` (none for an unknown map).
    ///
    /// # Errors
    ///
    /// [`UnknownView`].
    pub(crate) fn map_entries(
        &self,
        view: &str,
        map: &str,
    ) -> Result<Vec<Arc<Entry>>, UnknownView> {
        Ok(self
            .maps(view)?
            .into_iter()
            .find(|(k, _)| k.name() == map)
            .map(|(_, e)| e)
            .unwrap_or_default())
    }
}

impl Drop for MetricsAdmin {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Builds view `name` from the properties.
fn build_view(props: &Properties, name: String) -> View {
    let view_prefix = format!("{PREFIX}{name}.");
    let enabled = props.get_int_or(&format!("{view_prefix}Disabled"), 0) <= 0;
    if !enabled {
        return View::new(name, enabled, Vec::new());
    }
    let maps_prefix = format!("{view_prefix}Map.");
    let by_map = !props.with_prefix(&maps_prefix).is_empty();
    let mut maps = Vec::new();
    for kind in MapKind::VIEW_MAPS {
        let prefix = if by_map {
            let p = format!("{maps_prefix}{}.", kind.name());
            if props.with_prefix(&p).is_empty() {
                continue;
            }
            p
        } else {
            view_prefix.clone()
        };
        if by_map && props.get_int_or(&format!("{prefix}Disabled"), 0) > 0 {
            continue;
        }
        let sub = (kind == MapKind::Invocation)
            .then(|| {
                let subs = format!("{prefix}Map.");
                let remote = format!("{subs}Remote.");
                if !props.with_prefix(&remote).is_empty() {
                    Some(MapConfig::read(props, &remote))
                } else if props.with_prefix(&subs).is_empty() {
                    Some(MapConfig::read(props, &prefix))
                } else {
                    None
                }
            })
            .flatten();
        let config = MapConfig::read(props, &prefix);
        maps.push(Arc::new(MetricsMap::new(kind, config, sub)));
    }
    View::new(name, enabled, maps)
}
