//! The frames a connection sends, without I/O: a request with its
//! parameters, the reply to a dispatch, and the compression of either
//! (§5). Each is an [`OutFrame`]: a frame head built at exactly its size
//! and up to two parts sent beside it in one vectored write (large
//! parameters or results, shared rather than copied), or a borrowed tail
//! (a number sequence in the caller's memory).

use bytes::{BufMut, Bytes, BytesMut};
use floe_wire::protocol::{
    compress_frame, CompressionStatus, Reply, ReplyBody, ReplyStatus, RequestHead,
    COMPRESSION_THRESHOLD,
};

use super::limits;
use super::params::Params;
use super::policy::Policy;
use super::scratch;
use crate::error::Error;
use crate::outcome::{DispatchError, DispatchResult, ReplyData};

/// A frame to send.
#[derive(Debug)]
pub(crate) enum OutFrame<'a> {
    /// A small frame encoded whole on the sender's stack (see
    /// [`STACK_FRAME`]): written from there, copied only if it must wait
    /// in the queue.
    Stack(&'a [u8]),
    /// `parts` (the first holds the frame's head; empty parts are
    /// skipped) then `tail`, written back to back.
    Parts {
        /// The head and up to two shared parts.
        parts: [Bytes; 3],
        /// A borrowed last part: written from where it is, copied only if
        /// it must wait in the queue.
        tail: &'a [u8],
    },
}

impl OutFrame<'_> {
    /// One frame in one buffer.
    pub(crate) fn whole(frame: BytesMut) -> OutFrame<'static> {
        OutFrame::Parts {
            parts: [frame.freeze(), Bytes::new(), Bytes::new()],
            tail: &[],
        }
    }

    /// The frame's bytes in one buffer, as the peer reads them.
    #[cfg(test)]
    pub(crate) fn to_bytes(&self) -> Bytes {
        let mut b = BytesMut::new();
        match self {
            OutFrame::Stack(frame) => b.extend_from_slice(frame),
            OutFrame::Parts { parts, tail } => {
                for p in parts {
                    b.extend_from_slice(p);
                }
                b.extend_from_slice(tail);
            }
        }
        b.freeze()
    }

    /// The shared parts (none for a frame on the stack).
    #[cfg(test)]
    pub(crate) fn parts(&self) -> &[Bytes] {
        match self {
            OutFrame::Stack(_) => &[],
            OutFrame::Parts { parts, .. } => parts,
        }
    }

    /// The borrowed part written last (the whole of a frame on the stack).
    #[cfg(test)]
    pub(crate) fn tail(&self) -> &[u8] {
        match self {
            OutFrame::Stack(frame) => frame,
            OutFrame::Parts { tail, .. } => tail,
        }
    }
}

/// Requests and replies up to this size, head included, are encoded in a
/// [`FrameRoom`] on the sender's stack and written from there: a small
/// frame costs no buffer, and only one that must wait in the write queue
/// is copied.
pub(crate) const STACK_FRAME: usize = 128;

/// Room on the stack for a small frame (see [`STACK_FRAME`]).
pub(crate) type FrameRoom = [u8; STACK_FRAME];

