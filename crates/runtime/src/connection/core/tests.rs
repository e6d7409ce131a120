//! The protocol core without sockets: two `ConnectionState`s exchange byte
//! frames, and time is given. Request and reply, batches, the graceful
//! close (waiting for dispatches and for replies, and its deadline), the
//! forceful end, the peer's close, heartbeats and the idle rules, and
//! frames past the size limit.

use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use floe_wire::protocol::{
    check, FrameCheck, OperationMode, ReplyBody, RequestHead, CLOSE_CONNECTION, VALIDATE_CONNECTION,
};
use floe_wire::{Context as IceContext, Identity, ENCODING_1_1};

use super::acm::{AcmClose, AcmConfig, AcmHeartbeat};
use super::close::CloseStep;
use super::idle::IdleConfig;
use super::inbound::Inbound;
use super::liveness::Liveness;
use super::outbound::{self, OutFrame};
use super::params::Params;
use super::*;
use crate::outcome::ReplyData;

const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

fn limits() -> Limits {
    Limits {
        batch_auto_flush_size: 0,
        max_dispatches: 100,
        max_dispatch_bytes: usize::MAX,
        close_timeout: CLOSE_TIMEOUT,
    }
}

fn state(start: Instant) -> ConnectionState {
    ConnectionState::new(
        limits(),
        &Liveness::Idle(IdleConfig::default()),
        Policy::default(),
        start,
    )
}

/// A frame's bytes in one buffer.
fn bytes(frame: OutFrame<'_>) -> Bytes {
    frame.to_bytes()
}

/// Every frame waiting in `st`'s send queue, as the peer would read them.
fn sent(st: &mut ConnectionState) -> Vec<Bytes> {
    let mut all = BytesMut::new();
    for b in st.out.queue.drain(..) {
        all.extend_from_slice(&b);
    }
    st.out.queued_bytes = 0;
    let mut frames = Vec::new();
    while let Ok(FrameCheck::Complete { len }) = check(&all, 0) {
        frames.push(all.split_to(len).freeze());
    }
    assert!(all.is_empty(), "a partial frame was queued");
    frames
}

fn head<'a>(id: &'a Identity, ctx: &'a IceContext, op: &'a str) -> RequestHead<'a> {
    RequestHead {
        identity: id,
        facet: "",
        operation: op,
        mode: OperationMode::Normal,
        context: ctx,
    }
}

fn ok_reply(rid: i32) -> Bytes {
    let result = ReplyData::new(Bytes::from_static(&[10, 0, 0, 0, 1, 1, 42, 0, 0, 0]));
    bytes(outbound::reply(
        rid,
        Ok(result),
        None,
        &Policy::default(),
        &mut [0; outbound::STACK_FRAME],
    ))
}

/// What a frame received by `st` was, as the driver sees it: the core's
/// classification ([`inbound::inbound`]), then replies delivered.
#[derive(Debug)]
enum Received {
    Reply(Option<Waker>),
    Stray(i32),
    Dispatch(Inbound),
    Heartbeat,
}

fn receive(st: &mut ConnectionState, frame: Bytes, max: usize) -> Result<Received, Error> {
    Ok(match inbound::inbound(frame, max)?.1 {
        Inbound::Reply(reply) => match st.deliver_reply(reply) {
            Ok(waker) => Received::Reply(waker),
            Err(id) => Received::Stray(id),
        },
        Inbound::Validate => Received::Heartbeat,
        Inbound::Close => return Err(Error::CloseConnection),
        other => Received::Dispatch(other),
    })
}

const MAX: usize = 1024 * 1024;

fn poll(st: &mut ConnectionState, id: i32) -> Poll<requests::ReplyResult> {
    st.requests
        .poll_reply(id, &mut Context::from_waker(Waker::noop()))
}

