//! Reading tagged optional values (§4.9): finding a tag, skipping the
//! ones a reader does not know, and the end marker of a slice.

use bytes::Buf;

use super::Decoder;
use crate::error::{Error, Result};
use crate::optional::OptionalFormat;
use crate::version::ENCODING_1_0;

impl Decoder {
    /// Reads an optional's tag byte(s) unconditionally, returning the tag and
    /// the format.
    pub fn read_optional_header(&mut self) -> Result<(u32, OptionalFormat)> {
        let b = self.read_u8()?;
        let format = OptionalFormat::from_bits(b & 0x07);
        let mut tag = (b >> 3) as u32;
        if tag == 30 {
            let t = self.read_size()?;
            tag = u32::try_from(t).map_err(|_| Error::marshal("optional tag too large"))?;
        }
        Ok((tag, format))
    }

    /// Looks for the optional value with `tag` in `expected` format, skipping
    /// optionals with smaller tags. Returns `false` (consuming nothing more)
    /// if it is absent: end of data, the `ff` end marker, or a larger tag.
    ///
    /// # Errors
    ///
    /// [`Error::Marshal`] if the tag is present with another format.
    pub fn read_optional(&mut self, tag: u32, expected: OptionalFormat) -> Result<bool> {
        if self.encoding == ENCODING_1_0 {
            return Ok(false);
        }
        if let Some(classes) = &self.classes {
            if classes.in_slice_without_optionals() {
                // A class/exception slice whose flags say it has no optional
                // members: what follows belongs to something else.
                return Ok(false);
            }
        }
        loop {
            let Some(b) = self.peek_u8() else {
                return Ok(false);
            };
            if b == 0xff {
                return Ok(false);
            }
            let save = self.buf.clone();
            let (t, format) = self.read_optional_header()?;
            if t < tag {
                self.skip_optional(format)?;
            } else if t > tag {
                self.buf = save;
                return Ok(false);
            } else if format != expected {
                return Err(Error::marshal(format!(
                    "optional tag {tag}: expected format {expected:?}, found {format:?}"
                )));
            } else {
                return Ok(true);
            }
        }
    }

    /// Skips one optional value of the given format (its tag already read).
    pub fn skip_optional(&mut self, format: OptionalFormat) -> Result<()> {
        match format {
            OptionalFormat::F1 => self.skip(1),
            OptionalFormat::F2 => self.skip(2),
            OptionalFormat::F4 => self.skip(4),
            OptionalFormat::F8 => self.skip(8),
            OptionalFormat::Size => self.read_size().map(drop),
            OptionalFormat::VSize => {
                let n = self.read_size()?;
                self.skip(n)
            }
            OptionalFormat::FSize => {
                let n = self.read_i32()?;
                if n < 0 {
                    return Err(Error::out_of_bounds(0, self.remaining()).at("negative FSize"));
                }
                self.skip(n as usize)
            }
            OptionalFormat::Class => crate::class::skip_instance_reference(self),
        }
    }

    /// Skips optional values until the `ff` end marker (consumed) or the end
    /// of the data; used at the end of class and exception slices.
    pub fn skip_optionals_to_end_marker(&mut self) -> Result<()> {
        loop {
            match self.peek_u8() {
                None => return Ok(()),
                Some(0xff) => {
                    self.buf.advance(1);
                    return Ok(());
                }
                Some(_) => {
                    let (_, format) = self.read_optional_header()?;
                    self.skip_optional(format)?;
                }
            }
        }
    }

    /// Reads the int32 length in front of an `FSize` optional value and checks
    /// that it fits in the remaining bytes.
    pub fn read_fsize_section(&mut self) -> Result<i32> {
        let n = self.read_i32()?;
        if n < 0 || n as usize > self.remaining() {
            return Err(Error::out_of_bounds(n.max(0) as usize, self.remaining()));
        }
        Ok(n)
    }
}
