//! [`ClassWriter`]: the per-encapsulation state for writing class instances
//! and user exceptions, and the [`Encoder`] methods that use it
//! (`write_value`, `write_class`, `start_slice`, `end_slice`). This file
//! writes encoding 1.1; in an encoding-1.0 encapsulation the methods hand
//! over to [`super::v10`].

use std::any::Any;
use std::collections::HashMap;

use super::flags;
use super::slice::{SliceTypeId, SlicedData};
use super::value::{ClassRef, UnknownSlicedValue, ValuePtr, ValueType};
use super::ClassFormat;
use crate::encoder::Encoder;
use crate::version::ENCODING_1_0;

/// Per-encapsulation state for writing class instances: instance ids,
/// registered type ids, and the instances and slices being written.
#[derive(Debug, Default)]
pub struct ClassWriter {
    /// Type ids written as strings so far, with their index (from 1).
    type_ids: HashMap<String, usize>,
    /// Instance ids (from 2) by instance address.
    marshaled: HashMap<usize, usize>,
    /// Keeps every marshaled instance alive so that an address cannot be
    /// reused by another instance within this encapsulation.
    keep_alive: Vec<ValuePtr>,
    /// The instances (or exception) being written, innermost last.
    frames: Vec<WriteFrame>,
    /// The state of an encoding-1.0 encapsulation.
    pub(super) v10: super::v10::Writer10,
}

#[derive(Debug)]
struct WriteFrame {
    exception: bool,
    first_slice: bool,
    slice: Option<OpenSlice>,
}

/// A slice whose flags and size are patched by `end_slice`.
#[derive(Debug)]
struct OpenSlice {
    /// Where the flags byte is.
    flags_pos: usize,
    size_pos: Option<usize>,
    flags: u8,
    /// Indirection table (sliced format): instances referenced by this slice.
    table: Vec<ValuePtr>,
    /// Position (from 1) in `table` by instance address.
    table_index: HashMap<usize, usize>,
}

/// How a slice header names its type.
enum TypeIdWrite<'a> {
    None,
    Compact(u32),
    Index(usize),
    String(&'a str),
}

impl ClassWriter {
    /// Notes that an optional member was written in the open slice (flag
    /// 0x04 and the `ff` end marker). No effect outside slices.
    pub(crate) fn note_optional_member(&mut self) {
        if let Some(slice) = self.frames.last_mut().and_then(|f| f.slice.as_mut()) {
            slice.flags |= flags::HAS_OPTIONAL_MEMBERS;
        }
    }

    fn type_id_write<'a>(&mut self, type_id: &'a str, compact_id: Option<u32>) -> TypeIdWrite<'a> {
        if let Some(c) = compact_id {
            return TypeIdWrite::Compact(c);
        }
        if let Some(&i) = self.type_ids.get(type_id) {
            return TypeIdWrite::Index(i);
        }
        let i = self.type_ids.len() + 1;
        self.type_ids.insert(type_id.to_owned(), i);
        TypeIdWrite::String(type_id)
    }
}

impl Encoder {
    pub(super) fn class_writer(&mut self) -> &mut ClassWriter {
        self.classes.get_or_insert_with(Default::default)
    }

    /// Writes a reference to a class instance of any type (`None` = null).
    ///
    /// Encoding 1.1: the instance inline the first time, a back-reference
    /// afterwards, or an index into the indirection table inside a
    /// sliced-format slice. Encoding 1.0: an instance id, the instance
    /// being written later by [`Encoder::write_pending_values`].
    pub fn write_value(&mut self, value: Option<&ValuePtr>) {
        if self.encoding() == ENCODING_1_0 {
            return self.write_value_10(value);
        }
        let Some(value) = value else {
            self.write_size(0);
            return;
        };
        let in_sliced_slice = self
            .class_writer()
            .frames
            .last_mut()
            .and_then(|f| f.slice.as_mut())
            .filter(|s| s.size_pos.is_some());
        if let Some(slice) = in_sliced_slice {
            let index = *slice.table_index.entry(value.addr()).or_insert_with(|| {
                slice.table.push(value.clone());
                slice.table.len()
            });
            self.write_size(index);
        } else {
            self.write_instance(value);
        }
    }

