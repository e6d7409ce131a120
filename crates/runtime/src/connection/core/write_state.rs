//! [`WriteState`]: a connection's send queue (sans-IO). The bytes
//! accepted from senders, in order, as shared `Bytes` (never copied here),
//! with the counters and flags the connection's writer keeps beside
//! them: the byte count for back-pressure, the bytes queued since a sender
//! last helped write, the first error, a stream's pending flush, and the
//! cork of the connection task's batch of replies.

use std::collections::VecDeque;
use std::io::IoSlice;

use bytes::{Buf, Bytes};

use floe_wire::protocol::header::patch_size;
use floe_wire::protocol::{CompressionStatus, Header, MessageType, HEADER_SIZE};

use super::scratch;
use crate::error::Error;

/// The queue of a connection's send side and its flags, behind the
/// connection's lock. No I/O: the writer moves bytes from here to the
/// socket and reports what the socket took with [`WriteState::consume`].
#[derive(Default)]
pub(crate) struct WriteState {
    /// Bytes accepted but not yet written, in order.
    pub(crate) queue: VecDeque<Bytes>,
    /// Total bytes in `queue` (back-pressure: the connection task stops
    /// reading while this is high).
    pub(crate) queued_bytes: usize,
    /// Set when writing failed or the connection closed.
    pub(crate) error: Option<Error>,
    /// Bytes queued since a sender last tried to write the queue itself.
    pub(crate) unhelped: usize,
    /// A stream transport took bytes it may not have sent yet: it needs a
    /// flush (the TCP path never sets this).
    pub(crate) unflushed: bool,
    /// The connection task is handling a batch of frames: messages are
    /// queued and leave together when it ends (`Writer::uncork`).
    pub(crate) corked: bool,
    /// The BatchRequest at the queue's tail that further oneway requests
    /// may join ([`WriteState::push_oneway`]), while none of it is written.
    batch: Option<OpenBatch>,
    /// Buffers dropped from the queue's front so far (wrapping): a queue
    /// position plus this is a buffer's lasting number.
    popped: usize,
}

/// A message at the queue's tail that later oneway requests join: its
/// first buffer is the 18 bytes of header and request id (or count),
/// rewritten as a BatchRequest's header and count when a second request
/// joins.
#[derive(Clone, Copy, Debug)]
struct OpenBatch {
    /// The lasting number of the message's first buffer.
    at: usize,
    /// The whole message's size.
    size: usize,
    /// Requests in it.
    count: u32,
}

/// A request's header and request id, or a BatchRequest's header and
/// count: what one request's frame loses when it joins a batch.
pub(crate) const BATCH_PREFIX: usize = HEADER_SIZE + 4;

impl WriteState {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Moves the non-empty `parts` to the queue (they are left empty): a
    /// `Bytes` made from a `Vec` would need a shared header to be cloned.
    pub(crate) fn push(&mut self, parts: &mut [Bytes]) {
        self.batch = None;
        self.append(parts);
    }

    /// Queues a message made of `parts` then a copy of `tail`. With
    /// `batch` (not 0), the message is a oneway Request frame, which
    /// joins the oneway requests queued just before it in one
    /// BatchRequest of at most `batch` bytes ([`WriteState::push_oneway`]).
    /// Returns the bytes the message lost by joining a batch.
    pub(crate) fn queue(&mut self, parts: &mut [Bytes], tail: &[u8], batch: usize) -> usize {
        if batch > 0 && tail.is_empty() && !parts.is_empty() {
            return self.push_oneway(parts, batch);
        }
        self.push(parts);
        if !tail.is_empty() {
            self.push(&mut [scratch::copied(tail)]);
        }
        0
    }

