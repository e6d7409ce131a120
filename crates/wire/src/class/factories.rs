//! [`ValueFactoryManager`]: value factories an application registers at
//! run time (Ice's `ValueFactoryManager`), asked before the generated
//! [`super::ValueFactoryRegistry`]; [`InterfaceByValue`], the instance an
//! interface passed by value is; and [`ValueHooks`], the
//! `ice_preMarshal` / `ice_postUnmarshal` hooks of a generated class.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use super::value::Value;
use crate::{Decoder, Encoder, Result};

/// An application's value factory: makes a default instance for a type id
/// (to be filled by [`Value::read_slices`]), or `None` to let the next
/// factory try, as Ice's `ValueFactory`.
pub type UserValueFactory = Arc<dyn Fn(&str) -> Option<Box<dyn Value>> + Send + Sync>;

/// Value factories by type id, registered by the application (floe-runtime:
/// `Communicator::add_value_factory`). A decoder given one
/// ([`Decoder::set_value_factory_manager`]) makes an instance of type id
/// `T` with, in order: the factory registered for `T`, the one registered
/// for `""` (the default factory), the generated registry. Compact type
/// ids use the generated registry only.
///
/// ```
/// use std::sync::Arc;
/// use floe_wire::class::{InterfaceByValue, Value, ValueFactoryManager};
///
/// let mut manager = ValueFactoryManager::new();
/// manager.add(
///     "::M::Printer",
///     Arc::new(|id: &str| Some(Box::new(InterfaceByValue::new(id)) as Box<dyn Value>)),
/// );
/// assert_eq!(manager.create("::M::Printer").unwrap().ice_id(), "::M::Printer");
/// assert!(manager.create("::M::Other").is_none());
/// ```
#[derive(Clone, Default)]
pub struct ValueFactoryManager {
    by_type_id: HashMap<String, UserValueFactory>,
}

impl fmt::Debug for ValueFactoryManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.by_type_id.keys()).finish()
    }
}

impl ValueFactoryManager {
    /// No factory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `factory` for `type_id` (`""`: every type id without a
    /// factory of its own). Returns `false`, changing nothing, if one is
    /// registered already (Ice raises `AlreadyRegisteredException`).
    pub fn add(&mut self, type_id: &str, factory: UserValueFactory) -> bool {
        if self.by_type_id.contains_key(type_id) {
            return false;
        }
        self.by_type_id.insert(type_id.to_owned(), factory);
        true
    }

    /// The factory registered for exactly `type_id`.
    pub fn find(&self, type_id: &str) -> Option<&UserValueFactory> {
        self.by_type_id.get(type_id)
    }

    /// Whether no factory is registered.
    pub fn is_empty(&self) -> bool {
        self.by_type_id.is_empty()
    }

    /// An instance for `type_id` from the factory of `type_id`, else from
    /// the default (`""`) factory.
    pub fn create(&self, type_id: &str) -> Option<Box<dyn Value>> {
        if let Some(v) = self.find(type_id).and_then(|f| f(type_id)) {
            return Some(v);
        }
        if type_id.is_empty() {
            return None;
        }
        self.find("").and_then(|f| f(type_id))
    }
}

/// An instance of an interface passed by value (Ice's
/// `InterfaceByValue`, deprecated in Slice and still in use): it has no
/// data, only its type id, written as one empty slice. Register a factory
/// that makes one for the interface's type id to receive such instances.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InterfaceByValue {
    type_id: String,
}

impl InterfaceByValue {
    /// An instance of the interface `type_id` (`::M::Printer`).
    pub fn new(type_id: &str) -> Self {
        InterfaceByValue {
            type_id: type_id.to_owned(),
        }
    }
}

impl Value for InterfaceByValue {
    fn ice_id(&self) -> &str {
        &self.type_id
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &[]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(&self.type_id, None, true);
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        dec.end_slice()
    }
}

/// The marshaling hooks of a generated class with `["rust:hooks"]`
/// metadata (Ice's `ice_preMarshal` and `ice_postUnmarshal`): the
/// generated `Value` implementation calls them, and the application
/// implements this trait for the class (in the crate that generates it).
///
/// ```
/// # #[derive(Default)] struct Hooked { pre: bool }
/// impl floe_wire::class::ValueHooks for Hooked {
///     fn ice_pre_marshal(&mut self) {
///         self.pre = true;
///     }
/// }
/// ```
pub trait ValueHooks {
    /// Called before the instance is encoded. The default does nothing.
    fn ice_pre_marshal(&mut self) {}

    /// Called after the instance was decoded. The default does nothing.
    fn ice_post_unmarshal(&mut self) {}
}
