//! [`Periodic`]: a coarse periodic wake-up for a task, kept off tokio's
//! timer wheel (the connections' liveness monitors: ACM and the idle
//! check).
//!
//! Every connection with a heartbeat or an idle timeout runs its monitor
//! every few seconds. A `tokio::time::Sleep` per connection keeps the
//! runtime's timer wheel non-empty, and a runtime with a timer registered
//! pays for it at every park: a scan of the wheel and a clock reading,
//! about 220 instructions, which in a request–reply exchange is once per
//! call on each side. As in Ice for C++, where the connections' ACM
//! checks run on the communicator's timer thread, these timers run on one
//! thread of their own (`floe-timer`, started with the first one). The
//! thread only raises a flag and wakes the task; the monitor itself still
//! runs in the task, which polls [`Periodic::poll_tick`] among its other
//! events.
//!
//! When the thread cannot be started, the timer falls back to a tokio
//! `Sleep` in the task, as before.

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// A wake-up of one task every `period`, until dropped.
pub(crate) struct Periodic {
    period: Duration,
    kind: Kind,
}

enum Kind {
    /// Fired by the timer thread.
    Thread(Arc<Shared>),
    /// The fallback: a tokio timer, reset after each tick.
    Tokio(Pin<Box<tokio::time::Sleep>>),
}

/// What the timer thread and the task share.
struct Shared {
    fired: AtomicBool,
    /// The task's waker, fixed for the task's life (a connection task is
    /// one tokio task, which polls its events with its waker).
    waker: Waker,
}

impl Periodic {
    /// Wakes the task whose waker is `waker` every `period`, starting one
    /// period from now.
    pub(crate) fn start(period: Duration, waker: Waker) -> Periodic {
        let shared = Arc::new(Shared {
            fired: AtomicBool::new(false),
            waker,
        });
        let kind = match thread() {
            Some(t) => {
                t.add(Instant::now() + period, period, Arc::downgrade(&shared));
                Kind::Thread(shared)
            }
            None => Kind::Tokio(Box::pin(tokio::time::sleep(period))),
        };
        Periodic { period, kind }
    }

    /// Ready once a period has passed since the last tick (or the
    /// start); pending otherwise (the waker given to [`Periodic::start`]
    /// is woken). Cancel-safe: a tick is only consumed by a poll that
    /// returns it.
    pub(crate) fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.kind {
            // The waker was given at the start: nothing to register.
            Kind::Thread(shared) => {
                if shared.fired.load(Ordering::Acquire)
                    && shared.fired.swap(false, Ordering::AcqRel)
                {
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            }
            Kind::Tokio(sleep) => {
                std::task::ready!(sleep.as_mut().poll(cx));
                let next = tokio::time::Instant::now() + self.period;
                sleep.as_mut().reset(next);
                Poll::Ready(())
            }
        }
    }
}

/// One timer in the thread's heap, ordered by when it is due (the
/// earliest first).
struct Entry {
    due: Instant,
    period: Duration,
    timer: Weak<Shared>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.due == other.due
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> CmpOrdering {
        // `BinaryHeap` is a max-heap: the earliest due is the greatest.
        other.due.cmp(&self.due)
    }
}

/// The timer thread's state: the timers, earliest first, and the
/// condition it sleeps on.
struct TimerThread {
    timers: Mutex<Timers>,
    changed: Condvar,
}

/// The timers, and when to let go of those whose [`Periodic`] was dropped.
struct Timers {
    heap: BinaryHeap<Entry>,
    /// At this many entries, the dropped ones are taken out. A dropped
    /// timer otherwise stays until it comes due, one period later: with
    /// many short-lived connections that would be many entries.
    prune_at: usize,
}

/// The fewest entries worth pruning.
const PRUNE_MIN: usize = 64;

impl Timers {
    const fn new() -> Self {
        Timers {
            heap: BinaryHeap::new(),
            prune_at: PRUNE_MIN,
        }
    }

    /// Adds a timer; whether it is now the first due.
    fn push(&mut self, entry: Entry) -> bool {
        if self.heap.len() >= self.prune_at {
            self.heap.retain(|e| e.timer.strong_count() > 0);
            // At least as many additions again before the next pass.
            self.prune_at = (2 * self.heap.len()).max(PRUNE_MIN);
        }
        let earliest = self.heap.peek().is_none_or(|e| entry.due < e.due);
        self.heap.push(entry);
        earliest
    }
}

impl TimerThread {
    fn add(&self, due: Instant, period: Duration, timer: Weak<Shared>) {
        let mut timers = self.timers.lock().unwrap_or_else(|e| e.into_inner());
        let earliest = timers.push(Entry { due, period, timer });
        drop(timers);
        if earliest {
            self.changed.notify_one();
        }
    }

