//! [`Reader10`]: reading class instances and user exceptions in encoding
//! 1.0.
//!
//! A reference (`-n`) gets the shared handle of instance `n` at once: a
//! placeholder until [`Decoder::read_pending_values`] reads the instance
//! and swaps the value in, so references resolve in any order and no
//! patching pass is needed. Type checks on references to an instance not
//! read yet wait until it is. When every instance is read, the graph is
//! checked for ids that never came, cycles (unless accepted) and height.

use std::collections::HashMap;

use super::graph::{check_graph, GraphLimits, Slot};
use super::OBJECT_TYPE_ID;
use crate::class::budget;
use crate::class::value::{Value, ValuePtr};
use crate::decoder::Decoder;
use crate::error::{Error, Result};
use crate::exception::{UserException, UserExceptionRegistry};
use crate::version::ENCODING_1_0;

/// Per-encapsulation state for reading classes in encoding 1.0.
#[derive(Debug, Default, Clone)]
pub(crate) struct Reader10 {
    /// Type ids received as strings in instance slices, in order (index 1
    /// is the first).
    type_ids: Vec<String>,
    /// Every instance referenced or read, in order of first appearance.
    slots: Vec<Slot>,
    /// Slot of each instance id.
    by_id: HashMap<u32, usize>,
    /// The instance (or exception) being read, innermost last.
    frames: Vec<Frame>,
    /// A class reference was read: pending values follow the data.
    referenced: bool,
    /// [`Decoder::read_pending_values`] ran.
    pending_read: bool,
}

#[derive(Debug, Clone)]
struct Frame {
    exception: bool,
    /// The current slice's header was read while looking for a known type;
    /// the next `start_slice` consumes it.
    header_pending: bool,
    /// The instance being read (`None` for an exception).
    slot: Option<usize>,
    /// Its depth in the graph (from 1; 0 for an exception).
    depth: usize,
    slice: Option<Slice>,
}

#[derive(Debug, Clone)]
struct Slice {
    type_id: String,
    /// `remaining()` at the end of the slice.
    end: usize,
}

impl Frame {
    fn new(exception: bool, slot: Option<usize>, depth: usize) -> Self {
        Frame {
            exception,
            header_pending: false,
            slot,
            depth,
            slice: None,
        }
    }
}

/// Whether `text` can be a Slice type id (`::M::T`): what tells the next
/// slice of a 1.0 exception from the pending values after it.
fn looks_like_type_id(text: &str) -> bool {
    text.starts_with("::")
}

impl Decoder {
    fn reader10(&mut self) -> &mut Reader10 {
        &mut self.class_reader().v10
    }

    fn frame10(&mut self) -> Result<&mut Frame> {
        self.reader10()
            .frames
            .last_mut()
            .ok_or_else(crate::class::reader::no_frame)
    }

    /// The slot of instance `id`, created with a placeholder handle the
    /// first time the id appears (and charged to the class-graph memory
    /// budget).
    fn slot10(&mut self, id: u32) -> Result<usize> {
        let r = self.reader10();
        if let Some(&slot) = r.by_id.get(&id) {
            return Ok(slot);
        }
        let slot = r.slots.len();
        r.slots.push(Slot {
            id,
            ptr: ValuePtr::pending(),
            done: false,
            refs: Vec::new(),
            depth: 0,
        });
        r.by_id.insert(id, slot);
        // The slot, its entry in `by_id` (a key, a value, a control byte).
        let slot_size = std::mem::size_of::<Slot>() + 4 + std::mem::size_of::<usize>() + 1;
        self.charge_class_memory(budget::instance_cost(slot_size))?;
        Ok(slot)
    }

    /// Reads a class reference in encoding 1.0: `0` null, `-n` instance `n`.
    pub(in crate::class) fn read_value_10(&mut self) -> Result<Option<ValuePtr>> {
        let index = self.read_i32()?;
        self.reader10().referenced = true;
        if index == 0 {
            return Ok(None);
        }
        if index > 0 {
            return Err(Error::marshal(format!("invalid object id {index}")));
        }
        let slot = self.slot10(index.unsigned_abs())?;
        let r = self.reader10();
        let (from, depth) = r.frames.last().map_or((None, 0), |f| (f.slot, f.depth));
        if let Some(from) = from {
            r.slots[from].refs.push(slot);
        }
        let target = &mut r.slots[slot];
        if !target.done {
            target.depth = target.depth.max(depth);
        }
        Ok(Some(target.ptr.clone()))
    }

