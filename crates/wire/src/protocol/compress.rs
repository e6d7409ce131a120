//! bzip2 compression of frame bodies (§5).
//!
//! A compressed frame (status 2) is the original 14-byte header with the
//! size replaced by the compressed frame's length, an int32 holding the
//! **uncompressed** frame size (header included), and a bzip2 stream
//! (`BZh1…`) of the uncompressed bytes 14..end.

use std::io::{Read, Write};

use bytes::{BufMut, Bytes, BytesMut};

use super::header::{patch_compression, patch_size, size_field, CompressionStatus, HEADER_SIZE};
use crate::error::{Error, Result};

/// Frames shorter than this (whole frame, header included) are never
/// compressed; they go out with status 1 when compression was asked for.
pub const COMPRESSION_THRESHOLD: usize = 100;

/// Compresses a whole uncompressed frame (header included) with bzip2 at
/// `level` (1–9, `Ice.Compression.Level`). Returns the status-2 frame.
/// The caller applies [`COMPRESSION_THRESHOLD`].
///
/// # Errors
///
/// [`Error::Compression`] if `frame` is shorter than a header or bzip2 fails.
pub fn compress_frame(frame: &[u8], level: u32) -> Result<BytesMut> {
    if frame.len() < HEADER_SIZE {
        return Err(Error::Compression("frame shorter than its header".into()));
    }
    let mut out = BytesMut::with_capacity(frame.len() / 2 + 64);
    out.put_slice(&frame[..HEADER_SIZE]);
    out.put_i32_le(frame.len() as i32);
    let mut writer = out.writer();
    {
        let mut enc =
            bzip2::write::BzEncoder::new(&mut writer, bzip2::Compression::new(level.clamp(1, 9)));
        enc.write_all(&frame[HEADER_SIZE..])
            .and_then(|_| enc.try_finish())
            .map_err(|e| Error::Compression(format!("bzip2 compression failed: {e}")))?;
    }
    let mut out = writer.into_inner();
    let len = out.len();
    patch_size(&mut out, 0, len);
    patch_compression(&mut out, 0, CompressionStatus::Compressed);
    Ok(out)
}