#[test]
fn request_and_reply() {
    let now = Instant::now();
    let (mut client, mut server) = (state(now), state(now));
    let (id, ctx) = (Identity::from_name("hello"), IceContext::new());
    let rid = client.register_request().unwrap();
    assert!(poll(&mut client, rid).is_pending());
    let params = Bytes::from_static(&[7, 0, 0, 0]);
    let mut room = [0; outbound::STACK_FRAME];
    let frame = outbound::request(
        &head(&id, &ctx, "add"),
        rid,
        Params::Body(ENCODING_1_1, &params),
        None,
        &Policy::default(),
        &mut room,
    )
    .unwrap();
    let received = receive(&mut server, bytes(frame), MAX).unwrap();
    let Received::Dispatch(Inbound::Request { request, .. }) = received else {
        panic!("{received:?}")
    };
    assert_eq!(
        (request.request_id, request.operation.as_str()),
        (rid, "add")
    );
    assert_eq!(&request.params.data[..], &params[..]);
    // The reply lands in the caller's slot; the caller's waker comes back.
    let received = receive(&mut client, ok_reply(rid), MAX).unwrap();
    assert!(matches!(received, Received::Reply(Some(_))));
    let Poll::Ready(Ok(ReplyBody::Ok(e))) = poll(&mut client, rid) else {
        panic!("no reply")
    };
    assert_eq!(&e.data[..], &[42, 0, 0, 0]);
    assert_eq!(client.requests.waiting(), 0);
    // A second reply to the same id, or one nobody asked for, is stray.
    let received = receive(&mut client, ok_reply(rid), MAX).unwrap();
    assert!(matches!(received, Received::Stray(r) if r == rid));
    // Enough replies in one read mark the connection as pipelining.
    client.record_read(5, true, false);
    assert!(client.pipelining());
    client.record_read(1, true, false);
    assert!(!client.pipelining());
}

#[test]
fn batches_queue_then_flush_and_auto_flush() {
    let now = Instant::now();
    let (mut client, mut server) = (state(now), state(now));
    let (id, ctx) = (Identity::from_name("log"), IceContext::new());
    let params = [6u8, 0, 0, 0, 1, 1];
    for op in ["a", "b", "c"] {
        assert!(client
            .queue_batch_request(&head(&id, &ctx, op), &params, false)
            .unwrap()
            .is_none());
    }
    let (frame, compress) = client.take_batch().unwrap();
    assert!(!compress);
    assert!(client.take_batch().is_none(), "flushed");
    let received = receive(&mut server, frame.freeze(), MAX).unwrap();
    let Received::Dispatch(Inbound::Batch(batch)) = received else {
        panic!("{received:?}")
    };
    let ops: Vec<String> = batch.iter().map(|r| r.unwrap().operation.into()).collect();
    assert_eq!(ops, ["a", "b", "c"]);
    // With Ice.BatchAutoFlushSize, the request that reaches it sends the
    // ones before it.
    let mut client = ConnectionState::new(
        Limits {
            batch_auto_flush_size: 60,
            ..limits()
        },
        &Liveness::Idle(IdleConfig::default()),
        Policy::default(),
        now,
    );
    let mut flushed = None;
    for op in ["a", "b", "c", "d"] {
        if let Some(f) = client
            .queue_batch_request(&head(&id, &ctx, op), &params, false)
            .unwrap()
        {
            flushed = Some(f);
            break;
        }
    }
    let (frame, _) = flushed.expect("auto-flushed");
    let Received::Dispatch(Inbound::Batch(batch)) =
        receive(&mut server, frame.freeze(), MAX).unwrap()
    else {
        panic!()
    };
    assert!(batch.iter().count() >= 1);
    assert!(
        client.take_batch().is_some(),
        "the request that flushed stays queued"
    );
}

