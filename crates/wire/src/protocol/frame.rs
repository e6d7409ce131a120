//! Check-then-parse framing for a byte stream (§1.1), and the parsed
//! [`Message`].
//!
//! [`check`] reads only the 14-byte header of what is buffered: it never
//! allocates and tells the reader how many more bytes to wait for. A whole
//! frame, frozen into `Bytes`, is then parsed by [`Message::parse`] without
//! copying the parameters.

use bytes::{Buf, Bytes};

use super::batch::BatchRequest;
use super::header::{CompressionStatus, Header, MessageType, HEADER_SIZE};
use super::reply::Reply;
use super::request::Request;
use crate::decoder::Decoder;
use crate::error::{Error, Result};

/// What [`check`] found in the buffered bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameCheck {
    /// Not a whole frame yet: at least `need` more bytes must be read.
    Incomplete {
        /// Bytes still missing (of the header, then of the frame).
        need: usize,
    },
    /// The buffer starts with a whole frame of `len` bytes.
    Complete {
        /// Frame length (the header's size field).
        len: usize,
    },
}

/// Looks at the start of `buf` (the bytes read so far) and says whether a
/// whole frame is there. `max_size` is `Ice.MessageSizeMax` in bytes (0 = no
/// limit).
///
/// # Errors
///
/// Every header check of §1.1 ([`Header::parse`]); in particular a size
/// below 14 ([`Error::IllegalMessageSize`]) or above `max_size`
/// ([`Error::MemoryLimit`]) fails as soon as the header is there, before
/// the body is read.
///
/// ```
/// use floe_wire::protocol::{check, FrameCheck, VALIDATE_CONNECTION};
/// assert_eq!(check(&VALIDATE_CONNECTION[..5], 0).unwrap(), FrameCheck::Incomplete { need: 9 });
/// assert_eq!(check(&VALIDATE_CONNECTION, 0).unwrap(), FrameCheck::Complete { len: 14 });
/// ```
pub fn check(buf: &[u8], max_size: usize) -> Result<FrameCheck> {
    if buf.len() < HEADER_SIZE {
        return Ok(FrameCheck::Incomplete {
            need: HEADER_SIZE - buf.len(),
        });
    }
    let header = Header::parse(buf, max_size)?;
    if buf.len() < header.size {
        return Ok(FrameCheck::Incomplete {
            need: header.size - buf.len(),
        });
    }
    Ok(FrameCheck::Complete { len: header.size })
}

/// A parsed protocol message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// Type 0.
    Request(Request),
    /// Type 1.
    BatchRequest(BatchRequest),
    /// Type 2.
    Reply(Reply),
    /// Type 3 (connection validation, or a heartbeat).
    ValidateConnection,
    /// Type 4.
    CloseConnection,
}

impl Message {
    /// Parses one whole, **uncompressed** frame (`frame.len()` must equal the
    /// header's size). Parameters and byte sequences in the result are
    /// slices of `frame`. Decompress status-2 frames first with
    /// [`super::decompress_frame`].
    ///
    /// # Errors
    ///
    /// Header errors (§1.1, no size limit applied here: [`check`] did that),
    /// [`Error::IllegalMessageSize`] if the frame length and the size field
    /// disagree, [`Error::Compression`] for a compressed frame, and decoding
    /// errors of the body. A ValidateConnection or CloseConnection frame
    /// with a body is accepted and the body ignored, as Ice does (a client
    /// validating a new connection checks the size itself).
    pub fn parse(frame: Bytes) -> Result<(Header, Message)> {
        let header = Header::parse(&frame, 0)?;
        let message = Self::parse_body(&header, frame)?;
        Ok((header, message))
    }

    /// [`Message::parse`] of a frame whose `header` was parsed already
    /// (by [`Header::parse`], as [`check`] does): the header is not read
    /// again.
    ///
    /// # Errors
    ///
    /// As [`Message::parse`], but for the header's own checks.
    pub fn parse_body(header: &Header, frame: Bytes) -> Result<Message> {
        if header.size != frame.len() {
            return Err(Error::IllegalMessageSize(frame.len() as i64));
        }
        if header.compression == CompressionStatus::Compressed {
            return Err(Error::Compression(
                "compressed frame given to Message::parse".into(),
            ));
        }
        // The body: the frame itself, advanced past the header (no
        // reference count touched, as `slice` would).
        let mut body = frame;
        body.advance(HEADER_SIZE);
        let message = match header.message_type {
            MessageType::ValidateConnection => Message::ValidateConnection,
            MessageType::CloseConnection => Message::CloseConnection,
            MessageType::Request => match Request::decode_simple(body) {
                Ok(request) => Message::Request(request),
                Err(body) => Message::Request(Request::decode_body(&mut Decoder::new(body))?),
            },
            MessageType::BatchRequest => {
                let mut dec = Decoder::new(body);
                Message::BatchRequest(BatchRequest::decode_body(&mut dec)?)
            }
            MessageType::Reply => match Reply::decode_ok(body) {
                Ok(reply) => Message::Reply(reply),
                Err(body) => Message::Reply(Reply::decode_body(&mut Decoder::new(body))?),
            },
        };
        Ok(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{CLOSE_CONNECTION, VALIDATE_CONNECTION};

    const O_REQUEST: &str =
        "4963655001000100000024000000010000000568656c6c6f0000016f0000060000000101";

    #[test]
    fn check_walks_a_stream() {
        let mut stream = hex::decode(O_REQUEST).unwrap();
        stream.extend_from_slice(&VALIDATE_CONNECTION);
        for n in 0..14 {
            assert_eq!(
                check(&stream[..n], 0).unwrap(),
                FrameCheck::Incomplete { need: 14 - n }
            );
        }
        assert_eq!(
            check(&stream[..20], 0).unwrap(),
            FrameCheck::Incomplete { need: 16 }
        );
        assert_eq!(check(&stream, 0).unwrap(), FrameCheck::Complete { len: 36 });
        assert_eq!(
            check(&stream[36..], 0).unwrap(),
            FrameCheck::Complete { len: 14 }
        );
    }

    #[test]
    fn check_rejects_on_the_header_alone() {
        // Size below 14 and above the limit fail with only the header present.
        let mut h = VALIDATE_CONNECTION;
        h[10] = 5;
        assert_eq!(check(&h, 0), Err(Error::IllegalMessageSize(5)));
        let mut h = VALIDATE_CONNECTION;
        h[10..14].copy_from_slice(&(2048i32).to_le_bytes());
        assert_eq!(
            check(&h, 1024),
            Err(Error::MemoryLimit {
                size: 2048,
                max: 1024
            })
        );
        assert!(check(b"GET / HTTP/1.1\r\n", 0).is_err());
    }

    #[test]
    fn bodyless_messages() {
        let (h, m) = Message::parse(Bytes::from_static(&CLOSE_CONNECTION)).unwrap();
        assert_eq!(m, Message::CloseConnection);
        assert_eq!(h.compression, CompressionStatus::Supported);
        // A body is ignored, as Ice does.
        let mut v = VALIDATE_CONNECTION.to_vec();
        v.push(0);
        v[10] = 15;
        assert_eq!(
            Message::parse(Bytes::from(v)).unwrap().1,
            Message::ValidateConnection
        );
        let mut c = CLOSE_CONNECTION.to_vec();
        c.extend_from_slice(&[1, 2, 3]);
        c[10] = 17;
        assert_eq!(
            Message::parse(Bytes::from(c)).unwrap().1,
            Message::CloseConnection
        );
    }
}
