//! [`Encoder`]: writes encoding 1.0/1.1 data into a `BytesMut`.
//!
//! Writing cannot fail: the buffer grows as needed. Encapsulations are
//! written by [`Encoder::start_encapsulation`] / [`Encoder::end_encapsulation`],
//! which patch the size afterwards instead of encoding twice.
//!
//! A size Ice cannot express (over `i32::MAX`: a sequence, an encapsulation
//! or an `FSize` optional over 2 GB) does not panic and is never truncated:
//! it is written as -1, which no peer accepts, and recorded
//! ([`Encoder::oversized`]); [`Encoder::try_finish`] then fails with
//! `MemoryLimitException`. Such data is larger than any Ice frame, so
//! floe-runtime refuses to send it anyway.

use bytes::{BufMut, Bytes, BytesMut};

use crate::optional::OptionalFormat;
use crate::version::{EncodingVersion, ENCODING_1_1};

/// Writes Ice-encoded data.
///
/// ```
/// use floe_wire::Encoder;
/// let mut enc = Encoder::new();
/// enc.write_i32(6);
/// enc.write_string("hi");
/// assert_eq!(&enc.finish()[..], &[6, 0, 0, 0, 2, b'h', b'i']);
/// ```
#[derive(Debug)]
pub struct Encoder {
    buf: BytesMut,
    encoding: EncodingVersion,
    /// Open encapsulations: where each started and the encoding that was in
    /// force outside it. A `Vec` that stays unallocated for flat data.
    encaps: Vec<OpenEncapsulation>,
    /// Class/exception writing state of the current encapsulation, created
    /// on first use.
    pub(crate) classes: Option<Box<crate::class::ClassWriter>>,
    /// How class instances and exceptions are written (compact or sliced).
    class_format: crate::class::ClassFormat,
    /// The first size written that did not fit an `i32` (written as -1).
    oversized: Option<usize>,
}

impl Default for Encoder {
    fn default() -> Self {
        Self::new()
    }
}

/// An encapsulation being written: where it started and the state of the
/// enclosing one, restored when it closes.
#[derive(Debug)]
struct OpenEncapsulation {
    start: usize,
    outer_encoding: EncodingVersion,
    outer_classes: Option<Box<crate::class::ClassWriter>>,
}

/// Marks an open encapsulation; give it back to [`Encoder::end_encapsulation`].
#[derive(Debug)]
#[must_use = "an encapsulation must be closed with Encoder::end_encapsulation"]
pub struct EncapsulationMark(usize);

impl Encoder {
    /// An encoder for encoding 1.1 with an empty buffer.
    pub fn new() -> Self {
        Self::with_buffer(BytesMut::new(), ENCODING_1_1)
    }

    /// An encoder appending to `buf` in the given encoding. Reusing buffers
    /// avoids an allocation per message.
    pub fn with_buffer(buf: BytesMut, encoding: EncodingVersion) -> Self {
        Encoder {
            buf,
            encoding,
            encaps: Vec::new(),
            classes: None,
            class_format: crate::class::ClassFormat::Compact,
            oversized: None,
        }
    }

