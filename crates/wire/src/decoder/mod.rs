//! [`Decoder`]: reads encoding 1.0/1.1 data from a `Bytes` without copying.
//!
//! Every read checks the bytes that remain first and returns
//! [`Error::UnmarshalOutOfBounds`] instead of panicking. Counts read from the
//! input never size an allocation beyond what the remaining bytes can hold
//! (each element needs at least its minimum wire size).
//!
//! An encapsulation is decoded by a decoder of its own
//! ([`Decoder::read_encapsulation`] then [`Decoder::from_encapsulation`]), so
//! per-encapsulation state (encoding version, class instance ids) needs no
//! stack.

mod optionals;

use bytes::{Buf, Bytes};
use compact_str::CompactString;

use crate::error::{Error, Result};
use crate::version::{EncodingVersion, ENCODING_1_0, ENCODING_1_1};

pub use crate::encapsulation::Encapsulation;

/// Reads Ice-encoded data.
///
/// ```
/// use bytes::Bytes;
/// use floe_wire::Decoder;
/// let mut dec = Decoder::new(Bytes::from_static(&[6, 0, 0, 0, 2, b'h', b'i']));
/// assert_eq!(dec.read_i32().unwrap(), 6);
/// assert_eq!(dec.read_string().unwrap(), "hi");
/// assert!(dec.read_u8().is_err()); // nothing left: an error, not a panic
/// ```
#[derive(Debug, Clone)]
pub struct Decoder {
    buf: Bytes,
    encoding: EncodingVersion,
    /// Class/exception reading state of this encapsulation, created on first use.
    pub(crate) classes: Option<Box<crate::class::ClassReader>>,
    /// Maximum nesting depth of class graphs (`Ice.ClassGraphDepthMax`).
    pub(crate) class_graph_depth_max: usize,
    /// Maximum height of a decoded class graph (longest chain of references),
    /// which bounds the recursion of dropping it.
    pub(crate) class_graph_height_max: usize,
    /// Whether class graphs with cycles are accepted (`Ice.AcceptClassCycles`).
    pub(crate) accept_class_cycles: bool,
    /// Bytes of decoded class instances allowed per byte of the
    /// encapsulation (`Floe.ClassGraphMemoryFactor`; 0: no budget).
    pub(crate) class_graph_memory_factor: usize,
    /// Size of the encapsulation data this decoder was made for (the
    /// class-graph memory budget is relative to it).
    pub(crate) encapsulation_size: usize,
    /// Factories for class instances, by type id and compact id.
    pub(crate) value_factories: Option<std::sync::Arc<crate::class::ValueFactoryRegistry>>,
    /// The application's factories, asked first.
    pub(crate) value_factory_manager: Option<std::sync::Arc<crate::class::ValueFactoryManager>>,
    /// What the I/O layer gives the values it decodes (floe-runtime: its
    /// communicator, so that a decoded proxy is a live one), opaque here.
    context: Option<DecoderContext>,
}

/// An opaque value a decoder carries for the types it decodes (Ice's
/// input stream carries its communicator): see [`Decoder::set_context`].
pub type DecoderContext = std::sync::Arc<dyn std::any::Any + Send + Sync>;

impl Decoder {
    /// A decoder over `buf` in encoding 1.1.
    pub fn new(buf: Bytes) -> Self {
        Self::with_encoding(buf, ENCODING_1_1)
    }

    /// A decoder over `buf` in the given encoding.
    pub fn with_encoding(buf: Bytes, encoding: EncodingVersion) -> Self {
        Decoder {
            encapsulation_size: buf.len(),
            buf,
            encoding,
            classes: None,
            class_graph_depth_max: 100,
            class_graph_height_max: crate::class::CLASS_GRAPH_HEIGHT_MAX,
            accept_class_cycles: false,
            class_graph_memory_factor: crate::class::CLASS_GRAPH_MEMORY_FACTOR,
            value_factories: None,
            value_factory_manager: None,
            context: None,
        }
    }

    /// A decoder over the data of an encapsulation.
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedEncoding`] if the encapsulation's version is not 1.0 or 1.1.
    pub fn from_encapsulation(encaps: Encapsulation) -> Result<Self> {
        if !encaps.encoding.is_supported() {
            return Err(Error::UnsupportedEncoding {
                major: encaps.encoding.major,
                minor: encaps.encoding.minor,
            });
        }
        Ok(Self::with_encoding(encaps.data, encaps.encoding))
    }

    /// Reads the parameters of an operation that has none (Ice's
    /// `readEmptyParams`): an empty encapsulation is accepted at once,
    /// anything else is read as [`Decoder::finish_encapsulation`] would
    /// (optional members a newer caller sent are skipped).
    ///
    /// ```
    /// use floe_wire::{Decoder, Encapsulation, ENCODING_1_1};
    /// assert!(Decoder::read_empty_params(Encapsulation::empty(ENCODING_1_1)).is_ok());
    /// let extra = Encapsulation { encoding: ENCODING_1_1, data: vec![7u8].into() };
    /// assert!(Decoder::read_empty_params(extra).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`Decoder::from_encapsulation`] and
    /// [`Decoder::finish_encapsulation`].
    #[inline]
    pub fn read_empty_params(encaps: Encapsulation) -> Result<()> {
        if encaps.data.is_empty() && encaps.encoding.is_supported() {
            return Ok(());
        }
        Self::from_encapsulation(encaps)?.finish_encapsulation()
    }

