//! User exceptions (§4.13): the [`UserException`] trait, the
//! [`UserExceptionRegistry`], and writing them with
//! [`Encoder::write_user_exception`] (reading is
//! [`Decoder::read_user_exception`]).
//!
//! An exception is written like a class instance without the instance
//! marker: its slices, most-derived first, each with its type id as a string
//! (never an index or compact id), the base-most with the last-slice flag
//! (as Python and C++98 peers do; C++11 peers omit it, so the reader never
//! depends on it). The reader decodes with the first slice whose type id the
//! registry knows; if none, [`Error::UnknownUserException`] carries the
//! most-derived type id.
//!
//! Generated code implements the traits like this, for
//! `exception BaseErr { string reason; }` and
//! `exception DerivedErr extends BaseErr { int code; }`:
//!
//! ```
//! use floe_wire::exception::{UserException, UserExceptionRegistry, UserExceptionType};
//! use floe_wire::{Decoder, Encoder, Result};
//!
//! #[derive(Debug, Default)]
//! pub struct BaseErr {
//!     pub reason: String,
//! }
//! impl UserExceptionType for BaseErr {
//!     const TYPE_ID: &'static str = "::M::BaseErr";
//! }
//! impl UserException for BaseErr {
//!     fn ice_id(&self) -> &'static str {
//!         Self::TYPE_ID
//!     }
//!     fn ice_ids(&self) -> &'static [&'static str] {
//!         &["::M::BaseErr"]
//!     }
//!     fn write_slices(&self, enc: &mut Encoder) {
//!         enc.start_slice(Self::TYPE_ID, None, true); // no base: last slice
//!         enc.write_string(&self.reason);
//!         enc.end_slice();
//!     }
//!     fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
//!         dec.start_slice()?;
//!         self.reason = dec.read_string()?;
//!         dec.end_slice()
//!     }
//! }
//!
//! #[derive(Debug, Default)]
//! pub struct DerivedErr {
//!     pub base: BaseErr,
//!     pub code: i32,
//! }
//! impl UserExceptionType for DerivedErr {
//!     const TYPE_ID: &'static str = "::M::DerivedErr";
//! }
//! impl UserException for DerivedErr {
//!     fn ice_id(&self) -> &'static str {
//!         Self::TYPE_ID
//!     }
//!     fn ice_ids(&self) -> &'static [&'static str] {
//!         &["::M::DerivedErr", "::M::BaseErr"]
//!     }
//!     fn write_slices(&self, enc: &mut Encoder) {
//!         enc.start_slice(Self::TYPE_ID, None, false);
//!         enc.write_i32(self.code);
//!         enc.end_slice();
//!         self.base.write_slices(enc);
//!     }
//!     fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
//!         dec.start_slice()?;
//!         self.code = dec.read_i32()?;
//!         dec.end_slice()?;
//!         self.base.read_slices(dec)
//!     }
//!     fn ice_base(&self) -> Option<&dyn UserException> {
//!         Some(&self.base)
//!     }
//! }
//!
//! let mut enc = Encoder::new();
//! enc.write_user_exception(&DerivedErr { base: BaseErr { reason: "r".into() }, code: 1 });
//! let mut registry = UserExceptionRegistry::new();
//! registry.register::<BaseErr>().register::<DerivedErr>();
//! let mut dec = Decoder::new(enc.finish());
//! let ex = dec.read_user_exception(&registry).unwrap();
//! assert_eq!(ex.ice_id(), "::M::DerivedErr");
//! assert_eq!(ex.downcast_ref::<BaseErr>().unwrap().reason, "r"); // viewed as its base
//! ```

use std::any::Any;
use std::collections::HashMap;
use std::fmt;

use crate::encoder::Encoder;
#[cfg(doc)]
use crate::{Decoder, Error};

/// A Slice user exception.
pub trait UserException: Any + Send + Sync + fmt::Debug {
    /// The Slice type id of the most-derived type (`::M::DerivedErr`).
    fn ice_id(&self) -> &'static str;

