//! [`Observer`]: an observed object, counted in the entries of the maps
//! that accept it until it ends; and the memo of a remembered
//! invocation's `Remote` entries ([`Children`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use super::attributes::{Attributes, Token};
use super::map::{Entry, MetricsMap};
use super::Tick;

/// The `Remote` entries of the attempts of a remembered invocation on one
/// connection (set once, by the first attempt), for the entries the
/// invocation is remembered in: an attempt on the same connection
/// counts in them with no lock.
#[derive(Debug, Default)]
pub(super) struct Children {
    hits: OnceLock<(Token, Vec<MemoHit>)>,
    /// Set when an attempt found them of no use (another connection, an
    /// evicted entry): the memo then starts afresh.
    pub(super) stale: AtomicBool,
}

/// An observed object, attached to the entries of the maps that count
/// it until dropped (which adds its lifetime and detaches it).
#[derive(Debug)]
pub(crate) struct Observer {
    start: Tick,
    /// Set once the object is detached ([`Observer::end`] or drop).
    ended: AtomicBool,
    hits: Hits,
    /// The memo of the children of these hits (a remembered invocation).
    children: Option<Arc<Children>>,
}

/// An entry an object is counted in.
type Hit = Arc<Entry>;

/// A map and the entry of a remembered token there.
pub(super) type MemoHit = (Arc<MetricsMap>, Arc<Entry>);

/// The hits of an observer: two inline (no allocation with the usual
/// one or two views), more in a vector.
#[derive(Debug, Default)]
pub(super) struct Hits {
    inline: [Option<Hit>; 2],
    more: Vec<Hit>,
}

impl Hits {
    pub(super) fn push(&mut self, hit: Hit) {
        match self.inline.iter_mut().find(|s| s.is_none()) {
            Some(slot) => *slot = Some(hit),
            None => self.more.push(hit),
        }
    }

    /// Runs `f` on every hit (a loop rather than a chained iterator:
    /// this runs several times per call).
    #[inline]
    fn for_each(&self, mut f: impl FnMut(&Hit)) {
        for hit in &self.inline {
            match hit {
                Some(hit) => f(hit),
                None => return,
            }
        }
        for hit in &self.more {
            f(hit);
        }
    }

    fn is_empty(&self) -> bool {
        self.inline[0].is_none()
    }
}

impl Observer {
    /// An observer of `hits`, `None` when empty.
    pub(super) fn new(hits: Hits, children: Option<Arc<Children>>) -> Option<Observer> {
        (!hits.is_empty()).then(|| Observer {
            start: Tick::now(),
            ended: AtomicBool::new(false),
            hits,
            children,
        })
    }

    /// Runs `f` on every entry the object is counted in.
    pub(crate) fn each(&self, f: impl Fn(&Entry)) {
        self.hits.for_each(|e| f(e));
    }

    /// Counts a failure named `name` (an Ice exception type id).
    pub(crate) fn failed(&self, name: &str) {
        self.each(|e| e.fail(name));
    }

    /// Attaches a child (a remote invocation attempt) to the `Remote`
    /// sub-maps of this invocation's entries.
    pub(crate) fn child(&self, attrs: &dyn Attributes) -> Option<Observer> {
        let children = self.children.as_deref();
        if let Some(c) = children {
            if let Some((token, list)) = c.hits.get() {
                if attrs.is(token) {
                    return Observer::new(c.count(list, attrs), None);
                }
                c.stale.store(true, Ordering::Relaxed);
            }
        }
        let mut hits = Hits::default();
        let mut memo = Vec::new();
        let mut memoizable = true;
        self.hits.for_each(|e| {
            if let Some(sub) = &e.remotes {
                memoizable &= sub.memoizable();
                if let Some(entry) = sub.attach(attrs) {
                    memo.push((sub.clone(), entry.clone()));
                    hits.push(entry);
                }
            }
        });
        if let (Some(c), Some(token)) = (children, attrs.token().filter(|_| memoizable)) {
            // Already set by a concurrent attempt: that one stays.
            let _ = c.hits.set((token, memo));
        }
        Observer::new(hits, None)
    }
}

impl Children {
    /// Counts a child in the remembered entries `list`, attaching it
    /// through the sub-map of an evicted one (and marking the memo
    /// stale).
    fn count(&self, list: &[MemoHit], attrs: &dyn Attributes) -> Hits {
        let mut hits = Hits::default();
        for (sub, entry) in list {
            if entry.try_count() {
                hits.push(entry.clone());
            } else {
                self.stale.store(true, Ordering::Relaxed);
                if let Some(e) = sub.attach(attrs) {
                    hits.push(e);
                }
            }
        }
        hits
    }
}

impl Observer {
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
        self.hits.for_each(|entry| entry.detach(micros));
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        if !*self.ended.get_mut() {
            self.end();
        }
    }
}
