//! Batch requests (type 1, §2.6): a count, then requests without ids.

use bytes::{BufMut, Bytes, BytesMut};

use super::header::{patch_size, CompressionStatus, Header, MessageType, HEADER_SIZE};
use super::request::{Request, RequestHead};
use crate::decoder::Decoder;
use crate::error::{Error, Result};

/// A received BatchRequest: the checked count and the undecoded requests,
/// a slice of the frame. Iterate to decode them one by one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchRequest {
    /// Number of requests announced (checked non-negative).
    pub count: usize,
    /// The requests, back to back.
    pub body: Bytes,
}

impl BatchRequest {
    /// Decodes the body of a BatchRequest message.
    ///
    /// # Errors
    ///
    /// [`Error::UnmarshalOutOfBounds`] if the count is negative or more
    /// requests are announced than the bytes could hold.
    pub fn decode_body(dec: &mut Decoder) -> Result<BatchRequest> {
        let count = dec
            .read_i32()
            .map_err(|e| e.at("count").at("BatchRequest"))?;
        if count < 0 {
            return Err(Error::out_of_bounds(0, dec.remaining()).at("negative batch count"));
        }
        let count = count as usize;
        // Each request is at least 12 bytes (empty strings, no facet, mode,
        // empty context, 6-byte encapsulation).
        dec.check_count(count, 12)
            .map_err(|e| e.at("count").at("BatchRequest"))?;
        let body = dec.read_bytes(dec.remaining())?;
        Ok(BatchRequest { count, body })
    }

    /// The requests, decoded lazily (each with requestId 0).
    pub fn iter(&self) -> BatchRequestIter {
        BatchRequestIter {
            dec: Decoder::new(self.body.clone()),
            left: self.count,
        }
    }
}

/// Iterator over the requests of a [`BatchRequest`]. After the first error
/// it stops (the rest of the batch cannot be framed).
#[derive(Debug)]
pub struct BatchRequestIter {
    dec: Decoder,
    left: usize,
}

impl Iterator for BatchRequestIter {
    type Item = Result<Request>;

    fn next(&mut self) -> Option<Result<Request>> {
        if self.left == 0 {
            if !self.dec.is_empty() {
                let n = self.dec.remaining();
                self.dec = Decoder::new(Bytes::new());
                return Some(Err(Error::IllegalMessageSize(n as i64)));
            }
            return None;
        }
        self.left -= 1;
        let r = Request::decode_fields(&mut self.dec, 0);
        if r.is_err() {
            self.left = 0;
            self.dec = Decoder::new(Bytes::new());
        }
        Some(r)
    }
}

/// Builds a BatchRequest frame one request at a time: the queue a batch
/// proxy or connection keeps until it is flushed.
#[derive(Debug, Default)]
pub struct BatchBuilder {
    buf: BytesMut,
    count: usize,
}

impl BatchBuilder {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of queued requests.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The size the frame would have if it were flushed now.
    pub fn frame_size(&self) -> usize {
        if self.count == 0 {
            0
        } else {
            self.buf.len()
        }
    }

    /// Appends a request; returns the position where it starts (to split it
    /// off again for auto-flush, see [`BatchBuilder::take_frame_before`]).
    pub fn push(&mut self, head: &RequestHead<'_>, params: &[u8]) -> usize {
        if self.count == 0 {
            self.buf.clear();
            Header::write(
                &mut self.buf,
                MessageType::BatchRequest,
                CompressionStatus::NotSupported,
            );
            self.buf.put_i32_le(0);
        }
        let at = self.buf.len();
        head.encode_fields(&mut self.buf);
        self.buf.put_slice(params);
        self.count += 1;
        at
    }

    /// Takes the whole queued frame (size and count patched), leaving the
    /// builder empty. `None` if nothing is queued.
    pub fn take_frame(&mut self) -> Option<BytesMut> {
        if self.count == 0 {
            return None;
        }
        let mut frame = self.buf.split();
        let len = frame.len();
        patch_size(&mut frame, 0, len);
        frame[HEADER_SIZE..HEADER_SIZE + 4].copy_from_slice(&(self.count as i32).to_le_bytes());
        self.count = 0;
        Some(frame)
    }

