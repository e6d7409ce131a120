//! [`ClassReader`]: the per-encapsulation state for reading class instances
//! and user exceptions, and the [`Decoder`] methods that use it
//! (`read_value`, `read_class`, `start_slice`, `end_slice`).
//!
//! How it reads: an instance (`01`) gets the next id (from 2) and a shared
//! placeholder handle at once, so back-references to it (cycles) resolve
//! while it is still being read. Its slices are read most-derived first until
//! one has a registered factory; in the sliced format the unknown ones are
//! skipped by their size and kept as [`SlicedData`]. A slice's indirection
//! table comes after its members on the wire, so it is read first (the slice
//! size says where it starts) and the members' table indexes resolve at once:
//! no patching pass is needed. The finished value replaces the placeholder.
//! Type checks for references to an instance whose type is not known yet are
//! deferred until it is.
//!
//! This file reads encoding 1.1; in an encoding-1.0 encapsulation the
//! methods hand over to [`super::v10`].

use std::collections::HashMap;

use super::budget;
use super::flags;
use super::slice::{SliceInfo, SliceTypeId, SlicedData};
use super::value::{ClassRef, UnknownSlicedValue, Value, ValuePtr, ValueType};
use crate::decoder::Decoder;
use crate::error::{Error, Result};
use crate::version::ENCODING_1_0;

/// Per-encapsulation state for reading class instances.
#[derive(Debug, Default, Clone)]
pub struct ClassReader {
    /// Type ids received as strings, in order (index 1 is the first).
    type_ids: Vec<String>,
    /// Instances by id − 2.
    instances: Vec<InstanceSlot>,
    /// Type checks waiting for an instance's type to be known, by address.
    pending_checks: HashMap<usize, Vec<&'static str>>,
    /// The instances (or exception) being read, innermost last.
    pub(super) frames: Vec<ReadFrame>,
    /// How many of `frames` are class instances (the nesting depth).
    class_depth: usize,
    /// The state of an encoding-1.0 encapsulation.
    pub(super) v10: super::v10::Reader10,
    /// Memory charged to the class-graph budget so far (see `budget.rs`).
    pub(super) charged: usize,
}

#[derive(Debug, Clone)]
struct InstanceSlot {
    ptr: ValuePtr,
    /// Whether the instance has been read completely.
    done: bool,
    /// Longest chain of references from this instance (1 = no references).
    height: usize,
}

#[derive(Debug, Clone)]
pub(super) struct ReadFrame {
    exception: bool,
    /// The current slice's header was read while looking for a known type;
    /// the next `start_slice` consumes it.
    pub(super) header_pending: bool,
    /// A slice with the last-slice flag was read (classes only: C++11 peers
    /// never set it on exceptions).
    saw_last: bool,
    pub(super) slice: Option<ReadSlice>,
    /// Highest height among the instances referenced so far.
    max_child_height: usize,
}

#[derive(Debug, Clone)]
pub(super) struct ReadSlice {
    pub(super) flags: u8,
    pub(super) type_id: Option<SliceTypeId>,
    /// `remaining()` at the end of the slice's data (sliced format).
    end: Option<usize>,
    /// `remaining()` after the indirection table.
    after_table: Option<usize>,
    table: Vec<Option<ValuePtr>>,
}

impl ReadFrame {
    pub(super) fn new(exception: bool) -> Self {
        ReadFrame {
            exception,
            header_pending: false,
            saw_last: false,
            slice: None,
            max_child_height: 0,
        }
    }
}

/// Skips an instance reference (optional value of format `Class`): the
/// instance is decoded and dropped, so that ids stay in step.
pub(crate) fn skip_instance_reference(dec: &mut Decoder) -> Result<()> {
    dec.read_value().map(drop)
}

