//! Classes and user exceptions (§4.12, §4.13). Placeholder until the class
//! codec lands.

use crate::decoder::Decoder;
use crate::error::{Error, Result};

/// Per-encapsulation state for writing class instances.
#[derive(Debug, Default)]
pub struct ClassWriter {}

/// Per-encapsulation state for reading class instances.
#[derive(Debug, Default, Clone)]
pub struct ClassReader {}

/// Skips an instance reference (optional value of format `Class`).
pub(crate) fn skip_instance_reference(_dec: &mut Decoder) -> Result<()> {
    Err(Error::marshal("class instances are not supported yet"))
}
