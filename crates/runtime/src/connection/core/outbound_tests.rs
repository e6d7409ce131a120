//! The frames `outbound` builds, against the buffer path and the wire.

use super::*;
use floe_wire::protocol::{Message, OperationMode};
use floe_wire::{Context, Identity, ENCODING_1_1};

fn head<'a>(id: &'a Identity, ctx: &'a Context) -> RequestHead<'a> {
    RequestHead {
        identity: id,
        facet: "",
        operation: "op",
        mode: OperationMode::Normal,
        context: ctx,
    }
}

#[test]
fn small_parameters_are_copied_large_ones_go_beside() {
    let (id, ctx) = (Identity::from_name("x"), Context::new());
    let policy = Policy::default();
    let mut room = [0; STACK_FRAME];
    let small = Bytes::from(vec![1u8; 100]);
    let f = request(
        &head(&id, &ctx),
        7,
        Params::Body(ENCODING_1_1, &small),
        None,
        &policy,
        &mut room,
    )
    .unwrap();
    assert!(f.parts()[1].is_empty() && f.tail().is_empty());
    let Message::Request(r) = Message::parse(f.parts()[0].clone()).unwrap().1 else {
        panic!()
    };
    assert_eq!((r.request_id, &r.params.data[..]), (7, &small[..]));
    let large = Bytes::from(vec![2u8; 10_000]);
    let f = request(
        &head(&id, &ctx),
        8,
        Params::Body(ENCODING_1_1, &large),
        None,
        &policy,
        &mut room,
    )
    .unwrap();
    assert_eq!(f.parts()[1], large, "shared, not copied");
    let slice = [3u8; 5000];
    let prefix = Bytes::new();
    let f = request(
        &head(&id, &ctx),
        9,
        Params::Slice(ENCODING_1_1, &prefix, &slice),
        None,
        &policy,
        &mut room,
    )
    .unwrap();
    assert_eq!(f.tail(), &slice[..], "borrowed");
}

/// Requests of every size around [`STACK_FRAME`], with and without a
/// context, compressed or not, in each form of parameters: the same
/// frame whether it was encoded on the stack or in a buffer.
#[test]
fn small_requests_are_encoded_on_the_stack_as_in_a_buffer() {
    let policy = Policy::default();
    let id = Identity::new("name", "category");
    let contexts = [Context::new(), Context::from([("k".into(), "v".into())])];
    for ctx in &contexts {
        for data in 0..=STACK_FRAME {
            for compress in [None, Some(1)] {
                let body: Vec<u8> = (0..data).map(|i| i as u8).collect();
                let shared = Bytes::from(body.clone());
                let mut encaps = ((6 + data) as i32).to_le_bytes().to_vec();
                encaps.extend_from_slice(&[1, 1]);
                encaps.extend_from_slice(&body);
                let encaps = Bytes::from(encaps);
                let half = data / 2;
                let (prefix, rest) = (shared.slice(..half), shared.slice(half..));
                let forms = [
                    Params::Encapsulation(&encaps),
                    Params::Body(ENCODING_1_1, &shared),
                    Params::Split(ENCODING_1_1, &prefix, &rest),
                    Params::Slice(ENCODING_1_1, &prefix, &body[half..]),
                ];
                for params in forms {
                    let mut room = [0; STACK_FRAME];
                    let f =
                        request(&head(&id, ctx), 5, params, compress, &policy, &mut room).unwrap();
                    let frame = f.to_bytes();
                    let mut expected = BytesMut::new();
                    head(&id, ctx)
                        .try_encode_head(
                            &mut expected,
                            5,
                            6 + data,
                            CompressionStatus::NotSupported,
                        )
                        .unwrap();
                    expected.extend_from_slice(&encaps);
                    let expected = compressed(expected, compress).freeze();
                    assert_eq!(frame, expected, "{data} bytes, {compress:?}");
                    let stacked =
                        ctx.is_empty() && compress.is_none() && frame.len() <= STACK_FRAME - 20;
                    if stacked {
                        assert!(matches!(f, OutFrame::Stack(_)), "on the stack");
                    }
                }
            }
        }
    }
}

fn parsed(f: &OutFrame<'_>) -> Reply {
    let Message::Reply(r) = Message::parse(f.to_bytes()).unwrap().1 else {
        panic!()
    };
    r
}

#[test]
fn replies_carry_results_and_failures() {
    let policy = Policy::default();
    let mut room = [0; STACK_FRAME];
    let ok = ReplyData::new(Bytes::from_static(&[6, 0, 0, 0, 1, 1]));
    let f = reply(3, Ok(ok), None, &policy, &mut room);
    let r = parsed(&f);
    assert_eq!(r.request_id, 3);
    assert_eq!(r.body.status(), ReplyStatus::OK);
    let error = Err(DispatchError::unauthorized("no"));
    let f = reply(4, error, None, &policy, &mut room);
    assert_eq!(
        parsed(&f).body,
        ReplyBody::DispatchException {
            status: ReplyStatus::UNAUTHORIZED,
            message: "no".into()
        }
    );
    // A large result goes beside the reply's head.
    let big = Bytes::from(vec![0u8; 100_000]);
    let mut encaps = BytesMut::new();
    encaps.extend_from_slice(&(100_006i32).to_le_bytes());
    encaps.extend_from_slice(&[1, 1]);
    let data = ReplyData::split(encaps.freeze(), big.clone());
    let f = reply(5, Ok(data), None, &policy, &mut room);
    assert_eq!(f.parts()[1], big);
}

/// A reply of every size around [`STACK_FRAME`] and the compression
/// threshold, with and without compression asked: the same frame
/// whether it was encoded on the stack or in a buffer.
#[test]
fn small_replies_are_encoded_on_the_stack_as_in_a_buffer() {
    let policy = Policy::default();
    for data in 0..=STACK_FRAME {
        for compress in [None, Some(1)] {
            let mut encaps = ((6 + data) as i32).to_le_bytes().to_vec();
            encaps.extend_from_slice(&[1, 1]);
            encaps.extend((0..data).map(|i| i as u8));
            let encaps = Bytes::from(encaps);
            for status in [ReplyStatus::OK, ReplyStatus::USER_EXCEPTION] {
                let result = match status {
                    ReplyStatus::OK => Ok(ReplyData::new(encaps.clone())),
                    _ => Err(DispatchError::EncodedUserException(encaps.clone())),
                };
                let mut room = [0; STACK_FRAME];
                let f = reply(9, result, compress, &policy, &mut room);
                let len = Reply::HEAD_SIZE + encaps.len();
                let stacked =
                    len <= STACK_FRAME && (compress.is_none() || len < COMPRESSION_THRESHOLD);
                assert_eq!(
                    matches!(f, OutFrame::Stack(_)),
                    stacked,
                    "{len} bytes, {compress:?}"
                );
                let mut expected = BytesMut::new();
                Reply::encode_head(
                    &mut expected,
                    9,
                    status,
                    encaps.len(),
                    CompressionStatus::NotSupported,
                );
                expected.extend_from_slice(&encaps);
                let expected = compressed(expected, compress).freeze();
                assert_eq!(f.to_bytes(), expected, "{len} bytes, {compress:?}");
            }
        }
    }
}

#[test]
fn compression_marks_or_compresses() {
    let small = BytesMut::from(&[0u8; 20][..]);
    assert_eq!(compressed(small, Some(1))[9], 1, "too small: only marked");
    let plain = BytesMut::from(&[0u8; 20][..]);
    assert_eq!(compressed(plain, None)[9], 0);
}