impl ClassReader {
    /// Whether a class or exception slice is being read and its flags say
    /// it has no optional members.
    pub(crate) fn in_slice_without_optionals(&self) -> bool {
        self.frames
            .last()
            .and_then(|f| f.slice.as_ref())
            .is_some_and(|s| s.flags & flags::HAS_OPTIONAL_MEMBERS == 0)
    }
}

pub(super) fn no_frame() -> Error {
    Error::marshal("start_slice/end_slice outside of a class instance or exception")
}

impl Decoder {
    pub(super) fn class_reader(&mut self) -> &mut ClassReader {
        self.classes.get_or_insert_with(Default::default)
    }

    pub(super) fn top_frame(&mut self) -> Result<&mut ReadFrame> {
        self.class_reader().frames.last_mut().ok_or_else(no_frame)
    }

    /// Reads a reference to a class instance of any type (`None` = null).
    /// Inside a sliced-format slice the reference is an index into the
    /// slice's indirection table.
    ///
    /// In encoding 1.0 the reference is an instance id and the instance
    /// comes later: the handle returned holds a placeholder (of no type)
    /// until [`Decoder::read_pending_values`] (or
    /// [`Decoder::finish_encapsulation`]) has read it.
    ///
    /// # Errors
    ///
    /// [`Error::NoValueFactory`] for a compact-format instance of a type
    /// with no registered factory; [`Error::Marshal`] for a bad id or index,
    /// a cycle (unless accepted), or a graph deeper than the limits; and any
    /// error of the instance's members.
    pub fn read_value(&mut self) -> Result<Option<ValuePtr>> {
        if self.encoding() == ENCODING_1_0 {
            return self.read_value_10();
        }
        let index = self.read_size()?;
        let reader = self.class_reader();
        let sliced = reader
            .frames
            .last()
            .and_then(|f| f.slice.as_ref())
            .filter(|s| s.flags & flags::HAS_SLICE_SIZE != 0);
        if let Some(slice) = sliced {
            if index == 0 {
                return Ok(None);
            }
            return match slice.table.get(index - 1) {
                Some(entry) => Ok(entry.clone()),
                None => Err(Error::marshal(format!(
                    "indirection table index {index} out of range (table has {} entries)",
                    slice.table.len()
                ))),
            };
        }
        self.read_instance_ref(index)
    }

    /// Reads a reference to an instance of `T` or a class derived from `T`
    /// (`None` = null).
    ///
    /// In encoding 1.0 the instance comes later: until
    /// [`Decoder::read_pending_values`] (or
    /// [`Decoder::finish_encapsulation`]) has read it, the handle holds a
    /// default `T`, and the check that it is a `T` waits for it.
    ///
    /// # Errors
    ///
    /// As [`Decoder::read_value`], and [`Error::UnexpectedObject`] if the
    /// instance is not a `T`.
    pub fn read_class<T: ValueType>(&mut self) -> Result<Option<ClassRef<T>>> {
        let Some(ptr) = self.read_value()? else {
            return Ok(None);
        };
        match ptr.known_type_ids() {
            Some(ids) if ids.contains(&T::TYPE_ID) => {}
            Some(ids) => {
                return Err(Error::UnexpectedObject {
                    type_id: match ids.first() {
                        Some(id) => (*id).to_owned(),
                        // An UnknownSlicedValue: complete, so not locked.
                        None => ptr.read().ice_id().to_owned(),
                    },
                    expected: T::TYPE_ID.to_owned(),
                });
            }
            None => {
                // Still being read (or, in encoding 1.0, still to come) and
                // its type not known yet: check later. A 1.0 reference is
                // handed out before its instance: give it a stand-in so that
                // the typed view works meanwhile.
                if self.encoding() == ENCODING_1_0 {
                    ptr.stand_in::<T>();
                }
                self.class_reader()
                    .pending_checks
                    .entry(ptr.addr())
                    .or_default()
                    .push(T::TYPE_ID);
            }
        }
        Ok(Some(ClassRef::from_ptr_unchecked(ptr)))
    }