    /// Writes a reference to a class instance (`None` = null); see
    /// [`Encoder::write_value`].
    pub fn write_class<T: ValueType>(&mut self, value: Option<&ClassRef<T>>) {
        self.write_value(value.map(ClassRef::as_ptr))
    }

    /// Writes an instance reference outside indirection-table semantics:
    /// its id if already written, else `01` and the instance.
    fn write_instance(&mut self, value: &ValuePtr) {
        let writer = self.class_writer();
        if let Some(&id) = writer.marshaled.get(&value.addr()) {
            self.write_size(id);
            return;
        }
        let id = writer.marshaled.len() + 2;
        writer.marshaled.insert(value.addr(), id);
        writer.keep_alive.push(value.clone());
        writer.frames.push(WriteFrame {
            exception: false,
            first_slice: true,
            slice: None,
        });
        self.write_size(1);
        pre_marshal(value);
        let guard = value.read();
        let unknown = (&**guard as &dyn Any).is::<UnknownSlicedValue>();
        if let Some(sliced) = guard.ice_sliced_data() {
            // Preserved slices need the sliced format; in the compact format
            // they are dropped (as Ice does), except for an instance that has
            // nothing else.
            if self.class_format() == ClassFormat::Sliced || unknown {
                self.write_sliced_data(sliced);
            }
        }
        guard.write_slices(self);
        drop(guard);
        self.class_writer().frames.pop();
    }

    /// Runs `write` (which writes an exception's slices) in an exception
    /// frame. `uses_classes` is whether the exception's type has class
    /// members (encoding 1.0 says so in front of the slices). `preserved`
    /// are slices of unknown more-derived types kept from decoding
    /// (`["preserve-slice"]`): written first in the sliced format, dropped
    /// in the compact format and in 1.0, as Ice does.
    pub(crate) fn write_exception_frame(
        &mut self,
        uses_classes: bool,
        preserved: Option<&SlicedData>,
        write: impl FnOnce(&mut Encoder),
    ) {
        if self.encoding() == ENCODING_1_0 {
            return self.write_exception_10(uses_classes, write);
        }
        self.class_writer().frames.push(WriteFrame {
            exception: true,
            first_slice: true,
            slice: None,
        });
        if let Some(sliced) = preserved {
            if self.class_format() == ClassFormat::Sliced {
                self.write_sliced_data(sliced);
            }
        }
        write(self);
        self.class_writer().frames.pop();
    }

    /// Starts a slice of a class instance or user exception, inside
    /// [`crate::class::Value::write_slices`] or
    /// [`crate::exception::UserException::write_slices`]: `type_id` and
    /// `compact_id` are the slice's type, `last` is whether it is the
    /// base-most slice. The encoder writes the flags, type id (string, index
    /// or compact id, as the format and Ice's rules say) and slice size.
    ///
    /// # Panics
    ///
    /// If called outside `write_slices` (no instance or exception is being
    /// written): a bug in the calling code, never caused by input.
    pub fn start_slice(&mut self, type_id: &str, compact_id: Option<u32>, last: bool) {
        if self.encoding() == ENCODING_1_0 {
            // No compact ids and no last-slice flag in 1.0.
            return self.start_slice_10(type_id);
        }
        let sliced = self.class_format() == ClassFormat::Sliced;
        let flags_pos = self.len();
        let writer = self.class_writer();
        let frame = writer
            .frames
            .last_mut()
            .expect("Encoder::start_slice called outside Value/UserException::write_slices");
        let (exception, first) = (frame.exception, frame.first_slice);
        frame.first_slice = false;
        let id = if exception {
            // Exceptions: every slice, always a string, flag bits 0.
            TypeIdWrite::String(type_id)
        } else if first || sliced {
            writer.type_id_write(type_id, compact_id)
        } else {
            TypeIdWrite::None
        };
        let mut f = 0u8;
        self.write_u8(0);
        match id {
            TypeIdWrite::None => {}
            TypeIdWrite::Compact(c) => {
                f |= flags::TYPE_ID_COMPACT;
                self.write_size(c as usize);
            }
            TypeIdWrite::Index(i) => {
                f |= flags::TYPE_ID_INDEX;
                self.write_size(i);
            }
            TypeIdWrite::String(s) => {
                if !exception {
                    f |= flags::TYPE_ID_STRING;
                }
                self.write_string(s);
            }
        }
        let size_pos = sliced.then(|| {
            f |= flags::HAS_SLICE_SIZE;
            self.start_fsize()
        });
        if last {
            f |= flags::IS_LAST_SLICE;
        }
        let slice = OpenSlice {
            flags_pos,
            size_pos,
            flags: f,
            table: Vec::new(),
            table_index: HashMap::new(),
        };
        if let Some(frame) = self.class_writer().frames.last_mut() {
            frame.slice = Some(slice);
        }
    }

