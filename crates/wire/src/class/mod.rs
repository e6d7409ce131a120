//! Class instances (§4.12 of docs/protocol.md): the [`Value`] trait, the
//! [`ClassRef`] handle, factories, and the per-encapsulation writer and
//! reader state, for encoding 1.1 and (in [`v10`]) encoding 1.0. User
//! exceptions share the slice machinery and live in [`crate::exception`].
//!
//! # The model
//!
//! - A class instance lives behind a [`ValuePtr`]: an `Arc` around a
//!   `RwLock<Box<dyn Value>>`. Graphs may share instances and may contain
//!   cycles. **Cycles leak** (as `shared_ptr` cycles do in Ice for C++)
//!   unless the application breaks them, which is why decoders reject them
//!   unless [`Decoder::set_accept_class_cycles`] is set (C++ peers behave the
//!   same way by default).
//! - [`ClassRef<T>`] is a `ValuePtr` known to hold a `T` or a class derived
//!   from `T`; a Slice member `Base b;` is an `Option<ClassRef<Base>>`
//!   (`None` is the null reference, written `00`). `read()` / `write()` give
//!   guards that dereference to `T` (a `Derived` instance is viewed through its
//!   embedded `Base`).
//! - Instances are written where they first occur (`01` + slices), later
//!   occurrences are back-references (id ≥ 2). In the sliced format
//!   ([`ClassFormat::Sliced`]) references inside a slice go through the
//!   slice's indirection table, so a reader can skip slices it does not know;
//!   skipped slices are kept as [`SlicedData`] and written back unchanged.
//!
//! # Contract for generated code
//!
//! For `class Derived extends Base { string s; optional(1) int o; }` with
//! `class Base { int a; }`, generated code emits:
//!
//! ```
//! use floe_wire::class::{ClassRef, Value, ValueType};
//! use floe_wire::{Decoder, Encoder, Result};
//!
//! #[derive(Debug, Default)]
//! pub struct Base {
//!     pub a: i32,
//! }
//!
//! impl ValueType for Base {
//!     const TYPE_ID: &'static str = "::M::Base";
//! }
//!
//! impl Value for Base {
//!     fn ice_id(&self) -> &str {
//!         Self::TYPE_ID
//!     }
//!     fn ice_ids(&self) -> &'static [&'static str] {
//!         &["::M::Base"] // most-derived first
//!     }
//!     fn write_slices(&self, enc: &mut Encoder) {
//!         enc.start_slice(Self::TYPE_ID, Self::COMPACT_ID, true); // root: last slice
//!         enc.write_i32(self.a);
//!         enc.end_slice();
//!     }
//!     fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
//!         dec.start_slice()?;
//!         self.a = dec.read_i32()?;
//!         dec.end_slice()
//!     }
//! }
//!
//! #[derive(Debug, Default)]
//! pub struct Derived {
//!     pub base: Base, // the base class is embedded as the field `base`
//!     pub s: String,
//!     pub o: Option<i32>,
//! }
//!
//! impl ValueType for Derived {
//!     const TYPE_ID: &'static str = "::M::Derived";
//! }
//!
//! impl Value for Derived {
//!     fn ice_id(&self) -> &str {
//!         Self::TYPE_ID
//!     }
//!     fn ice_ids(&self) -> &'static [&'static str] {
//!         &["::M::Derived", "::M::Base"]
//!     }
//!     fn write_slices(&self, enc: &mut Encoder) {
//!         enc.start_slice(Self::TYPE_ID, Self::COMPACT_ID, false);
//!         enc.write_string(&self.s); // required members, declaration order
//!         enc.write_optional(1, self.o.as_ref()); // then optionals by tag
//!         enc.end_slice();
//!         self.base.write_slices(enc); // then the base class's slices
//!     }
//!     fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
//!         dec.start_slice()?;
//!         self.s = dec.read_string()?;
//!         self.o = dec.read_optional_value(1)?;
//!         dec.end_slice()?;
//!         self.base.read_slices(dec)
//!     }
//!     fn ice_base(&self) -> Option<&dyn Value> {
//!         Some(&self.base)
//!     }
//!     fn ice_base_mut(&mut self) -> Option<&mut dyn Value> {
//!         Some(&mut self.base)
//!     }
//! }
//!
//! // Class-typed members, parameters and sequence elements are
//! // `Option<ClassRef<T>>`, which implements `Encode`/`Decode` (optional
//! // format `Class`): `enc.write(&member)`, `dec.read::<Option<ClassRef<T>>>()`.
//! let d = ClassRef::new(Derived { base: Base { a: 5 }, s: "d".into(), o: None });
//! let mut enc = Encoder::new();
//! enc.write(&Some(d));
//! assert_eq!(&enc.as_slice()[..3], b"\x01\x01\x0c"); // new instance, string id
//! ```
//!
//! Rules:
//!
//! - `write_slices` writes the type's own slice (`start_slice(TYPE_ID,
//!   COMPACT_ID, last = no base class)`, required members in declaration
//!   order, optional members by ascending tag, `end_slice()`), then calls the
//!   base's `write_slices`. `read_slices` mirrors it with
//!   [`Decoder::start_slice`] / [`Decoder::end_slice`]. The encoder decides
//!   what a slice header holds (type id, index, compact id, size, table) from
//!   the format; generated code never writes flags.
//! - Optional members use [`Encoder::write_optional`] /
//!   [`Decoder::read_optional_value`]; inside a slice the encoder sets flag
//!   0x04 and writes the `ff` end marker itself, and `end_slice` skips
//!   unknown optionals up to it.
//! - Register every concrete class in a [`ValueFactoryRegistry`]
//!   (`registry.register::<Derived>()`), and give it to decoders with
//!   [`Decoder::set_value_factories`]. Types that want to keep unknown
//!   derived slices (`["preserve-slice"]`) also override
//!   [`Value::ice_sliced_data`] / [`Value::ice_set_sliced_data`] with a field.
//! - The same code serves encoding 1.0, selected by the encapsulation's
//!   encoding ([`v10`]): there the encoder ignores compact ids and optional
//!   members, and instances come after the data that references them. An
//!   operation whose parameters (or results) hold classes ends them with
//!   [`Encoder::write_pending_values`] and reads them with
//!   [`Decoder::read_pending_values`] (closing or finishing the
//!   encapsulation does it when a class reference was written or read); an
//!   exception with class members overrides
//!   [`crate::exception::UserException::ice_uses_classes`]. In 1.0 a
//!   reference is read before its instance: the handle holds a stand-in
//!   (a default of the expected type) until the instance is read, so look
//!   into class values only once decoding has succeeded.
//!
//! [`Decoder::set_accept_class_cycles`]: crate::Decoder::set_accept_class_cycles
//! [`Decoder::set_value_factories`]: crate::Decoder::set_value_factories
//! [`Decoder::start_slice`]: crate::Decoder::start_slice
//! [`Decoder::end_slice`]: crate::Decoder::end_slice
//! [`Decoder::read_optional_value`]: crate::Decoder::read_optional_value
//! [`Decoder::read_pending_values`]: crate::Decoder::read_pending_values
//! [`Encoder::write_optional`]: crate::Encoder::write_optional
//! [`Encoder::write_pending_values`]: crate::Encoder::write_pending_values