    /// Queues one oneway Request frame (`parts[0]` begins with its header
    /// and request id 0). When the message at the queue's tail is a batch
    /// that nothing of has been written yet, and the frame fits within
    /// `cap` bytes with it, the frame joins it: it loses its header and
    /// request id, and the batch's header and count are rewritten.
    /// Otherwise it opens a batch of its own, for the next ones to join (a
    /// batch of one is the plain request, unchanged). A compressed frame,
    /// or one larger than `cap`, is queued as it is. Returns the bytes the
    /// frame lost (0 or [`BATCH_PREFIX`]).
    fn push_oneway(&mut self, parts: &mut [Bytes], cap: usize) -> usize {
        let len: usize = parts.iter().map(Bytes::len).sum();
        let head = &parts[0];
        let plain = head.len() >= BATCH_PREFIX
            && head[9] != CompressionStatus::Compressed as u8
            && head[14..BATCH_PREFIX] == [0; 4];
        if !plain || len > cap {
            self.push(parts);
            return 0;
        }
        if let Some(b) = self.batch {
            let size = b.size + len - BATCH_PREFIX;
            let at = b.at.wrapping_sub(self.popped);
            // The count cannot overflow: each request adds more bytes
            // than `BATCH_PREFIX` to a size that fits an `i32`.
            if size <= cap {
                if let Some(first) = self.queue.get_mut(at) {
                    *first = batch_prefix(size, b.count + 1);
                    parts[0].advance(BATCH_PREFIX);
                    self.batch = Some(OpenBatch {
                        at: b.at,
                        size,
                        count: b.count + 1,
                    });
                    self.append(parts);
                    return BATCH_PREFIX;
                }
            }
        }
        let prefix = parts[0].split_to(BATCH_PREFIX);
        let at = self.popped.wrapping_add(self.queue.len());
        self.append(&mut [prefix]);
        self.append(parts);
        self.batch = Some(OpenBatch {
            at,
            size: len,
            count: 1,
        });
        0
    }

    /// Moves the non-empty `parts` to the queue's tail.
    fn append(&mut self, parts: &mut [Bytes]) {
        for b in parts.iter_mut().filter(|b| !b.is_empty()) {
            self.queued_bytes += b.len();
            self.unhelped += b.len();
            self.queue.push_back(std::mem::take(b));
        }
    }

    /// Drops the first `n` queued bytes (written).
    pub(crate) fn consume(&mut self, mut n: usize) {
        while n > 0 {
            let Some(front) = self.queue.front_mut() else {
                break;
            };
            if self.batch.is_some_and(|b| b.at == self.popped) {
                // Part of the batch is written: it can no longer grow.
                self.batch = None;
            }
            if n >= front.len() {
                let len = front.len();
                self.popped = self.popped.wrapping_add(1);
                n -= len;
                self.queued_bytes -= len;
                self.queue.pop_front();
            } else {
                front.advance(n);
                self.queued_bytes -= n;
                n = 0;
            }
        }
    }

    /// Whether anything waits to be written or flushed.
    pub(crate) fn pending(&self) -> bool {
        !self.queue.is_empty() || self.unflushed
    }
}

/// The header and count of a BatchRequest of `count` requests, `size`
/// bytes in all.
fn batch_prefix(size: usize, count: u32) -> Bytes {
    let mut b = [0u8; BATCH_PREFIX];
    b[..HEADER_SIZE].copy_from_slice(&Header::bytes(
        MessageType::BatchRequest,
        CompressionStatus::NotSupported,
    ));
    patch_size(&mut b, 0, size);
    b[HEADER_SIZE..].copy_from_slice(&count.to_le_bytes());
    scratch::copied(&b)
}

impl WriteState {
    /// Points `iov` at the queue's head, at most `iov.len()` buffers (for
    /// one vectored write); how many were filled.
    pub(crate) fn head<'a>(&'a self, iov: &mut [IoSlice<'a>]) -> usize {
        let mut n = 0;
        for (slot, b) in iov.iter_mut().zip(self.queue.iter()) {
            *slot = IoSlice::new(b);
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use floe_wire::protocol::{Message, Request};
    use floe_wire::{Encapsulation, Identity, ENCODING_1_1};

    fn parts(sizes: &[usize]) -> Vec<Bytes> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| Bytes::from(vec![i as u8; n]))
            .collect()
    }

    #[test]
    fn push_skips_empty_parts_and_counts_bytes() {
        let mut st = WriteState::new();
        assert!(!st.pending());
        st.push(&mut parts(&[3, 0, 5]));
        assert_eq!(st.queue.len(), 2);
        assert_eq!(st.queued_bytes, 8);
        assert_eq!(st.unhelped, 8);
        assert!(st.pending());
    }

