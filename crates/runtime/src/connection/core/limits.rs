//! Frame size limits on the sending side.
//!
//! An Ice frame's size field is an `i32`: a frame over `i32::MAX` bytes
//! cannot be sent. Every frame the runtime builds is checked against that
//! before its header is written (writing the header of a larger one is a
//! programming error in `floe_wire`, which panics), so a result, an error
//! text or a batch too large for a frame becomes an error, as Ice's
//! `MemoryLimitException`, and never a panic in a connection task or a
//! caller.

use floe_wire::protocol::{BatchBuilder, Reply, RequestHead, HEADER_SIZE};

use crate::outcome::{DispatchError, DispatchResult};

/// The largest frame, header included.
pub(crate) const MAX_FRAME: usize = i32::MAX as usize;

/// Bytes a BatchRequest frame has before its first request: the header and
/// the request count.
const BATCH_HEAD: usize = HEADER_SIZE + 4;

/// `Ok` if a frame of `size` bytes (header included) can be sent.
///
/// # Errors
///
/// [`floe_wire::Error::MemoryLimit`] above [`MAX_FRAME`].
pub(crate) fn check_frame_size(size: usize) -> Result<(), floe_wire::Error> {
    if size > MAX_FRAME {
        return Err(floe_wire::Error::MemoryLimit {
            size,
            max: MAX_FRAME,
        });
    }
    Ok(())
}

/// `Ok` if a request with `head` and `params_len` bytes of parameters
/// (whole encapsulation) can join the batch in `builder` without the batch
/// frame going over [`MAX_FRAME`].
///
/// # Errors
///
/// [`floe_wire::Error::MemoryLimit`] otherwise; nothing is queued, as when
/// Ice cannot marshal a batch request.
pub(crate) fn check_batch_push(
    builder: &BatchBuilder,
    head: &RequestHead<'_>,
    params_len: usize,
) -> Result<(), floe_wire::Error> {
    // In a batch a request is its fields and parameters: a Request frame's
    // head without its header and request id.
    let request = (head.encoded_len() - HEADER_SIZE - 4).saturating_add(params_len);
    check_frame_size(builder.frame_size().max(BATCH_HEAD).saturating_add(request))
}

/// The bytes of a Reply frame carrying `result`, at least (strings are
/// counted with a generous size prefix).
fn reply_frame_size(result: &DispatchResult) -> usize {
    const STRING: usize = 5;
    let body = match result {
        Ok(reply) => reply.len(),
        Err(DispatchError::EncodedUserException(encaps)) => encaps.len(),
        // Encoded before the check (`DispatchError::encoded`).
        Err(DispatchError::UserException(_)) => 0,
        Err(
            DispatchError::ObjectNotExist(f)
            | DispatchError::FacetNotExist(f)
            | DispatchError::OperationNotExist(f),
        ) => [
            &f.identity.name,
            &f.identity.category,
            &f.facet,
            &f.operation,
        ]
        .iter()
        .fold(2 * STRING, |n, s| n.saturating_add(s.len() + STRING)),
        Err(
            DispatchError::UnknownLocalException(s)
            | DispatchError::UnknownUserException(s)
            | DispatchError::UnknownException(s)
            | DispatchError::DispatchException { message: s, .. },
        ) => s.len().saturating_add(STRING),
    };
    Reply::HEAD_SIZE.saturating_add(body)
}

/// The `MemoryLimitException` (status 5) to send in place of `result`
/// when the Reply frame carrying it would be over [`MAX_FRAME`] (e.g. a
/// result over 2 GiB, which Ice cannot marshal either); `None` when it
/// fits. By reference: the result is moved once, by the caller.
#[inline]
pub(crate) fn oversized_reply(result: &DispatchResult) -> Option<DispatchError> {
    check_frame_size(reply_frame_size(result))
        .err()
        .map(too_large)
}

#[cold]
fn too_large(e: floe_wire::Error) -> DispatchError {
    tracing::warn!("reply not sent: {e}");
    e.into()
}

/// Whether a frame of `len` bytes may be compressed: bzip2 can make data up
/// to 1% and 600 bytes larger, and the compressed frame (with its extra
/// size field) must still fit in [`MAX_FRAME`]. A larger frame goes out
/// uncompressed, with status 1.
pub(crate) fn compressible(len: usize) -> bool {
    len.saturating_add(len / 100)
        .saturating_add(600 + BATCH_HEAD)
        <= MAX_FRAME
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::ReplyData;
    use bytes::Bytes;
    use floe_wire::protocol::OperationMode;
    use floe_wire::{Context, Identity};

    #[test]
    fn frames_up_to_i32_max_pass() {
        assert!(check_frame_size(MAX_FRAME).is_ok());
        assert_eq!(
            check_frame_size(MAX_FRAME + 1),
            Err(floe_wire::Error::MemoryLimit {
                size: MAX_FRAME + 1,
                max: MAX_FRAME
            })
        );
        assert!(check_frame_size(usize::MAX).is_err());
    }

    #[test]
    fn a_reply_is_measured_with_its_head() {
        let ok = |n: usize| -> DispatchResult { Ok(ReplyData::new(Bytes::from(vec![0; n]))) };
        assert_eq!(reply_frame_size(&ok(6)), Reply::HEAD_SIZE + 6);
        let text =
            |n: usize| -> DispatchResult { Err(DispatchError::UnknownException("x".repeat(n))) };
        assert!(reply_frame_size(&text(1000)) > Reply::HEAD_SIZE + 1000);
        // Small results pass.
        assert!(oversized_reply(&ok(6)).is_none());
        assert!(oversized_reply(&text(10)).is_none());
    }

    #[test]
    fn compression_stays_within_a_frame() {
        assert!(compressible(100));
        assert!(compressible(1 << 30));
        assert!(!compressible(MAX_FRAME));
        assert!(!compressible(MAX_FRAME - 1000));
        assert!(!compressible(usize::MAX));
    }

    #[test]
    fn a_batch_never_grows_past_a_frame() {
        let id = Identity::from_name("hello");
        let ctx = Context::new();
        let head = RequestHead {
            identity: &id,
            facet: "",
            operation: "o",
            mode: OperationMode::Normal,
            context: &ctx,
        };
        let mut b = BatchBuilder::new();
        let fields = head.encoded_len() - HEADER_SIZE - 4;
        // Alone in a batch: the batch head, the fields and the parameters.
        assert!(check_batch_push(&b, &head, MAX_FRAME - BATCH_HEAD - fields).is_ok());
        assert!(check_batch_push(&b, &head, MAX_FRAME - BATCH_HEAD - fields + 1).is_err());
        b.push(&head, &[6, 0, 0, 0, 1, 1]);
        let queued = b.frame_size();
        assert!(check_batch_push(&b, &head, MAX_FRAME - queued - fields).is_ok());
        assert!(check_batch_push(&b, &head, MAX_FRAME - queued - fields + 1).is_err());
    }
}
