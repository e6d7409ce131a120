//! [`Observer`]: an observed object, counted in the entries of the maps
//! that accept it until it ends; and [`Group`], the entries it is counted
//! in, which a remembered token's observers share.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use super::attributes::{Attributes, Token};
use super::map::Entry;
use super::Tick;

/// The entries an object is counted in, one per map that counts it. The
/// group of a remembered token is shared by the memo and the observers
/// of that token: observing the object again counts it in these entries
/// with no map's lock and no reference count per entry.
#[derive(Debug, Default)]
pub(crate) struct Group {
    entries: Entries,
    /// Whether the memo holds the group (only then are its children
    /// remembered).
    remembered: bool,
    /// The `Remote` group of the attempts of a remembered invocation on
    /// one connection (set once, by the first attempt): an attempt on the
    /// same connection counts in it with no lock.
    children: OnceLock<(Token, Arc<Group>)>,
    /// Set when an attempt found `children` of no use (another
    /// connection, an evicted entry): the memo then starts afresh.
    stale: AtomicBool,
}

impl Group {
    /// The group of `entries`; `remembered` when the memo holds it.
    pub(super) fn new(entries: Vec<Arc<Entry>>, remembered: bool) -> Group {
        Group {
            entries: Entries::from(entries),
            remembered,
            ..Group::default()
        }
    }

    /// Whether the group's children were found of no use.
    pub(super) fn is_stale(&self) -> bool {
        self.stale.load(Ordering::Relaxed)
    }

    /// The entries, for a fresh group of the same token.
    pub(super) fn entries(&self) -> Vec<Arc<Entry>> {
        self.entries.iter().cloned().collect()
    }

    /// Counts one more object in every entry. An entry that left its map
    /// (evicted) is replaced by attaching `attrs` through that map: the
    /// entries are then returned, for a new group; `None` when every
    /// entry counted it.
    #[inline]
    pub(super) fn count<A: Attributes>(&self, attrs: &A) -> Option<Vec<Arc<Entry>>> {
        let failed = self.entries.until(|e| e.try_count())?;
        Some(self.recount(failed, attrs))
    }

    /// [`Group::count`] from entry `from`, which left its map.
    #[cold]
    #[inline(never)]
    fn recount(&self, from: usize, attrs: &dyn Attributes) -> Vec<Arc<Entry>> {
        let mut entries: Vec<_> = self.entries.iter().take(from).cloned().collect();
        for (i, entry) in self.entries.iter().enumerate().skip(from) {
            if i > from && entry.try_count() {
                entries.push(entry.clone());
                continue;
            }
            // A map that left its view (then the memo is cleared) or
            // turns the object away no longer counts it.
            if let Some(e) = entry.map().and_then(|m| m.attach(attrs)) {
                entries.push(e);
            }
        }
        entries
    }
}

/// The entries of a group: two inline, more in a vector. The usual one
/// or two views are walked with no loop to set up: each observation
/// walks them several times.
#[derive(Debug, Default)]
struct Entries {
    inline: [Option<Arc<Entry>>; 2],
    more: Vec<Arc<Entry>>,
}

impl From<Vec<Arc<Entry>>> for Entries {
    fn from(list: Vec<Arc<Entry>>) -> Entries {
        let mut entries = Entries::default();
        for (i, e) in list.into_iter().enumerate() {
            match entries.inline.get_mut(i) {
                Some(slot) => *slot = Some(e),
                None => entries.more.push(e),
            }
        }
        entries
    }
}

impl Entries {
    /// Runs `f` on every entry.
    #[inline]
    fn for_each(&self, mut f: impl FnMut(&Arc<Entry>)) {
        for e in &self.inline {
            match e {
                Some(e) => f(e),
                None => return,
            }
        }
        for e in &self.more {
            f(e);
        }
    }

    /// Runs `f` on the entries until it answers `false`: the index of
    /// that entry, `None` when it answered `true` for all.
    #[inline]
    fn until(&self, mut f: impl FnMut(&Arc<Entry>) -> bool) -> Option<usize> {
        for (i, e) in self.inline.iter().enumerate() {
            match e {
                Some(e) if !f(e) => return Some(i),
                Some(_) => {}
                None => return None,
            }
        }
        let inline = self.inline.len();
        self.more.iter().position(|e| !f(e)).map(|i| i + inline)
    }

