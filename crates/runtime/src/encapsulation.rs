//! Whole encapsulations as bytes: the 6-byte header (§3.7) then the
//! data, written by floe-wire's [`Encoder`] in one place.

use bytes::{Bytes, BytesMut};
use floe_wire::{Encoder, EncodingVersion};

/// The wire bytes of an encapsulation (6-byte header then data), e.g. to
/// forward received parameters unchanged with [`crate::Proxy::invoke`].
pub fn encapsulation_bytes(encaps: &floe_wire::Encapsulation) -> Bytes {
    encaps.to_wire()
}

/// Encodes an encapsulation (header included) in `encoding`.
pub fn encode_encapsulation(
    encoding: EncodingVersion,
    capacity: usize,
    write: impl FnOnce(&mut Encoder),
) -> Bytes {
    let mut enc = Encoder::with_buffer(BytesMut::with_capacity(capacity), encoding);
    let mark = enc.start_encapsulation(encoding);
    write(&mut enc);
    enc.end_encapsulation(mark);
    enc.finish()
}