    /// The thread: fires each timer when due and puts it back one period
    /// later; a timer whose [`Periodic`] was dropped is let go when it
    /// comes due.
    fn run(&self) {
        let mut timers = self.timers.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            let wait = match timers.heap.peek() {
                None => None,
                Some(e) if e.due > now => Some(e.due - now),
                Some(_) => {
                    let Some(entry) = timers.heap.pop() else {
                        continue;
                    };
                    let Some(timer) = entry.timer.upgrade() else {
                        continue;
                    };
                    drop(timers);
                    timer.fired.store(true, Ordering::Release);
                    timer.waker.wake_by_ref();
                    drop(timer);
                    // A late thread does not fire a backlog of ticks.
                    let due = (entry.due + entry.period).max(now);
                    timers = self.timers.lock().unwrap_or_else(|e| e.into_inner());
                    timers.heap.push(Entry { due, ..entry });
                    continue;
                }
            };
            timers = match wait {
                None => self.changed.wait(timers).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let waited = self.changed.wait_timeout(timers, d);
                    waited.unwrap_or_else(|e| e.into_inner()).0
                }
            };
        }
    }
}

/// The process's timer thread, started on first use; `None` if it could
/// not be started.
fn thread() -> Option<&'static TimerThread> {
    static THREAD: TimerThread = TimerThread {
        timers: Mutex::new(Timers::new()),
        changed: Condvar::new(),
    };
    static STARTED: OnceLock<bool> = OnceLock::new();
    let started = *STARTED.get_or_init(|| {
        let spawned = std::thread::Builder::new()
            .name("floe-timer".into())
            .spawn(|| THREAD.run());
        spawned
            .map_err(|e| tracing::warn!("cannot start the timer thread ({e}): timers use tokio's"))
            .is_ok()
    });
    started.then_some(&THREAD)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn ticks(p: &mut Periodic, n: usize) -> Duration {
        let start = Instant::now();
        for _ in 0..n {
            std::future::poll_fn(|cx| p.poll_tick(cx)).await;
        }
        start.elapsed()
    }

    #[tokio::test]
    async fn ticks_every_period() {
        let waker = std::future::poll_fn(|cx| Poll::Ready(cx.waker().clone())).await;
        let mut p = Periodic::start(Duration::from_millis(20), waker);
        assert!(matches!(p.kind, Kind::Thread(_)));
        let took = tokio::time::timeout(Duration::from_secs(5), ticks(&mut p, 3))
            .await
            .expect("three ticks");
        assert!(took >= Duration::from_millis(55), "{took:?}");
    }

    #[tokio::test]
    async fn a_shorter_timer_added_later_is_not_held_up_by_a_longer_one() {
        let waker = std::future::poll_fn(|cx| Poll::Ready(cx.waker().clone())).await;
        let _long = Periodic::start(Duration::from_secs(3600), waker.clone());
        let mut short = Periodic::start(Duration::from_millis(10), waker);
        tokio::time::timeout(Duration::from_secs(5), ticks(&mut short, 2))
            .await
            .expect("the short timer ticks");
    }

    #[test]
    fn dropped_timers_do_not_pile_up() {
        let mut timers = Timers::new();
        let live: Vec<_> = (0..10)
            .map(|_| {
                Arc::new(Shared {
                    fired: AtomicBool::new(false),
                    waker: Waker::noop().clone(),
                })
            })
            .collect();
        let hour = Duration::from_secs(3600);
        let due = Instant::now() + hour;
        for t in &live {
            timers.push(Entry {
                due,
                period: hour,
                timer: Arc::downgrade(t),
            });
        }
        for _ in 0..10_000 {
            let gone = Arc::new(Shared {
                fired: AtomicBool::new(false),
                waker: Waker::noop().clone(),
            });
            timers.push(Entry {
                due,
                period: hour,
                timer: Arc::downgrade(&gone),
            });
        }
        assert!(timers.heap.len() <= 2 * PRUNE_MIN, "{}", timers.heap.len());
        let kept = timers
            .heap
            .iter()
            .filter(|e| e.timer.strong_count() > 0)
            .count();
        assert_eq!(kept, live.len());
    }

    #[test]
    fn a_tick_is_kept_until_a_wait_takes_it() {
        let mut p = Periodic::start(Duration::from_millis(50), Waker::noop().clone());
        let mut cx = Context::from_waker(Waker::noop());
        let deadline = Instant::now() + Duration::from_secs(5);
        while p.poll_tick(&mut cx).is_pending() {
            assert!(Instant::now() < deadline, "no tick");
            std::thread::sleep(Duration::from_millis(1));
        }
        // Taken: the next wait is pending until the next period.
        assert!(p.poll_tick(&mut cx).is_pending());
    }
}