    /// Reads an instance reference with instance-id meaning: 0 null, 1 an
    /// inline instance, n ≥ 2 a back-reference.
    fn read_instance_ref(&mut self, index: usize) -> Result<Option<ValuePtr>> {
        let (ptr, height) = match index {
            0 => return Ok(None),
            1 => self.read_instance()?,
            n => {
                let accept_cycles = self.accept_class_cycles;
                let slot = self
                    .class_reader()
                    .instances
                    .get(n - 2)
                    .ok_or_else(|| Error::marshal(format!("no class instance with id {n}")))?;
                if !slot.done && !accept_cycles {
                    return Err(Error::marshal("cycle detected during Value unmarshaling"));
                }
                (slot.ptr.clone(), slot.height)
            }
        };
        if let Some(frame) = self.class_reader().frames.last_mut() {
            frame.max_child_height = frame.max_child_height.max(height);
        }
        Ok(Some(ptr))
    }

    /// Reads an inline instance (after its `01`). Returns it and its height.
    fn read_instance(&mut self) -> Result<(ValuePtr, usize)> {
        let depth_max = self.class_graph_depth_max;
        let height_max = self.class_graph_height_max;
        let reader = self.class_reader();
        if reader.class_depth >= depth_max {
            return Err(Error::marshal(format!(
                "maximum class graph depth ({depth_max}) reached"
            )));
        }
        let id = reader.instances.len() + 2;
        let ptr = ValuePtr::pending();
        reader.instances.push(InstanceSlot {
            ptr: ptr.clone(),
            done: false,
            height: 0,
        });
        self.charge_class_memory(budget::instance_cost(std::mem::size_of::<InstanceSlot>()))?;
        let reader = self.class_reader();
        reader.frames.push(ReadFrame::new(false));
        reader.class_depth += 1;
        let result = self.read_instance_slices(&ptr);
        let reader = self.class_reader();
        let frame = reader.frames.pop();
        reader.class_depth = reader.class_depth.saturating_sub(1);
        let value = result?;
        let height = 1 + frame.map_or(0, |f| f.max_child_height);
        if height > height_max {
            return Err(Error::marshal(format!(
                "class graph too high: a chain of {height} references exceeds {height_max}"
            )));
        }
        if let Some(slot) = reader.instances.get_mut(id - 2) {
            slot.done = true;
            slot.height = height;
        }
        ptr.replace(value);
        Ok((ptr, height))
    }

    /// Reads an instance's slices into a new value: skips unknown ones
    /// (sliced format) until a slice's type has a factory.
    fn read_instance_slices(&mut self, ptr: &ValuePtr) -> Result<Box<dyn Value>> {
        let mut skipped = Vec::new();
        let mut most_derived: Option<SliceTypeId> = None;
        loop {
            self.read_slice_header()?;
            let (type_id, slice_flags) = match self.top_frame()?.slice.as_ref() {
                Some(s) => (s.type_id.clone(), s.flags),
                None => return Err(no_frame()),
            };
            let Some(type_id) = type_id else {
                return Err(Error::marshal("class slice without a type id"));
            };
            let most_derived = most_derived.get_or_insert_with(|| type_id.clone());
            let made = match &type_id {
                SliceTypeId::Name(s) => self.new_value(s),
                SliceTypeId::Compact(c) => self
                    .value_factories
                    .as_ref()
                    .and_then(|f| f.find_compact(*c))
                    .map(|f| f()),
            };
            if let Some(mut value) = made {
                self.charge_class_memory(budget::value_cost(&*value))?;
                let ids = value.ice_ids();
                ptr.set_type_ids(ids);
                self.run_pending_checks(ptr, ids, value.ice_id())?;
                self.top_frame()?.header_pending = true;
                value.read_slices(self)?;
                if self.top_frame()?.header_pending {
                    return Err(Error::marshal(format!(
                        "Value::read_slices of `{}` did not read its slice",
                        value.ice_id()
                    )));
                }
                if !skipped.is_empty() {
                    // Kept as long as the instance: no spare capacity.
                    skipped.shrink_to_fit();
                    value.ice_set_sliced_data(SlicedData { slices: skipped });
                }
                value.ice_post_unmarshal();
                return Ok(value);
            }
            if slice_flags & flags::HAS_SLICE_SIZE == 0 {
                return Err(Error::NoValueFactory {
                    type_id: most_derived.to_text(),
                });
            }
            let info = self.skip_slice()?;
            self.charge_class_memory(budget::slice_cost(&info))?;
            let last = info.is_last;
            skipped.push(info);
            if last {
                let type_id = most_derived.to_text();
                self.charge_class_memory(
                    budget::heap(std::mem::size_of::<UnknownSlicedValue>())
                        + budget::heap(type_id.len()),
                )?;
                ptr.set_type_ids(&[]);
                self.run_pending_checks(ptr, &[], &type_id)?;
                // Kept as long as the instance: no spare capacity (a first
                // push reserves room for four slices).
                skipped.shrink_to_fit();
                return Ok(Box::new(UnknownSlicedValue {
                    type_id,
                    sliced_data: SlicedData { slices: skipped },
                }));
            }
        }
    }

