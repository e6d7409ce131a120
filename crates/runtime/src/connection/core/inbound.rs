//! The receiving side of protocol 1.0 without I/O (the quinn-proto habit):
//! what one whole received frame asks of the connection. Frames in,
//! [`Inbound`] out; no socket, no task, no tokio, so the rules are
//! unit-tested with byte frames (see the tests below).
//!
//! The connection task (`task.rs`) cuts frames out of its read buffer
//! (`floe_wire::protocol::check`) and hands each to
//! `ConnectionInner::handle_frame`, which calls [`inbound`] and carries the
//! answer out: dispatch, complete a pending request, answer a broken
//! request, or close.

use bytes::{Buf, Bytes};
use floe_wire::protocol::{
    decompress_frame, BatchRequest, CompressionStatus, Header, Message, MessageType, Reply,
    Request, HEADER_SIZE,
};

/// What one received frame asks of the connection.
#[derive(Debug)]
pub(crate) enum Inbound {
    /// A request to dispatch; `frame` is the (uncompressed) frame its
    /// parameters are a slice of.
    Request {
        /// The decoded request.
        request: Request,
        /// Whether the sender accepts a compressed reply (§5).
        accepts_compression: bool,
        /// The whole frame.
        frame: Bytes,
    },
    /// Requests to dispatch one after the other, none answered.
    Batch(BatchRequest),
    /// The reply to one of our requests.
    Reply(Reply),
    /// A request whose fields decode but whose parameters encapsulation
    /// does not fit the frame: answered with `error` as status 5 (§7.3),
    /// and the connection goes on.
    BadParams {
        /// The request to answer.
        request_id: i32,
        /// Why its parameters do not decode.
        error: floe_wire::Error,
        /// Whether the sender accepts a compressed reply.
        accepts_compression: bool,
    },
    /// ValidateConnection: the first message of a server, or a heartbeat.
    Validate,
    /// CloseConnection: the peer closes gracefully (§1.4).
    Close,
}

/// Classifies one whole frame (`floe_wire::protocol::check` said
/// `Complete`): inflates a compressed one (bounded by `message_size_max`),
/// then parses it. Returns the frame's header as received (for tracing)
/// beside what it asks.
///
/// # Errors
///
/// What closes the connection: a bad header, a compressed body that does
/// not inflate or inflates past `message_size_max`, broken fields of any
/// message (the fields of a request, as opposed to its parameters).
pub(crate) fn inbound(
    frame: Bytes,
    message_size_max: usize,
) -> Result<(Header, Inbound), floe_wire::Error> {
    let header = Header::parse(&frame, 0)?;
    inbound_with(header, frame, message_size_max).map(|i| (header, i))
}

/// [`inbound`] of a frame whose `header` was parsed already (by the
/// connection task, when it found the frame whole).
pub(crate) fn inbound_with(
    header: Header,
    frame: Bytes,
    message_size_max: usize,
) -> Result<Inbound, floe_wire::Error> {
    let accepts_compression = header.compression.accepts_compression();
    let compressed = header.compression == CompressionStatus::Compressed;
    let frame = if compressed {
        decompress_frame(&frame, message_size_max)?
    } else {
        frame
    };
    if !compressed && header.message_type == MessageType::Request && header.size == frame.len() {
        // The common request, read straight into its `Inbound` (no
        // `Message` in between: two moves of the request fewer).
        let mut body = frame.clone();
        body.advance(HEADER_SIZE);
        if let Ok(request) = Request::decode_simple(body) {
            return Ok(Inbound::Request {
                request,
                accepts_compression,
                frame,
            });
        }
    }
    // The header was read once already; an inflated frame has its own.
    let parsed = if compressed {
        Message::parse(frame.clone()).map(|(_, m)| m)
    } else {
        Message::parse_body(&header, frame.clone())
    };
    let message = match parsed {
        Ok(message) => message,
        Err(error) if header.message_type == MessageType::Request => {
            let request_id = params_error_request_id(&frame).ok_or(error.clone())?;
            let bad = Inbound::BadParams {
                request_id,
                error,
                accepts_compression,
            };
            return Ok(bad);
        }
        Err(e) => return Err(e),
    };
    let inbound = match message {
        Message::Request(request) => Inbound::Request {
            request,
            accepts_compression,
            frame,
        },
        Message::BatchRequest(batch) => Inbound::Batch(batch),
        Message::Reply(reply) => Inbound::Reply(reply),
        Message::ValidateConnection => Inbound::Validate,
        Message::CloseConnection => Inbound::Close,
    };
    Ok(inbound)
}