    /// Ends the slice opened by [`Encoder::start_slice`]: writes the `ff`
    /// marker if optional members were written, patches the size and flags,
    /// and writes the indirection table (sliced format).
    ///
    /// # Panics
    ///
    /// If no slice is open (a bug in the calling code).
    pub fn end_slice(&mut self) {
        if self.encoding() == ENCODING_1_0 {
            return self.end_slice_10();
        }
        let slice = self
            .class_writer()
            .frames
            .last_mut()
            .and_then(|f| f.slice.take())
            .expect("Encoder::end_slice without Encoder::start_slice");
        let mut f = slice.flags;
        if f & flags::HAS_OPTIONAL_MEMBERS != 0 {
            self.write_u8(0xff);
        }
        if let Some(pos) = slice.size_pos {
            self.patch_slice_size(pos);
        }
        if !slice.table.is_empty() {
            f |= flags::HAS_INDIRECTION_TABLE;
            self.write_size(slice.table.len());
            for value in &slice.table {
                self.write_instance(value);
            }
        }
        self.buffer_mut()[slice.flags_pos] = f;
    }

    /// Patches the int32 slice size at `pos`: it counts itself.
    pub(super) fn patch_slice_size(&mut self, pos: usize) {
        let size = i32::try_from(self.len() - pos).unwrap_or(i32::MAX);
        self.buffer_mut()[pos..pos + 4].copy_from_slice(&size.to_le_bytes());
    }

    /// Writes preserved slices back as they were received (in an exception
    /// frame, every type id as a plain string with no type-id flag bits).
    fn write_sliced_data(&mut self, sliced: &SlicedData) {
        let exception = self
            .class_writer()
            .frames
            .last()
            .is_some_and(|f| f.exception);
        for info in &sliced.slices {
            let flags_pos = self.len();
            self.write_u8(0);
            let mut f = flags::HAS_SLICE_SIZE;
            let id = match &info.type_id {
                SliceTypeId::Name(s) if exception => {
                    self.write_string(s);
                    TypeIdWrite::None
                }
                SliceTypeId::Name(s) => self.class_writer().type_id_write(s, None),
                SliceTypeId::Compact(c) => TypeIdWrite::Compact(*c),
            };
            match id {
                TypeIdWrite::None => {}
                TypeIdWrite::Compact(c) => {
                    f |= flags::TYPE_ID_COMPACT;
                    self.write_size(c as usize);
                }
                TypeIdWrite::Index(i) => {
                    f |= flags::TYPE_ID_INDEX;
                    self.write_size(i);
                }
                TypeIdWrite::String(s) => {
                    f |= flags::TYPE_ID_STRING;
                    self.write_string(s);
                }
            }
            let size_pos = self.start_fsize();
            self.write_raw(&info.bytes);
            self.patch_slice_size(size_pos);
            if info.has_optional_members {
                f |= flags::HAS_OPTIONAL_MEMBERS;
            }
            if info.is_last {
                f |= flags::IS_LAST_SLICE;
            }
            if !info.instances.is_empty() {
                f |= flags::HAS_INDIRECTION_TABLE;
                self.write_size(info.instances.len());
                for value in &info.instances {
                    match value {
                        Some(v) => self.write_instance(v),
                        None => self.write_size(0),
                    }
                }
            }
            self.buffer_mut()[flags_pos] = f;
            if let Some(frame) = self.class_writer().frames.last_mut() {
                frame.first_slice = false;
            }
        }
    }
}