    /// Reads the class instances that follow the data in encoding 1.0
    /// (nothing in 1.1): rounds of (id, instance) up to a size `0`. This is
    /// Ice's `readPendingValues`. The handles returned by earlier reads of
    /// references then hold their instances.
    ///
    /// Call it after the parameters (or results) of an operation that
    /// sends classes. [`Decoder::finish_encapsulation`] calls it if a class
    /// reference was read and it was not called; so does
    /// [`Decoder::read_user_exception`] for an exception that uses classes.
    ///
    /// # Errors
    ///
    /// [`Error::Marshal`] for an invalid or repeated instance id, a
    /// reference to an instance that never came, a cycle (unless
    /// [`Decoder::set_accept_class_cycles`]), a graph deeper or higher than
    /// the limits; [`Error::NoValueFactory`] for an instance none of whose
    /// types is known; out of bounds and the instances' own errors. After
    /// an error every instance of the encapsulation is reset to a default
    /// of its type (which breaks any cycle, so nothing leaks): drop what
    /// was decoded.
    pub fn read_pending_values(&mut self) -> Result<()> {
        if self.encoding() != ENCODING_1_0 {
            return Ok(());
        }
        self.reader10().pending_read = true;
        let result = self.read_pending_rounds_10();
        if result.is_err() {
            self.reset_instances_10();
        }
        result
    }

    fn read_pending_rounds_10(&mut self) -> Result<()> {
        loop {
            let n = self.read_size()?;
            if n == 0 {
                break;
            }
            for _ in 0..n {
                self.read_instance_10()?;
            }
        }
        let limits = GraphLimits {
            accept_cycles: self.accept_class_cycles,
            height_max: self.class_graph_height_max,
        };
        check_graph(&self.reader10().slots, limits)
    }

    /// After an error, swaps every instance whose type is known (read, or
    /// being read) for a default one of the same type: the graph may have
    /// cycles (the error may be that it has one), which would leak, and a
    /// half-read instance is no value. The handles stay valid views of
    /// their types.
    fn reset_instances_10(&mut self) {
        let factories = self.value_factories.clone();
        for slot in &self.reader10().slots {
            let fresh = slot
                .ptr
                .known_type_ids()
                .and_then(|ids| ids.first())
                .and_then(|id| factories.as_ref().and_then(|f| f.find(id)));
            match fresh {
                Some(factory) => slot.ptr.replace(factory()),
                None if slot.done => slot.ptr.clear(),
                None => {}
            }
        }
    }

    /// Reads the pending values an encoding-1.0 encapsulation still holds
    /// (called when it is finished).
    pub(crate) fn finish_pending_values(&mut self) -> Result<()> {
        let owed = self.encoding() == ENCODING_1_0
            && self
                .classes
                .as_ref()
                .is_some_and(|c| c.v10.referenced && !c.v10.pending_read);
        if owed {
            self.read_pending_values()?;
        }
        Ok(())
    }

    /// Reads one pending instance: its id, its slices, the `::Ice::Object` slice.
    fn read_instance_10(&mut self) -> Result<()> {
        let index = self.read_i32()?;
        if index <= 0 {
            return Err(Error::marshal(format!("invalid object id {index}")));
        }
        let slot = self.slot10(index.unsigned_abs())?;
        let depth_max = self.class_graph_depth_max;
        let r = self.reader10();
        let Slot {
            done, depth, ptr, ..
        } = &r.slots[slot];
        if *done {
            return Err(Error::marshal(format!(
                "class instance {index} received twice"
            )));
        }
        let (depth, ptr) = (depth + 1, ptr.clone());
        if depth > depth_max {
            return Err(Error::marshal(format!(
                "maximum class graph depth ({depth_max}) reached"
            )));
        }
        r.frames.push(Frame::new(false, Some(slot), depth));
        let result = self.read_instance_slices_10(&ptr);
        let r = self.reader10();
        r.frames.pop();
        let value = result?;
        r.slots[slot].done = true;
        ptr.replace(value);
        Ok(())
    }

    /// Reads an instance's slices into a new value: skips unknown ones by
    /// their size until a slice's type has a factory; reaching the
    /// `::Ice::Object` slice first means no type is known.
    fn read_instance_slices_10(&mut self, ptr: &ValuePtr) -> Result<Box<dyn Value>> {
        let mut most_derived: Option<String> = None;
        loop {
            let slice = self.read_slice_header_10(false)?;
            let most_derived = most_derived.get_or_insert_with(|| slice.type_id.clone());
            if slice.type_id == OBJECT_TYPE_ID {
                return Err(Error::NoValueFactory {
                    type_id: most_derived.clone(),
                });
            }
            let Some(mut value) = self.new_value(&slice.type_id) else {
                // Sliced off, as Ice does (1.0 keeps no sliced data).
                self.skip_to_remaining(slice.end)?;
                continue;
            };
            self.charge_class_memory(budget::value_cost(&*value))?;
            let ids = value.ice_ids();
            // Checked first: a reference of another type keeps its stand-in.
            self.run_pending_checks(ptr, ids, value.ice_id())?;
            ptr.set_type_ids(ids);
            let frame = self.frame10()?;
            frame.slice = Some(slice);
            frame.header_pending = true;
            value.read_slices(self)?;
            if self.frame10()?.header_pending {
                return Err(Error::marshal(format!(
                    "Value::read_slices of `{}` did not read its slice",
                    value.ice_id()
                )));
            }
            self.read_object_slice_10()?;
            value.ice_post_unmarshal();
            return Ok(value);
        }
    }