    /// Sets `Ice.ClassGraphDepthMax` for this decoder: how deeply class
    /// instances may nest inline (default 100).
    pub fn set_class_graph_depth_max(&mut self, depth: usize) {
        self.class_graph_depth_max = depth;
    }

    /// Sets the longest chain of class references a decoded graph may have
    /// (default [`crate::class::CLASS_GRAPH_HEIGHT_MAX`]). Chains built from
    /// back-references do not nest, so the depth limit does not catch them,
    /// but dropping a long chain recurses once per link.
    pub fn set_class_graph_height_max(&mut self, height: usize) {
        self.class_graph_height_max = height;
    }

    /// Sets the class-graph memory budget (`Floe.ClassGraphMemoryFactor`):
    /// the class instances decoded from this encapsulation may take
    /// `factor` bytes of memory per byte of the encapsulation, beyond a
    /// fixed [`crate::class::CLASS_GRAPH_MEMORY_ALLOWANCE`]; more is a
    /// [`Error::Marshal`]. Default
    /// [`crate::class::CLASS_GRAPH_MEMORY_FACTOR`]; 0 turns the budget off.
    pub fn set_class_graph_memory_factor(&mut self, factor: usize) {
        self.class_graph_memory_factor = factor;
    }

    /// Sets `Ice.AcceptClassCycles`: whether class graphs with cycles are
    /// accepted (default `false`, as C++ peers; cycles of
    /// [`crate::class::ClassRef`]s leak unless the application breaks them).
    pub fn set_accept_class_cycles(&mut self, accept: bool) {
        self.accept_class_cycles = accept;
    }

    /// Sets the factories used to instantiate class instances by type id.
    pub fn set_value_factories(
        &mut self,
        factories: std::sync::Arc<crate::class::ValueFactoryRegistry>,
    ) {
        self.value_factories = Some(factories);
    }

    /// The factories set with [`Decoder::set_value_factories`].
    pub fn value_factories(&self) -> Option<&std::sync::Arc<crate::class::ValueFactoryRegistry>> {
        self.value_factories.as_ref()
    }

    /// Sets the application's value factories (Ice's
    /// `ValueFactoryManager`), asked before the generated ones set with
    /// [`Decoder::set_value_factories`].
    pub fn set_value_factory_manager(
        &mut self,
        manager: std::sync::Arc<crate::class::ValueFactoryManager>,
    ) {
        self.value_factory_manager = Some(manager);
    }

    /// A new instance for `type_id`: from the application's factories,
    /// else the generated registry.
    pub(crate) fn new_value(&self, type_id: &str) -> Option<Box<dyn crate::class::Value>> {
        if let Some(v) = self
            .value_factory_manager
            .as_ref()
            .and_then(|m| m.create(type_id))
        {
            return Some(v);
        }
        self.value_factories
            .as_ref()
            .and_then(|f| f.find(type_id))
            .map(|f| f())
    }

    /// Sets the context the decoded types may use: floe-runtime gives its
    /// communicator, which [`crate::ProxyType`] implementations need to
    /// make live proxies.
    pub fn set_context(&mut self, context: DecoderContext) {
        self.context = Some(context);
    }

    /// The context set with [`Decoder::set_context`].
    pub fn context(&self) -> Option<&DecoderContext> {
        self.context.as_ref()
    }

    /// The unread bytes as a cheap handle, to come back to this position
    /// with [`Decoder::rewind_to`].
    pub(crate) fn position(&self) -> Bytes {
        self.buf.clone()
    }

    /// Goes back (or forward) to a position taken with [`Decoder::position`]
    /// from this decoder.
    pub(crate) fn rewind_to(&mut self, position: Bytes) {
        self.buf = position;
    }

    /// The encoding being read.
    pub fn encoding(&self) -> EncodingVersion {
        self.encoding
    }

    /// Bytes left to read.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// Whether everything was read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The unread bytes, without consuming them.
    pub fn peek_remaining(&self) -> &[u8] {
        &self.buf
    }

