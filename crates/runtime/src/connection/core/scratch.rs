//! Buffers for small frames, carved from a per-thread scratch block.
//!
//! A request or reply written directly is dropped before the next frame is
//! built, so successive frames reuse one block instead of a `malloc` and a
//! `free` each: a frame is a view into the block (one reference count),
//! and once every earlier view is gone the block is reused from its start
//! ([`BytesMut::reserve`] reclaims it). A frame that waits in a queue keeps
//! its block alive; the next frame then starts a new block. Frames over
//! [`SMALL_FRAME`] bytes get an allocation of their own, so a block never
//! holds more than [`BLOCK`] bytes per thread.

use std::cell::RefCell;

use bytes::{Bytes, BytesMut};

/// Frames up to this size come from the scratch block.
pub(crate) const SMALL_FRAME: usize = 1024;

/// The size of a scratch block.
const BLOCK: usize = 16 * 1024;

thread_local! {
    static SCRATCH: RefCell<Option<BytesMut>> = const { RefCell::new(None) };
}

/// An empty buffer with room for `capacity` bytes, for one frame.
pub(crate) fn frame_buf(capacity: usize) -> BytesMut {
    if capacity <= SMALL_FRAME {
        let carved = SCRATCH.try_with(|s| {
            let mut s = s.try_borrow_mut().ok()?;
            Some(carve(
                s.get_or_insert_with(|| BytesMut::with_capacity(BLOCK)),
                capacity,
            ))
        });
        if let Ok(Some(buf)) = carved {
            return buf;
        }
    }
    BytesMut::with_capacity(capacity)
}

/// `bytes` copied into a [`frame_buf`]: a borrowed part of a frame (a
/// frame encoded on the stack, a caller's number sequence) that must wait
/// in the write queue.
pub(crate) fn copied(bytes: &[u8]) -> Bytes {
    let mut buf = frame_buf(bytes.len());
    buf.extend_from_slice(bytes);
    buf.freeze()
}

/// Splits `capacity` bytes of room off the front of `block` (empty: what
/// is left of it after the frames carved before). When too little is
/// left, `reserve` takes the block back from its start if those frames
/// are all gone, or starts a new block of the same size.
fn carve(block: &mut BytesMut, capacity: usize) -> BytesMut {
    if block.capacity() < capacity {
        block.reserve(capacity);
    }
    let rest = block.split_off(capacity);
    std::mem::replace(block, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_reuse_the_block_once_dropped() {
        let first = frame_buf(100);
        let at = first.as_ptr();
        assert!(first.capacity() >= 100);
        drop(first);
        // Carved after the first: a different address in the same block.
        let second = frame_buf(100);
        assert_ne!(second.as_ptr(), at);
        drop(second);
        // Enough frames to wrap: the block is reused from its start.
        let mut seen_start = false;
        for _ in 0..(BLOCK / 100 + 2) {
            let mut f = frame_buf(100);
            f.extend_from_slice(&[7; 100]);
            seen_start |= f.as_ptr() == at;
            let frozen = f.freeze();
            assert_eq!(&frozen[..], &[7; 100][..]);
        }
        assert!(seen_start);
    }

    #[test]
    fn a_frame_kept_alive_keeps_its_bytes() {
        let mut kept = frame_buf(10);
        kept.extend_from_slice(b"kept frame");
        let kept = kept.freeze();
        for _ in 0..(2 * BLOCK / 500) {
            let mut f = frame_buf(500);
            f.extend_from_slice(&[1; 500]);
            drop(f);
        }
        assert_eq!(&kept[..], b"kept frame");
    }

    #[test]
    fn large_frames_have_their_own_allocation() {
        let f = frame_buf(SMALL_FRAME + 1);
        assert!(f.capacity() > SMALL_FRAME);
    }

    #[test]
    fn a_frame_may_grow_past_its_room() {
        let mut f = frame_buf(4);
        f.extend_from_slice(&[9; 64]);
        let next = frame_buf(4);
        assert_eq!(&f[..], &[9; 64][..]);
        drop(next);
    }
}
