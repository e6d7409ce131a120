//! The [`Encode`] and [`Decode`] traits and their implementations for
//! Slice's built-in types.
//!
//! | Slice | Rust |
//! |---|---|
//! | `bool`, `byte`, `short`, `int`, `long`, `float`, `double` | `bool`, `u8`, `i16`, `i32`, `i64`, `f32`, `f64` |
//! | `string` | `String` (encode also from `str`) |
//! | `sequence<byte>` | [`bytes::Bytes`] (zero copy) or `Vec<u8>` |
//! | `sequence<T>` | `Vec<T>` (bulk copies for fixed-size numbers) |
//! | `dictionary<K, V>` | `BTreeMap<K, V>` (sorted, as C++ peers send) or `HashMap<K, V>` |
//!
//! Generated code implements the traits for structs, enums and proxies.

use std::borrow::Cow;

use bytes::Bytes;
use compact_str::CompactString;

use crate::decoder::Decoder;
use crate::encoder::Encoder;
use crate::error::{Error, Result};
use crate::optional::{OptionalFormat, OptionalKind};
use crate::version::ENCODING_1_0;

mod collections;

/// A fixed-size number (`short`, `int`, `long`, `float`, `double`): a
/// sequence of them is its count followed by the numbers' little-endian
/// bytes, which on a little-endian target are the slice's own memory.
/// Proxies send such a sequence from the caller's slice, beside the frame
/// head, instead of copying it into the request (see
/// `floe_runtime::Proxy::invoke_with_payload_slice`).
///
/// ```
/// use floe_wire::codec::WireNumber;
///
/// let samples = [1.0f32, 2.0];
/// assert_eq!(&*f32::wire_bytes(&samples), &[0, 0, 0x80, 0x3f, 0, 0, 0, 0x40][..]);
/// ```
pub trait WireNumber: Encode + Copy + Send + Sync + 'static + sealed::Sealed {
    /// The wire form of `items` (without the count): borrowed on a
    /// little-endian target, encoded on others.
    fn wire_bytes(items: &[Self]) -> Cow<'_, [u8]>;

    /// The wire form of `items` (without the count) as `Bytes`: the
    /// vector itself on a little-endian target (no copy; its memory is
    /// freed when the last `Bytes` is dropped), encoded on others.
    /// Generated dispatchers send a trailing number-sequence result with
    /// it, beside the reply head.
    ///
    /// ```
    /// use floe_wire::codec::WireNumber;
    ///
    /// let b = i32::into_wire_bytes(vec![1, -1]);
    /// assert_eq!(&b[..], &[1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff][..]);
    /// ```
    fn into_wire_bytes(items: Vec<Self>) -> Bytes {
        #[cfg(target_endian = "little")]
        {
            Bytes::from_owner(NumberVec(items))
        }
        #[cfg(not(target_endian = "little"))]
        {
            Bytes::from(Self::wire_bytes(&items).into_owned())
        }
    }
}

/// A vector of numbers seen as its bytes (little-endian targets, where
/// those are the wire form), to own the memory of a `Bytes`.
#[cfg(target_endian = "little")]
struct NumberVec<T>(Vec<T>);

#[cfg(target_endian = "little")]
impl<T: WireNumber> AsRef<[u8]> for NumberVec<T> {
    fn as_ref(&self) -> &[u8] {
        number_bytes(&self.0)
    }
}

/// The memory of `items`, which on a little-endian target is their wire
/// form.
#[cfg(target_endian = "little")]
fn number_bytes<T: sealed::Sealed>(items: &[T]) -> &[u8] {
    // SAFETY: `Sealed` is implemented only for the fixed-size numbers,
    // which have no padding, and every bit pattern is a valid `u8`; the
    // slice covers exactly the numbers' memory, borrowed as long as `items`.
    unsafe { std::slice::from_raw_parts(items.as_ptr().cast::<u8>(), std::mem::size_of_val(items)) }
}

