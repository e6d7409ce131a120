//! One metrics map of a view: its settings (`GroupBy`, `Accept.*`,
//! `Reject.*`, `RetainDetached`) and its entries, one per group key.
//!
//! An observed object (a connection, an invocation, ...) is matched
//! against the accept and reject rules, then grouped: its key is the
//! values of the `GroupBy` attributes joined by the separators written
//! between them (`parent-id` joins `parent` and `id` with `-`). An object
//! whose attributes cannot be resolved, or that a rule turns away, is not
//! counted in this map.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use super::attributes::{Attributes, Token};
pub(crate) use super::config::MapConfig;
use super::MapKind;

/// Tokens (see [`Token`]) a map remembers the entry of.
pub(crate) const MEMO_SLOTS: usize = 8;

/// The measurements of one group. Counters are atomics so that the bytes
/// of a connection are added without a lock; the failures are rare.
#[derive(Debug, Default)]
pub(crate) struct Entry {
    /// The group key (the metrics id).
    pub(crate) key: String,
    pub(crate) total: AtomicI64,
    /// The current objects, with [`LAST`] set while the entry is the most
    /// recently detached one of its map (read through [`Entry::current`]).
    current: AtomicI64,
    /// Microseconds, summed as objects detach.
    pub(crate) total_lifetime: AtomicI64,
    pub(crate) failures: AtomicI64,
    /// `ConnectionMetrics::receivedBytes`.
    pub(crate) received: AtomicI64,
    /// `ConnectionMetrics::sentBytes`.
    pub(crate) sent: AtomicI64,
    /// `size` of dispatch and remote metrics.
    pub(crate) size: AtomicI64,
    /// `replySize` of dispatch and remote metrics.
    pub(crate) reply_size: AtomicI64,
    /// `userException` of dispatch and invocation metrics.
    pub(crate) user_exception: AtomicI64,
    /// `InvocationMetrics::retry`.
    pub(crate) retry: AtomicI64,
    /// Failures by Ice exception type id.
    pub(crate) failed: Mutex<BTreeMap<String, i32>>,
    /// An invocation entry's `Remote` sub-map.
    pub(crate) remotes: Option<Arc<MetricsMap>>,
    /// Whether the entry is in its map's detached queue (changed under
    /// the map's lock).
    queued: AtomicBool,
    /// The map of the entry, which detaching its last current object
    /// locks (an observer holds no reference to the map).
    map: Weak<MetricsMap>,
}

/// The flag of [`Entry::current`] telling that the entry is the last of
/// its map's detached queue (the most recently detached): detaching it
/// again leaves the queue as it is, so it takes no lock. Set and cleared
/// under the map's lock; an atomic exchange of the counter that sees it
/// set is ordered before whatever next changes the queue.
const LAST: i64 = 1 << 62;

/// The flag of [`Entry::current`] telling that the entry left its map:
/// set under the map's lock, and only from no current object, so that
/// [`Entry::try_count`] (without the lock) never counts into an entry
/// no longer listed.
const EVICTED: i64 = 1 << 61;

impl Entry {
    /// The objects counted in the entry and not yet detached.
    pub(crate) fn current(&self) -> i64 {
        self.current.load(Ordering::Relaxed) & !(LAST | EVICTED)
    }