/// Calls the instance's `ice_preMarshal` hook, if it has one, before it
/// is encoded.
pub(super) fn pre_marshal(value: &ValuePtr) {
    let wants = value.read().ice_has_pre_marshal();
    if wants {
        value.write().ice_pre_marshal();
    }
}

#[cfg(test)]
mod tests {
    use crate::class::{ClassFormat, Value, ValuePtr};
    use crate::decoder::Decoder;
    use crate::encoder::Encoder;
    use crate::error::Result;

    /// A two-slice class with a reference in its derived slice.
    #[derive(Debug, Default)]
    struct Two {
        r: Option<ValuePtr>,
    }
    impl Value for Two {
        fn ice_id(&self) -> &str {
            "::T::Two"
        }
        fn ice_ids(&self) -> &'static [&'static str] {
            &["::T::Two", "::T::One"]
        }
        fn write_slices(&self, enc: &mut Encoder) {
            enc.start_slice("::T::Two", None, false);
            enc.write_value(self.r.as_ref());
            enc.write_value(self.r.as_ref());
            enc.end_slice();
            enc.start_slice("::T::One", Some(3), true);
            enc.end_slice();
        }
        fn read_slices(&mut self, _dec: &mut Decoder) -> Result<()> {
            Ok(())
        }
    }

    /// A two-slice exception with a string member in each slice.
    #[derive(Debug, Default)]
    struct Ex;
    impl crate::exception::UserException for Ex {
        fn ice_id(&self) -> &'static str {
            "::T::D"
        }
        fn ice_ids(&self) -> &'static [&'static str] {
            &["::T::D", "::T::B"]
        }
        fn write_slices(&self, enc: &mut Encoder) {
            enc.start_slice("::T::D", None, false);
            enc.write_string("d");
            enc.end_slice();
            enc.start_slice("::T::B", None, true);
            enc.write_string("b");
            enc.end_slice();
        }
        fn read_slices(&mut self, _dec: &mut Decoder) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn exception_in_both_encodings() {
        let mut enc = Encoder::new();
        enc.write_user_exception(&Ex);
        assert_eq!(&enc.finish()[..], b"\x00\x06::T::D\x01d\x20\x06::T::B\x01b");
        // 1.0: usesClasses, then per slice the type id and a size that
        // counts itself.
        let mut enc = Encoder::with_buffer(Default::default(), crate::version::ENCODING_1_0);
        enc.write_user_exception(&Ex);
        assert_eq!(
            &enc.finish()[..],
            b"\x00\x06::T::D\x06\x00\x00\x00\x01d\x06::T::B\x06\x00\x00\x00\x01b"
        );
    }

    #[test]
    fn compact_slices() {
        let v = ValuePtr::new(Two { r: None });
        let mut enc = Encoder::new();
        enc.write_value(Some(&v));
        enc.write_value(Some(&v));
        // 01, first slice with string id, 2 nulls; base slice: no type id
        // in the compact format, last; then a back-reference to id 2.
        assert_eq!(&enc.finish()[..], b"\x01\x01\x08::T::Two\x00\x00\x20\x02");
    }

    #[test]
    fn sliced_slices_with_table_and_compact_id() {
        let inner = ValuePtr::new(Two { r: None });
        let v = ValuePtr::new(Two {
            r: Some(inner.clone()),
        });
        let mut enc = Encoder::new();
        enc.set_class_format(ClassFormat::Sliced);
        enc.write_value(Some(&v));
        let expected: &[u8] = b"\x01\
            \x19\x08::T::Two\x06\x00\x00\x00\x01\x01\
            \x01\x01\
                \x12\x01\x06\x00\x00\x00\x00\x00\
                \x33\x03\x04\x00\x00\x00\
            \x33\x03\x04\x00\x00\x00";
        // Outer Two: string id | size | table; r twice = index 1 twice;
        // table: inner instance (type id index 1), its base slice with
        // the compact id 3; then the outer base slice.
        assert_eq!(&enc.finish()[..], expected);
    }

    #[test]
    #[should_panic(expected = "outside")]
    fn start_slice_outside_write_slices_panics() {
        Encoder::new().start_slice("::T::Two", None, true);
    }
}