mod sealed {
    /// Only the fixed-size numbers (no padding, any bit pattern valid) are
    /// [`super::WireNumber`]s.
    pub trait Sealed {}
}

/// Static facts about how a type looks on the wire.
pub trait WireType {
    /// The fewest bytes one value can take. Decoders multiply a count read
    /// from the input by this before allocating, so it must never be larger
    /// than the real minimum (and is treated as at least 1).
    const MIN_WIRE_SIZE: usize;
    /// `Some(n)` when every value takes exactly `n` bytes.
    const FIXED_SIZE: Option<usize> = None;
    /// How the type is written as an optional value.
    const OPTIONAL_KIND: OptionalKind;
}

/// A value that can be written in the Ice encoding.
pub trait Encode: WireType {
    /// Writes the value.
    fn encode(&self, enc: &mut Encoder);

    /// Writes a slice of values without the count. Fixed-size numbers
    /// override this with a bulk copy.
    fn encode_slice(items: &[Self], enc: &mut Encoder)
    where
        Self: Sized,
    {
        for item in items {
            item.encode(enc);
        }
    }
}

/// A value that can be read from the Ice encoding.
pub trait Decode: WireType + Sized {
    /// Reads a value.
    fn decode(dec: &mut Decoder) -> Result<Self>;

    /// Reads `n` values; the caller has already checked with
    /// [`Decoder::check_count`] that they can fit. Fixed-size numbers
    /// override this with a bulk copy.
    fn decode_vec(dec: &mut Decoder, n: usize) -> Result<Vec<Self>> {
        // The count was checked against the bytes present, but an element
        // in memory can be far larger than its minimum wire size (a
        // `String` is 24 bytes, its wire form 1): clamp the up-front
        // reservation, as nom does, and let the vector grow with real data.
        let mut v = Vec::with_capacity(n.min(prealloc_limit::<Self>()));
        for _ in 0..n {
            v.push(Self::decode(dec)?);
        }
        Ok(v)
    }
}

/// The most elements of `T` a decoder reserves before it has read them.
/// When a value in memory is at most 4× its minimum wire size, the whole
/// (already bounds-checked) count: the reservation is then at most 4× the
/// bytes present, and a sequence of small structs (e.g. `{string, double}`)
/// is allocated once instead of growing through ~5 reallocations. Otherwise
/// (a `String` is 24 bytes in memory, 1 on the wire) 64 KiB worth.
fn prealloc_limit<T: WireType>() -> usize {
    let size = std::mem::size_of::<T>().max(1);
    if size <= 4 * T::MIN_WIRE_SIZE.max(1) {
        usize::MAX
    } else {
        prealloc_64k::<T>()
    }
}

/// 64 KiB worth of `T`.
pub(super) fn prealloc_64k<T>() -> usize {
    (64 * 1024 / std::mem::size_of::<T>().max(1)).max(1)
}

impl<T: WireType + ?Sized> WireType for &T {
    const MIN_WIRE_SIZE: usize = T::MIN_WIRE_SIZE;
    const FIXED_SIZE: Option<usize> = T::FIXED_SIZE;
    const OPTIONAL_KIND: OptionalKind = T::OPTIONAL_KIND;
}

impl<T: Encode + ?Sized> Encode for &T {
    fn encode(&self, enc: &mut Encoder) {
        (**self).encode(enc)
    }
}

impl Encoder {
    /// Writes `value` with [`Encode`].
    #[inline]
    pub fn write<T: Encode + ?Sized>(&mut self, value: &T) {
        value.encode(self)
    }

    /// Writes a sequence: count, then the elements.
    pub fn write_seq<T: Encode>(&mut self, items: &[T]) {
        self.write_size(items.len());
        // At least this much is written: growing the buffer once up front
        // beats doubling it (and copying what was written) as it fills.
        self.buffer_mut()
            .reserve(items.len().saturating_mul(T::MIN_WIRE_SIZE));
        T::encode_slice(items, self);
    }