    /// Counts one more object of the entry, without its map's lock,
    /// unless the entry left its map (`false`: attach through the map).
    #[inline]
    pub(crate) fn try_count(&self) -> bool {
        // Counted first, undone if the entry left: `EVICTED` is only set
        // from no current object, and an evicted entry is no longer
        // listed, so the passing count is never seen.
        if self.current.fetch_add(1, Ordering::AcqRel) & EVICTED != 0 {
            self.current.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        self.total.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Marks the entry as out of its map if it has no current object
    /// (under the map's lock); `false` when an object was attached to it
    /// meanwhile.
    fn evict(&self) -> bool {
        let mut c = self.current.load(Ordering::Relaxed);
        while c & !LAST == 0 {
            match self.current.compare_exchange_weak(
                c,
                c | EVICTED,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(v) => c = v,
            }
        }
        false
    }

    /// Counts a failure named `name` (an Ice exception type id).
    pub(crate) fn fail(&self, name: &str) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        *lock(&self.failed).entry(name.to_string()).or_insert(0) += 1;
    }

    /// Detaches an object of the entry (from [`MetricsMap::attach`]) that
    /// lived `micros`. An entry left with no current object is kept among
    /// the `RetainDetached` most recently detached entries (as in Ice, an
    /// entry counts once there however often it detaches): when there is
    /// no room, entries that are current again leave the queue, then the
    /// least recently detached one leaves the map.
    #[inline]
    pub(crate) fn detach(self: &Arc<Self>, micros: i64) {
        self.total_lifetime.fetch_add(micros, Ordering::Relaxed);
        // Without the lock: an entry left with current objects, or the
        // most recently detached one.
        let mut c = self.current.load(Ordering::Relaxed);
        while c & !LAST != 1 || c & LAST != 0 {
            match self
                .current
                .compare_exchange_weak(c, c - 1, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(v) => c = v,
            }
        }
        self.detach_last();
    }

    /// [`Entry::detach`] of the entry's last current object.
    #[cold]
    #[inline(never)]
    fn detach_last(self: &Arc<Self>) {
        match self.map.upgrade() {
            Some(map) => map.detach_last(self),
            // The map left its view: no queue to keep.
            None => {
                self.current.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }

    /// The map of the entry, while it is in its view.
    pub(crate) fn map(&self) -> Option<Arc<MetricsMap>> {
        self.map.upgrade()
    }

    /// Adds `n` to `counter`.
    pub(crate) fn add(counter: &AtomicI64, n: usize) {
        counter.fetch_add(i64::try_from(n).unwrap_or(i64::MAX), Ordering::Relaxed);
    }
}

/// The entries of a map, by key (sorted, as Ice lists them).
#[derive(Debug, Default)]
struct MapState {
    entries: BTreeMap<String, Arc<Entry>>,
    /// The `RetainDetached` most recently detached entries, each once,
    /// least recent first (an entry there may have been attached again
    /// since: it leaves when room is needed).
    detached: VecDeque<Arc<Entry>>,
    /// The entries of recently attached tokens (all in `entries`), so
    /// that attaching the same object again computes no key.
    memo: Vec<(Token, Arc<Entry>)>,
    /// The slot the next new token takes once `memo` is full.
    memo_next: usize,
}

/// One map of a view.
#[derive(Debug)]
pub(crate) struct MetricsMap {
    pub(crate) kind: MapKind,
    config: MapConfig,
    /// The settings of the `Remote` sub-map of each entry (invocation maps
    /// only; `None` when not configured).
    sub: Option<Arc<MapConfig>>,
    state: Mutex<MapState>,
}

impl MetricsMap {
    /// A map of `kind` with `config`, and `sub` for its entries' sub-maps.
    pub(crate) fn new(kind: MapKind, config: MapConfig, sub: Option<MapConfig>) -> Self {
        MetricsMap {
            kind,
            config,
            sub: sub.map(Arc::new),
            state: Mutex::default(),
        }
    }

    /// Whether the key or the rules read attribute `name`.
    pub(crate) fn reads(&self, name: &str) -> bool {
        self.config.uses(name)
    }

    /// Whether the group of an object is a function of its token (no
    /// volatile attribute in the key or the rules).
    pub(crate) fn memoizable(&self) -> bool {
        !self.config.volatile
    }

    /// Attaches an object: finds (or makes) the entry of its group and
    /// counts it as current. `None` when the object is not counted here.
    pub(crate) fn attach(self: &Arc<Self>, attrs: &dyn Attributes) -> Option<Arc<Entry>> {
        if !self.config.volatile {
            let st = lock(&self.state);
            if let Some((_, e)) = st.memo.iter().find(|(t, _)| attrs.is(t)) {
                return Some(count(e));
            }
        }
        self.attach_new(attrs)
    }

    /// [`MetricsMap::attach`] of an object whose entry is not remembered:
    /// computes its key.
    #[inline(never)]
    fn attach_new(self: &Arc<Self>, attrs: &dyn Attributes) -> Option<Arc<Entry>> {
        let memo = !self.config.volatile;
        let key = self.config.key(attrs)?;
        let mut st = lock(&self.state);
        let entry = match st.entries.get(&key) {
            Some(e) => e.clone(),
            None => {
                let e = Arc::new(Entry {
                    key: key.clone(),
                    remotes: self.sub.as_ref().map(|c| {
                        Arc::new(MetricsMap::new(MapKind::Remote, MapConfig::clone(c), None))
                    }),
                    map: Arc::downgrade(self),
                    ..Entry::default()
                });
                st.entries.insert(key, e.clone());
                e
            }
        };
        if let Some(token) = attrs.token().filter(|_| memo) {
            if st.memo.len() < MEMO_SLOTS {
                st.memo.push((token, entry.clone()));
            } else {
                let slot = st.memo_next % MEMO_SLOTS;
                st.memo[slot] = (token, entry.clone());
                st.memo_next = slot + 1;
            }
        }
        Some(count(&entry))
    }

    /// [`Entry::detach`] of the last current object of `entry`, under
    /// the lock: the entry becomes the most recently detached.
    #[inline(never)]
    fn detach_last(&self, entry: &Arc<Entry>) {
        let mut st = lock(&self.state);
        let retain = self.config.retain;
        if entry.current.fetch_sub(1, Ordering::AcqRel) & !LAST != 1 {
            return;
        }
        if let Some(last) = st.detached.back() {
            last.current.fetch_and(!LAST, Ordering::AcqRel);
        }
        if entry.queued.swap(true, Ordering::Relaxed) {
            if let Some(at) = st.detached.iter().position(|e| Arc::ptr_eq(e, entry)) {
                st.detached.remove(at);
            }
        }
        st.detached.push_back(entry.clone());
        if st.detached.len() > retain {
            st.detached.retain(|e| {
                let idle = e.current() == 0;
                if !idle {
                    e.queued.store(false, Ordering::Relaxed);
                }
                idle
            });
        }
        while st.detached.len() > retain {
            let Some(old) = st.detached.pop_front() else {
                break;
            };
            old.queued.store(false, Ordering::Relaxed);
            // Attached again without the lock since: current, it stays
            // (out of the queue, as Ice leaves a current entry).
            if old.evict() {
                st.remove(&old);
            }
        }
        if let Some(last) = st.detached.back() {
            last.current.fetch_or(LAST, Ordering::AcqRel);
        }
    }

    /// The entries, by key.
    pub(crate) fn entries(&self) -> Vec<(String, Arc<Entry>)> {
        lock(&self.state)
            .entries
            .iter()
            .map(|(k, e)| (k.clone(), e.clone()))
            .collect()
    }
}

/// Counts one more object of `entry`.
fn count(entry: &Arc<Entry>) -> Arc<Entry> {
    entry.total.fetch_add(1, Ordering::Relaxed);
    entry.current.fetch_add(1, Ordering::Relaxed);
    entry.clone()
}

impl MapState {
    /// Removes `entry` (evicted, out of the queue) and what remembers it.
    fn remove(&mut self, entry: &Arc<Entry>) {
        if self
            .entries
            .get(&entry.key)
            .is_some_and(|e| Arc::ptr_eq(e, entry))
        {
            self.entries.remove(&entry.key);
        }
        self.memo.retain(|(_, e)| !Arc::ptr_eq(e, entry));
    }
}

/// Locks `m`; the state stays consistent across a panic (inserts and
/// removes only).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::Properties;

    /// An object grouped by its id.
    struct Id(&'static str);

    impl Attributes for Id {
        fn get(&self, name: &str) -> Option<String> {
            (name == "id").then(|| self.0.to_string())
        }
    }

    fn keys(map: &MetricsMap) -> Vec<String> {
        map.entries().into_iter().map(|(k, _)| k).collect()
    }

    fn map(retain: &str) -> Arc<MetricsMap> {
        let props = Properties::new();
        props.set("M.RetainDetached", retain);
        Arc::new(MetricsMap::new(
            MapKind::Dispatch,
            MapConfig::read(&props, "M."),
            None,
        ))
    }

    #[test]
    fn an_entry_that_detaches_often_counts_once_among_the_retained() {
        let map = map("2");
        let once = map.attach(&Id("once")).unwrap();
        once.detach(1);
        for _ in 0..50 {
            let often = map.attach(&Id("often")).unwrap();
            often.detach(1);
        }
        assert_eq!(keys(&map), ["often", "once"]);
        assert_eq!(once.total.load(Ordering::Relaxed), 1);
        // A third detached entry pushes out the least recently detached.
        let third = map.attach(&Id("third")).unwrap();
        third.detach(1);
        assert_eq!(keys(&map), ["often", "third"]);
        // Detaching `often` again makes it the most recent: `third` goes.
        map.attach(&Id("often")).unwrap().detach(1);
        map.attach(&Id("fourth")).unwrap().detach(1);
        assert_eq!(keys(&map), ["fourth", "often"]);
    }

    #[test]
    fn current_entries_stay_and_retain_zero_keeps_none() {
        let map = map("1");
        let busy = map.attach(&Id("busy")).unwrap();
        map.attach(&Id("busy")).unwrap().detach(1);
        let a = map.attach(&Id("a")).unwrap();
        a.detach(1);
        assert_eq!(keys(&map), ["a", "busy"]);
        assert_eq!(busy.current(), 1);
        busy.detach(1);
        assert_eq!(keys(&map), ["busy"]);
        // The most recently detached entry, attached and detached again
        // without the lock, keeps its place and its counts.
        for _ in 0..3 {
            map.attach(&Id("busy")).unwrap().detach(1);
        }
        assert_eq!(busy.total.load(Ordering::Relaxed), 5);
        assert_eq!(busy.current(), 0);
        let none = self::map("0");
        let gone = none.attach(&Id("gone")).unwrap();
        gone.detach(1);
        assert!(keys(&none).is_empty());
        // An evicted entry is not counted into without its map.
        assert!(!gone.try_count());
        assert!(busy.try_count());
        assert_eq!(busy.current(), 1);
    }
}