    #[test]
    fn consume_drops_whole_and_partial_buffers_in_order() {
        let mut st = WriteState::new();
        st.push(&mut parts(&[3, 4, 5]));
        st.consume(5); // the first buffer and 2 bytes of the second
        assert_eq!(st.queued_bytes, 7);
        assert_eq!(st.queue.len(), 2);
        assert_eq!(&st.queue[0][..], &[1, 1]);
        st.consume(100); // more than queued: everything, no panic
        assert_eq!(st.queued_bytes, 0);
        assert!(!st.pending());
    }

    #[test]
    fn an_unflushed_stream_is_pending_with_an_empty_queue() {
        let mut st = WriteState::new();
        st.unflushed = true;
        assert!(st.pending());
    }

    /// A oneway request frame for `operation` with `data` as parameters,
    /// as the writer gets it: the head, then the parameters beside it.
    fn oneway(operation: &str, data: &[u8]) -> Vec<Bytes> {
        oneway_with(operation, data, CompressionStatus::NotSupported)
    }

    fn oneway_with(operation: &str, data: &[u8], status: CompressionStatus) -> Vec<Bytes> {
        let request = Request {
            request_id: 0,
            identity: Identity::from_name("sub"),
            facet: Default::default(),
            operation: operation.into(),
            mode_byte: 0,
            context: Default::default(),
            params: Encapsulation {
                encoding: ENCODING_1_1,
                data: Bytes::copy_from_slice(data),
            },
        };
        let mut frame = BytesMut::new();
        request.encode(&mut frame, CompressionStatus::NotSupported);
        frame[9] = status as u8;
        let mut frame = frame.freeze();
        let head = frame.split_to(frame.len() - data.len());
        vec![head, frame]
    }

    /// The messages in the queue: each a request's operation and
    /// parameters, a batch's requests together.
    fn messages(st: &WriteState) -> Vec<Vec<(String, Vec<u8>)>> {
        let mut all = BytesMut::new();
        for b in &st.queue {
            all.extend_from_slice(b);
        }
        let mut all = all.freeze();
        assert_eq!(all.len(), st.queued_bytes);
        let mut out = Vec::new();
        while !all.is_empty() {
            let len = floe_wire::protocol::header::size_field(&all);
            let frame = all.split_to(len);
            let op = |r: Request| (r.operation.to_string(), r.params.data.to_vec());
            out.push(match Message::parse(frame).unwrap().1 {
                Message::Request(r) => vec![op(r)],
                Message::BatchRequest(b) => {
                    let requests: Vec<_> = b.iter().map(|r| op(r.unwrap())).collect();
                    assert_eq!(requests.len(), b.count);
                    requests
                }
                other => panic!("{other:?}"),
            });
        }
        out
    }

    fn names(st: &WriteState) -> Vec<Vec<String>> {
        let m = messages(st);
        m.into_iter()
            .map(|m| m.into_iter().map(|(op, _)| op).collect())
            .collect()
    }

    #[test]
    fn queued_oneways_join_one_batch_in_order() {
        let mut st = WriteState::new();
        let mut saved = 0;
        for (i, op) in ["a", "b", "c"].into_iter().enumerate() {
            saved += st.queue(&mut oneway(op, &[i as u8; 100]), &[], 4096);
        }
        assert_eq!(saved, 2 * BATCH_PREFIX);
        let m = messages(&st);
        assert_eq!(m.len(), 1, "one BatchRequest");
        assert_eq!(
            m[0],
            [
                ("a".into(), vec![0; 100]),
                ("b".into(), vec![1; 100]),
                ("c".into(), vec![2; 100])
            ]
        );
    }

    #[test]
    fn a_batch_of_one_is_the_plain_request() {
        let mut st = WriteState::new();
        let frame = oneway("a", b"xyz");
        let whole: Vec<u8> = frame.iter().flat_map(|b| b.to_vec()).collect();
        st.queue(&mut frame.clone(), &[], 4096);
        let queued: Vec<u8> = st.queue.iter().flat_map(|b| b.to_vec()).collect();
        assert_eq!(queued, whole);
    }

