//! The Ice 3.8 liveness decisions without sockets or timers: times are
//! given, as the connection task's monitor runs would see them.

use super::*;

const IDLE: Duration = Duration::from_secs(60);

fn monitor(start: Instant) -> IdleMonitor {
    IdleMonitor::new(IdleConfig::default(), start)
}

fn quiet() -> AcmInputs {
    AcmInputs {
        wrote: false,
        pending_requests: false,
        dispatching: 0,
    }
}

fn wrote() -> AcmInputs {
    AcmInputs {
        wrote: true,
        ..quiet()
    }
}

fn pending() -> AcmInputs {
    AcmInputs {
        pending_requests: true,
        ..quiet()
    }
}

/// Runs the monitor every period from `from` to `to` seconds (both
/// included) with `inputs`, returning the times of heartbeats and the
/// first close.
fn run(
    m: &mut IdleMonitor,
    start: Instant,
    from: u64,
    to: u64,
    inputs: AcmInputs,
) -> (Vec<u64>, Option<(u64, AcmCloseAction)>) {
    let step = m.period().unwrap().as_secs();
    let mut beats = Vec::new();
    let mut t = from;
    while t <= to {
        let a = m.check(start + Duration::from_secs(t), inputs);
        if a.heartbeat {
            beats.push(t);
        }
        if let Some(c) = a.close {
            return (beats, Some((t, c)));
        }
        t += step;
    }
    (beats, None)
}

#[test]
fn defaults_are_ice_3_8s() {
    let c = IdleConfig::default();
    assert_eq!(c.idle_timeout, Some(IDLE));
    assert!(c.idle_check);
    assert_eq!(c.inactivity_timeout, Some(Duration::from_secs(300)));
    assert_eq!(monitor(Instant::now()).period(), Some(IDLE / 4));
}

#[test]
fn off_decides_nothing() {
    let c = IdleConfig {
        idle_timeout: None,
        idle_check: true,
        inactivity_timeout: None,
    };
    let start = Instant::now();
    let mut m = IdleMonitor::new(c, start);
    assert_eq!(m.period(), None);
    let a = m.check(start + Duration::from_secs(3600), pending());
    assert_eq!(a, AcmAction::default());
}

#[test]
fn a_silent_connection_heartbeats_every_half_idle_timeout() {
    let start = Instant::now();
    let mut m = monitor(start);
    let (beats, close) = run(&mut m, start, 15, 150, quiet());
    assert_eq!(beats, [30, 60, 90, 120, 150]);
    assert_eq!(close, None, "an idle 3.7 peer that never heartbeats");
}

#[test]
fn a_heartbeat_is_never_later_than_half_the_idle_timeout_after_a_write() {
    let start = Instant::now();
    let mut m = monitor(start);
    // A write just after the run at 15 s is seen at 30 s; counted from
    // 15 s (the earliest it can have been), the heartbeat is due at 45 s.
    assert!(!m.check(start + Duration::from_secs(15), quiet()).heartbeat);
    assert!(!m.check(start + Duration::from_secs(30), wrote()).heartbeat);
    assert!(m.check(start + Duration::from_secs(45), quiet()).heartbeat);
    // Steady traffic: no heartbeat at all.
    let mut m = monitor(start);
    let (beats, _) = run(&mut m, start, 15, 300, wrote());
    assert!(beats.is_empty());
}

#[test]
fn a_peer_that_heartbeats_then_goes_silent_is_aborted() {
    let start = Instant::now();
    let mut m = monitor(start);
    m.read(false, true);
    assert_eq!(
        m.check(start + Duration::from_secs(15), quiet()).close,
        None
    );
    // Last read seen at 15 s: silent for the idle timeout at 75 s.
    let (_, close) = run(&mut m, start, 30, 120, quiet());
    assert_eq!(close, Some((75, AcmCloseAction::Forceful)));
}

#[test]
fn heartbeats_from_the_peer_keep_the_connection() {
    let start = Instant::now();
    let mut m = monitor(start);
    for t in (15..=600).step_by(15) {
        // A 3.8 peer heartbeats every 30 s of its own silence.
        if t % 30 == 0 {
            m.read(false, true);
        }
        let a = m.check(start + Duration::from_secs(t), quiet());
        assert_eq!(
            a.close.filter(|c| *c == AcmCloseAction::Forceful),
            None,
            "at {t}"
        );
    }
}

#[test]
fn a_silent_peer_that_owes_a_reply_is_aborted() {
    let start = Instant::now();
    let mut m = monitor(start);
    let (_, close) = run(&mut m, start, 15, 120, pending());
    assert_eq!(close, Some((60, AcmCloseAction::Forceful)));
}

#[test]
fn no_idle_check_when_disabled() {
    let start = Instant::now();
    let mut m = IdleMonitor::new(
        IdleConfig {
            idle_check: false,
            inactivity_timeout: None,
            ..IdleConfig::default()
        },
        start,
    );
    m.read(false, true);
    let (beats, close) = run(&mut m, start, 15, 600, pending());
    assert_eq!(close, None);
    assert_eq!(beats.len(), 20, "heartbeats go on");
}

#[test]
fn an_inactive_connection_closes_gracefully_after_the_inactivity_timeout() {
    let start = Instant::now();
    let mut m = monitor(start);
    // Traffic until 100 s, then nothing: inactive from the run at 105 s.
    let (_, close) = run(&mut m, start, 15, 100, wrote());
    assert_eq!(close, None);
    let (_, close) = run(&mut m, start, 105, 600, quiet());
    assert_eq!(close, Some((405, AcmCloseAction::Graceful)));
}

#[test]
fn heartbeats_are_not_activity_but_requests_are() {
    let start = Instant::now();
    let mut m = monitor(start);
    for t in (15..=285).step_by(15) {
        m.read(false, t % 30 == 0);
        assert_eq!(m.check(start + Duration::from_secs(t), quiet()).close, None);
    }
    // The peer's heartbeats did not reset the timer (inactive since 15 s).
    let a = m.check(start + Duration::from_secs(315), quiet());
    assert_eq!(a.close, Some(AcmCloseAction::Graceful));
    // A request read resets it; so do dispatches.
    let mut m = monitor(start);
    for t in (15..=600).step_by(15) {
        m.read(t % 60 == 0, false);
        let inputs = AcmInputs {
            dispatching: usize::from(t % 120 == 0),
            ..quiet()
        };
        assert_eq!(
            m.check(start + Duration::from_secs(t), inputs).close,
            None,
            "at {t}"
        );
    }
}
