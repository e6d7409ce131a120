//! [`Encapsulation`]: an encapsulation as found on the wire (encoding
//! version and data, a zero-copy slice of the frame), with the one place
//! its 6-byte header (size, major, minor) is written and parsed.

use bytes::Bytes;

use crate::decoder::Decoder;
use crate::error::{Error, Result};
use crate::version::EncodingVersion;

/// An encapsulation as found on the wire: its encoding version and its data
/// (a zero-copy slice of the frame, without the 6-byte header).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Encapsulation {
    /// The encoding of `data`.
    pub encoding: EncodingVersion,
    /// The encapsulated bytes after the 6-byte header.
    pub data: Bytes,
}

impl Encapsulation {
    /// An empty encapsulation in `encoding`.
    pub fn empty(encoding: EncodingVersion) -> Self {
        Encapsulation {
            encoding,
            data: Bytes::new(),
        }
    }

    /// Bytes of an encapsulation's header: its size (i32, header
    /// included) and encoding version (§2.4).
    pub const HEADER_SIZE: usize = 6;

    /// Total wire size including the 6-byte header.
    pub fn wire_size(&self) -> usize {
        self.data.len() + Self::HEADER_SIZE
    }

    /// The header of an encapsulation of `wire_size` bytes (header
    /// included) in `encoding`: the one place it is written. Callers bound
    /// `wire_size` by a frame's size first; a larger one is cut to
    /// `i32::MAX`, which no frame can carry.
    ///
    /// ```
    /// use floe_wire::{Encapsulation, ENCODING_1_1};
    /// assert_eq!(Encapsulation::header(6, ENCODING_1_1), [6, 0, 0, 0, 1, 1]);
    /// ```
    pub fn header(wire_size: usize, encoding: EncodingVersion) -> [u8; Self::HEADER_SIZE] {
        let size = i32::try_from(wire_size).unwrap_or(i32::MAX).to_le_bytes();
        [
            size[0],
            size[1],
            size[2],
            size[3],
            encoding.major,
            encoding.minor,
        ]
    }

    /// This encapsulation's header.
    pub fn wire_header(&self) -> [u8; Self::HEADER_SIZE] {
        Self::header(self.wire_size(), self.encoding)
    }

    /// The encapsulation that `bytes` holds whole, header included, with
    /// nothing after it (e.g. an encapsulation carried in a byte sequence).
    ///
    /// # Errors
    ///
    /// Out of bounds, or an encapsulation error when the size does not
    /// match the bytes.
    pub fn from_wire(bytes: Bytes) -> Result<Encapsulation> {
        let len = bytes.len();
        let mut dec = Decoder::new(bytes);
        let e = dec.read_encapsulation()?;
        if !dec.is_empty() {
            return Err(Error::encapsulation(format!(
                "encapsulation of {} bytes in a buffer of {len}",
                e.wire_size()
            )));
        }
        Ok(e)
    }

    /// The whole encapsulation, header included, in one buffer (a copy of
    /// the data).
    pub fn to_wire(&self) -> Bytes {
        let mut b = bytes::BytesMut::with_capacity(self.wire_size());
        b.extend_from_slice(&self.wire_header());
        b.extend_from_slice(&self.data);
        b.freeze()
    }
}
