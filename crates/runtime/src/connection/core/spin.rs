//! [`SpinWindow`]: how long a lone twoway caller polls its socket for the
//! reply before it goes to sleep (`floe.CallerSpin`), adapted to how fast
//! the peer answers.
//!
//! A thread that sleeps until the I/O driver reports the reply pays a
//! wake-up per call, and on virtual machines that wake-up is most of a
//! loopback or LAN round trip. A caller that polls for the reply for a few
//! microseconds skips it, at the price of the CPU it polls with. The
//! window follows the rule of Linux's adaptive halt polling:
//!
//! - it starts at the maximum, and goes back to it whenever a reply came
//!   within the maximum;
//! - a spin that ran out, for a reply that then took longer than the
//!   maximum, halves it; below [`MIN_WINDOW`] it is closed;
//! - a closed window is tried again at the maximum once every
//!   [`PROBE_EVERY`] calls, so a peer that became fast is noticed.
//!
//! A peer that takes long to answer thus costs at most one maximum window
//! per [`PROBE_EVERY`] calls once the window closed. Only the time the
//! caller spins is measured (the driver reads the clock when a spin
//! starts and when it ends): calls that do not spin read no clock.

use std::time::Duration;

/// A window below this is closed: polling that briefly rarely catches a
/// reply and still costs a pass through the scheduler.
pub(crate) const MIN_WINDOW: Duration = Duration::from_micros(2);

/// A closed window is tried again at the maximum once per this many calls.
pub(crate) const PROBE_EVERY: u32 = 32;

/// The adaptive spin window of one connection's lone callers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SpinWindow {
    /// The longest spin (zero: callers never spin).
    max: Duration,
    /// The current window (zero: closed).
    window: Duration,
    /// Calls left until a closed window is tried again.
    probe_in: u32,
    /// Calls overlapped since the last start.
    crowded: bool,
}

impl SpinWindow {
    /// A window of at most `max` (`None`: callers never spin).
    pub(crate) fn new(max: Option<Duration>) -> Self {
        let max = max.unwrap_or(Duration::ZERO);
        SpinWindow {
            max,
            window: max,
            probe_in: PROBE_EVERY,
            crowded: false,
        }
    }

    /// A request was sent while another one waited for its reply: the
    /// next call does not spin. Its caller may share a task with the
    /// others (calls pipelined with `join!`), whose next requests that task
    /// would send only once the spin ended.
    #[inline]
    pub(crate) fn crowded(&mut self) {
        self.crowded = true;
    }

    /// A lone caller is about to wait for its reply: how long it should
    /// poll for it, if at all.
    #[inline]
    pub(crate) fn start(&mut self) -> Option<Duration> {
        if std::mem::take(&mut self.crowded) {
            return None;
        }
        if !self.window.is_zero() {
            return Some(self.window);
        }
        if self.max.is_zero() {
            return None;
        }
        self.probe_in = self.probe_in.saturating_sub(1);
        if self.probe_in == 0 {
            self.probe_in = PROBE_EVERY;
            Some(self.max)
        } else {
            None
        }
    }

    /// The reply came while its caller spun: the window opens fully.
    pub(crate) fn caught(&mut self) {
        self.window = self.max;
    }

    /// A spin ran out and the reply came `after` the spin started.
    pub(crate) fn missed(&mut self, after: Duration) {
        if after <= self.max {
            // A longer spin would have caught it.
            self.window = self.max;
            return;
        }
        self.window /= 2;
        if self.window < MIN_WINDOW {
            self.window = Duration::ZERO;
            self.probe_in = PROBE_EVERY;
        }
    }

    /// The current window (zero: closed).
    #[cfg(test)]
    pub(crate) fn window(&self) -> Duration {
        self.window
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: Duration = Duration::from_micros(50);

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn off_never_spins() {
        let mut w = SpinWindow::new(None);
        for _ in 0..(3 * PROBE_EVERY) {
            assert_eq!(w.start(), None);
        }
    }

    #[test]
    fn starts_open_and_stays_open_while_replies_are_caught() {
        let mut w = SpinWindow::new(Some(MAX));
        for _ in 0..100 {
            assert_eq!(w.start(), Some(MAX));
            w.caught();
        }
    }

    #[test]
    fn no_spin_for_the_call_after_calls_overlapped() {
        let mut w = SpinWindow::new(Some(MAX));
        w.crowded();
        assert_eq!(w.start(), None);
        assert_eq!(w.start(), Some(MAX));
        assert_eq!(w.window(), MAX, "the window itself is unchanged");
    }

    #[test]
    fn slow_replies_halve_the_window_until_it_closes() {
        let mut w = SpinWindow::new(Some(MAX));
        let mut spun = Duration::ZERO;
        let mut calls = 0;
        while let Some(window) = w.start() {
            spun += window;
            calls += 1;
            w.missed(us(1_000));
        }
        assert_eq!(w.window(), Duration::ZERO);
        // 50, 25, 12.5, 6.25, 3.125: under twice the maximum in all.
        assert_eq!(calls, 5);
        assert!(spun < 2 * MAX, "{spun:?}");
    }

    #[test]
    fn a_reply_a_longer_spin_would_have_caught_reopens_the_window() {
        let mut w = SpinWindow::new(Some(MAX));
        w.start();
        w.missed(us(1_000));
        assert_eq!(w.window(), MAX / 2);
        w.start();
        w.missed(us(40));
        assert_eq!(w.window(), MAX);
    }

    #[test]
    fn a_closed_window_is_probed_once_per_probe_interval() {
        let mut w = SpinWindow::new(Some(MAX));
        while w.start().is_some() {
            w.missed(us(1_000));
        }
        // That call did not spin; the next PROBE_EVERY - 2 do not either.
        for _ in 0..(PROBE_EVERY - 2) {
            assert_eq!(w.start(), None);
        }
        assert_eq!(w.start(), Some(MAX), "the probe");
        // A slow peer: closed again at once, probed again later.
        w.missed(us(1_000));
        assert_eq!(w.window(), Duration::ZERO);
        let probes = (0..(10 * PROBE_EVERY))
            .filter(|_| {
                let spun = w.start().is_some();
                if spun {
                    w.missed(us(1_000));
                }
                spun
            })
            .count();
        assert_eq!(probes, 10);
        // A peer that became fast: the probe catches its reply and the
        // window stays open.
        while w.start().is_none() {}
        w.caught();
        assert_eq!(w.start(), Some(MAX));
    }
}
