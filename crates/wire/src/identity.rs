//! [`Identity`]: the name and category that identify an Ice object.
//!
//! On the wire the **name comes first**, then the category (§2.1), the
//! reverse of the `category/name` text form.

use compact_str::CompactString;

use crate::codec::{Decode, Encode, WireType};
use crate::decoder::Decoder;
use crate::encoder::Encoder;
use crate::error::Result;
use crate::optional::OptionalKind;

/// An object identity.
///
/// Both fields are [`CompactString`]s, kept inline up to 24 bytes: the
/// identity of a request decodes without allocating. They dereference to
/// `&str` and compare with `&str` and `String`.
///
/// ```
/// use floe_wire::{Encoder, Identity};
/// let id = Identity::new("ego", "cat");
/// let mut enc = Encoder::new();
/// enc.write(&id);
/// assert_eq!(&enc.finish()[..], b"\x03ego\x03cat");
/// assert_eq!(id.name, "ego");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Identity {
    /// The name (never empty for a non-null proxy).
    pub name: CompactString,
    /// The category (often empty).
    pub category: CompactString,
}

impl Identity {
    /// An identity from its name and category.
    pub fn new(name: impl Into<CompactString>, category: impl Into<CompactString>) -> Self {
        Identity {
            name: name.into(),
            category: category.into(),
        }
    }

    /// An identity with an empty category.
    pub fn from_name(name: impl Into<CompactString>) -> Self {
        Self::new(name, "")
    }

    /// Whether both fields are empty (the null proxy's identity).
    pub fn is_null(&self) -> bool {
        self.name.is_empty() && self.category.is_empty()
    }
}

impl WireType for Identity {
    const MIN_WIRE_SIZE: usize = 2;
    const OPTIONAL_KIND: OptionalKind = OptionalKind::FSizeLength;
}

impl Encode for Identity {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_string(&self.name);
        enc.write_string(&self.category);
    }
}

impl Decode for Identity {
    fn decode(dec: &mut Decoder) -> Result<Self> {
        let name = dec
            .read_compact_string()
            .map_err(|e| e.at("name").at("Identity"))?;
        let category = dec
            .read_compact_string()
            .map_err(|e| e.at("category").at("Identity"))?;
        Ok(Identity { name, category })
    }
}
