//! Hand-written equivalents of what generated code will emit for the classes
//! and exceptions of the `Cap` module of docs/protocol.md, plus helpers.
#![allow(dead_code)]

use std::sync::Arc;

use bytes::Bytes;
use floe_wire::class::{ClassRef, SlicedData, Value, ValueFactoryRegistry, ValueType};
use floe_wire::exception::{UserException, UserExceptionRegistry, UserExceptionType};
use floe_wire::{ClassFormat, Decoder, Encoder, Result, ENCODING_1_0, ENCODING_1_1};

/// Parses hex with spaces and `"..."` ASCII runs: `01 "::Cap::Base" 05`.
pub fn hex(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut parts = s.split('"');
    let mut in_text = false;
    for part in parts.by_ref() {
        if in_text {
            out.extend_from_slice(part.as_bytes());
        } else {
            let digits: String = part.chars().filter(|c| !c.is_whitespace()).collect();
            out.extend(hex::decode(digits).expect("test hex"));
        }
        in_text = !in_text;
    }
    out
}

/// A decoder over the data of the encapsulation `bytes` (header included).
pub fn decoder(bytes: &[u8], registry: &Arc<ValueFactoryRegistry>) -> Decoder {
    let mut outer = Decoder::new(Bytes::copy_from_slice(bytes));
    let encaps = outer.read_encapsulation().expect("encapsulation");
    assert!(outer.is_empty());
    let mut dec = Decoder::from_encapsulation(encaps).expect("1.0 or 1.1");
    dec.set_value_factories(registry.clone());
    dec
}

/// Encodes an encapsulation in `format` with `write`.
pub fn encaps(format: ClassFormat, write: impl FnOnce(&mut Encoder)) -> Vec<u8> {
    let mut enc = Encoder::new();
    enc.set_class_format(format);
    let mark = enc.start_encapsulation(ENCODING_1_1);
    write(&mut enc);
    enc.end_encapsulation(mark);
    enc.finish().to_vec()
}

/// Encodes an encoding-1.0 encapsulation with `write` (its pending class
/// instances are written when it is closed).
pub fn encaps10(write: impl FnOnce(&mut Encoder)) -> Vec<u8> {
    let mut enc = Encoder::new();
    let mark = enc.start_encapsulation(ENCODING_1_0);
    write(&mut enc);
    enc.end_encapsulation(mark);
    enc.finish().to_vec()
}

pub fn all_classes() -> Arc<ValueFactoryRegistry> {
    let mut r = ValueFactoryRegistry::new();
    r.register::<Base>()
        .register::<Derived>()
        .register::<Node>()
        .register::<Compact>()
        .register::<Pair>()
        .register::<WithOpt>()
        .register::<Keeper>();
    Arc::new(r)
}

pub fn all_exceptions() -> UserExceptionRegistry {
    let mut r = UserExceptionRegistry::new();
    r.register::<BaseErr>()
        .register::<DerivedErr>()
        .register::<OptErr>();
    r
}

macro_rules! ids {
    ($t:ty, $id:expr, [$($ids:expr),*]) => {
        impl ValueType for $t {
            const TYPE_ID: &'static str = $id;
        }
    };
}

/// `class Base { int a; }`, preserving unknown derived slices.
#[derive(Debug, Default)]
pub struct Base {
    pub a: i32,
    pub sliced: Option<SlicedData>,
}
ids!(Base, "::Cap::Base", []);
impl Value for Base {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::Base"]
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
    fn ice_sliced_data(&self) -> Option<&SlicedData> {
        self.sliced.as_ref()
    }
    fn ice_set_sliced_data(&mut self, sliced: SlicedData) {
        self.sliced = Some(sliced);
    }
}

