//! The ACM decisions without sockets or timers: times are given.

use super::*;

const T: Duration = Duration::from_secs(60);

fn monitor(heartbeat: AcmHeartbeat, close: AcmClose, start: Instant) -> AcmMonitor {
    AcmMonitor::new(
        AcmConfig {
            timeout: Some(T),
            heartbeat,
            close,
        },
        start,
    )
}

fn inputs(wrote: bool, pending_requests: bool, dispatching: usize) -> AcmInputs {
    AcmInputs {
        wrote,
        pending_requests,
        dispatching,
    }
}

#[test]
fn off_decides_nothing_and_has_no_period() {
    let start = Instant::now();
    let mut m = AcmMonitor::new(
        AcmConfig {
            timeout: None,
            heartbeat: AcmHeartbeat::Always,
            close: AcmClose::OnIdleForceful,
        },
        start,
    );
    assert_eq!(m.period(), None);
    let later = start + Duration::from_secs(3600);
    assert_eq!(m.check(later, inputs(false, true, 0)), AcmAction::default());
}

#[test]
fn the_monitor_runs_every_half_timeout() {
    let m = monitor(AcmHeartbeat::Off, AcmClose::Off, Instant::now());
    assert_eq!(m.period(), Some(T / 2));
}

#[test]
fn heartbeats_follow_the_policy() {
    let start = Instant::now();
    let at = |s: u64| start + Duration::from_secs(s);
    // Always: at every run, even right after traffic.
    let mut m = monitor(AcmHeartbeat::Always, AcmClose::Off, start);
    assert!(m.check(at(30), inputs(true, false, 0)).heartbeat);
    // OnIdle: only after Timeout/4 of silence, heartbeats included.
    let mut m = monitor(AcmHeartbeat::OnIdle, AcmClose::Off, start);
    assert!(!m.check(at(10), inputs(false, false, 0)).heartbeat);
    assert!(m.check(at(30), inputs(false, false, 0)).heartbeat);
    assert!(
        !m.check(at(40), inputs(false, false, 0)).heartbeat,
        "one per quarter"
    );
    assert!(m.check(at(60), inputs(false, false, 0)).heartbeat);
    // OnDispatch: only while a dispatch runs.
    let mut m = monitor(AcmHeartbeat::OnDispatch, AcmClose::Off, start);
    assert!(!m.check(at(30), inputs(false, false, 0)).heartbeat);
    assert!(m.check(at(60), inputs(false, false, 1)).heartbeat);
    // Off: never.
    let mut m = monitor(AcmHeartbeat::Off, AcmClose::Off, start);
    assert!(!m.check(at(30), inputs(false, false, 3)).heartbeat);
}

#[test]
fn a_read_seen_counts_from_the_run_before_for_heartbeats() {
    let start = Instant::now();
    let at = |s: u64| start + Duration::from_secs(s);
    let mut m = monitor(AcmHeartbeat::OnIdle, AcmClose::Off, start);
    assert!(m.check(at(30), inputs(false, false, 0)).heartbeat);
    // A read somewhere in (30, 60]: its earliest possible time is 30, so
    // at 60 the connection may have been quiet for 30 s ≥ 15 s: beat.
    m.read();
    assert!(m.check(at(60), inputs(false, false, 0)).heartbeat);
}

#[test]
fn idle_close_is_never_early() {
    let start = Instant::now();
    let at = |s: u64| start + Duration::from_secs(s);
    let mut m = monitor(AcmHeartbeat::Off, AcmClose::OnIdle, start);
    // A read in (0, 30] counts as at 30 (the latest it may have been).
    m.read();
    assert_eq!(m.check(at(30), inputs(false, false, 0)).close, None);
    assert_eq!(m.check(at(60), inputs(false, false, 0)).close, None);
    assert_eq!(
        m.check(at(90), inputs(false, false, 0)).close,
        Some(AcmCloseAction::Graceful)
    );
    // Writing counts as activity too: a write in (30, 60] counts as at 60.
    let mut m = monitor(AcmHeartbeat::Off, AcmClose::OnIdle, start);
    assert_eq!(m.check(at(30), inputs(false, false, 0)).close, None);
    assert_eq!(m.check(at(60), inputs(true, false, 0)).close, None);
    assert_eq!(m.check(at(90), inputs(false, false, 0)).close, None);
    assert_eq!(
        m.check(at(120), inputs(false, false, 0)).close,
        Some(AcmCloseAction::Graceful)
    );
}

#[test]
fn a_write_seen_counts_from_the_run_before_for_heartbeats() {
    let start = Instant::now();
    let at = |s: u64| start + Duration::from_secs(s);
    let mut m = monitor(AcmHeartbeat::OnIdle, AcmClose::Off, start);
    assert!(m.check(at(30), inputs(false, false, 0)).heartbeat);
    // A write in (30, 60]: quiet since 30 at the earliest, so beat at 60;
    // at 70 the write seen in (60, 70] and the beat at 60 are too recent.
    assert!(m.check(at(60), inputs(true, false, 0)).heartbeat);
    assert!(!m.check(at(70), inputs(true, false, 0)).heartbeat);
}

#[test]
fn close_follows_the_policy() {
    let start = Instant::now();
    let late = start + T + Duration::from_secs(1);
    let cases = [
        (AcmClose::Off, false, 0, None),
        (AcmClose::OnIdle, false, 0, Some(AcmCloseAction::Graceful)),
        (AcmClose::OnIdle, true, 0, None),
        (AcmClose::OnIdle, false, 1, None),
        (AcmClose::OnInvocation, false, 0, None),
        (
            AcmClose::OnInvocation,
            true,
            0,
            Some(AcmCloseAction::Forceful),
        ),
        (
            AcmClose::OnInvocationAndIdle,
            false,
            0,
            Some(AcmCloseAction::Graceful),
        ),
        (
            AcmClose::OnInvocationAndIdle,
            true,
            0,
            Some(AcmCloseAction::Forceful),
        ),
        (
            AcmClose::OnIdleForceful,
            false,
            0,
            Some(AcmCloseAction::Forceful),
        ),
        (AcmClose::OnIdleForceful, false, 2, None),
    ];
    for (close, pending, dispatching, want) in cases {
        let mut m = monitor(AcmHeartbeat::Off, close, start);
        let got = m.check(late, inputs(false, pending, dispatching)).close;
        assert_eq!(
            got, want,
            "{close:?} pending={pending} dispatching={dispatching}"
        );
    }
}
