//! [`ValueFactoryRegistry`]: which Rust type to instantiate for a class type
//! id or compact id found on the wire.

use std::collections::HashMap;

use super::value::{Value, ValueType};

/// Creates a default instance of a class, to be filled by
/// [`Value::read_slices`].
pub type ValueFactory = fn() -> Box<dyn Value>;

/// Class factories by type id and by compact id. Build one at start-up
/// (generated code registers its types) and share it with decoders through
/// [`crate::Decoder::set_value_factories`].
///
/// ```
/// # use floe_wire::class::{Value, ValueType, ValueFactoryRegistry};
/// # use floe_wire::{Decoder, Encoder, Result};
/// # #[derive(Debug, Default)] struct Compact { c: i32 }
/// # impl ValueType for Compact { const TYPE_ID: &'static str = "::M::Compact"; const COMPACT_ID: Option<u32> = Some(7); }
/// # impl Value for Compact {
/// #     fn ice_id(&self) -> &str { Self::TYPE_ID }
/// #     fn ice_ids(&self) -> &'static [&'static str] { &["::M::Compact"] }
/// #     fn write_slices(&self, _: &mut Encoder) {}
/// #     fn read_slices(&mut self, _: &mut Decoder) -> Result<()> { Ok(()) }
/// # }
/// let mut registry = ValueFactoryRegistry::new();
/// registry.register::<Compact>();
/// assert!(registry.find("::M::Compact").is_some());
/// assert!(registry.find_compact(7).is_some());
/// ```
#[derive(Clone, Debug, Default)]
pub struct ValueFactoryRegistry {
    by_type_id: HashMap<String, ValueFactory>,
    by_compact_id: HashMap<u32, ValueFactory>,
}

impl ValueFactoryRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `T` under its type id (and compact id, if it has one).
    pub fn register<T: ValueType>(&mut self) -> &mut Self {
        fn make<T: ValueType>() -> Box<dyn Value> {
            Box::new(T::default())
        }
        self.add(T::TYPE_ID, T::COMPACT_ID, make::<T>)
    }

    /// Registers a factory under `type_id` and, if given, `compact_id`.
    /// A later registration for the same id replaces the earlier one.
    pub fn add(
        &mut self,
        type_id: &str,
        compact_id: Option<u32>,
        factory: ValueFactory,
    ) -> &mut Self {
        self.by_type_id.insert(type_id.to_owned(), factory);
        if let Some(c) = compact_id {
            self.by_compact_id.insert(c, factory);
        }
        self
    }

    /// The factory for a type id.
    pub fn find(&self, type_id: &str) -> Option<ValueFactory> {
        self.by_type_id.get(type_id).copied()
    }

    /// The factory for a compact id.
    pub fn find_compact(&self, compact_id: u32) -> Option<ValueFactory> {
        self.by_compact_id.get(&compact_id).copied()
    }
}