#[test]
fn graceful_close_waits_for_dispatches_then_says_close_connection() {
    let now = Instant::now();
    let mut st = state(now);
    assert!(st.begin_close(false));
    assert!(!st.begin_close(false), "once");
    assert!(matches!(
        st.check_active(),
        Err(Error::ConnectionManuallyClosed)
    ));
    assert_eq!(st.poll_close(now, 2), CloseStep::Wait, "dispatches run");
    assert!(matches!(
        st.task_pass(2, 0),
        TaskPass::Run {
            close_sent: false,
            ..
        }
    ));
    let later = now + Duration::from_secs(1);
    assert_eq!(
        st.poll_close(later, 0),
        CloseStep::Send {
            deadline: now + CLOSE_TIMEOUT
        },
        "the deadline counts from the first look"
    );
    assert_eq!(sent(&mut st), [Bytes::from_static(&CLOSE_CONNECTION)]);
    assert_eq!(st.poll_close(later, 0), CloseStep::Wait, "said once");
    let TaskPass::Run {
        close_sent,
        deadline,
        active,
        ..
    } = st.task_pass(0, 0)
    else {
        panic!("still running until the peer closes")
    };
    assert!(close_sent && !active);
    assert_eq!(deadline, Some(now + CLOSE_TIMEOUT));
}

#[test]
fn close_waits_for_our_replies_when_asked_and_ignores_new_requests() {
    let now = Instant::now();
    let (mut st, mut peer) = (state(now), state(now));
    let rid = st.register_request().unwrap();
    st.begin_close(true);
    assert_eq!(st.poll_close(now, 0), CloseStep::Wait, "a reply is owed");
    receive(&mut st, ok_reply(rid), MAX).unwrap();
    assert!(matches!(st.poll_close(now, 0), CloseStep::Send { .. }));
    // While closing, the task's passes say not to dispatch (§1.4: a
    // request that arrives then is not run; the peer retries it).
    assert!(matches!(
        st.task_pass(0, 0),
        TaskPass::Run { active: false, .. }
    ));
    // The peer's side: CloseConnection ends its connection.
    let close = sent(&mut st).pop().unwrap();
    assert!(matches!(
        receive(&mut peer, close, MAX),
        Err(Error::CloseConnection)
    ));
}

#[test]
fn forceful_end_fails_waiting_requests_and_refuses_new_ones() {
    let now = Instant::now();
    let mut st = state(now);
    let a = st.register_request().unwrap();
    let (mut counted, cx_waker) = (0, Waker::noop());
    assert!(st
        .requests
        .poll_reply(a, &mut Context::from_waker(cx_waker))
        .is_pending());
    st.out.push(&mut [Bytes::from_static(b"unsent")]);
    let wakers = st.terminate(Error::ConnectionLost("reset".into())).unwrap();
    counted += wakers.len();
    assert_eq!(counted, 1, "the waiting caller is woken");
    assert!(
        st.terminate(Error::CloseConnection).is_none(),
        "the first end wins"
    );
    assert!(matches!(
        poll(&mut st, a),
        Poll::Ready(Err(Error::ConnectionLost(_)))
    ));
    assert!(matches!(
        st.register_request(),
        Err(Error::ConnectionLost(_))
    ));
    assert!(matches!(st.end_error(), Some(Error::ConnectionLost(_))));
    assert_eq!(st.out.queued_bytes, 0, "the queue is dropped");
    assert!(!st.begin_close(true));
}

