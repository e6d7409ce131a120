//! bzip2 frames (§1.2) under the runtime's `Ice.MessageSizeMax`: a
//! compressed body never inflates past its announced size or the limit, and
//! whatever floe compresses decompresses to the same frame.

use bytes::BytesMut;
use floe_wire::protocol::{
    compress_frame, decompress_frame, header::patch_size, CompressionStatus, Header, MessageType,
};

use crate::MESSAGE_SIZE_MAX;

/// The first byte picks the test (bit 0) and the compression level; the
/// rest is the body of a status-2 frame (the uncompressed size, then bzip2
/// data) or, for the round trip, of an ordinary frame.
pub fn run(data: &[u8]) {
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    if sel & 1 == 0 {
        let frame = frame_of(body, CompressionStatus::Compressed);
        if let Ok(out) = decompress_frame(&frame, MESSAGE_SIZE_MAX) {
            let announced = body
                .get(..4)
                .map(|s| i32::from_le_bytes([s[0], s[1], s[2], s[3]]));
            assert_eq!(
                announced,
                Some(out.len() as i32),
                "inflated to another size"
            );
            assert!(out.len() <= MESSAGE_SIZE_MAX, "inflated past the limit");
            assert_eq!(out[9], CompressionStatus::Supported as u8);
        }
    } else if !body.is_empty() {
        // (A frame must be longer than its header to be compressed.)
        let frame = frame_of(body, CompressionStatus::Supported);
        let level = u32::from(sel >> 1) % 9 + 1;
        let Ok(compressed) = compress_frame(&frame, level) else {
            panic!("compress_frame failed on a {}-byte frame", frame.len());
        };
        match decompress_frame(&compressed, MESSAGE_SIZE_MAX.max(frame.len())) {
            Ok(out) => assert_eq!(&out[..], &frame[..], "the round trip changed the frame"),
            Err(e) => panic!("floe cannot decompress what it compressed: {e}"),
        }
    }
}

/// A Request frame with the given compression status around `body`.
fn frame_of(body: &[u8], status: CompressionStatus) -> BytesMut {
    let mut frame = BytesMut::new();
    Header::write(&mut frame, MessageType::Request, status);
    frame.extend_from_slice(body);
    let len = frame.len();
    patch_size(&mut frame, 0, len);
    frame
}