/// Decompresses a whole status-2 frame into an ordinary frame whose
/// compression byte is 1 ("the sender accepts compressed replies").
///
/// `max_size` is `Ice.MessageSizeMax` in bytes (0 = no limit). The output
/// never grows past the announced size: a compression bomb fails instead of
/// allocating.
///
/// # Errors
///
/// [`Error::IllegalMessageSize`] if the announced uncompressed size is ≤ 14,
/// [`Error::MemoryLimit`] if it is above `max_size`, and
/// [`Error::Compression`] if the bzip2 data are corrupt or inflate to a
/// different size than announced.
pub fn decompress_frame(frame: &[u8], max_size: usize) -> Result<Bytes> {
    let Some(s) = frame.get(HEADER_SIZE..HEADER_SIZE + 4) else {
        return Err(Error::out_of_bounds(HEADER_SIZE + 4, frame.len()).at("uncompressed size"));
    };
    let size = i32::from_le_bytes([s[0], s[1], s[2], s[3]]);
    if size <= HEADER_SIZE as i32 {
        return Err(Error::IllegalMessageSize(size as i64));
    }
    let size = size as usize;
    if max_size > 0 && size > max_size {
        return Err(Error::MemoryLimit {
            size,
            max: max_size,
        });
    }
    let body_len = size - HEADER_SIZE;
    // Grow with the data actually produced (at most body_len + 1 bytes), not
    // with the size the peer claims.
    let mut out = Vec::with_capacity(HEADER_SIZE + body_len.min(frame.len().saturating_mul(4)));
    out.extend_from_slice(&frame[..HEADER_SIZE]);
    let dec = bzip2::read::BzDecoder::new(&frame[HEADER_SIZE + 4..]);
    dec.take(body_len as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| Error::Compression(format!("bzip2 decompression failed: {e}")))?;
    if out.len() != size {
        return Err(Error::Compression(format!(
            "decompressed frame is {} bytes, {} announced",
            out.len().min(size + 1),
            size
        )));
    }
    patch_size(&mut out, 0, size);
    patch_compression(&mut out, 0, CompressionStatus::Supported);
    debug_assert_eq!(size_field(&out), size);
    Ok(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Header, Message};

    /// raw_cpp.txt: a C++ client's `echo(10 bytes)` request, compressed
    /// (status 2, uncompressed size 50).
    const COMPRESSED_REQUEST: &str = "496365500100010000024e000000320000\
00425a683131415926535 9cfea843a000007e1006790200 00a44a0003100d0010d4f283d4c779ab004c210fc4997f7\
55b570b05dc914e142433faa10e8";

    fn bytes(h: &str) -> Vec<u8> {
        hex::decode(h.replace(' ', "")).unwrap()
    }

    #[test]
    fn decompress_captured_request() {
        let f = bytes(COMPRESSED_REQUEST);
        let h = Header::parse(&f, 0).unwrap();
        assert_eq!(h.compression, CompressionStatus::Compressed);
        assert_eq!(h.size, f.len());
        let plain = decompress_frame(&f, 1 << 20).unwrap();
        assert_eq!(plain.len(), 50);
        let (h, Message::Request(r)) = Message::parse(plain).unwrap() else {
            panic!("not a request")
        };
        assert_eq!(h.compression, CompressionStatus::Supported);
        assert_eq!(r.request_id, 7);
        assert_eq!(r.operation, "echo");
        assert_eq!(r.params.data.len(), 11);
    }

    #[test]
    fn round_trip_and_stream_header() {
        let mut frame = bytes("4963655001000100020000000000");
        frame.extend_from_slice(&[7, 0, 0, 0, 0]);
        frame.extend_from_slice(&[0x2a; 300]);
        let n = frame.len();
        patch_size(&mut frame, 0, n);
        let c = compress_frame(&frame, 1).unwrap();
        assert_eq!(&c[8..10], &[2, 2]);
        assert_eq!(size_field(&c), c.len());
        assert_eq!(&c[14..18], &(n as i32).to_le_bytes());
        assert_eq!(&c[18..22], b"BZh1");
        let back = decompress_frame(&c, 0).unwrap();
        assert_eq!(&back[14..], &frame[14..]);
        assert_eq!(back[9], 1);
    }

    #[test]
    fn limits_and_corruption() {
        // Corrupt body (captured "junk!" frame, uncompressed size 40).
        let junk = bytes("49636550010001000002170000002800 00006a756e6b21");
        assert!(matches!(
            decompress_frame(&junk, 0),
            Err(Error::Compression(_))
        ));
        // Announced size too small / too large.
        let mut f = junk.clone();
        f[14..18].copy_from_slice(&14i32.to_le_bytes());
        assert_eq!(decompress_frame(&f, 0), Err(Error::IllegalMessageSize(14)));
        f[14..18].copy_from_slice(&5000i32.to_le_bytes());
        assert!(matches!(
            decompress_frame(&f, 1024),
            Err(Error::MemoryLimit { .. })
        ));
        // A bomb: 10 MB of zeros announced as 1000 bytes must fail, bounded.
        let mut big = vec![0u8; 10 << 20];
        big[..14].copy_from_slice(&bytes("4963655001000100000000000000"));
        let mut c = compress_frame(&big, 9).unwrap();
        c[14..18].copy_from_slice(&1000i32.to_le_bytes());
        assert!(matches!(
            decompress_frame(&c, 1 << 30),
            Err(Error::Compression(_))
        ));
        // Truncated stream.
        let mut frame = bytes("4963655001000100020000000000");
        frame.extend_from_slice(&[9; 400]);
        let n = frame.len();
        patch_size(&mut frame, 0, n);
        let c = compress_frame(&frame, 1).unwrap();
        assert!(decompress_frame(&c[..c.len() - 10], 0).is_err());
    }
}
