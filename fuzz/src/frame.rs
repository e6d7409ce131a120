//! A byte stream as a connection reads it: frames are split with
//! [`check`] under `Ice.MessageSizeMax`, decompressed when the header says
//! so, and parsed with [`Message::parse`].

use bytes::Bytes;
use floe_wire::protocol::{
    check, decompress_frame, CompressionStatus, FrameCheck, Header, Message,
};

use crate::MESSAGE_SIZE_MAX;

/// Splits `data` into frames and parses each one, stopping at the first
/// error or incomplete frame (where a connection would close or wait).
pub fn run(data: &[u8]) {
    let mut rest = data;
    while !rest.is_empty() {
        let len = match check(rest, MESSAGE_SIZE_MAX) {
            Ok(FrameCheck::Complete { len }) => len,
            Ok(FrameCheck::Incomplete { need }) => {
                assert!(need > 0, "an incomplete frame needs more bytes");
                return;
            }
            Err(_) => return,
        };
        assert!(len >= 14 && len <= rest.len(), "check gave a bad length");
        let (frame, tail) = rest.split_at(len);
        rest = tail;
        let Ok(header) = Header::parse(frame, MESSAGE_SIZE_MAX) else {
            panic!("check accepted a header that Header::parse refuses");
        };
        let frame = if header.compression == CompressionStatus::Compressed {
            match decompress_frame(frame, MESSAGE_SIZE_MAX) {
                Ok(f) => f,
                Err(_) => return,
            }
        } else {
            Bytes::copy_from_slice(frame)
        };
        if Message::parse(frame).is_err() {
            return;
        }
    }
}