mod budget;
mod codec;
mod exception_reader;
mod factories;
mod reader;
mod registry;
mod slice;
pub mod v10;
mod value;
mod writer;

pub use budget::{CLASS_GRAPH_MEMORY_ALLOWANCE, CLASS_GRAPH_MEMORY_FACTOR};
pub use factories::{InterfaceByValue, UserValueFactory, ValueFactoryManager, ValueHooks};
pub(crate) use reader::skip_instance_reference;
pub use reader::ClassReader;
pub use registry::{ValueFactory, ValueFactoryRegistry};
pub use slice::{SliceInfo, SliceTypeId, SlicedData};
pub use value::{
    upcast_mut, upcast_ref, ClassReadGuard, ClassRef, ClassWriteGuard, Extends, UnknownSlicedValue,
    Value, ValuePtr, ValueType, ValueWriteGuard,
};
pub use writer::ClassWriter;

/// Default for [`crate::Decoder::set_class_graph_height_max`]: the longest
/// chain of references a decoded graph may have. Dropping a graph recurses
/// once per link (measured: a 4000-link chain drops within a 2 MiB stack in
/// a debug build, 8000 does not), so this keeps a graph sent by a hostile
/// peer from overflowing a tokio worker's stack.
pub const CLASS_GRAPH_HEIGHT_MAX: usize = 2048;

/// The largest `Ice.ClassGraphDepthMax` a communicator applies (Ice's
/// "no limit", a value below 1, and anything larger become this).
/// Decoding recurses once per inline instance, so this is a stack budget:
/// measured on a 2 MiB stack (a tokio worker's) with a one-member chain
/// class, 200 levels decode and 250 overflow in a debug build, 1,000 decode
/// and 2,000 overflow in a release build; the limit keeps a margin below
/// both (`tests/classes.rs` checks it in the profile it runs in).
pub const CLASS_GRAPH_DEPTH_LIMIT: usize = if cfg!(debug_assertions) { 150 } else { 800 };

/// How class instances and user exceptions are written (§4.12).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ClassFormat {
    /// Only the first slice carries a type id; no slice sizes; nested
    /// instances inline. The default.
    #[default]
    Compact,
    /// Every slice carries a type id and a size; references inside slices go
    /// through indirection tables, so readers can skip unknown slices.
    Sliced,
}

/// Slice flag bits (§4.12).
pub(crate) mod flags {
    /// Mask of the type id kind.
    pub const TYPE_ID_MASK: u8 = 0x03;
    /// Type id written as a string.
    pub const TYPE_ID_STRING: u8 = 0x01;
    /// Type id written as an index into the encapsulation's type id table.
    pub const TYPE_ID_INDEX: u8 = 0x02;
    /// Compact type id.
    pub const TYPE_ID_COMPACT: u8 = 0x03;
    /// The slice has optional members, ended by `ff`.
    pub const HAS_OPTIONAL_MEMBERS: u8 = 0x04;
    /// The slice has an indirection table after its data.
    pub const HAS_INDIRECTION_TABLE: u8 = 0x08;
    /// The slice has an int32 size after its type id.
    pub const HAS_SLICE_SIZE: u8 = 0x10;
    /// The last (base-most) slice of the instance.
    pub const IS_LAST_SLICE: u8 = 0x20;
}