/// `class Derived extends Base { string s; }`
#[derive(Debug, Default)]
pub struct Derived {
    pub base: Base,
    pub s: String,
}
ids!(Derived, "::Cap::Derived", []);
impl Value for Derived {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::Derived", "::Cap::Base"]
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

/// `class Node { int v; Node next; }`
#[derive(Debug, Default)]
pub struct Node {
    pub v: i32,
    pub next: Option<ClassRef<Node>>,
}
ids!(Node, "::Cap::Node", []);
impl Value for Node {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::Node"]
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

/// `class Compact(7) { int c; }`
#[derive(Debug, Default)]
pub struct Compact {
    pub c: i32,
}
impl ValueType for Compact {
    const TYPE_ID: &'static str = "::Cap::Compact";
    const COMPACT_ID: Option<u32> = Some(7);
}
impl Value for Compact {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::Compact"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, Self::COMPACT_ID, true);
        enc.write_i32(self.c);
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.c = dec.read_i32()?;
        dec.end_slice()
    }
}

/// `class Pair { Base x; Base y; }`
#[derive(Debug, Default)]
pub struct Pair {
    pub x: Option<ClassRef<Base>>,
    pub y: Option<ClassRef<Base>>,
}
ids!(Pair, "::Cap::Pair", []);
impl Value for Pair {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::Pair"]
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

/// `class WithOpt { int a; optional(1) int b; optional(3) string s; }`
#[derive(Debug, Default)]
pub struct WithOpt {
    pub a: i32,
    pub b: Option<i32>,
    pub s: Option<String>,
}
ids!(WithOpt, "::Cap::WithOpt", []);
impl Value for WithOpt {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::WithOpt"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, true);
        enc.write_i32(self.a);
        enc.write_optional(1, self.b.as_ref());
        enc.write_optional(3, self.s.as_ref());
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.a = dec.read_i32()?;
        self.b = dec.read_optional_value(1)?;
        self.s = dec.read_optional_value(3)?;
        dec.end_slice()
    }
}

/// Not in Capture.ice: `class Keeper { int h; optional(2) Base b; }`, to
/// exercise optional class members (format `Class`).
#[derive(Debug, Default)]
pub struct Keeper {
    pub h: i32,
    pub b: Option<Option<ClassRef<Base>>>,
}
ids!(Keeper, "::Cap::Keeper", []);
impl Value for Keeper {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::Keeper"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, true);
        enc.write_i32(self.h);
        enc.write_optional(2, self.b.as_ref());
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.h = dec.read_i32()?;
        self.b = dec.read_optional_value(2)?;
        dec.end_slice()
    }
}

/// `Keeper` as seen by a peer whose Slice has no optional member: it must
/// skip tag 2 (and the instance in it) at `end_slice`.
#[derive(Debug, Default)]
pub struct KeeperV1 {
    pub h: i32,
}
ids!(KeeperV1, "::Cap::Keeper", []);
impl Value for KeeperV1 {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::Keeper"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, true);
        enc.write_i32(self.h);
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.h = dec.read_i32()?;
        dec.end_slice()
    }
}

/// `exception BaseErr { string reason; }`
#[derive(Debug, Default)]
pub struct BaseErr {
    pub reason: String,
}
impl UserExceptionType for BaseErr {
    const TYPE_ID: &'static str = "::Cap::BaseErr";
}
impl UserException for BaseErr {
    fn ice_id(&self) -> &'static str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::BaseErr"]
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

/// `exception DerivedErr extends BaseErr { int code; }`
#[derive(Debug, Default)]
pub struct DerivedErr {
    pub base: BaseErr,
    pub code: i32,
}
impl UserExceptionType for DerivedErr {
    const TYPE_ID: &'static str = "::Cap::DerivedErr";
}
impl UserException for DerivedErr {
    fn ice_id(&self) -> &'static str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::DerivedErr", "::Cap::BaseErr"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, false);
        enc.write_i32(self.code);
        enc.end_slice();
        self.base.write_slices(enc);
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.code = dec.read_i32()?;
        dec.end_slice()?;
        self.base.read_slices(dec)
    }
    fn ice_base(&self) -> Option<&dyn UserException> {
        Some(&self.base)
    }
}

/// `exception OptErr { optional(2) int o; }`
#[derive(Debug, Default)]
pub struct OptErr {
    pub o: Option<i32>,
}
impl UserExceptionType for OptErr {
    const TYPE_ID: &'static str = "::Cap::OptErr";
}
impl UserException for OptErr {
    fn ice_id(&self) -> &'static str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::OptErr"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, true);
        enc.write_optional(2, self.o.as_ref());
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.o = dec.read_optional_value(2)?;
        dec.end_slice()
    }
}

/// Not in Capture.ice: `exception NodeErr { Node n; Node m; }`, an
/// exception with class members.
#[derive(Debug, Default)]
pub struct NodeErr {
    pub n: Option<ClassRef<Node>>,
    pub m: Option<ClassRef<Node>>,
}
impl UserExceptionType for NodeErr {
    const TYPE_ID: &'static str = "::Cap::NodeErr";
}
impl UserException for NodeErr {
    fn ice_id(&self) -> &'static str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::NodeErr"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, true);
        enc.write(&self.n);
        enc.write(&self.m);
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.n = dec.read()?;
        self.m = dec.read()?;
        dec.end_slice()
    }
}

/// Not in Capture.ice: `exception DerivedNodeErr extends NodeErr { Node k; }`.
#[derive(Debug, Default)]
pub struct DerivedNodeErr {
    pub base: NodeErr,
    pub k: Option<ClassRef<Node>>,
}
impl UserExceptionType for DerivedNodeErr {
    const TYPE_ID: &'static str = "::Cap::DerivedNodeErr";
}
impl UserException for DerivedNodeErr {
    fn ice_id(&self) -> &'static str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::DerivedNodeErr", "::Cap::NodeErr"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, false);
        enc.write(&self.k);
        enc.end_slice();
        self.base.write_slices(enc);
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.k = dec.read()?;
        dec.end_slice()?;
        self.base.read_slices(dec)
    }
    fn ice_base(&self) -> Option<&dyn UserException> {
        Some(&self.base)
    }
}