    /// Consumes the decoder, returning what was not read.
    pub fn into_remaining(self) -> Bytes {
        self.buf
    }

    #[inline]
    fn need(&self, n: usize) -> Result<()> {
        if self.buf.len() < n {
            Err(Error::out_of_bounds(n, self.buf.len()))
        } else {
            Ok(())
        }
    }

    /// Looks at the next byte without consuming it.
    #[inline]
    pub fn peek_u8(&self) -> Option<u8> {
        self.buf.first().copied()
    }

    /// Reads one byte.
    #[inline]
    pub fn read_u8(&mut self) -> Result<u8> {
        self.need(1)?;
        Ok(self.buf.get_u8())
    }

    /// Reads a bool (any nonzero byte is true, as C++ peers read it).
    #[inline]
    pub fn read_bool(&mut self) -> Result<bool> {
        Ok(self.read_u8()? != 0)
    }

    /// Reads a short.
    #[inline]
    pub fn read_i16(&mut self) -> Result<i16> {
        self.need(2)?;
        Ok(self.buf.get_i16_le())
    }

    /// Reads an int.
    #[inline]
    pub fn read_i32(&mut self) -> Result<i32> {
        self.need(4)?;
        Ok(self.buf.get_i32_le())
    }

    /// Reads a long.
    #[inline]
    pub fn read_i64(&mut self) -> Result<i64> {
        self.need(8)?;
        Ok(self.buf.get_i64_le())
    }

    /// Reads a float.
    #[inline]
    pub fn read_f32(&mut self) -> Result<f32> {
        self.need(4)?;
        Ok(self.buf.get_f32_le())
    }

    /// Reads a double.
    #[inline]
    pub fn read_f64(&mut self) -> Result<f64> {
        self.need(8)?;
        Ok(self.buf.get_f64_le())
    }

    /// Reads a size (§4.1): one byte, or `ff` and a non-negative int32.
    #[inline]
    pub fn read_size(&mut self) -> Result<usize> {
        let b = self.read_u8()?;
        if b < 255 {
            return Ok(b as usize);
        }
        let n = self.read_i32()?;
        if n < 0 {
            return Err(Error::out_of_bounds(0, self.remaining()).at("negative size"));
        }
        Ok(n as usize)
    }

    /// Reads a count of elements that each take at least `min_elem_size`
    /// bytes, and checks that so many can fit in what remains. Use it before
    /// allocating for a sequence or dictionary.
    #[inline]
    pub fn read_count(&mut self, min_elem_size: usize) -> Result<usize> {
        let n = self.read_size()?;
        self.check_count(n, min_elem_size)?;
        Ok(n)
    }

    /// Checks that `n` elements of at least `min_elem_size` bytes can fit in
    /// the remaining bytes.
    #[inline]
    pub fn check_count(&self, n: usize, min_elem_size: usize) -> Result<()> {
        let need = n.saturating_mul(min_elem_size.max(1));
        if need > self.buf.len() {
            return Err(Error::out_of_bounds(need, self.buf.len()));
        }
        Ok(())
    }

    /// Takes the next `n` bytes as a zero-copy slice.
    #[inline]
    pub fn read_bytes(&mut self, n: usize) -> Result<Bytes> {
        self.need(n)?;
        Ok(self.buf.split_to(n))
    }

    /// Hands the next `n` bytes to `f` as a borrowed slice and moves past
    /// them: for values copied out of the input (numeric sequences), this
    /// saves the reference-count traffic of a [`read_bytes`](Self::read_bytes)
    /// slice.
    ///
    /// # Errors
    ///
    /// Out of bounds if fewer than `n` bytes remain.
    #[inline]
    pub fn read_slice_with<T>(&mut self, n: usize, f: impl FnOnce(&[u8]) -> T) -> Result<T> {
        self.need(n)?;
        let value = f(&self.buf[..n]);
        self.buf.advance(n);
        Ok(value)
    }

    /// Skips `n` bytes.
    #[inline]
    pub fn skip(&mut self, n: usize) -> Result<()> {
        self.need(n)?;
        self.buf.advance(n);
        Ok(())
    }

    /// Reads a `sequence<byte>` as a zero-copy slice of the input.
    #[inline]
    pub fn read_byte_seq(&mut self) -> Result<Bytes> {
        let n = self.read_size()?;
        self.read_bytes(n)
    }

    /// Reads a string (size + UTF-8 bytes).
    ///
    /// # Errors
    ///
    /// Out of bounds if the size exceeds the data; [`Error::Marshal`] if the
    /// bytes are not UTF-8.
    pub fn read_string(&mut self) -> Result<String> {
        self.read_str_with(str::to_owned)
    }