    fn iter(&self) -> impl Iterator<Item = &Arc<Entry>> {
        self.inline
            .iter()
            .map_while(Option::as_ref)
            .chain(self.more.iter())
    }

    fn is_empty(&self) -> bool {
        self.inline[0].is_none()
    }
}

/// An observed object, attached to the entries of the maps that count
/// it until dropped (which adds its lifetime and detaches it).
#[derive(Debug)]
pub(crate) struct Observer {
    start: Tick,
    /// Set once the object is detached ([`Observer::end`] or drop).
    ended: AtomicBool,
    group: Arc<Group>,
}

impl Observer {
    /// An observer of the entries of `group` (counted already), `None`
    /// when there are none.
    pub(super) fn new(group: Arc<Group>) -> Option<Observer> {
        Observer::new_at(group, None)
    }

    /// [`Observer::new`] of an object that started at `start` (`None`:
    /// now).
    fn new_at(group: Arc<Group>, start: Option<Tick>) -> Option<Observer> {
        (!group.entries.is_empty()).then(|| Observer {
            start: start.unwrap_or_else(Tick::now),
            ended: AtomicBool::new(false),
            group,
        })
    }

    /// Runs `f` on every entry the object is counted in.
    #[inline]
    pub(crate) fn each(&self, f: impl Fn(&Entry)) {
        self.group.entries.for_each(|e| f(e));
    }

    /// Counts a failure named `name` (an Ice exception type id).
    pub(crate) fn failed(&self, name: &str) {
        self.each(|e| e.fail(name));
    }

    /// Attaches a child (a remote invocation attempt) to the `Remote`
    /// sub-maps of this invocation's entries. `with_parent`: the child
    /// started as this object did, in the same poll with nothing awaited
    /// between (so its lifetime starts at the same clock reading).
    pub(crate) fn child<A: Attributes>(&self, attrs: &A, with_parent: bool) -> Option<Observer> {
        let start = with_parent.then_some(self.start);
        let parent = &*self.group;
        if let Some((token, group)) = parent.children.get() {
            if attrs.is(token) {
                return match group.count(attrs) {
                    None => Observer::new_at(group.clone(), start),
                    Some(entries) => {
                        parent.stale.store(true, Ordering::Relaxed);
                        Observer::new_at(Arc::new(Group::new(entries, false)), start)
                    }
                };
            }
            parent.stale.store(true, Ordering::Relaxed);
        }
        self.child_new(attrs, start)
    }

    /// [`Observer::child`] through the sub-maps.
    #[inline(never)]
    fn child_new(&self, attrs: &dyn Attributes, start: Option<Tick>) -> Option<Observer> {
        let parent = &*self.group;
        let mut entries = Vec::new();
        let mut memoizable = true;
        for e in parent.entries.iter() {
            if let Some(sub) = &e.remotes {
                memoizable &= sub.memoizable();
                if let Some(entry) = sub.attach(attrs) {
                    entries.push(entry);
                }
            }
        }
        let token = attrs
            .token()
            .filter(|_| memoizable && parent.remembered && parent.children.get().is_none());
        let group = Arc::new(Group::new(entries, token.is_some()));
        if let Some(token) = token {
            // Already set by a concurrent attempt: that one stays.
            let _ = parent.children.set((token, group.clone()));
        }
        Observer::new_at(group, start)
    }

    /// Detaches the object now (once; dropping the observer does it
    /// otherwise): its lifetime is added, its entries are no longer
    /// current. Returns the clock reading it ended at, which an
    /// enclosing observation ending right after may share
    /// ([`Observer::end_at`]).
    pub(crate) fn end(&self) -> Tick {
        let now = Tick::now();
        self.end_at(now);
        now
    }

    /// Detaches the object as of `now` (once; see [`Observer::end`]).
    pub(crate) fn end_at(&self, now: Tick) {
        if self.ended.swap(true, Ordering::Relaxed) {
            return;
        }
        let micros = now.micros_since(self.start);
        self.group.entries.for_each(|entry| entry.detach(micros));
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        if !*self.ended.get_mut() {
            self.end();
        }
    }
}