#[test]
fn heartbeats_and_the_idle_check_on_a_virtual_clock() {
    let start = Instant::now();
    let mut st = state(start);
    assert_eq!(st.timer_period(), Some(Duration::from_secs(15)));
    let at = |s: u64| start + Duration::from_secs(s);
    // Silent: a heartbeat every 30 s, queued for the driver to write.
    assert!(!st.handle_timeout(at(15), 0).heartbeat);
    assert!(st.handle_timeout(at(30), 0).heartbeat);
    assert_eq!(sent(&mut st), [Bytes::from_static(&VALIDATE_CONNECTION)]);
    // The peer's heartbeat arms the idle check; silence then ends it.
    let received = receive(&mut st, Bytes::from_static(&VALIDATE_CONNECTION), MAX).unwrap();
    assert!(matches!(received, Received::Heartbeat));
    st.record_read(0, false, true);
    assert!(st.handle_timeout(at(45), 0).end.is_none());
    let mut end = None;
    for s in [60, 75, 90, 105] {
        end = end.or(st.handle_timeout(at(s), 0).end);
    }
    assert!(matches!(end, Some(Error::ConnectionAborted(_))), "{end:?}");
    // Not reading (back-pressure) is not silence.
    let mut st = state(start);
    st.record_read(0, false, true);
    for s in (15..=300).step_by(15) {
        st.reads_paused();
        assert!(st.handle_timeout(at(s), 1).end.is_none(), "at {s}");
    }
}

#[test]
fn an_inactive_connection_starts_its_graceful_close() {
    let start = Instant::now();
    let mut st = state(start);
    let mut closing = false;
    for s in (15..=330).step_by(15) {
        closing |= st.handle_timeout(start + Duration::from_secs(s), 0).closing;
    }
    assert!(closing);
    assert!(matches!(
        st.check_active(),
        Err(Error::ConnectionManuallyClosed)
    ));
}

#[test]
fn acm_ends_a_connection_whose_replies_do_not_come() {
    let start = Instant::now();
    let acm = AcmConfig {
        timeout: Some(Duration::from_secs(10)),
        heartbeat: AcmHeartbeat::Off,
        close: AcmClose::OnInvocation,
    };
    let mut st = ConnectionState::new(limits(), &Liveness::Acm(acm), Policy::default(), start);
    st.register_request().unwrap();
    let mut end = None;
    for s in (5..=30).step_by(5) {
        end = end.or(st.handle_timeout(start + Duration::from_secs(s), 0).end);
    }
    assert!(matches!(end, Some(Error::ConnectionTimeout)), "{end:?}");
}

#[test]
fn frames_past_the_size_limit_are_refused() {
    let now = Instant::now();
    // The frame check refuses a header announcing more than the limit.
    let mut big = BytesMut::from(&ok_reply(1)[..]);
    big[10..14].copy_from_slice(&(2_000_000i32).to_le_bytes());
    assert!(check(&big, 1024 * 1024).is_err());
    // A compressed frame that inflates past the limit ends the connection.
    let payload = vec![0u8; 200_000];
    let mut encaps = BytesMut::new();
    encaps.extend_from_slice(&(200_006i32).to_le_bytes());
    encaps.extend_from_slice(&[1, 1]);
    let mut room = [0; outbound::STACK_FRAME];
    let reply = outbound::reply(
        1,
        Ok(ReplyData::split(encaps.freeze(), Bytes::from(payload))),
        Some(9),
        &Policy::default(),
        &mut room,
    );
    let frame = bytes(reply);
    assert!(frame.len() < 10_000, "compressed");
    let mut small = state(now);
    assert!(receive(&mut small, frame.clone(), 100_000).is_err());
    let mut st = state(now);
    st.register_request().unwrap();
    assert!(matches!(
        receive(&mut st, frame, MAX).unwrap(),
        Received::Reply(_)
    ));
}

#[test]
fn read_limits_follow_dispatches_and_unsent_replies() {
    let mut st = ConnectionState::new(
        Limits {
            max_dispatches: 2,
            max_dispatch_bytes: 1000,
            ..limits()
        },
        &Liveness::Idle(IdleConfig::default()),
        Policy::default(),
        Instant::now(),
    );
    assert!(st.may_read(1, 999));
    assert!(!st.may_read(2, 0));
    assert!(!st.may_read(0, 1000));
    st.out.push(&mut [Bytes::from(vec![0u8; 9 << 20])]);
    assert!(!st.may_read(0, 0), "8 MiB of replies wait");
}