    /// Writes an optional value with `tag` if it is present; nothing if
    /// absent or in encoding 1.0 (which has no optionals).
    ///
    /// ```
    /// use floe_wire::Encoder;
    /// let mut enc = Encoder::new();
    /// enc.write_optional(1, Some(&3i32));
    /// enc.write_optional(2, Some("x"));
    /// enc.write_optional::<i32>(3, None);
    /// assert_eq!(&enc.finish()[..], &[0x0a, 3, 0, 0, 0, 0x15, 1, b'x']);
    /// ```
    pub fn write_optional<T: Encode + ?Sized>(&mut self, tag: u32, value: Option<&T>) {
        let Some(value) = value else { return };
        if self.encoding() == ENCODING_1_0 {
            return;
        }
        let kind = T::OPTIONAL_KIND;
        self.write_optional_tag(tag, kind.format());
        match kind {
            OptionalKind::Plain(_) => value.encode(self),
            OptionalKind::VSizeLength => {
                if let Some(n) = T::FIXED_SIZE {
                    self.write_size(n);
                    value.encode(self);
                } else {
                    let mut tmp = Encoder::with_buffer(Default::default(), self.encoding());
                    value.encode(&mut tmp);
                    self.write_size(tmp.len());
                    self.write_raw(tmp.as_slice());
                }
            }
            OptionalKind::FSizeLength => {
                let pos = self.start_fsize();
                value.encode(self);
                self.end_fsize(pos);
            }
        }
    }

    /// Writes an optional proxy or class reference (`optional(1) Hello*`)
    /// when it is not null; `None` is not written (read back as `None`).
    pub fn write_optional_nullable<T>(&mut self, tag: u32, value: &Option<T>)
    where
        Option<T>: Encode,
    {
        if value.is_some() {
            self.write_optional(tag, Some(value));
        }
    }
}

impl Decoder {
    /// Reads a value with [`Decode`].
    #[inline]
    pub fn read<T: Decode>(&mut self) -> Result<T> {
        T::decode(self)
    }

    /// Reads a sequence into a `Vec`, checking the count against the bytes
    /// present before allocating.
    // Always inlined, as are the number sequences' `decode_vec` and string
    // reads: a struct member decoded by a call came back through the stack
    // and was reloaded with wider loads than the callee's stores, a
    // store-forwarding stall per member (`perf annotate`); inlined, a
    // 10 KB `DataMessage` decodes in 0.95 µs instead of 1.27.
    #[inline(always)]
    pub fn read_seq<T: Decode>(&mut self) -> Result<Vec<T>> {
        let n = self.read_count(T::MIN_WIRE_SIZE)?;
        T::decode_vec(self, n)
    }