    /// An encoder with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_buffer(BytesMut::with_capacity(capacity), ENCODING_1_1)
    }

    /// The encoding in force (the innermost open encapsulation's).
    pub fn encoding(&self) -> EncodingVersion {
        self.encoding
    }

    /// Changes the encoding in force without opening an encapsulation.
    pub fn set_encoding(&mut self, encoding: EncodingVersion) {
        self.encoding = encoding;
    }

    /// How class instances and user exceptions are written from now on
    /// (default [`crate::class::ClassFormat::Compact`]). floe-runtime's
    /// encoders start with the communicator's `Ice.Default.SlicedFormat`,
    /// and generated code selects the format of operations (or interfaces)
    /// with `["format:sliced"]` or `["format:compact"]` metadata.
    pub fn class_format(&self) -> crate::class::ClassFormat {
        self.class_format
    }

    /// Selects the format of class instances and user exceptions.
    pub fn set_class_format(&mut self, format: crate::class::ClassFormat) {
        self.class_format = format;
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The bytes written so far.
    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }

    /// Mutable access to the underlying buffer (for framing code that patches
    /// headers in place).
    pub fn buffer_mut(&mut self) -> &mut BytesMut {
        &mut self.buf
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> BytesMut {
        self.buf
    }

    /// Freezes the written bytes.
    pub fn finish(self) -> Bytes {
        self.buf.freeze()
    }

    /// Writes one byte.
    #[inline]
    pub fn write_u8(&mut self, v: u8) {
        self.buf.put_u8(v);
    }

    /// Writes a bool as `00`/`01`.
    #[inline]
    pub fn write_bool(&mut self, v: bool) {
        self.buf.put_u8(v as u8);
    }

    /// Writes a short (int16 LE).
    #[inline]
    pub fn write_i16(&mut self, v: i16) {
        self.buf.put_i16_le(v);
    }

    /// Writes an int (int32 LE).
    #[inline]
    pub fn write_i32(&mut self, v: i32) {
        self.buf.put_i32_le(v);
    }

    /// Writes a long (int64 LE).
    #[inline]
    pub fn write_i64(&mut self, v: i64) {
        self.buf.put_i64_le(v);
    }

    /// Writes a float (binary32 LE).
    #[inline]
    pub fn write_f32(&mut self, v: f32) {
        self.buf.put_f32_le(v);
    }

    /// Writes a double (binary64 LE).
    #[inline]
    pub fn write_f64(&mut self, v: f64) {
        self.buf.put_f64_le(v);
    }

    /// Writes raw bytes with no size prefix.
    #[inline]
    pub fn write_raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Writes a size: one byte for 0..=254, else `ff` and an int32. A size
    /// over `i32::MAX`, which no Ice peer can represent, is written as -1
    /// and recorded ([`Encoder::oversized`]).
    #[inline]
    pub fn write_size(&mut self, n: usize) {
        if n < 255 {
            self.buf.put_u8(n as u8);
        } else {
            let n = self.wire_i32(n);
            self.buf.put_u8(0xff);
            self.buf.put_i32_le(n);
        }
    }

    /// `len` as an int32 size field, or -1 (recorded) if it does not fit.
    fn wire_i32(&mut self, len: usize) -> i32 {
        i32::try_from(len).unwrap_or_else(|_| {
            self.oversized.get_or_insert(len);
            -1
        })
    }

    /// The first size written that exceeded `i32::MAX` (and was written
    /// as -1), if any: the bytes are not valid Ice data.
    pub fn oversized(&self) -> Option<usize> {
        self.oversized
    }

    /// [`Encoder::finish`], checking that every size fit an int32.
    ///
    /// # Errors
    ///
    /// [`crate::Error::MemoryLimit`] (Ice's `MemoryLimitException`) if a
    /// sequence, encapsulation or `FSize` optional exceeded `i32::MAX`
    /// bytes or elements.
    pub fn try_finish(self) -> crate::Result<Bytes> {
        match self.oversized {
            Some(size) => Err(crate::Error::MemoryLimit {
                size,
                max: i32::MAX as usize,
            }),
            None => Ok(self.finish()),
        }
    }

    /// Writes a string: size (byte length) + UTF-8 bytes.
    #[inline]
    pub fn write_string(&mut self, s: &str) {
        self.write_size(s.len());
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// Writes a `sequence<byte>`: count + bytes.
    #[inline]
    pub fn write_byte_seq(&mut self, bytes: &[u8]) {
        self.write_size(bytes.len());
        self.buf.extend_from_slice(bytes);
    }

    /// Writes an enumerator `value` of an enum whose largest enumerator is
    /// `max_value`: a size in encoding 1.1; in 1.0 a byte, short or int
    /// depending on `max_value`.
    pub fn write_enum(&mut self, value: i32, max_value: i32) {
        if self.encoding == crate::version::ENCODING_1_0 {
            if max_value < 127 {
                self.write_u8(value as u8);
            } else if max_value < 32767 {
                self.write_i16(value as i16);
            } else {
                self.write_i32(value);
            }
        } else {
            self.write_size(value.max(0) as usize);
        }
    }

    /// Opens an encapsulation in `encoding`: writes a placeholder size and
    /// the version. Close it with [`Encoder::end_encapsulation`].
    pub fn start_encapsulation(&mut self, encoding: EncodingVersion) -> EncapsulationMark {
        let start = self.buf.len();
        self.buf.put_i32_le(0);
        self.buf.put_u8(encoding.major);
        self.buf.put_u8(encoding.minor);
        self.encaps.push(OpenEncapsulation {
            start,
            outer_encoding: self.encoding,
            outer_classes: self.classes.take(),
        });
        self.encoding = encoding;
        EncapsulationMark(start)
    }

    /// Closes the encapsulation opened by `mark`, patching its size. In
    /// encoding 1.0, first writes the class instances still owed
    /// ([`Encoder::write_pending_values`]) if a class reference was written.
    ///
    /// # Panics
    ///
    /// If `mark` is not the innermost open encapsulation (a programming error).
    pub fn end_encapsulation(&mut self, mark: EncapsulationMark) {
        self.finish_pending_values();
        let open = self
            .encaps
            .pop()
            .expect("end_encapsulation without start_encapsulation");
        assert_eq!(
            open.start, mark.0,
            "encapsulations must be closed innermost first"
        );
        let start = open.start;
        let size = self.wire_i32(self.buf.len() - start);
        self.buf[start..start + 4].copy_from_slice(&size.to_le_bytes());
        self.encoding = open.outer_encoding;
        self.classes = open.outer_classes;
    }

    /// Writes an empty encapsulation (`06 00 00 00 major minor`).
    pub fn write_empty_encapsulation(&mut self, encoding: EncodingVersion) {
        self.buf.put_i32_le(6);
        self.buf.put_u8(encoding.major);
        self.buf.put_u8(encoding.minor);
    }

    /// Writes an encapsulation whose bytes (size and version included) are
    /// already encoded, unchanged.
    pub fn write_encapsulation_bytes(&mut self, encaps: &[u8]) {
        self.buf.extend_from_slice(encaps);
    }

    /// Writes the tag byte(s) of an optional value: `(tag << 3) | format`
    /// for tags below 30, else `0xF0 | format` and the tag as a size.
    pub fn write_optional_tag(&mut self, tag: u32, format: OptionalFormat) {
        if let Some(classes) = &mut self.classes {
            // Inside a class or exception slice: flag 0x04 and an `ff` marker.
            classes.note_optional_member();
        }
        let f = format as u8;
        if tag < 30 {
            self.buf.put_u8(((tag as u8) << 3) | f);
        } else {
            self.buf.put_u8(0xf0 | f);
            self.write_size(tag as usize);
        }
    }

    /// Reserves an int32 length to be patched by [`Encoder::end_fsize`]
    /// (for optional values in the `FSize` format).
    pub fn start_fsize(&mut self) -> usize {
        let pos = self.buf.len();
        self.buf.put_i32_le(0);
        pos
    }

    /// Patches the int32 length reserved at `pos` with the bytes written
    /// since (-1, recorded, if they exceed `i32::MAX`).
    pub fn end_fsize(&mut self, pos: usize) {
        let len = self.wire_i32(self.buf.len() - pos - 4);
        self.buf[pos..pos + 4].copy_from_slice(&len.to_le_bytes());
    }
}