    /// Reads the `::Ice::Object` slice that ends an instance: an empty
    /// facet map (its size `0`), as Ice checks.
    fn read_object_slice_10(&mut self) -> Result<()> {
        let slice = self.read_slice_header_10(false)?;
        if self.read_size()? != 0 {
            return Err(Error::marshal(format!(
                "invalid Object slice (`{}` with a facet map)",
                slice.type_id
            )));
        }
        self.skip_to_remaining(slice.end)
    }

    /// Reads a slice header: for an instance a bool and the type id as a
    /// string or an index, for an exception a string; then the int32 size.
    fn read_slice_header_10(&mut self, exception: bool) -> Result<Slice> {
        let type_id = if exception {
            self.read_string()?
        } else if self.read_bool()? {
            let i = self.read_size()?;
            let r = self.reader10();
            i.checked_sub(1)
                .and_then(|i| r.type_ids.get(i))
                .cloned()
                .ok_or_else(|| Error::marshal(format!("unknown type id index {i}")))?
        } else {
            let s = self.read_string()?;
            self.reader10().type_ids.push(s.clone());
            s
        };
        let size = self.read_i32()?;
        if size < 4 {
            return Err(Error::marshal(format!("invalid slice size {size}")));
        }
        let len = (size - 4) as usize;
        if len > self.remaining() {
            return Err(Error::out_of_bounds(len, self.remaining()).at("slice"));
        }
        Ok(Slice {
            type_id,
            end: self.remaining() - len,
        })
    }

    /// [`Decoder::start_slice`] in encoding 1.0.
    pub(in crate::class) fn start_slice_10(&mut self) -> Result<()> {
        let frame = self.frame10()?;
        if frame.header_pending {
            frame.header_pending = false;
            return Ok(());
        }
        let exception = frame.exception;
        let slice = self.read_slice_header_10(exception)?;
        self.frame10()?.slice = Some(slice);
        Ok(())
    }

    /// [`Decoder::end_slice`] in encoding 1.0: moves to the end of the
    /// slice (members this side does not know are skipped).
    pub(in crate::class) fn end_slice_10(&mut self) -> Result<()> {
        let slice = self
            .frame10()?
            .slice
            .take()
            .ok_or_else(crate::class::reader::no_frame)?;
        self.skip_to_remaining(slice.end)
    }

    /// Reads a user exception in encoding 1.0: the "uses classes" flag, the
    /// slices (unknown ones skipped by their size), then the pending values.
    pub(in crate::class) fn read_user_exception_10(
        &mut self,
        registry: &UserExceptionRegistry,
    ) -> Result<Box<dyn UserException>> {
        let uses_classes = self.read_bool()?;
        self.reader10().frames.push(Frame::new(true, None, 0));
        let result = self.read_exception_slices_10(registry, uses_classes);
        self.reader10().frames.pop();
        result
    }

    fn read_exception_slices_10(
        &mut self,
        registry: &UserExceptionRegistry,
        uses_classes: bool,
    ) -> Result<Box<dyn UserException>> {
        let mut slice = self.read_slice_header_10(true)?;
        let most_derived = slice.type_id.clone();
        loop {
            if let Some(factory) = registry.find(&slice.type_id) {
                let frame = self.frame10()?;
                frame.slice = Some(slice);
                frame.header_pending = true;
                let mut ex = factory();
                ex.read_slices(self)?;
                if self.frame10()?.header_pending {
                    return Err(Error::marshal(format!(
                        "UserException::read_slices of `{}` did not read its slice",
                        ex.ice_id()
                    )));
                }
                if uses_classes || self.reader10().referenced {
                    self.read_pending_values()?;
                }
                return Ok(ex);
            }
            self.skip_to_remaining(slice.end)?;
            // Nothing marks the last slice in 1.0: Ice reads on for the
            // next slice, and at the end of the data raises
            // `UnmarshalOutOfBoundsException`, as floe does. Where the
            // exception's pending values start (no type id follows), floe
            // stops with `UnknownUserException`.
            if self.is_empty() {
                return Err(Error::out_of_bounds(1, 0).at("user exception slices"));
            }
            match self.read_slice_header_10(true) {
                Ok(next) if looks_like_type_id(&next.type_id) => slice = next,
                _ => {
                    return Err(Error::UnknownUserException {
                        type_id: most_derived,
                    })
                }
            }
        }
    }
}