    #[test]
    fn a_batch_stays_within_its_size() {
        let mut st = WriteState::new();
        let cap = 2 * 150;
        for op in ["a", "b", "c", "d", "e"] {
            st.queue(&mut oneway(op, &[7; 120]), &[], cap);
        }
        assert_eq!(names(&st), [vec!["a", "b"], vec!["c", "d"], vec!["e"]]);
        // A request larger than the batch size goes alone, and the next
        // ones start a batch of their own.
        let mut st = WriteState::new();
        st.queue(&mut oneway("a", &[0; 10]), &[], cap);
        st.queue(&mut oneway("big", &[0; 400]), &[], cap);
        st.queue(&mut oneway("b", &[0; 10]), &[], cap);
        st.queue(&mut oneway("c", &[0; 10]), &[], cap);
        assert_eq!(names(&st), [vec!["a"], vec!["big"], vec!["b", "c"]]);
    }

    #[test]
    fn other_messages_and_compressed_requests_close_the_batch() {
        let mut st = WriteState::new();
        st.queue(&mut oneway("a", b"1"), &[], 4096);
        st.queue(&mut oneway("b", b"2"), &[], 4096);
        // A twoway request or a reply: queued as it is, after the batch.
        st.queue(&mut oneway("twoway", b"3"), &[], 0);
        st.queue(&mut oneway("c", b"4"), &[], 4096);
        let status = CompressionStatus::Supported;
        st.queue(&mut oneway_with("d", b"5", status), &[], 4096);
        assert_eq!(
            names(&st),
            [vec!["a", "b"], vec!["twoway"], vec!["c", "d"]],
            "an uncompressed frame of a compressing proxy joins"
        );
        // A compressed frame (bzip2 body) is never touched: it goes alone.
        let mut st = WriteState::new();
        let mut saved = st.queue(&mut oneway("a", b"1"), &[], 4096);
        let compressed = oneway_with("z", b"2", CompressionStatus::Compressed);
        let frame_len: usize = compressed.iter().map(Bytes::len).sum();
        saved += st.queue(&mut compressed.clone(), &[], 4096);
        saved += st.queue(&mut oneway("b", b"3"), &[], 4096);
        assert_eq!(saved, 0, "no request joined another");
        let rest: Vec<u8> = st
            .queue
            .iter()
            .skip(3)
            .take(2)
            .flat_map(|b| b.to_vec())
            .collect();
        let expected: Vec<u8> = compressed.iter().flat_map(|b| b.to_vec()).collect();
        assert_eq!(
            (rest.len(), rest),
            (frame_len, expected),
            "queued as it was"
        );
    }

    #[test]
    fn a_batch_partly_written_no_longer_grows() {
        let mut st = WriteState::new();
        st.queue(&mut oneway("x", &[0; 50]), &[], 0);
        st.queue(&mut oneway("a", &[1; 50]), &[], 4096);
        // Written: all of the first message, nothing of the batch.
        let first: usize = st.queue.iter().take(2).map(Bytes::len).sum();
        st.consume(first);
        st.queue(&mut oneway("b", &[2; 50]), &[], 4096);
        // Written: 3 bytes of the batch's header.
        st.consume(3);
        st.queue(&mut oneway("c", &[3; 50]), &[], 4096);
        st.queue(&mut oneway("d", &[4; 50]), &[], 4096);
        let mut rest = BytesMut::from(&b"Ice"[..]);
        for b in &st.queue {
            rest.extend_from_slice(b);
        }
        let mut whole = WriteState::new();
        whole.push(&mut [rest.freeze()]);
        assert_eq!(names(&whole), [vec!["a", "b"], vec!["c", "d"]]);
    }

    #[test]
    fn head_fills_at_most_the_slots_given() {
        let mut st = WriteState::new();
        st.push(&mut parts(&[1, 2, 3, 4]));
        let mut iov = [IoSlice::new(&[]); 3];
        let n = st.head(&mut iov);
        assert_eq!(n, 3);
        assert_eq!(iov.iter().map(|s| s.len()).collect::<Vec<_>>(), [1, 2, 3]);
        let mut iov = [IoSlice::new(&[]); 8];
        assert_eq!(st.head(&mut iov), 4);
    }
}
