//! The send-time stamps of a [`Writer`]: burst detection for oneways
//! ([`Writer::stamp_oneway`]) and, with busy polling, the time of the last
//! request or reply ([`Writer::last_write`]). One relaxed atomic of
//! nanoseconds since the writer's epoch; no clock is read on a send that
//! needs no stamp.

use std::sync::atomic::Ordering;

use super::Writer;

impl Writer {
    /// Records the time of a request or reply when every send is stamped
    /// (the liveness rules count it under the lock).
    pub(super) fn count_write(&self) {
        if self.stamp_all {
            self.stamp();
        }
    }

    /// Records the time of a send for [`Writer::stamp_oneway`] (burst
    /// detection), unless every send is stamped anyway.
    pub(crate) fn stamp_burst(&self) {
        if !self.stamp_all {
            self.stamp();
        }
    }

    /// Records the time of a send, for [`Writer::stamp_oneway`] and
    /// [`Writer::last_write`].
    fn stamp(&self) {
        let ns = self.epoch.elapsed().as_nanos() as u64;
        self.last_write.store(ns, Ordering::Relaxed);
    }

    /// Stamps a oneway request about to be sent, like
    /// [`Writer::stamp_burst`], and says whether the stamped message
    /// before it was sent less than `window` ago (a burst), with one
    /// clock read for both.
    pub(crate) fn stamp_oneway(&self, window: std::time::Duration) -> bool {
        let now = self.epoch.elapsed().as_nanos() as u64;
        let last = if self.stamp_all {
            // Every send is stamped when it is counted.
            self.last_write.load(Ordering::Relaxed)
        } else {
            self.last_write.swap(now, Ordering::Relaxed)
        };
        last != 0 && now.saturating_sub(last) < window.as_nanos() as u64
    }

    /// When the last stamped message was sent.
    pub(crate) fn last_write(&self) -> std::time::Instant {
        self.epoch + std::time::Duration::from_nanos(self.last_write.load(Ordering::Relaxed))
    }
}