/// Request `id` (0 for a oneway) with `head`'s fields and `params`: a
/// small one without a context is encoded in `room`. Parameters up to the
/// policy's `params_copy_limit` (or any, when the frame is compressed) are
/// copied into the frame; larger ones go beside it, shared or borrowed.
///
/// # Errors
///
/// `MemoryLimitException` for parameters that do not fit a frame.
pub(crate) fn request<'a>(
    head: &RequestHead<'_>,
    id: i32,
    params: Params<'a>,
    compress: Option<u32>,
    policy: &Policy,
    room: &'a mut FrameRoom,
) -> Result<OutFrame<'a>, Error> {
    let params_len = params.len();
    let (encoding, prefix, data, shared) = params.parts();
    let parts = (encoding, prefix, data);
    if let Some(frame) = request_on_stack(room, head, id, params_len, parts, compress)? {
        return Ok(frame);
    }
    let copied = data.len() <= policy.params_copy_limit || compress.is_some();
    // Exactly the frame's size: a full buffer becomes `Bytes` without a
    // second allocation (one with room to spare needs a shared header).
    let mut buf = scratch::frame_buf(
        head.encoded_len()
            + if encoding.is_some() { 6 } else { 0 }
            + prefix.len()
            + if copied { data.len() } else { 0 },
    );
    // An Ice frame's size is an i32: larger parameters are refused, and
    // everything below fits one.
    head.try_encode_head(&mut buf, id, params_len, CompressionStatus::NotSupported)?;
    if let Some(encoding) = encoding {
        // The size fits an i32: `try_encode_head` checked the frame's.
        buf.extend_from_slice(&floe_wire::Encapsulation::header(params_len, encoding));
        buf.extend_from_slice(prefix);
    }
    if copied {
        buf.extend_from_slice(data);
        return Ok(OutFrame::whole(compressed(buf, compress)));
    }
    let head = buf.freeze();
    Ok(match shared {
        Some(b) => OutFrame::Parts {
            parts: [head, b.clone(), Bytes::new()],
            tail: &[],
        },
        None => OutFrame::Parts {
            parts: [head, Bytes::new(), Bytes::new()],
            tail: data,
        },
    })
}

/// A request of at most [`STACK_FRAME`] bytes without a context, not
/// compressed, encoded in `room`; `None` otherwise.
fn request_on_stack<'a>(
    room: &'a mut FrameRoom,
    head: &RequestHead<'_>,
    id: i32,
    params_len: usize,
    (encoding, prefix, data): (Option<floe_wire::EncodingVersion>, &[u8], &[u8]),
    compress: Option<u32>,
) -> Result<Option<OutFrame<'a>>, Error> {
    if compress.is_some() || params_len >= STACK_FRAME {
        return Ok(None);
    }
    let room_head = &mut room[..STACK_FRAME - params_len];
    let plain = CompressionStatus::NotSupported;
    let Some(len) = head.encode_head_into(room_head, id, params_len, plain)? else {
        return Ok(None);
    };
    // The parameters follow the head: the encapsulation's header, the
    // prefix, the data.
    let frame = &mut room[..len + params_len];
    let mut at = &mut frame[len..];
    if let Some(encoding) = encoding {
        at.put_slice(&floe_wire::Encapsulation::header(params_len, encoding));
    }
    at.put_slice(prefix);
    at.put_slice(data);
    Ok(Some(OutFrame::Stack(frame)))
}

/// The reply to request `rid` carrying `result`: a small one is encoded in
/// `room`; results up to the policy's `copy_limit` are copied behind the
/// reply's head, larger parts go beside it, shared. A result too large
/// for a frame is replaced by a `MemoryLimitException` (status 5).
pub(crate) fn reply<'a>(
    rid: i32,
    result: DispatchResult,
    compress: Option<u32>,
    policy: &Policy,
    room: &'a mut FrameRoom,
) -> OutFrame<'a> {
    let result = result.map_err(DispatchError::encoded);
    let result = match limits::oversized_reply(&result) {
        None => result,
        Some(e) => Err(e),
    };
    let (status, reply) = match result {
        Ok(reply) => (ReplyStatus::OK, reply),
        Err(DispatchError::EncodedUserException(encaps)) => {
            (ReplyStatus::USER_EXCEPTION, ReplyData::new(encaps))
        }
        Err(e) => return failure(rid, e, compress),
    };
    let (head, payload) = reply.parts();
    if let Some(frame) = reply_on_stack(room, rid, status, head, payload, compress) {
        return frame;
    }
    let copy_head = head.len() <= policy.copy_limit;
    let copy_payload = copy_head && payload.len() <= policy.copy_limit;
    let copy_all = compress.is_some() || (copy_head && copy_payload);
    // Exactly the frame's size (see `request`).
    let mut buf = scratch::frame_buf(
        Reply::HEAD_SIZE
            + if copy_head || copy_all { head.len() } else { 0 }
            + if copy_payload || copy_all {
                payload.len()
            } else {
                0
            },
    );
    Reply::encode_head(
        &mut buf,
        rid,
        status,
        reply.len(),
        CompressionStatus::NotSupported,
    );
    if copy_all {
        buf.extend_from_slice(head);
        buf.extend_from_slice(payload);
        return OutFrame::whole(compressed(buf, compress));
    }
    let parts = if copy_head {
        buf.extend_from_slice(head);
        [buf.freeze(), payload.clone(), Bytes::new()]
    } else {
        [buf.freeze(), head.clone(), payload.clone()]
    };
    OutFrame::Parts { parts, tail: &[] }
}