    /// Reads a string into a [`CompactString`]: strings of up to 24 bytes
    /// are kept inline, without a heap allocation (like C++'s
    /// small-string optimisation). The wire form is that of
    /// [`read_string`](Self::read_string).
    ///
    /// ```
    /// use floe_wire::Decoder;
    /// let mut dec = Decoder::new(bytes::Bytes::from_static(b"\x05hello"));
    /// let s = dec.read_compact_string().unwrap();
    /// assert_eq!(s, "hello");
    /// assert!(!s.is_heap_allocated());
    /// ```
    ///
    /// # Errors
    ///
    /// As [`read_string`](Self::read_string).
    #[inline]
    pub fn read_compact_string(&mut self) -> Result<CompactString> {
        self.read_str_with(|s| CompactString::new(s))
    }

    /// Reads a string's size and bytes, checks them as UTF-8 and hands the
    /// `str` (borrowed from the input) to `make`.
    #[inline(always)]
    fn read_str_with<T>(&mut self, make: impl FnOnce(&str) -> T) -> Result<T> {
        let n = self.read_size()?;
        self.need(n)?;
        let bytes = &self.buf[..n];
        // Nearly all strings on the wire are ASCII: checking that is a
        // word-at-a-time scan, much cheaper than full UTF-8 validation.
        let s = if bytes.is_ascii() {
            // SAFETY: ASCII bytes are valid UTF-8.
            unsafe { std::str::from_utf8_unchecked(bytes) }
        } else {
            std::str::from_utf8(bytes)
                .map_err(|e| Error::marshal(format!("string is not valid UTF-8: {e}")))?
        };
        let value = make(s);
        self.buf.advance(n);
        Ok(value)
    }

    /// Reads an enumerator value of an enum whose largest enumerator is
    /// `max_value` (size in 1.1; byte/short/int in 1.0). The caller checks
    /// that the value is a declared enumerator.
    pub fn read_enum(&mut self, max_value: i32) -> Result<i32> {
        if self.encoding == ENCODING_1_0 {
            if max_value < 127 {
                Ok(self.read_u8()? as i32)
            } else if max_value < 32767 {
                Ok(self.read_i16()? as i32)
            } else {
                self.read_i32()
            }
        } else {
            let v = self.read_size()?;
            i32::try_from(v).map_err(|_| Error::marshal(format!("enumerator {v} out of range")))
        }
    }

    /// Reads an encapsulation header and its data (zero copy).
    ///
    /// # Errors
    ///
    /// Out of bounds if the size is below 6 or past the end of the data.
    /// The version is returned as found; [`Decoder::from_encapsulation`]
    /// checks it.
    pub fn read_encapsulation(&mut self) -> Result<Encapsulation> {
        let size = self.read_i32()?;
        if size < 6 {
            return Err(Error::out_of_bounds(6, size.max(0) as usize).at("encapsulation size"));
        }
        let size = size as usize;
        self.need(size - 4)?;
        let major = self.buf.get_u8();
        let minor = self.buf.get_u8();
        let data = self.buf.split_to(size - 6);
        Ok(Encapsulation {
            encoding: EncodingVersion { major, minor },
            data,
        })
    }

    /// Reads a whole encapsulation including its header, as raw bytes
    /// (for forwarding byte for byte).
    pub fn read_encapsulation_bytes(&mut self) -> Result<Bytes> {
        let Some(head) = self.buf.get(..4) else {
            return Err(Error::out_of_bounds(4, self.buf.len()));
        };
        let size = i32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        if size < 6 {
            return Err(Error::out_of_bounds(6, size.max(0) as usize).at("encapsulation size"));
        }
        self.read_bytes(size as usize)
    }

    /// Skips an encapsulation.
    pub fn skip_encapsulation(&mut self) -> Result<()> {
        self.read_encapsulation().map(drop)
    }

    /// Ends the decoding of an encapsulation's data: in 1.1, skips any
    /// remaining bytes as optional values up to an optional `ff` end marker,
    /// then requires that nothing is left. In 1.0, first reads the class
    /// instances that follow the data if a class reference was read
    /// ([`Decoder::read_pending_values`]); one stray trailing byte is
    /// tolerated. Both leniencies are what Ice 3.7.8 accepts (checked against
    /// a real server).
    ///
    /// # Errors
    ///
    /// [`Error::Encapsulation`] for bytes left over; the errors of
    /// [`Decoder::read_pending_values`].
    pub fn finish_encapsulation(&mut self) -> Result<()> {
        self.finish_pending_values()?;
        if self.encoding != ENCODING_1_0 {
            self.skip_optionals_to_end_marker()?;
        } else if self.buf.len() == 1 {
            self.buf.advance(1);
        }
        if !self.buf.is_empty() {
            return Err(Error::encapsulation(format!(
                "{} bytes left over at the end of the encapsulation",
                self.buf.len()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