    /// Reads the optional value with `tag`, if present.
    ///
    /// ```
    /// use bytes::Bytes;
    /// use floe_wire::Decoder;
    /// let mut dec = Decoder::new(Bytes::from_static(&[0x0a, 3, 0, 0, 0, 0x15, 1, b'x']));
    /// assert_eq!(dec.read_optional_value::<i32>(1).unwrap(), Some(3));
    /// assert_eq!(dec.read_optional_value::<String>(2).unwrap().as_deref(), Some("x"));
    /// assert_eq!(dec.read_optional_value::<i32>(3).unwrap(), None);
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Marshal`] if the tag is present in another format than `T`'s.
    pub fn read_optional_value<T: Decode>(&mut self, tag: u32) -> Result<Option<T>> {
        let kind = T::OPTIONAL_KIND;
        if !self.read_optional(tag, kind.format())? {
            return Ok(None);
        }
        match kind {
            OptionalKind::Plain(_) => T::decode(self).map(Some),
            OptionalKind::VSizeLength => {
                let n = self.read_size()?;
                self.decode_exactly(n, tag)
            }
            OptionalKind::FSizeLength => {
                let n = self.read_fsize_section()? as usize;
                self.decode_exactly(n, tag)
            }
        }
    }

    /// Reads an optional proxy or class reference (`optional(1) Hello*`):
    /// `None` when the tag is absent or the value is null, as Ice for Python
    /// and C++ present both to the application.
    ///
    /// # Errors
    ///
    /// As [`Decoder::read_optional_value`].
    pub fn read_optional_nullable<T>(&mut self, tag: u32) -> Result<Option<T>>
    where
        Option<T>: Decode,
    {
        Ok(self.read_optional_value::<Option<T>>(tag)?.flatten())
    }

    fn decode_exactly<T: Decode>(&mut self, n: usize, tag: u32) -> Result<Option<T>> {
        if n > self.remaining() {
            return Err(Error::out_of_bounds(n, self.remaining()));
        }
        let before = self.remaining();
        let v = T::decode(self)?;
        if before - self.remaining() != n {
            return Err(Error::marshal(format!(
                "optional tag {tag}: length {n} does not match the {} bytes of its value",
                before - self.remaining()
            )));
        }
        Ok(Some(v))
    }
}

macro_rules! fixed_number {
    ($t:ty, $n:expr, $fmt:ident, $w:ident, $r:ident) => {
        // The bulk copies below rely on the memory size being the wire size.
        const _: () = assert!(std::mem::size_of::<$t>() == $n);
        impl WireType for $t {
            const MIN_WIRE_SIZE: usize = $n;
            const FIXED_SIZE: Option<usize> = Some($n);
            const OPTIONAL_KIND: OptionalKind = OptionalKind::Plain(OptionalFormat::$fmt);
        }
        impl Encode for $t {
            #[inline]
            fn encode(&self, enc: &mut Encoder) {
                enc.$w(*self)
            }
            fn encode_slice(items: &[Self], enc: &mut Encoder) {
                enc.buffer_mut().extend_from_slice(&<$t>::wire_bytes(items));
            }
        }
        impl sealed::Sealed for $t {}
        impl WireNumber for $t {
            #[inline]
            fn wire_bytes(items: &[Self]) -> Cow<'_, [u8]> {
                #[cfg(target_endian = "little")]
                {
                    Cow::Borrowed(number_bytes(items))
                }
                #[cfg(not(target_endian = "little"))]
                {
                    Cow::Owned(items.iter().flat_map(|v| v.to_le_bytes()).collect())
                }
            }
        }
        impl Decode for $t {
            #[inline]
            fn decode(dec: &mut Decoder) -> Result<Self> {
                dec.$r()
            }
            #[inline]
            fn decode_vec(dec: &mut Decoder, n: usize) -> Result<Vec<Self>> {
                dec.read_slice_with(n * $n, |bytes| {
                    #[cfg(target_endian = "little")]
                    {
                        let mut v = Vec::<$t>::with_capacity(n);
                        // SAFETY: `bytes` holds exactly `n * size_of::<$t>()`
                        // bytes (read_slice_with checked them), `v` has room
                        // for `n` values, the regions do not overlap, and any
                        // bit pattern is a valid number; on a little-endian
                        // target the wire form is the memory form.
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                bytes.as_ptr(),
                                v.as_mut_ptr().cast::<u8>(),
                                n * $n,
                            );
                            v.set_len(n);
                        }
                        v
                    }
                    #[cfg(not(target_endian = "little"))]
                    bytes
                        .chunks_exact($n)
                        .map(|c| {
                            let mut a = [0u8; $n];
                            a.copy_from_slice(c);
                            <$t>::from_le_bytes(a)
                        })
                        .collect()
                })
            }
        }
    };
}

fixed_number!(i16, 2, F2, write_i16, read_i16);
fixed_number!(i32, 4, F4, write_i32, read_i32);
fixed_number!(i64, 8, F8, write_i64, read_i64);
fixed_number!(f32, 4, F4, write_f32, read_f32);
fixed_number!(f64, 8, F8, write_f64, read_f64);

impl WireType for u8 {
    const MIN_WIRE_SIZE: usize = 1;
    const FIXED_SIZE: Option<usize> = Some(1);
    const OPTIONAL_KIND: OptionalKind = OptionalKind::Plain(OptionalFormat::F1);
}
impl Encode for u8 {
    #[inline]
    fn encode(&self, enc: &mut Encoder) {
        enc.write_u8(*self)
    }
    fn encode_slice(items: &[Self], enc: &mut Encoder) {
        enc.write_raw(items)
    }
}
impl Decode for u8 {
    #[inline]
    fn decode(dec: &mut Decoder) -> Result<Self> {
        dec.read_u8()
    }
    fn decode_vec(dec: &mut Decoder, n: usize) -> Result<Vec<Self>> {
        dec.read_slice_with(n, <[u8]>::to_vec)
    }
}

impl WireType for bool {
    const MIN_WIRE_SIZE: usize = 1;
    const FIXED_SIZE: Option<usize> = Some(1);
    const OPTIONAL_KIND: OptionalKind = OptionalKind::Plain(OptionalFormat::F1);
}
impl Encode for bool {
    #[inline]
    fn encode(&self, enc: &mut Encoder) {
        enc.write_bool(*self)
    }
}
impl Decode for bool {
    #[inline]
    fn decode(dec: &mut Decoder) -> Result<Self> {
        dec.read_bool()
    }
    fn decode_vec(dec: &mut Decoder, n: usize) -> Result<Vec<Self>> {
        dec.read_slice_with(n, |b| b.iter().map(|b| *b != 0).collect())
    }
}

impl WireType for str {
    const MIN_WIRE_SIZE: usize = 1;
    const OPTIONAL_KIND: OptionalKind = OptionalKind::Plain(OptionalFormat::VSize);
}
impl Encode for str {
    #[inline]
    fn encode(&self, enc: &mut Encoder) {
        enc.write_string(self)
    }
}
/// An owned Slice `string`, read by `$read`.
macro_rules! owned_string {
    ($(#[$doc:meta])* $t:ty, $read:ident) => {
        $(#[$doc])*
        impl WireType for $t {
            const MIN_WIRE_SIZE: usize = 1;
            const OPTIONAL_KIND: OptionalKind = OptionalKind::Plain(OptionalFormat::VSize);
        }
        impl Encode for $t {
            #[inline]
            fn encode(&self, enc: &mut Encoder) {
                enc.write_string(self)
            }
        }
        impl Decode for $t {
            #[inline]
            fn decode(dec: &mut Decoder) -> Result<Self> {
                dec.$read()
            }
        }
    };
}

owned_string!(String, read_string);
owned_string!(
    /// A Slice `string` kept inline when short (up to 24 bytes): decoding
    /// one allocates nothing, which matters for sequences of small structs
    /// with string members. Chosen per data member by the code generator
    /// (`["rust:type:CompactString"]`, or `Settings::compact_strings`); the
    /// wire form is a `string`'s.
    CompactString,
    read_compact_string
);

/// `sequence<byte>` as a zero-copy slice of the received frame.
impl WireType for Bytes {
    const MIN_WIRE_SIZE: usize = 1;
    const OPTIONAL_KIND: OptionalKind = OptionalKind::Plain(OptionalFormat::VSize);
}
impl Encode for Bytes {
    #[inline]
    fn encode(&self, enc: &mut Encoder) {
        enc.write_byte_seq(self)
    }
}
impl Decode for Bytes {
    #[inline]
    fn decode(dec: &mut Decoder) -> Result<Self> {
        dec.read_byte_seq()
    }
}

/// The optional kind of a sequence whose elements are `T`.
pub(super) const fn seq_optional_kind(elem_fixed: Option<usize>) -> OptionalKind {
    match elem_fixed {
        Some(1) => OptionalKind::Plain(OptionalFormat::VSize),
        Some(_) => OptionalKind::VSizeLength,
        None => OptionalKind::FSizeLength,
    }
}
