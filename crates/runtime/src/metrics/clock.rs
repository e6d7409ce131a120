//! The clock of observations: a reading is nanoseconds of the monotonic
//! clock (the one [`std::time::Instant`] reads), so that a lifetime is
//! one subtraction rather than `Instant`'s `Duration` arithmetic.

/// A reading of the monotonic clock, in nanoseconds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tick(u64);

impl Tick {
    /// The clock now.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub(crate) fn now() -> Tick {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is plain data, valid for the call to fill in.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        if rc != 0 {
            return Tick(0);
        }
        let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
        let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
        Tick(secs.saturating_mul(1_000_000_000).saturating_add(nanos))
    }

    /// The clock now (elapsed since the first reading of the process).
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub(crate) fn now() -> Tick {
        static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        let epoch = *EPOCH.get_or_init(std::time::Instant::now);
        Tick(u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }

    /// Whole microseconds from `start` to this reading (0 when earlier).
    pub(crate) fn micros_since(self, start: Tick) -> i64 {
        i64::try_from(self.0.saturating_sub(start.0) / 1000).unwrap_or(i64::MAX)
    }
}
