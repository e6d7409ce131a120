//! The class-graph memory budget: how much memory the class instances of
//! one encapsulation may take, relative to the encapsulation's size.
//!
//! A class instance costs a few bytes on the wire (`01`, a flags byte, a
//! type id index and its members) but far more once decoded: a shared cell,
//! the boxed value, a slot in the decoder's instance table (kept until the
//! end of the encapsulation, as later instances may refer back to it), and
//! for unknown types the sliced data. Without a bound, a peer could turn a
//! frame of `Ice.MessageSizeMax` bytes into dozens of times that much
//! memory, and it can send several such frames at once.
//!
//! Each decoder therefore charges every instance it decodes an estimate of
//! its memory (the sizes of the structures above, rounded as an allocator
//! rounds them; not the strings or sequences inside its members, which are
//! bounded by their own bytes), and fails with a marshal error (Ice's
//! `MarshalException`) once the total exceeds
//! [`CLASS_GRAPH_MEMORY_ALLOWANCE`] plus `factor` × the encapsulation's
//! size. The factor is [`CLASS_GRAPH_MEMORY_FACTOR`] by default
//! ([`crate::Decoder::set_class_graph_memory_factor`]; floe-runtime reads
//! it from the property `Floe.ClassGraphMemoryFactor`; 0 turns the budget
//! off). Ice has no such budget. Instances that carry a member pass (a
//! sequence of instances of a class with one `int`, 7 wire bytes each, is
//! charged some 19 bytes per wire byte), and the allowance admits some
//! 8,000 instances in any message; what the default refuses are denser
//! graphs, such as tens of thousands of member-less instances (3 wire
//! bytes each, some 35 bytes of memory per wire byte: more than Ice for
//! C++'s 34).

use super::slice::{SliceInfo, SliceTypeId};
use super::value::{Value, VALUE_CELL_SIZE};
use crate::decoder::Decoder;
use crate::error::{Error, Result};

/// Default for [`crate::Decoder::set_class_graph_memory_factor`]: decoded
/// class instances may take this many bytes of memory per byte of their
/// encapsulation, beyond [`CLASS_GRAPH_MEMORY_ALLOWANCE`].
pub const CLASS_GRAPH_MEMORY_FACTOR: usize = 24;

/// Memory every encapsulation may spend on class instances whatever its
/// size (1 MiB: some 8,000 small instances).
pub const CLASS_GRAPH_MEMORY_ALLOWANCE: usize = 1 << 20;

/// What an allocator hands out for a request of `n` bytes: a header, a
/// 32-byte minimum, 16-byte steps.
pub(crate) fn heap(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    (n + 8).max(32).next_multiple_of(16)
}

/// The fixed cost of one decoded instance: its shared cell (with the
/// reference counts) and its slot in the decoder's instance table.
pub(crate) fn instance_cost(slot_size: usize) -> usize {
    heap(VALUE_CELL_SIZE + 2 * std::mem::size_of::<usize>()) + slot_size
}

/// The cost of a decoded value's box.
pub(crate) fn value_cost(value: &dyn Value) -> usize {
    heap(std::mem::size_of_val(value))
}

/// The cost of a skipped slice kept as sliced data.
pub(crate) fn slice_cost(info: &SliceInfo) -> usize {
    let type_id = match &info.type_id {
        SliceTypeId::Name(s) => heap(s.len()),
        SliceTypeId::Compact(_) => 0,
    };
    std::mem::size_of::<SliceInfo>()
        + type_id
        + heap(std::mem::size_of_val(info.instances.as_slice()))
}

impl Decoder {
    /// Charges `bytes` of decoded class memory to this encapsulation.
    ///
    /// # Errors
    ///
    /// [`Error::Marshal`] when the total goes over the budget.
    pub(crate) fn charge_class_memory(&mut self, bytes: usize) -> Result<()> {
        let factor = self.class_graph_memory_factor;
        if factor == 0 {
            return Ok(());
        }
        let size = self.encapsulation_size;
        let limit = factor
            .saturating_mul(size)
            .saturating_add(CLASS_GRAPH_MEMORY_ALLOWANCE);
        let reader = self.class_reader();
        reader.charged = reader.charged.saturating_add(bytes);
        if reader.charged > limit {
            return Err(Error::marshal(format!(
                "class graph too large: its instances would take over {limit} bytes of memory \
                 (Floe.ClassGraphMemoryFactor {factor} x {size} bytes + {CLASS_GRAPH_MEMORY_ALLOWANCE})"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_rounds_like_an_allocator() {
        assert_eq!(heap(0), 0);
        assert_eq!(heap(1), 32);
        assert_eq!(heap(24), 32);
        assert_eq!(heap(25), 48);
        assert_eq!(heap(72), 80);
    }
}
