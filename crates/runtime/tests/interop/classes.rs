//! Hand-written Rust forms of the Interop.ice classes and exceptions (and the
//! server-only ones of ServerOnly.ice), over floe-wire's `Value` and
//! `UserException` traits, as generated code will later provide them.
#![allow(dead_code)]

use std::sync::Arc;

use floe_wire::class::{ClassRef, Value, ValueFactoryRegistry, ValueType};
use floe_wire::exception::{UserException, UserExceptionRegistry, UserExceptionType};
use floe_wire::{Decoder, Encoder, Result};

macro_rules! value_ids {
    ($($id:literal),+) => {
        fn ice_id(&self) -> &str {
            Self::TYPE_ID
        }
        fn ice_ids(&self) -> &'static [&'static str] {
            &[$($id),+]
        }
    };
}

/// `class Base { int a; }`
#[derive(Debug, Default)]
pub struct Base {
    /// a
    pub a: i32,
}

impl ValueType for Base {
    const TYPE_ID: &'static str = "::Interop::Base";
}

impl Value for Base {
    value_ids!("::Interop::Base");
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
    /// The Base part.
    pub base: Base,
    /// s
    pub s: String,
}

impl ValueType for Derived {
    const TYPE_ID: &'static str = "::Interop::Derived";
}

impl Value for Derived {
    value_ids!("::Interop::Derived", "::Interop::Base");
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

/// ServerOnly.ice: `class SecretDerived extends Derived { string secret; }`
#[derive(Debug, Default)]
pub struct SecretDerived {
    /// The Derived part.
    pub base: Derived,
    /// secret
    pub secret: String,
}

impl ValueType for SecretDerived {
    const TYPE_ID: &'static str = "::Interop::SecretDerived";
}

impl Value for SecretDerived {
    value_ids!(
        "::Interop::SecretDerived",
        "::Interop::Derived",
        "::Interop::Base"
    );
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, false);
        enc.write_string(&self.secret);
        enc.end_slice();
        self.base.write_slices(enc);
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.secret = dec.read_string()?;
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
    /// v
    pub v: i32,
    /// next
    pub next: Option<ClassRef<Node>>,
}

impl ValueType for Node {
    const TYPE_ID: &'static str = "::Interop::Node";
}

impl Value for Node {
    value_ids!("::Interop::Node");
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
    /// x
    pub x: Option<ClassRef<Base>>,
    /// y
    pub y: Option<ClassRef<Base>>,
}

impl ValueType for Pair {
    const TYPE_ID: &'static str = "::Interop::Pair";
}

impl Value for Pair {
    value_ids!("::Interop::Pair");
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
    /// a
    pub a: i32,
    /// b (tag 1)
    pub b: Option<i32>,
    /// s (tag 3)
    pub s: Option<String>,
}

impl ValueType for WithOpt {
    const TYPE_ID: &'static str = "::Interop::WithOpt";
}

impl Value for WithOpt {
    value_ids!("::Interop::WithOpt");
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

/// Factories for the classes a client of Interop.ice knows.
pub fn client_value_factories() -> Arc<ValueFactoryRegistry> {
    let mut r = ValueFactoryRegistry::new();
    r.register::<Base>()
        .register::<Derived>()
        .register::<Node>()
        .register::<Pair>()
        .register::<WithOpt>();
    Arc::new(r)
}

/// Factories for a server (Interop.ice plus ServerOnly.ice).
pub fn server_value_factories() -> Arc<ValueFactoryRegistry> {
    let mut r = ValueFactoryRegistry::new();
    r.register::<Base>()
        .register::<Derived>()
        .register::<SecretDerived>()
        .register::<Node>()
        .register::<Pair>()
        .register::<WithOpt>();
    Arc::new(r)
}

/// `exception BaseErr { string reason; }`
#[derive(Debug, Default)]
pub struct BaseErr {
    /// reason
    pub reason: String,
}

impl UserExceptionType for BaseErr {
    const TYPE_ID: &'static str = "::Interop::BaseErr";
}

impl UserException for BaseErr {
    fn ice_id(&self) -> &'static str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Interop::BaseErr"]
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
    /// The BaseErr part.
    pub base: BaseErr,
    /// code
    pub code: i32,
}

impl UserExceptionType for DerivedErr {
    const TYPE_ID: &'static str = "::Interop::DerivedErr";
}

impl UserException for DerivedErr {
    fn ice_id(&self) -> &'static str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Interop::DerivedErr", "::Interop::BaseErr"]
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

/// ServerOnly.ice: `exception SecretErr extends DerivedErr { string secret; }`
#[derive(Debug, Default)]
pub struct SecretErr {
    /// The DerivedErr part.
    pub base: DerivedErr,
    /// secret
    pub secret: String,
}

impl UserExceptionType for SecretErr {
    const TYPE_ID: &'static str = "::Interop::SecretErr";
}

impl UserException for SecretErr {
    fn ice_id(&self) -> &'static str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &[
            "::Interop::SecretErr",
            "::Interop::DerivedErr",
            "::Interop::BaseErr",
        ]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, false);
        enc.write_string(&self.secret);
        enc.end_slice();
        self.base.write_slices(enc);
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.secret = dec.read_string()?;
        dec.end_slice()?;
        self.base.read_slices(dec)
    }
    fn ice_base(&self) -> Option<&dyn UserException> {
        Some(&self.base)
    }
}

/// BaseErr with `reason`.
pub fn base_err(reason: &str) -> BaseErr {
    BaseErr {
        reason: reason.to_owned(),
    }
}

/// DerivedErr with `reason` and `code`.
pub fn derived_err(reason: &str, code: i32) -> DerivedErr {
    DerivedErr {
        base: base_err(reason),
        code,
    }
}

/// The exceptions a client of Interop.ice knows (no SecretErr).
pub fn client_exceptions() -> UserExceptionRegistry {
    let mut r = UserExceptionRegistry::new();
    r.register::<BaseErr>().register::<DerivedErr>();
    r
}
