//! The memo of [`MetricsAdmin::observe`] against evictions.

use std::sync::atomic::Ordering;

use super::attributes::{Attributes, Token};
use super::{MapKind, MetricsAdmin};
use crate::properties::Properties;

/// An object grouped by its id, remembered by a number.
struct Obj(u64, &'static str);

impl Attributes for Obj {
    fn get(&self, name: &str) -> Option<String> {
        (name == "id").then(|| self.1.to_string())
    }

    fn token(&self) -> Option<Token> {
        Some(Token::Connection(self.0))
    }

    fn is(&self, token: &Token) -> bool {
        matches!(token, Token::Connection(c) if *c == self.0)
    }
}

fn admin() -> std::sync::Arc<MetricsAdmin> {
    let props = Properties::new();
    props.set("IceMX.Metrics.V.RetainDetached", "1");
    MetricsAdmin::from_properties(&props).unwrap()
}

/// `(key, total, current)` of the entries of `map` in view `V`.
fn counts(admin: &MetricsAdmin, map: &str) -> Vec<(String, i64, i64)> {
    let entries = admin.map_entries("V", map).unwrap();
    entries
        .iter()
        .map(|e| (e.key.clone(), e.total.load(Ordering::Relaxed), e.current()))
        .collect()
}

#[test]
fn a_remembered_entry_evicted_is_made_anew() {
    let admin = admin();
    let observe = |o: &Obj| drop(admin.observe(MapKind::Dispatch, o));
    observe(&Obj(1, "a"));
    observe(&Obj(1, "a"));
    observe(&Obj(2, "b"));
    assert_eq!(counts(&admin, "Dispatch"), [("b".to_string(), 1, 0)]);
    // `a` was evicted: its remembered entry is not counted into.
    observe(&Obj(1, "a"));
    observe(&Obj(1, "a"));
    assert_eq!(counts(&admin, "Dispatch"), [("a".to_string(), 2, 0)]);
}

#[test]
fn remembered_children_follow_connections_and_evictions() {
    let admin = admin();
    let remote = |conn: Obj| {
        let parent = admin.observe(MapKind::Invocation, &Obj(9, "op")).unwrap();
        drop(parent.child(&conn, false));
        parent
    };
    for _ in 0..3 {
        remote(Obj(1, "c1"));
    }
    remote(Obj(2, "c2"));
    let parent = remote(Obj(1, "c1"));
    let subs = |p: &super::Observer| {
        let all = std::cell::RefCell::new(Vec::new());
        p.each(|e| {
            for (k, s) in e.remotes.as_ref().unwrap().entries() {
                all.borrow_mut().push((k, s.total.load(Ordering::Relaxed)));
            }
        });
        all.into_inner()
    };
    // RetainDetached=1: c2 evicted c1, which was made anew.
    assert_eq!(subs(&parent), [("c1".to_string(), 1)]);
    drop(parent);
    for _ in 0..2 {
        remote(Obj(1, "c1"));
    }
    let parent = remote(Obj(1, "c1"));
    assert_eq!(subs(&parent), [("c1".to_string(), 4)]);
    drop(parent);
    assert_eq!(counts(&admin, "Invocation"), [("op".to_string(), 8, 0)]);
}

#[test]
fn an_entry_evicted_in_one_view_is_made_anew_there_only() {
    let props = Properties::new();
    props.set("IceMX.Metrics.V.RetainDetached", "1");
    props.set("IceMX.Metrics.W.RetainDetached", "10");
    let admin = MetricsAdmin::from_properties(&props).unwrap();
    let observe = |o: &Obj| {
        let obs = admin.observe(MapKind::Dispatch, o).unwrap();
        let n = std::cell::Cell::new(0);
        obs.each(|_| n.set(n.get() + 1));
        assert_eq!(n.get(), 2, "counted in both views");
    };
    let totals = |view: &str| -> Vec<(String, i64)> {
        let entries = admin.map_entries(view, "Dispatch").unwrap();
        let mut t: Vec<_> = entries
            .iter()
            .map(|e| (e.key.clone(), e.total.load(Ordering::Relaxed)))
            .collect();
        t.sort();
        t
    };
    observe(&Obj(1, "a"));
    observe(&Obj(1, "a"));
    observe(&Obj(2, "b"));
    // V evicted `a`; the remembered `a` is counted in W's entry and in a
    // new entry of V's.
    observe(&Obj(1, "a"));
    observe(&Obj(1, "a"));
    assert_eq!(totals("V"), [("a".to_string(), 2)]);
    assert_eq!(totals("W"), [("a".to_string(), 4), ("b".to_string(), 1)]);
}
