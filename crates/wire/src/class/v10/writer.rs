//! [`Writer10`]: writing class instances and user exceptions in encoding
//! 1.0. References become ids, the instances are queued and written by
//! [`Encoder::write_pending_values`] in rounds.

use std::collections::HashMap;

use super::OBJECT_TYPE_ID;
use crate::class::value::ValuePtr;
use crate::encoder::Encoder;
use crate::version::ENCODING_1_0;

/// Per-encapsulation state for writing classes in encoding 1.0.
#[derive(Debug, Default)]
pub(crate) struct Writer10 {
    /// Instance ids (from 1) by instance address, written or queued.
    ids: HashMap<usize, i32>,
    /// Referenced instances not written yet, in id order: the next round.
    queue: Vec<(i32, ValuePtr)>,
    /// Keeps every referenced instance alive, so that an address cannot be
    /// reused by another instance within this encapsulation.
    keep_alive: Vec<ValuePtr>,
    /// Type ids written as strings so far, with their index (from 1).
    type_ids: HashMap<String, usize>,
    /// The instances (or exception) being written, innermost last.
    frames: Vec<Frame>,
    /// A class reference (null or not) was written: the encapsulation owes
    /// its pending values.
    referenced: bool,
    /// [`Encoder::write_pending_values`] ran.
    pending_written: bool,
}

#[derive(Debug)]
struct Frame {
    exception: bool,
    /// Where the open slice's int32 size is.
    size_pos: Option<usize>,
}

impl Encoder {
    fn writer10(&mut self) -> &mut Writer10 {
        &mut self.class_writer().v10
    }

    /// Writes a class reference in encoding 1.0: `0` for null, else minus
    /// the instance's id, queueing the instance if it is new.
    pub(in crate::class) fn write_value_10(&mut self, value: Option<&ValuePtr>) {
        let w = self.writer10();
        w.referenced = true;
        let Some(value) = value else {
            self.write_i32(0);
            return;
        };
        let id = match w.ids.get(&value.addr()) {
            Some(&id) => id,
            None => {
                let id = i32::try_from(w.ids.len() + 1).unwrap_or(i32::MAX);
                w.ids.insert(value.addr(), id);
                w.keep_alive.push(value.clone());
                w.queue.push((id, value.clone()));
                id
            }
        };
        self.write_i32(-id);
    }

    /// Writes the class instances referenced so far and not written yet
    /// (encoding 1.0; nothing in 1.1, where instances are written inline):
    /// rounds of (id, instance) until no new instance is referenced, then
    /// the size `0` that ends the list. This is Ice's `writePendingValues`.
    ///
    /// Call it after the parameters (or results) of an operation that sends
    /// classes. [`Encoder::end_encapsulation`] calls it for an
    /// encapsulation in which a class reference was written and it was not
    /// called, and [`Encoder::write_user_exception`] for an exception that
    /// uses classes; an explicit call is needed only when the class-typed
    /// values wrote no reference at all (an empty sequence of classes), so
    /// that the `0` a 1.0 reader expects is there.
    ///
    /// ```
    /// use floe_wire::{Encoder, ENCODING_1_0};
    /// let mut enc = Encoder::new();
    /// let mark = enc.start_encapsulation(ENCODING_1_0);
    /// enc.write_size(0); // an empty sequence<Base>
    /// enc.write_pending_values();
    /// enc.end_encapsulation(mark);
    /// assert_eq!(&enc.as_slice()[6..], &[0, 0]);
    /// ```
    pub fn write_pending_values(&mut self) {
        if self.encoding() != ENCODING_1_0 {
            return;
        }
        self.writer10().pending_written = true;
        loop {
            let round = std::mem::take(&mut self.writer10().queue);
            if round.is_empty() {
                break;
            }
            self.write_size(round.len());
            for (id, value) in round {
                self.write_i32(id);
                self.write_instance_10(&value);
            }
        }
        self.write_size(0);
    }

    /// Writes the pending values an encoding-1.0 encapsulation still owes
    /// (called when it is closed).
    pub(crate) fn finish_pending_values(&mut self) {
        if self.encoding() != ENCODING_1_0 {
            return;
        }
        let owed = self.classes.as_ref().is_some_and(|c| {
            !c.v10.queue.is_empty() || (c.v10.referenced && !c.v10.pending_written)
        });
        if owed {
            self.write_pending_values();
        }
    }

    /// Writes one instance (after its id): its slices, then the
    /// `::Ice::Object` slice with an empty facet map.
    fn write_instance_10(&mut self, value: &ValuePtr) {
        self.writer10().frames.push(Frame {
            exception: false,
            size_pos: None,
        });
        // Preserved slices (`ice_sliced_data`) are not written in 1.0, as
        // Ice does: the format has no way to keep them.
        super::super::writer::pre_marshal(value);
        value.read().write_slices(self);
        self.start_slice_10(OBJECT_TYPE_ID);
        self.write_size(0);
        self.end_slice_10();
        self.writer10().frames.pop();
    }

    /// Writes a user exception in encoding 1.0: the "uses classes" flag,
    /// the slices `write` writes, then the pending values if the exception
    /// uses classes (`uses_classes`, or a class reference was written).
    pub(in crate::class) fn write_exception_10(
        &mut self,
        uses_classes: bool,
        write: impl FnOnce(&mut Encoder),
    ) {
        let flag_pos = self.len();
        self.write_bool(uses_classes);
        let w = self.writer10();
        let referenced_before = std::mem::replace(&mut w.referenced, false);
        w.frames.push(Frame {
            exception: true,
            size_pos: None,
        });
        write(self);
        let w = self.writer10();
        w.frames.pop();
        let referenced = w.referenced;
        w.referenced |= referenced_before;
        if uses_classes || referenced {
            self.buffer_mut()[flag_pos] = 1;
            self.write_pending_values();
        }
    }

    /// Starts a slice in encoding 1.0: the type id (a string for an
    /// exception; for an instance a bool, then the string the first time or
    /// its index after), and a placeholder for the int32 size.
    pub(in crate::class) fn start_slice_10(&mut self, type_id: &str) {
        let w = self.writer10();
        let exception = w
            .frames
            .last()
            .expect("Encoder::start_slice called outside Value/UserException::write_slices")
            .exception;
        if exception {
            self.write_string(type_id);
        } else if let Some(&index) = w.type_ids.get(type_id) {
            self.write_bool(true);
            self.write_size(index);
        } else {
            let index = w.type_ids.len() + 1;
            w.type_ids.insert(type_id.to_owned(), index);
            self.write_bool(false);
            self.write_string(type_id);
        }
        let pos = self.start_fsize();
        if let Some(frame) = self.writer10().frames.last_mut() {
            frame.size_pos = Some(pos);
        }
    }

    /// Ends a slice in encoding 1.0: patches its size.
    pub(in crate::class) fn end_slice_10(&mut self) {
        let pos = self
            .writer10()
            .frames
            .last_mut()
            .and_then(|f| f.size_pos.take())
            .expect("Encoder::end_slice without Encoder::start_slice");
        self.patch_slice_size(pos);
    }
}
