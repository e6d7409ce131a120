//! floe twins of the classes and exceptions in `gen/Golden.ice`, written by
//! hand as generated code writes them, with a printer that shows a class
//! graph (shared instances and cycles by number) so graphs compare by value.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::sync::Arc;

use floe_wire::class::{upcast_ref, ClassRef, Extends, Value, ValueFactoryRegistry, ValueType};
use floe_wire::exception::{UserException, UserExceptionRegistry, UserExceptionType};
use floe_wire::{Decoder, Encoder, Result, ValuePtr};

/// Implements [`ValueType`] and the type-id half of [`Value`] for a class.
macro_rules! class_ids {
    ($t:ident, [$($id:literal),+]) => {
        impl ValueType for $t {
            const TYPE_ID: &'static str = class_ids!(@first $($id),+);
        }
        impl $t {
            const IDS: &'static [&'static str] = &[$($id),+];
        }
    };
    (@first $first:literal $(, $rest:literal)*) => { $first };
}

/// `class Base { int a; }`
#[derive(Debug, Default)]
pub struct Base {
    pub a: i32,
}
class_ids!(Base, ["::Golden::Base"]);
impl Value for Base {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        Self::IDS
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, true);
        enc.write_i32(self.a);
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.a = dec.read_i32()?;
        dec.end_slice()
    }
}

/// `class Derived extends Base { string s; }`
#[derive(Debug, Default)]
pub struct Derived {
    pub base: Base,
    pub s: String,
}
class_ids!(Derived, ["::Golden::Derived", "::Golden::Base"]);
impl Value for Derived {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        Self::IDS
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, false);
        enc.write_string(&self.s);
        enc.end_slice();
        self.base.write_slices(enc);
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.s = dec.read_string()?;
        dec.end_slice()?;
        self.base.read_slices(dec)
    }
    fn ice_base(&self) -> Option<&dyn Value> {
        Some(&self.base)
    }
    fn ice_base_mut(&mut self) -> Option<&mut dyn Value> {
        Some(&mut self.base)
    }
}

impl Extends<Base> for Derived {}

/// `class Deeper extends Derived { long l; Base extra; }`: registered only
/// where a reader is meant to know it (see [`class_registry`]).
#[derive(Debug, Default)]
pub struct Deeper {
    pub base: Derived,
    pub l: i64,
    pub extra: Option<ClassRef<Base>>,
}
class_ids!(
    Deeper,
    ["::Golden::Deeper", "::Golden::Derived", "::Golden::Base"]
);
impl Value for Deeper {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        Self::IDS
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, false);
        enc.write_i64(self.l);
        enc.write(&self.extra);
        enc.end_slice();
        self.base.write_slices(enc);
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.l = dec.read_i64()?;
        self.extra = dec.read()?;
        dec.end_slice()?;
        self.base.read_slices(dec)
    }
    fn ice_base(&self) -> Option<&dyn Value> {
        Some(&self.base)
    }
    fn ice_base_mut(&mut self) -> Option<&mut dyn Value> {
        Some(&mut self.base)
    }
}

/// `class Node { int v; Node next; }`
#[derive(Debug, Default)]
pub struct Node {
    pub v: i32,
    pub next: Option<ClassRef<Node>>,
}
class_ids!(Node, ["::Golden::Node"]);
impl Value for Node {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        Self::IDS
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, true);
        enc.write_i32(self.v);
        enc.write(&self.next);
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.v = dec.read_i32()?;
        self.next = dec.read()?;
        dec.end_slice()
    }
}

/// `class Pair { Base x; Base y; }`
#[derive(Debug, Default)]
pub struct Pair {
    pub x: Option<ClassRef<Base>>,
    pub y: Option<ClassRef<Base>>,
}
class_ids!(Pair, ["::Golden::Pair"]);
impl Value for Pair {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        Self::IDS
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, true);
        enc.write(&self.x);
        enc.write(&self.y);
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.x = dec.read()?;
        self.y = dec.read()?;
        dec.end_slice()
    }
}

/// `class Bag { BaseSeq seq; IntBaseDict dict; }`
#[derive(Debug, Default)]
pub struct Bag {
    pub seq: Vec<Option<ClassRef<Base>>>,
    pub dict: BTreeMap<i32, Option<ClassRef<Base>>>,
}
class_ids!(Bag, ["::Golden::Bag"]);
impl Value for Bag {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        Self::IDS
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, true);
        enc.write(&self.seq);
        enc.write(&self.dict);
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.seq = dec.read()?;
        self.dict = dec.read()?;
        dec.end_slice()
    }
}

