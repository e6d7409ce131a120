//! The `Properties` facet (`Ice::PropertiesAdmin`): the communicator's
//! properties, read and changed remotely.
//!
//! - `getProperty(key)`: the value, or `""` when unset;
//! - `getPropertiesForPrefix(prefix)`: the properties whose name starts
//!   with `prefix` (all of them for `""`), as a `PropertyDict`;
//! - `setProperties(dict)`: sets each property (an empty value removes
//!   it). An IceGrid node calls it when `icegridadmin application update
//!   --no-restart` changes only the properties of a running server. As in
//!   Ice, settings already read (endpoints, timeouts, ...) keep their
//!   values; code that reads [`crate::Properties`] later sees the new ones.
//!   With `Ice.Trace.Admin.Properties=1` the changes are traced.

use std::sync::Arc;

use crate::object_model::communicator::Communicator;
use crate::object_model::current::Current;
use crate::object_model::servant::{DispatchError, Servant};

use super::OpResult;

/// The facet's servant.
pub(super) fn facet(communicator: &Communicator) -> Arc<dyn Servant> {
    let communicator = communicator.clone();
    super::facet("::Ice::PropertiesAdmin", move |current, params| {
        let props = communicator.properties();
        match current.operation.as_str() {
            "getProperty" => {
                let key = current.params_decoder(params)?.read_string()?;
                let value = props.get(&key).unwrap_or_default();
                Ok(current.encode_reply(|e| e.write_string(&value)))
            }
            "getPropertiesForPrefix" => {
                let prefix = current.params_decoder(params)?.read_string()?;
                let found = props.with_prefix(&prefix);
                Ok(current.encode_reply(|e| {
                    e.write_size(found.len());
                    for (k, v) in &found {
                        e.write_string(k);
                        e.write_string(v);
                    }
                }))
            }
            "setProperties" => set_properties(current, params, &communicator),
            _ => Err(DispatchError::operation_not_exist()),
        }
    })
}

/// `setProperties(PropertyDict newProperties)`.
fn set_properties(
    current: &Current,
    params: floe_wire::Encapsulation,
    communicator: &Communicator,
) -> OpResult {
    let mut dec = current.params_decoder(params)?;
    let n = dec.read_size()?;
    // Read them all before setting any: a truncated request changes nothing.
    let mut changes = Vec::new();
    for _ in 0..n {
        let k = dec.read_string()?;
        let v = dec.read_string()?;
        changes.push((k, v));
    }
    let props = communicator.properties();
    let mut summary = String::from("Summary of property changes");
    for (k, v) in &changes {
        summary.push_str(&format!("\n{k} = {v}"));
        props.set(k, v);
    }
    crate::trace::event_if!(
        props.get_int_or("Ice.Trace.Admin.Properties", 0) >= 1,
        info,
        debug,
        category = "Admin.Properties",
        "{summary}"
    );
    Ok(current.empty_reply())
}
