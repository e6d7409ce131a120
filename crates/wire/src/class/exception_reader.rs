//! Reading a user exception in encoding 1.1: its slices, most-derived
//! first, until one has a registered factory; the unknown slices skipped on
//! the way are kept for a `["preserve-slice"]` exception.

use super::flags;
use super::reader::{no_frame, ReadFrame};
use super::slice::{SliceInfo, SliceTypeId, SlicedData};
use crate::decoder::Decoder;
use crate::error::{Error, Result};
use crate::exception::{UserException, UserExceptionRegistry};
use crate::version::ENCODING_1_0;

impl Decoder {
    /// Reads a user exception (the contents of a reply with status 1): the
    /// first slice whose type id `registry` knows is decoded with its factory.
    /// In encoding 1.0, the class instances the exception references are
    /// read too.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownUserException`] with the most-derived type id if no
    /// slice is known (or an unknown slice cannot be skipped);
    /// [`Error::UnmarshalOutOfBounds`], as Ice raises it, when the data ends
    /// before a known or last slice (encoding 1.0, which has no last-slice
    /// flag, and Ice 3.7 C++11 senders, which never set it); decoding errors.
    pub fn read_user_exception(
        &mut self,
        registry: &UserExceptionRegistry,
    ) -> Result<Box<dyn UserException>> {
        if self.encoding() == ENCODING_1_0 {
            return self.read_user_exception_10(registry);
        }
        self.class_reader().frames.push(ReadFrame::new(true));
        let result = self.read_exception_slices(registry);
        self.class_reader().frames.pop();
        result
    }

    fn read_exception_slices(
        &mut self,
        registry: &UserExceptionRegistry,
    ) -> Result<Box<dyn UserException>> {
        let mut most_derived: Option<String> = None;
        // Unknown slices skipped on the way to a known one, kept for an
        // exception type with `["preserve-slice"]`.
        let mut skipped: Vec<SliceInfo> = Vec::new();
        loop {
            self.read_slice_header()?;
            let (type_id, slice_flags) = match self.top_frame()?.slice.as_ref() {
                Some(s) => (s.type_id.clone(), s.flags),
                None => return Err(no_frame()),
            };
            let type_id = match type_id {
                Some(SliceTypeId::Name(s)) => s,
                _ => return Err(Error::marshal("exception slice without a type id")),
            };
            let most_derived = most_derived.get_or_insert_with(|| type_id.clone());
            if let Some(factory) = registry.find(&type_id) {
                let mut ex = factory();
                self.top_frame()?.header_pending = true;
                ex.read_slices(self)?;
                if self.top_frame()?.header_pending {
                    return Err(Error::marshal(format!(
                        "UserException::read_slices of `{type_id}` did not read its slice"
                    )));
                }
                if !skipped.is_empty() {
                    ex.ice_set_sliced_data(SlicedData { slices: skipped });
                }
                return Ok(ex);
            }
            let unknown = || Error::UnknownUserException {
                type_id: most_derived.clone(),
            };
            if slice_flags & flags::HAS_SLICE_SIZE == 0 {
                return Err(unknown());
            }
            let info = self.skip_slice()?;
            if info.is_last {
                return Err(unknown());
            }
            skipped.push(info);
            // Ice 3.7 C++11 peers never set the last-slice flag on
            // exceptions: an Ice client then reads on past the end and
            // raises `UnmarshalOutOfBoundsException`, and so does floe.
            if self.is_empty() {
                return Err(Error::out_of_bounds(1, 0).at("user exception slices"));
            }
        }
    }
}
