//! [`ParamsSize`]: how much room a proxy's next parameters start with.
//!
//! An [`Encoder`](floe_wire::Encoder) grows its buffer by doubling, and each
//! growth copies what was written: encoding a 10 MB struct from a 64-byte
//! start costs 18 reallocations and about 10 MB of copying, as much as the
//! encoding itself. Requests sent through one proxy tend to repeat their
//! shape (a publisher sends the same message type again and again), so
//! each proxy remembers the size of its last parameters and starts the
//! next ones with that much room: the same size again is encoded without a
//! single reallocation.
//!
//! A proxy whose requests shrink does not keep holding the large room: when
//! the parameters fill less than half of it (and it is above
//! [`SHRINK_ABOVE`]), they are copied into a buffer of their own size, which
//! costs a copy of the small parameters only.

use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;

/// Room for parameters when nothing is known yet.
const MIN_CAPACITY: usize = 64;
/// The most room the hint asks for up front (larger parameters grow as before).
const MAX_HINT: usize = 64 << 20;
/// Parameters in a room larger than this and more than twice their size are
/// copied into a buffer of their own size.
const SHRINK_ABOVE: usize = 4096;

/// The size of the last parameters encoded through a proxy.
#[derive(Debug, Default)]
pub(crate) struct ParamsSize(AtomicUsize);

impl Clone for ParamsSize {
    /// A derived proxy (`ice_oneway()`, ...) starts from its parent's size.
    fn clone(&self) -> Self {
        ParamsSize(AtomicUsize::new(self.0.load(Ordering::Relaxed)))
    }
}

impl ParamsSize {
    /// The room to start encoding with.
    pub(crate) fn capacity(&self) -> usize {
        self.0.load(Ordering::Relaxed).clamp(MIN_CAPACITY, MAX_HINT)
    }

    /// Records `params` (encoded in a room of `capacity` bytes) and returns
    /// them, in a buffer of their own size when the room was much larger.
    pub(crate) fn record(&self, params: Bytes, capacity: usize) -> Bytes {
        self.0.store(params.len(), Ordering::Relaxed);
        if capacity > SHRINK_ABOVE && params.len() < capacity / 2 {
            Bytes::copy_from_slice(&params)
        } else {
            params
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_with_the_last_size_and_shrinks_a_too_large_room() {
        let size = ParamsSize::default();
        assert_eq!(size.capacity(), MIN_CAPACITY);
        let big = Bytes::from(vec![7u8; 100_000]);
        let kept = size.record(big.clone(), MIN_CAPACITY);
        assert_eq!(
            kept.as_ptr(),
            big.as_ptr(),
            "grown params are kept as they are"
        );
        assert_eq!(size.capacity(), 100_000);
        assert_eq!(size.clone().capacity(), 100_000);
        // Small parameters after large ones: copied out of the large room.
        let small = Bytes::from(vec![1u8; 10]);
        let out = size.record(small.clone(), 100_000);
        assert_eq!(out, small);
        assert_ne!(out.as_ptr(), small.as_ptr());
        assert_eq!(size.capacity(), MIN_CAPACITY);
        // Beyond the cap the hint stops growing.
        size.0.store(usize::MAX, Ordering::Relaxed);
        assert_eq!(size.capacity(), MAX_HINT);
    }
}