    /// The type ids of this exception and its bases, most-derived first.
    fn ice_ids(&self) -> &'static [&'static str];

    /// Writes this type's slice, then its base's slices.
    fn write_slices(&self, enc: &mut Encoder);

    /// Reads this type's slice, then its base's slices.
    ///
    /// # Errors
    ///
    /// Any decoding error of the members.
    fn read_slices(&mut self, dec: &mut crate::Decoder) -> crate::Result<()>;

    /// The embedded base exception, if this one extends another.
    fn ice_base(&self) -> Option<&dyn UserException> {
        None
    }

    /// Whether this exception's type or one of its bases has a required
    /// member whose type holds classes (a class, or a sequence,
    /// dictionary or struct holding one): Ice's `_usesClasses`. Encoding
    /// 1.0 writes it in front of the slices and then the class instances
    /// after them. The default is `false`; the encoder also sets the flag
    /// when the slices wrote a class reference, so only an exception whose
    /// class-typed members wrote none (an empty sequence of classes) needs
    /// to override it to match Ice byte for byte.
    fn ice_uses_classes(&self) -> bool {
        false
    }

    /// The slices of more-derived types this side did not know, kept when
    /// the exception was decoded (`["preserve-slice"]` on the exception or
    /// a base). [`Encoder::write_user_exception`] writes them back in front
    /// of the known slices in the sliced format, so that an exception a
    /// server relays reaches the caller as the caller's own most-derived
    /// type (as Ice does). `None` for types without `["preserve-slice"]`.
    fn ice_sliced_data(&self) -> Option<&crate::class::SlicedData> {
        None
    }

    /// Keeps `sliced` (the unknown most-derived slices, in wire order) for
    /// [`UserException::ice_sliced_data`]. Types without
    /// `["preserve-slice"]` drop them, as Ice does.
    fn ice_set_sliced_data(&mut self, sliced: crate::class::SlicedData) {
        let _ = sliced;
    }
}

/// Static facts about a concrete exception type, for the registry.
pub trait UserExceptionType: UserException + Default {
    /// The Slice type id.
    const TYPE_ID: &'static str;
}

impl dyn UserException {
    /// Whether this exception is of type `type_id` or derives from it.
    pub fn is_a(&self, type_id: &str) -> bool {
        self.ice_ids().contains(&type_id)
    }

    /// Views this exception as a `T`: itself or one of its embedded bases.
    pub fn downcast_ref<T: UserException>(&self) -> Option<&T> {
        if let Some(t) = (self as &dyn Any).downcast_ref::<T>() {
            return Some(t);
        }
        self.ice_base().and_then(|b| b.downcast_ref::<T>())
    }
}

/// Creates a default exception of a type, to be filled by
/// [`UserException::read_slices`].
pub type UserExceptionFactory = fn() -> Box<dyn UserException>;

/// Exception factories by type id, for [`Decoder::read_user_exception`].
#[derive(Clone, Debug, Default)]
pub struct UserExceptionRegistry {
    by_type_id: HashMap<String, UserExceptionFactory>,
}

impl UserExceptionRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `T` under its type id.
    pub fn register<T: UserExceptionType>(&mut self) -> &mut Self {
        fn make<T: UserExceptionType>() -> Box<dyn UserException> {
            Box::new(T::default())
        }
        self.add(T::TYPE_ID, make::<T>)
    }

    /// Registers a factory under `type_id` (replacing an earlier one).
    pub fn add(&mut self, type_id: &str, factory: UserExceptionFactory) -> &mut Self {
        self.by_type_id.insert(type_id.to_owned(), factory);
        self
    }

    /// The factory for a type id.
    pub fn find(&self, type_id: &str) -> Option<UserExceptionFactory> {
        self.by_type_id.get(type_id).copied()
    }
}

impl Encoder {
    /// Writes a user exception (the contents of a reply with status 1) in
    /// the encoder's [`crate::class::ClassFormat`]. In encoding 1.0: the
    /// "uses classes" flag, the slices, and the class instances they
    /// reference (see [`crate::class::v10`]).
    pub fn write_user_exception(&mut self, ex: &dyn UserException) {
        self.write_exception_frame(ex.ice_uses_classes(), ex.ice_sliced_data(), |enc| {
            ex.write_slices(enc)
        });
    }
}
