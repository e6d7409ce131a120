//! The communicator's value factories (Ice's `ValueFactoryManager`):
//! factories the application registers by type id, asked before the
//! generated ones whenever this communicator's decoders make a class
//! instance.

use std::sync::Arc;

use floe_wire::class::{UserValueFactory, Value, ValueFactoryManager};

use super::Communicator;
use crate::error::{Error, Result};

impl Communicator {
    /// Registers `factory` for the class (or interface passed by value)
    /// `type_id`; `""` registers the default factory, asked for every
    /// type id without one of its own (Ice's `ValueFactoryManager::add`).
    /// A factory returns the instance to fill from the wire (a type of the
    /// application's that implements `Value`, e.g. a
    /// [`floe_wire::class::InterfaceByValue`]) or `None` to let the next
    /// factory try: the default one, then the generated code's.
    ///
    /// ```
    /// use floe_runtime::Communicator;
    /// use floe_wire::class::{InterfaceByValue, Value};
    ///
    /// let communicator = Communicator::new();
    /// communicator
    ///     .add_value_factory("::M::Printer", |id| {
    ///         Some(Box::new(InterfaceByValue::new(id)) as Box<dyn Value>)
    ///     })
    ///     .unwrap();
    /// assert!(communicator.find_value_factory("::M::Printer").is_some());
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::AlreadyRegistered`] if `type_id` has a factory.
    pub fn add_value_factory<F>(&self, type_id: &str, factory: F) -> Result<()>
    where
        F: Fn(&str) -> Option<Box<dyn Value>> + Send + Sync + 'static,
    {
        let mut slot = self
            .inner
            .value_factories
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // Copy on write: decoders keep the map they were given.
        let mut manager = slot.as_deref().cloned().unwrap_or_default();
        if !manager.add(type_id, Arc::new(factory)) {
            return Err(Error::AlreadyRegistered(format!(
                "value factory for `{type_id}`"
            )));
        }
        *slot = Some(Arc::new(manager));
        Ok(())
    }

    /// The factory registered for exactly `type_id` (Ice's
    /// `ValueFactoryManager::find`).
    pub fn find_value_factory(&self, type_id: &str) -> Option<UserValueFactory> {
        self.inner
            .value_factories
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(|m| m.find(type_id).cloned())
    }

    /// Gives `dec` the registered factories, if any.
    pub(crate) fn configure_value_factories(&self, dec: &mut floe_wire::Decoder) {
        let manager = self
            .inner
            .value_factories
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(manager) = manager {
            dec.set_value_factory_manager(manager);
        }
    }
}

/// The communicator's registered factories (`None`: none yet).
pub(crate) type Slot = std::sync::Mutex<Option<Arc<ValueFactoryManager>>>;