/// A reply of at most [`STACK_FRAME`] bytes, encoded in `room`; `None`
/// for a larger one, or one to be compressed (at least
/// `COMPRESSION_THRESHOLD` bytes with `compress` set).
fn reply_on_stack<'a>(
    room: &'a mut FrameRoom,
    rid: i32,
    status: ReplyStatus,
    head: &[u8],
    payload: &[u8],
    compress: Option<u32>,
) -> Option<OutFrame<'a>> {
    let encaps = head.len() + payload.len();
    let len = Reply::HEAD_SIZE + encaps;
    if len > STACK_FRAME || (compress.is_some() && len >= COMPRESSION_THRESHOLD) {
        return None;
    }
    // Below the threshold, a reply to a request that accepts compression
    // is only marked as accepting it too (as `compressed` does).
    let compression = match compress {
        Some(_) => CompressionStatus::Supported,
        None => CompressionStatus::NotSupported,
    };
    let (frame_head, rest) = room.split_at_mut(Reply::HEAD_SIZE);
    frame_head.copy_from_slice(&Reply::head(rid, status, encaps, compression));
    let (first, rest) = rest.split_at_mut(head.len());
    first.copy_from_slice(head);
    rest[..payload.len()].copy_from_slice(payload);
    Some(OutFrame::Stack(&room[..len]))
}

/// The reply of a failed dispatch (statuses 2–255 but 1).
fn failure(rid: i32, e: DispatchError, compress: Option<u32>) -> OutFrame<'static> {
    let body = match e {
        DispatchError::ObjectNotExist(f) => ReplyBody::ObjectNotExist(f),
        DispatchError::FacetNotExist(f) => ReplyBody::FacetNotExist(f),
        DispatchError::OperationNotExist(f) => ReplyBody::OperationNotExist(f),
        DispatchError::UnknownLocalException(s) => ReplyBody::UnknownLocalException(s),
        DispatchError::UnknownUserException(s) => ReplyBody::UnknownUserException(s),
        DispatchError::UnknownException(s) => ReplyBody::UnknownException(s),
        DispatchError::DispatchException { status, message } => {
            ReplyBody::DispatchException { status, message }
        }
        // `DispatchError::encoded` turned user exceptions into encoded ones,
        // which are replies with results.
        DispatchError::UserException(e) => ReplyBody::UnknownUserException(e.to_string()),
        DispatchError::EncodedUserException(_) => {
            ReplyBody::UnknownUserException("::Ice::UserException".into())
        }
    };
    let mut buf = BytesMut::with_capacity(64);
    Reply {
        request_id: rid,
        body,
    }
    .encode(&mut buf, CompressionStatus::NotSupported);
    OutFrame::whole(compressed(buf, compress))
}

/// `frame` compressed at `level` when asked and large enough (§5), or
/// marked as accepting a compressed reply; left alone when not asked.
pub(crate) fn compressed(mut frame: BytesMut, level: Option<u32>) -> BytesMut {
    let Some(level) = level else {
        return frame;
    };
    if frame.len() >= COMPRESSION_THRESHOLD && limits::compressible(frame.len()) {
        match compress_frame(&frame, level) {
            Ok(c) => return c,
            Err(e) => tracing::warn!("compression failed, sending uncompressed: {e}"),
        }
    }
    frame[9] = CompressionStatus::Supported as u8;
    frame
}

#[cfg(test)]
#[path = "outbound_tests.rs"]
mod tests;
