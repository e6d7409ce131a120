//! Sizes over `i32::MAX` (a sequence, an encapsulation or an `FSize`
//! optional over 2 GB): the encoder neither panics nor truncates them; it
//! writes -1, which no peer accepts, records the size, and `try_finish`
//! fails with `MemoryLimitException`.
//!
//! The 2 GB buffers are zero-filled allocations the system maps lazily:
//! only the pages the encoder writes are touched.

use bytes::BytesMut;
use floe_wire::{Decoder, Encoder, Error, ENCODING_1_1};

const OVER: usize = i32::MAX as usize + 1;

fn assert_memory_limit(enc: Encoder, size: usize) {
    assert_eq!(enc.oversized(), Some(size));
    match enc.try_finish() {
        Err(e @ Error::MemoryLimit { .. }) => {
            assert_eq!(e.ice_name(), "::Ice::MemoryLimitException");
        }
        other => panic!(
            "expected MemoryLimitException, got {:?}",
            other.map(|b| b.len())
        ),
    }
}

#[test]
fn an_oversized_sequence_size_is_written_as_minus_one() {
    let mut enc = Encoder::new();
    enc.write_size(OVER);
    assert_eq!(enc.as_slice(), &[0xff, 0xff, 0xff, 0xff, 0xff]);
    // Whoever reads it refuses it.
    let mut dec = Decoder::new(bytes::Bytes::copy_from_slice(enc.as_slice()));
    assert!(dec.read_size().is_err());
    assert_memory_limit(enc, OVER);
}

#[test]
fn an_oversized_encapsulation_is_not_truncated() {
    let mut enc = Encoder::new();
    let mark = enc.start_encapsulation(ENCODING_1_1);
    // The encapsulation's data: 2 GB of (untouched) zeros after its header.
    let mut big = BytesMut::zeroed(OVER + 10);
    big[..6].copy_from_slice(enc.as_slice());
    *enc.buffer_mut() = big;
    enc.end_encapsulation(mark);
    // `as i32` would have written a negative size near i32::MIN; -1 is
    // what the encoder writes for every size it cannot express.
    assert_eq!(&enc.as_slice()[..4], &(-1i32).to_le_bytes());
    assert_memory_limit(enc, OVER + 10);
}

#[test]
fn an_oversized_fsize_optional_is_not_truncated() {
    // 2^31 bytes after the reserved length: `as i32` would write i32::MIN.
    let mut enc = Encoder::with_buffer(BytesMut::zeroed(4 + OVER), ENCODING_1_1);
    enc.end_fsize(0);
    assert_eq!(&enc.as_slice()[..4], &(-1i32).to_le_bytes());
    assert_memory_limit(enc, OVER);
}

#[test]
fn ordinary_data_finishes() {
    let mut enc = Encoder::new();
    let mark = enc.start_encapsulation(ENCODING_1_1);
    enc.write_size(300);
    let pos = enc.start_fsize();
    enc.write_i32(7);
    enc.end_fsize(pos);
    enc.end_encapsulation(mark);
    assert_eq!(enc.oversized(), None);
    let bytes = enc.try_finish().unwrap();
    assert_eq!(&bytes[..4], &(bytes.len() as i32).to_le_bytes());
}
