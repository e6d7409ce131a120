//! Request, batch request and reply bodies (everything after the 14-byte
//! header), as the connection decodes them; whatever decodes is written
//! back as a frame and must parse to the same message.

use bytes::{Bytes, BytesMut};
use floe_wire::protocol::{
    BatchBuilder, BatchRequest, CompressionStatus, Message, Reply, Request, RequestHead,
};
use floe_wire::Decoder;

/// The first byte picks the message type (0 request, 1 batch, 2 reply),
/// the rest is the body.
pub fn run(data: &[u8]) {
    let Some((&kind, body)) = data.split_first() else {
        return;
    };
    let mut dec = Decoder::new(Bytes::copy_from_slice(body));
    match kind % 3 {
        0 => {
            if let Ok(req) = Request::decode_body(&mut dec) {
                let mut buf = BytesMut::new();
                req.encode(&mut buf, CompressionStatus::NotSupported);
                match Message::parse(buf.freeze()) {
                    Ok((_, Message::Request(back))) => assert_eq!(back, req),
                    other => panic!("a re-encoded request parsed as {other:?}"),
                }
            }
        }
        1 => {
            if let Ok(batch) = BatchRequest::decode_body(&mut dec) {
                // A RequestHead holds a valid mode: requests whose mode byte
                // is not one are left out of the re-encoded batch.
                let requests: Vec<Request> = batch
                    .iter()
                    .map_while(Result::ok)
                    .filter(|r| r.mode().is_some())
                    .collect();
                let mut builder = BatchBuilder::new();
                for r in &requests {
                    let head = RequestHead {
                        identity: &r.identity,
                        facet: &r.facet,
                        operation: &r.operation,
                        mode: r.mode().unwrap_or_default(),
                        context: &r.context,
                    };
                    let mut params = BytesMut::new();
                    params.extend_from_slice(&(r.params.wire_size() as i32).to_le_bytes());
                    params.extend_from_slice(&[r.params.encoding.major, r.params.encoding.minor]);
                    params.extend_from_slice(&r.params.data);
                    builder.push(&head, &params);
                }
                if let Some(frame) = builder.take_frame() {
                    match Message::parse(frame.freeze()) {
                        Ok((_, Message::BatchRequest(back))) => {
                            let again: Vec<Request> = back.iter().map_while(Result::ok).collect();
                            assert_eq!(again, requests);
                        }
                        other => panic!("a re-encoded batch parsed as {other:?}"),
                    }
                }
            }
        }
        _ => {
            if let Ok(reply) = Reply::decode_body(&mut dec) {
                let mut buf = BytesMut::new();
                reply.encode(&mut buf, CompressionStatus::NotSupported);
                match Message::parse(buf.freeze()) {
                    Ok((_, Message::Reply(back))) => assert_eq!(back, reply),
                    other => panic!("a re-encoded reply parsed as {other:?}"),
                }
            }
        }
    }
}
