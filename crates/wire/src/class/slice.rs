//! [`SlicedData`]: slices of unknown types, kept opaque so that an instance
//! decoded from the sliced format can be written back unchanged.

use bytes::Bytes;

use super::value::ValuePtr;

/// How a slice names its type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SliceTypeId {
    /// A Slice type id such as `::M::Derived`.
    Name(String),
    /// A compact type id from `class C(7)`.
    Compact(u32),
}

impl SliceTypeId {
    /// The type id as text (a compact id in decimal).
    pub fn to_text(&self) -> String {
        match self {
            SliceTypeId::Name(s) => s.clone(),
            SliceTypeId::Compact(n) => n.to_string(),
        }
    }
}

/// One slice this side does not know, as it was on the wire.
#[derive(Clone, Debug, PartialEq)]
pub struct SliceInfo {
    /// The slice's type.
    pub type_id: SliceTypeId,
    /// The members, optional members and `ff` end marker, as encoded (class
    /// references in them are indexes into `instances`).
    pub bytes: Bytes,
    /// The slice's indirection table (`None` for a null entry).
    pub instances: Vec<Option<ValuePtr>>,
    /// Whether flag 0x04 (optional members) was set.
    pub has_optional_members: bool,
    /// Whether flag 0x20 (last slice) was set.
    pub is_last: bool,
}

/// The unknown most-derived slices of an instance, most-derived first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SlicedData {
    /// The slices.
    pub slices: Vec<SliceInfo>,
}

impl SlicedData {
    /// Whether there is no slice.
    pub fn is_empty(&self) -> bool {
        self.slices.is_empty()
    }
}