/// `class Tagged(7) { int a; optional(1) int o; }`
#[derive(Debug, Default)]
pub struct Tagged {
    pub a: i32,
    pub o: Option<i32>,
}
impl ValueType for Tagged {
    const TYPE_ID: &'static str = "::Golden::Tagged";
    const COMPACT_ID: Option<u32> = Some(7);
}
impl Value for Tagged {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Golden::Tagged"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, Self::COMPACT_ID, true);
        enc.write_i32(self.a);
        enc.write_optional(1, self.o.as_ref());
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.a = dec.read_i32()?;
        self.o = dec.read_optional_value(1)?;
        dec.end_slice()
    }
}

/// `exception BaseErr { string reason; }`
#[derive(Debug, Default)]
pub struct BaseErr {
    pub reason: String,
}
impl UserExceptionType for BaseErr {
    const TYPE_ID: &'static str = "::Golden::BaseErr";
}
impl UserException for BaseErr {
    fn ice_id(&self) -> &'static str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Golden::BaseErr"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, true);
        enc.write_string(&self.reason);
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.reason = dec.read_string()?;
        dec.end_slice()
    }
}

/// `exception DerivedErr extends BaseErr { int code; optional(2) int o; }`
#[derive(Debug, Default)]
pub struct DerivedErr {
    pub base: BaseErr,
    pub code: i32,
    pub o: Option<i32>,
}
impl UserExceptionType for DerivedErr {
    const TYPE_ID: &'static str = "::Golden::DerivedErr";
}
impl UserException for DerivedErr {
    fn ice_id(&self) -> &'static str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Golden::DerivedErr", "::Golden::BaseErr"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, false);
        enc.write_i32(self.code);
        enc.write_optional(2, self.o.as_ref());
        enc.end_slice();
        self.base.write_slices(enc);
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.code = dec.read_i32()?;
        self.o = dec.read_optional_value(2)?;
        dec.end_slice()?;
        self.base.read_slices(dec)
    }
    fn ice_base(&self) -> Option<&dyn UserException> {
        Some(&self.base)
    }
}

/// `exception DeeperErr extends DerivedErr { string more; }`
#[derive(Debug, Default)]
pub struct DeeperErr {
    pub base: DerivedErr,
    pub more: String,
}
impl UserExceptionType for DeeperErr {
    const TYPE_ID: &'static str = "::Golden::DeeperErr";
}
impl UserException for DeeperErr {
    fn ice_id(&self) -> &'static str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &[
            "::Golden::DeeperErr",
            "::Golden::DerivedErr",
            "::Golden::BaseErr",
        ]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, false);
        enc.write_string(&self.more);
        enc.end_slice();
        self.base.write_slices(enc);
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.more = dec.read_string()?;
        dec.end_slice()?;
        self.base.read_slices(dec)
    }
    fn ice_base(&self) -> Option<&dyn UserException> {
        Some(&self.base)
    }
}

/// `exception NodeErr { Node n; }`: uses classes.
#[derive(Debug, Default)]
pub struct NodeErr {
    pub n: Option<ClassRef<Node>>,
}
impl UserExceptionType for NodeErr {
    const TYPE_ID: &'static str = "::Golden::NodeErr";
}
impl UserException for NodeErr {
    fn ice_id(&self) -> &'static str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Golden::NodeErr"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, true);
        enc.write(&self.n);
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.n = dec.read()?;
        dec.end_slice()
    }
    fn ice_uses_classes(&self) -> bool {
        true
    }
}

/// `exception DerivedNodeErr extends NodeErr { Pair p; }`
#[derive(Debug, Default)]
pub struct DerivedNodeErr {
    pub base: NodeErr,
    pub p: Option<ClassRef<Pair>>,
}
impl UserExceptionType for DerivedNodeErr {
    const TYPE_ID: &'static str = "::Golden::DerivedNodeErr";
}
impl UserException for DerivedNodeErr {
    fn ice_id(&self) -> &'static str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Golden::DerivedNodeErr", "::Golden::NodeErr"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, false);
        enc.write(&self.p);
        enc.end_slice();
        self.base.write_slices(enc);
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.p = dec.read()?;
        dec.end_slice()?;
        self.base.read_slices(dec)
    }
    fn ice_base(&self) -> Option<&dyn UserException> {
        Some(&self.base)
    }
    fn ice_uses_classes(&self) -> bool {
        true
    }
}

/// Factories for every class twin; `Deeper` only if `with_deeper`.
pub fn class_registry(with_deeper: bool) -> Arc<ValueFactoryRegistry> {
    let mut r = ValueFactoryRegistry::new();
    r.register::<Base>()
        .register::<Derived>()
        .register::<Node>()
        .register::<Pair>()
        .register::<Bag>()
        .register::<Tagged>();
    if with_deeper {
        r.register::<Deeper>();
    }
    Arc::new(r)
}

/// Factories for every exception twin; `DeeperErr` only if `with_deeper`.
pub fn exception_registry(with_deeper: bool) -> UserExceptionRegistry {
    let mut r = UserExceptionRegistry::new();
    r.register::<BaseErr>()
        .register::<DerivedErr>()
        .register::<NodeErr>()
        .register::<DerivedNodeErr>();
    if with_deeper {
        r.register::<DeeperErr>();
    }
    r
}