    /// Takes the frame made of the requests queued before position `at`
    /// (returned by [`BatchBuilder::push`]) and keeps the request(s) from
    /// `at` on as the start of the next batch: the auto-flush rule of §2.6.
    pub fn take_frame_before(&mut self, at: usize) -> Option<BytesMut> {
        if self.count <= 1 || at <= HEADER_SIZE + 4 || at >= self.buf.len() {
            return None;
        }
        let rest = self.buf.split_off(at);
        self.count -= 1;
        let frame = self.take_frame();
        Header::write(
            &mut self.buf,
            MessageType::BatchRequest,
            CompressionStatus::NotSupported,
        );
        self.buf.put_i32_le(0);
        self.buf.put_slice(&rest);
        self.count = 1;
        frame
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Message, OperationMode};
    use crate::{Context, Identity};

    /// protocol_basic.txt: three batched oneways.
    const BATCH: &str = "49636550010001000100530000000300000005\
68656c6c6f0000016f0000060000000101\
0568656c6c6f0000016f000101780179060000000101\
0568656c6c6f0000056 56e756d73000009000000010101 0a00";

    #[test]
    fn parse_captured_batch() {
        let f = Bytes::from(hex::decode(BATCH.replace(' ', "")).unwrap());
        let Message::BatchRequest(b) = Message::parse(f.clone()).unwrap().1 else {
            panic!("not a batch")
        };
        assert_eq!(b.count, 3);
        let reqs: Vec<_> = b.iter().collect::<Result<_>>().unwrap();
        assert_eq!(reqs[0].operation, "o");
        assert_eq!(reqs[1].context.get("x").map(String::as_str), Some("y"));
        assert_eq!(reqs[2].operation, "enums");
        assert_eq!(&reqs[2].params.data[..], &[1, 0x0a, 0]);

        // Rebuild it with the builder.
        let id = Identity::from_name("hello");
        let empty = Context::new();
        let mut xy = Context::new();
        xy.insert("x".into(), "y".into());
        let mut bb = BatchBuilder::new();
        let head = |op, ctx| RequestHead {
            identity: &id,
            facet: "",
            operation: op,
            mode: OperationMode::Normal,
            context: ctx,
        };
        bb.push(&head("o", &empty), &[6, 0, 0, 0, 1, 1]);
        bb.push(&head("o", &xy), &[6, 0, 0, 0, 1, 1]);
        bb.push(&head("enums", &empty), &[9, 0, 0, 0, 1, 1, 1, 0x0a, 0]);
        assert_eq!(bb.frame_size(), 83);
        assert_eq!(&bb.take_frame().unwrap()[..], &f[..]);
        assert!(bb.is_empty());
    }

    #[test]
    fn negative_and_oversized_counts_fail() {
        let mut v = hex::decode(BATCH.replace(' ', "")).unwrap();
        v[14..18].copy_from_slice(&(-1i32).to_le_bytes());
        assert!(matches!(
            Message::parse(Bytes::from(v.clone())),
            Err(Error::UnmarshalOutOfBounds { .. })
        ));
        v[14..18].copy_from_slice(&1_000_000i32.to_le_bytes());
        assert!(Message::parse(Bytes::from(v.clone())).is_err());
        // Count 4 but only 3 requests: the 4th fails to decode.
        v[14..18].copy_from_slice(&4i32.to_le_bytes());
        let Message::BatchRequest(b) = Message::parse(Bytes::from(v)).unwrap().1 else {
            panic!()
        };
        assert!(b.iter().any(|r| r.is_err()));
    }

    #[test]
    fn auto_flush_keeps_the_last_request() {
        let id = Identity::from_name("hello");
        let ctx = Context::new();
        let head = RequestHead {
            identity: &id,
            facet: "",
            operation: "o",
            mode: OperationMode::Normal,
            context: &ctx,
        };
        let mut bb = BatchBuilder::new();
        bb.push(&head, &[6, 0, 0, 0, 1, 1]);
        bb.push(&head, &[6, 0, 0, 0, 1, 1]);
        let at = bb.push(&head, &[6, 0, 0, 0, 1, 1]);
        let first = bb.take_frame_before(at).unwrap();
        assert_eq!(first.len(), 18 + 2 * 18);
        assert_eq!(&first[14..18], &2i32.to_le_bytes());
        assert_eq!(bb.count(), 1);
        let second = bb.take_frame().unwrap();
        assert_eq!(second.len(), 18 + 18);
        let Message::BatchRequest(b) = Message::parse(second.freeze()).unwrap().1 else {
            panic!()
        };
        assert_eq!(b.iter().count(), 1);
    }
}