    pub(super) fn run_pending_checks(
        &mut self,
        ptr: &ValuePtr,
        ids: &'static [&'static str],
        actual: &str,
    ) -> Result<()> {
        if let Some(expected) = self.class_reader().pending_checks.remove(&ptr.addr()) {
            if let Some(bad) = expected.iter().find(|e| !ids.contains(e)) {
                return Err(Error::UnexpectedObject {
                    type_id: actual.to_owned(),
                    expected: (*bad).to_owned(),
                });
            }
        }
        Ok(())
    }

    /// Reads a slice header into the top frame, and the slice's indirection
    /// table if it has one.
    pub(super) fn read_slice_header(&mut self) -> Result<()> {
        let frame = self.top_frame()?;
        let exception = frame.exception;
        if !exception && frame.saw_last {
            return Err(Error::marshal(
                "class instance has no more slices (last slice already read)",
            ));
        }
        let f = self.read_u8()?;
        let type_id = if exception {
            match f & flags::TYPE_ID_MASK {
                0 | flags::TYPE_ID_STRING => Some(SliceTypeId::Name(self.read_string()?)),
                _ => {
                    return Err(Error::marshal(
                        "exception slice with a type id index or compact id",
                    ))
                }
            }
        } else {
            match f & flags::TYPE_ID_MASK {
                0 => None,
                flags::TYPE_ID_STRING => {
                    let s = self.read_string()?;
                    self.class_reader().type_ids.push(s.clone());
                    Some(SliceTypeId::Name(s))
                }
                flags::TYPE_ID_INDEX => {
                    let i = self.read_size()?;
                    let s = i
                        .checked_sub(1)
                        .and_then(|i| self.class_reader().type_ids.get(i))
                        .ok_or_else(|| Error::marshal(format!("unknown type id index {i}")))?;
                    Some(SliceTypeId::Name(s.clone()))
                }
                _ => {
                    let c = self.read_size()?;
                    let c = u32::try_from(c)
                        .map_err(|_| Error::marshal(format!("compact type id {c} too large")))?;
                    Some(SliceTypeId::Compact(c))
                }
            }
        };
        let mut end = None;
        if f & flags::HAS_SLICE_SIZE != 0 {
            let size = self.read_i32()?;
            if size < 4 {
                return Err(Error::marshal(format!("invalid slice size {size}")));
            }
            let len = (size - 4) as usize;
            if len > self.remaining() {
                return Err(Error::out_of_bounds(len, self.remaining()).at("slice"));
            }
            end = Some(self.remaining() - len);
        }
        let mut after_table = None;
        let mut table = Vec::new();
        if f & flags::HAS_INDIRECTION_TABLE != 0 {
            let Some(end) = end else {
                return Err(Error::marshal(
                    "indirection table in a slice without a size",
                ));
            };
            // The table follows the slice's data: read it now, come back.
            let back = self.position();
            self.skip(self.remaining() - end)?;
            let n = self.read_count(1)?;
            if n == 0 {
                return Err(Error::marshal("empty indirection table"));
            }
            table.reserve_exact(n);
            for _ in 0..n {
                let index = self.read_size()?;
                table.push(self.read_instance_ref(index)?);
            }
            after_table = Some(self.remaining());
            self.rewind_to(back);
        }
        let frame = self.top_frame()?;
        if f & flags::IS_LAST_SLICE != 0 && !exception {
            frame.saw_last = true;
        }
        frame.slice = Some(ReadSlice {
            flags: f,
            type_id,
            end,
            after_table,
            table,
        });
        Ok(())
    }

    /// Skips the current slice (its header read), keeping it as a [`SliceInfo`].
    pub(super) fn skip_slice(&mut self) -> Result<SliceInfo> {
        let slice = self.top_frame()?.slice.take().ok_or_else(no_frame)?;
        let end = slice
            .end
            .ok_or_else(|| Error::marshal("cannot skip a slice without a size"))?;
        let len = self
            .remaining()
            .checked_sub(end)
            .ok_or_else(|| Error::marshal("slice overrun"))?;
        let bytes = self.read_bytes(len)?;
        if let Some(after) = slice.after_table {
            self.skip_to_remaining(after)?;
        }
        Ok(SliceInfo {
            type_id: slice
                .type_id
                .unwrap_or_else(|| SliceTypeId::Name(String::new())),
            bytes,
            instances: slice.table,
            has_optional_members: slice.flags & flags::HAS_OPTIONAL_MEMBERS != 0,
            is_last: slice.flags & flags::IS_LAST_SLICE != 0,
        })
    }

    /// Skips forward until `remaining()` is `target`.
    pub(super) fn skip_to_remaining(&mut self, target: usize) -> Result<()> {
        let n = self
            .remaining()
            .checked_sub(target)
            .ok_or_else(|| Error::marshal("slice members overran the slice size"))?;
        self.skip(n)
    }

    /// Starts reading a slice inside [`Value::read_slices`] or
    /// [`crate::UserException::read_slices`]: reads its header, unless the decoder
    /// already did while looking for a known type.
    ///
    /// # Errors
    ///
    /// Out of bounds or [`Error::Marshal`] for a bad header; a marshal error
    /// when called outside `read_slices`.
    pub fn start_slice(&mut self) -> Result<()> {
        if self.encoding() == ENCODING_1_0 {
            return self.start_slice_10();
        }
        let frame = self.top_frame()?;
        if frame.header_pending {
            frame.header_pending = false;
            return Ok(());
        }
        self.read_slice_header()
    }

    /// Ends the slice started by [`Decoder::start_slice`]: skips optional
    /// members this side does not know (up to the `ff` marker), and in the
    /// sliced format moves past the slice's data and indirection table.
    ///
    /// # Errors
    ///
    /// [`Error::Marshal`] if the members overran the slice's size, or no
    /// slice is open.
    pub fn end_slice(&mut self) -> Result<()> {
        if self.encoding() == ENCODING_1_0 {
            return self.end_slice_10();
        }
        let slice_flags = match self.top_frame()?.slice.as_ref() {
            Some(s) => s.flags,
            None => return Err(no_frame()),
        };
        if slice_flags & flags::HAS_OPTIONAL_MEMBERS != 0 {
            // The slice is still current, so optional class references
            // resolve through its indirection table.
            self.skip_optionals_to_end_marker()?;
        }
        let slice = self.top_frame()?.slice.take().ok_or_else(no_frame)?;
        if let Some(end) = slice.end {
            self.skip_to_remaining(end)?;
        }
        if let Some(after) = slice.after_table {
            self.skip_to_remaining(after)?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;