/// Class graphs (roots in order) that compare by what they hold: equal
/// when they print the same with [`describe`].
pub struct Graph(pub Vec<Option<ValuePtr>>);

impl PartialEq for Graph {
    fn eq(&self, other: &Self) -> bool {
        describe(&self.0) == describe(&other.0)
    }
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&describe(&self.0))
    }
}

/// Prints a graph: an instance as `#n Type{...}` where it first appears,
/// `#n` afterwards, so sharing and cycles show.
pub fn describe(roots: &[Option<ValuePtr>]) -> String {
    let mut seen = Vec::new();
    let mut out = String::new();
    for root in roots {
        show(root.as_ref(), &mut seen, &mut out);
        out.push_str("; ");
    }
    out
}

fn show_ref<T: ValueType>(r: &Option<ClassRef<T>>, seen: &mut Vec<ValuePtr>, out: &mut String) {
    show(r.as_ref().map(ClassRef::as_ptr), seen, out)
}

fn show(p: Option<&ValuePtr>, seen: &mut Vec<ValuePtr>, out: &mut String) {
    let Some(p) = p else {
        out.push_str("null");
        return;
    };
    if let Some(i) = seen.iter().position(|q| ValuePtr::ptr_eq(q, p)) {
        let _ = write!(out, "#{}", i + 1);
        return;
    }
    seen.push(p.clone());
    let n = seen.len();
    let _ = write!(out, "#{n} ");
    let guard = p.read();
    let v: &dyn Value = &**guard;
    if let Some(d) = upcast_ref::<Deeper>(v) {
        let _ = write!(
            out,
            "Deeper{{a:{} s:{:?} l:{} extra:",
            d.base.base.a, d.base.s, d.l
        );
        let extra = d.extra.clone();
        drop(guard);
        show_ref(&extra, seen, out);
        out.push('}');
    } else if let Some(d) = upcast_ref::<Derived>(v) {
        let _ = write!(out, "Derived{{a:{} s:{:?}}}", d.base.a, d.s);
    } else if let Some(b) = upcast_ref::<Base>(v) {
        let _ = write!(out, "Base{{a:{}}}", b.a);
    } else if let Some(t) = upcast_ref::<Tagged>(v) {
        let _ = write!(out, "Tagged{{a:{} o:{:?}}}", t.a, t.o);
    } else if let Some(node) = upcast_ref::<Node>(v) {
        let _ = write!(out, "Node{{v:{} next:", node.v);
        let next = node.next.clone();
        drop(guard);
        show_ref(&next, seen, out);
        out.push('}');
    } else if let Some(pair) = upcast_ref::<Pair>(v) {
        let (x, y) = (pair.x.clone(), pair.y.clone());
        drop(guard);
        out.push_str("Pair{x:");
        show_ref(&x, seen, out);
        out.push_str(" y:");
        show_ref(&y, seen, out);
        out.push('}');
    } else if let Some(bag) = upcast_ref::<Bag>(v) {
        let (seq, dict) = (bag.seq.clone(), bag.dict.clone());
        drop(guard);
        out.push_str("Bag{seq:[");
        for e in &seq {
            show_ref(e, seen, out);
            out.push(',');
        }
        out.push_str("] dict:{");
        for (k, e) in &dict {
            let _ = write!(out, "{k}:");
            show_ref(e, seen, out);
            out.push(',');
        }
        out.push_str("}}");
    } else {
        let _ = write!(out, "?{}", v.ice_id());
    }
}

/// A user exception that compares by what it holds (class members shown
/// with [`describe`]).
pub struct Ex(pub Box<dyn UserException>);

impl PartialEq for Ex {
    fn eq(&self, other: &Self) -> bool {
        format!("{self:?}") == format!("{other:?}")
    }
}

impl fmt::Debug for Ex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ex = &*self.0;
        let mut seen = Vec::new();
        let mut out = format!("{} ", ex.ice_id());
        if let Some(d) = ex.downcast_ref::<DeeperErr>() {
            let _ = write!(out, "more:{:?} ", d.more);
        }
        if let Some(d) = ex.downcast_ref::<DerivedErr>() {
            let _ = write!(out, "code:{} o:{:?} ", d.code, d.o);
        }
        if let Some(b) = ex.downcast_ref::<BaseErr>() {
            let _ = write!(out, "reason:{:?}", b.reason);
        }
        if let Some(d) = ex.downcast_ref::<DerivedNodeErr>() {
            out.push_str("p:");
            show_ref(&d.p, &mut seen, &mut out);
            out.push(' ');
        }
        if let Some(n) = ex.downcast_ref::<NodeErr>() {
            out.push_str("n:");
            show_ref(&n.n, &mut seen, &mut out);
        }
        f.write_str(&out)
    }
}