/// For a Request frame whose fields decode but whose parameters
/// encapsulation does not fit, the request id to answer; `None` when the
/// fields themselves are broken.
fn params_error_request_id(frame: &Bytes) -> Option<i32> {
    let mut dec = floe_wire::Decoder::new(frame.slice(HEADER_SIZE..));
    let rid = dec.read_i32().ok()?;
    dec.read::<floe_wire::Identity>().ok()?;
    if dec.read_seq::<String>().ok()?.len() > 1 {
        return None;
    }
    dec.read_string().ok()?;
    dec.read_u8().ok()?;
    dec.read::<floe_wire::Context>().ok()?;
    // Only the encapsulation is left and it did not fit.
    Some(rid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use floe_wire::protocol::{
        compress_frame, BatchBuilder, OperationMode, ReplyBody, RequestHead, CLOSE_CONNECTION,
        VALIDATE_CONNECTION,
    };
    use floe_wire::{Context, Encapsulation, Identity, ENCODING_1_1};

    const MAX: usize = 1024 * 1024;

    fn request_frame(rid: i32, params: &[u8]) -> Bytes {
        let id = Identity::from_name("hello");
        let ctx = Context::new();
        let head = RequestHead {
            identity: &id,
            facet: "",
            operation: "sayHello",
            mode: OperationMode::Normal,
            context: &ctx,
        };
        let mut buf = BytesMut::new();
        head.encode(&mut buf, rid, params, CompressionStatus::NotSupported);
        buf.freeze()
    }

    /// An encapsulation of `n` bytes of data.
    fn encaps(n: usize) -> Vec<u8> {
        let mut v = ((6 + n) as i32).to_le_bytes().to_vec();
        v.extend([1, 1]);
        v.extend(std::iter::repeat_n(7u8, n));
        v
    }

    #[test]
    fn a_request_is_dispatched_with_its_frame() {
        let frame = request_frame(5, &encaps(3));
        let (header, inbound) = inbound(frame.clone(), MAX).unwrap();
        assert_eq!(header.message_type, MessageType::Request);
        match inbound {
            Inbound::Request {
                request,
                accepts_compression,
                frame: f,
            } => {
                assert_eq!(request.request_id, 5);
                assert_eq!(request.operation, "sayHello");
                assert_eq!(request.params.data.len(), 3);
                assert!(!accepts_compression);
                assert_eq!(f, frame);
            }
            other => panic!("{other:?}"),
        }
    }

    /// Requests the fast path takes (no context) and the general path
    /// takes (a context, a long identity): the same request as
    /// `Message::parse` decodes from the frame.
    #[test]
    fn every_request_is_classified_as_message_parse_decodes_it() {
        let long = "n".repeat(300);
        let contexts = [Context::new(), Context::from([("k".into(), "v".into())])];
        for name in ["hello", long.as_str()] {
            for ctx in &contexts {
                let id = Identity::from_name(name);
                let head = RequestHead {
                    identity: &id,
                    facet: "f",
                    operation: "op",
                    mode: OperationMode::Idempotent,
                    context: ctx,
                };
                let mut buf = BytesMut::new();
                head.encode(&mut buf, 4, &encaps(2), CompressionStatus::NotSupported);
                let frame = buf.freeze();
                let Ok((_, Message::Request(expected))) = Message::parse(frame.clone()) else {
                    panic!("not a request")
                };
                let (_, inbound) = inbound(frame.clone(), MAX).unwrap();
                let Inbound::Request {
                    request,
                    frame: kept,
                    ..
                } = inbound
                else {
                    panic!("{inbound:?}")
                };
                assert_eq!(request, expected);
                assert_eq!(kept, frame);
            }
        }
    }

    #[test]
    fn a_compressed_request_is_inflated_and_accepts_a_compressed_reply() {
        let frame = request_frame(9, &encaps(4000));
        let compressed = compress_frame(&frame, 1).unwrap();
        assert!(compressed.len() < frame.len());
        let (header, inbound) = inbound(compressed.freeze(), MAX).unwrap();
        assert_eq!(header.compression, CompressionStatus::Compressed);
        match inbound {
            Inbound::Request {
                request,
                accepts_compression,
                frame: f,
            } => {
                assert_eq!(request.request_id, 9);
                assert_eq!(request.params.data.len(), 4000);
                assert!(accepts_compression);
                // The inflated frame: the same message, marked as
                // accepting compression.
                assert!(f[HEADER_SIZE..] == frame[HEADER_SIZE..]);
                assert_eq!(f[9], CompressionStatus::Supported as u8);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_compressed_frame_inflating_past_the_limit_closes() {
        let frame = request_frame(9, &encaps(100_000));
        let compressed = compress_frame(&frame, 1).unwrap().freeze();
        assert!(inbound(compressed, 10_000).is_err());
    }

    #[test]
    fn params_running_past_the_frame_are_answered_not_fatal() {
        // The encapsulation claims 100 bytes; 3 follow.
        let mut params = encaps(3);
        params[..4].copy_from_slice(&100i32.to_le_bytes());
        let frame = request_frame(7, &params);
        match inbound(frame, MAX).unwrap().1 {
            Inbound::BadParams { request_id, .. } => assert_eq!(request_id, 7),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn broken_request_fields_close() {
        // A facet sequence of two strings is not a request.
        let mut frame = BytesMut::from(&request_frame(7, &encaps(0))[..]);
        let facet_at = HEADER_SIZE + 4 + 6 + 1;
        assert_eq!(frame[facet_at], 0);
        frame[facet_at] = 2;
        assert!(inbound(frame.freeze(), MAX).is_err());
    }

    #[test]
    fn replies_validation_and_close() {
        let reply = Reply {
            request_id: 3,
            body: ReplyBody::Ok(Encapsulation {
                encoding: ENCODING_1_1,
                data: Bytes::new(),
            }),
        };
        let mut buf = BytesMut::new();
        reply.encode(&mut buf, CompressionStatus::NotSupported);
        match inbound(buf.freeze(), MAX).unwrap().1 {
            Inbound::Reply(r) => assert_eq!(r.request_id, 3),
            other => panic!("{other:?}"),
        }
        let validate = Bytes::from_static(&VALIDATE_CONNECTION);
        assert!(matches!(
            inbound(validate, MAX).unwrap().1,
            Inbound::Validate
        ));
        let close = Bytes::from_static(&CLOSE_CONNECTION);
        assert!(matches!(inbound(close, MAX).unwrap().1, Inbound::Close));
    }

    #[test]
    fn a_batch_yields_its_requests() {
        let id = Identity::from_name("hello");
        let ctx = Context::new();
        let head = RequestHead {
            identity: &id,
            facet: "",
            operation: "o",
            mode: OperationMode::Normal,
            context: &ctx,
        };
        let mut batch = BatchBuilder::new();
        batch.push(&head, &encaps(1));
        batch.push(&head, &encaps(2));
        let frame = batch.take_frame().unwrap().freeze();
        match inbound(frame, MAX).unwrap().1 {
            Inbound::Batch(b) => {
                let sizes: Vec<usize> = b.iter().map(|r| r.unwrap().params.data.len()).collect();
                assert_eq!(sizes, [1, 2]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_bad_header_closes() {
        let mut frame = BytesMut::from(&VALIDATE_CONNECTION[..]);
        frame[0] = b'X';
        assert!(inbound(frame.freeze(), MAX).is_err());
        // A size below the header's.
        let mut frame = BytesMut::from(&VALIDATE_CONNECTION[..]);
        frame[10..14].copy_from_slice(&5i32.to_le_bytes());
        assert!(inbound(frame.freeze(), MAX).is_err());
    }
}
