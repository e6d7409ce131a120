//! The 14-byte message header (§1.1) and the two body-less frames,
//! ValidateConnection and CloseConnection (§1.2).

use bytes::{BufMut, BytesMut};

use crate::error::{Error, Result};

/// Length of the message header.
pub const HEADER_SIZE: usize = 14;

/// The magic bytes every frame starts with: `IceP`.
pub const MAGIC: [u8; 4] = *b"IceP";

/// The ValidateConnection frame exactly as Ice sends it (compression byte 0).
pub const VALIDATE_CONNECTION: [u8; HEADER_SIZE] = [
    0x49, 0x63, 0x65, 0x50, 0x01, 0x00, 0x01, 0x00, 0x03, 0x00, 0x0e, 0x00, 0x00, 0x00,
];

/// The CloseConnection frame exactly as Ice sends it (compression byte **1**).
pub const CLOSE_CONNECTION: [u8; HEADER_SIZE] = [
    0x49, 0x63, 0x65, 0x50, 0x01, 0x00, 0x01, 0x00, 0x04, 0x01, 0x0e, 0x00, 0x00, 0x00,
];

/// The message type, header byte 8 (§1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MessageType {
    /// A request (requestId 0 = oneway).
    Request = 0,
    /// A batch of oneway requests.
    BatchRequest = 1,
    /// A reply to a twoway request.
    Reply = 2,
    /// Sent by the server on accept; a heartbeat afterwards.
    ValidateConnection = 3,
    /// Graceful close.
    CloseConnection = 4,
}

impl MessageType {
    /// The type for a header byte.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownMessage`] for values above 4.
    pub fn from_u8(b: u8) -> Result<Self> {
        Ok(match b {
            0 => MessageType::Request,
            1 => MessageType::BatchRequest,
            2 => MessageType::Reply,
            3 => MessageType::ValidateConnection,
            4 => MessageType::CloseConnection,
            other => return Err(Error::UnknownMessage(other)),
        })
    }
}

/// The compression status, header byte 9 (§5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum CompressionStatus {
    /// Not compressed; the peer should not compress its reply.
    #[default]
    NotSupported = 0,
    /// Not compressed, but the sender accepts a compressed reply.
    Supported = 1,
    /// The body is bzip2-compressed.
    Compressed = 2,
}

impl CompressionStatus {
    /// The status for a header byte.
    ///
    /// # Errors
    ///
    /// [`Error::Compression`] for values above 2.
    pub fn from_u8(b: u8) -> Result<Self> {
        Ok(match b {
            0 => CompressionStatus::NotSupported,
            1 => CompressionStatus::Supported,
            2 => CompressionStatus::Compressed,
            other => {
                return Err(Error::Compression(format!(
                    "invalid compression status {other}"
                )))
            }
        })
    }

    /// Whether the sender accepts compressed replies (status 1 or 2).
    pub fn accepts_compression(self) -> bool {
        self != CompressionStatus::NotSupported
    }
}

/// A decoded, checked message header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Byte 8.
    pub message_type: MessageType,
    /// Byte 9.
    pub compression: CompressionStatus,
    /// Bytes 10..14: the whole frame length, header included (≥ 14).
    pub size: usize,
}

impl Header {
    /// Reads and checks the first 14 bytes of `buf` with every receiver check
    /// of §1.1, in Ice's order: magic, protocol, protocol encoding, message
    /// type, size ≥ 14, size ≤ `max_size` (0 = no limit).
    ///
    /// The compression byte is not checked, as in Ice: only 2 means
    /// compressed, and any other value but 0 reads as 1 (not compressed,
    /// the reply may be), so Ice for C++ answers a request whose byte is
    /// 3..=255 (compressing the reply).
    ///
    /// # Errors
    ///
    /// [`Error::UnmarshalOutOfBounds`] if fewer than 14 bytes are given;
    /// [`Error::BadMagic`], [`Error::UnsupportedProtocol`],
    /// [`Error::UnsupportedEncoding`], [`Error::UnknownMessage`],
    /// [`Error::IllegalMessageSize`] or [`Error::MemoryLimit`] as §1.1 says.
    ///
    /// ```
    /// use floe_wire::protocol::{Header, MessageType, VALIDATE_CONNECTION};
    /// let h = Header::parse(&VALIDATE_CONNECTION, 0).unwrap();
    /// assert_eq!(h.message_type, MessageType::ValidateConnection);
    /// assert_eq!(h.size, 14);
    /// ```
    pub fn parse(buf: &[u8], max_size: usize) -> Result<Header> {
        let Some(h) = buf.get(..HEADER_SIZE) else {
            return Err(Error::out_of_bounds(HEADER_SIZE, buf.len()).at("Header"));
        };
        if h[0..4] != MAGIC {
            return Err(Error::BadMagic([h[0], h[1], h[2], h[3]]));
        }
        if h[4] != 1 || h[5] != 0 {
            return Err(Error::UnsupportedProtocol {
                major: h[4],
                minor: h[5],
            });
        }
        if h[6] != 1 || h[7] != 0 {
            return Err(Error::UnsupportedEncoding {
                major: h[6],
                minor: h[7],
            });
        }
        let message_type = MessageType::from_u8(h[8])?;
        let compression = match h[9] {
            0 => CompressionStatus::NotSupported,
            2 => CompressionStatus::Compressed,
            _ => CompressionStatus::Supported,
        };
        let size = i32::from_le_bytes([h[10], h[11], h[12], h[13]]);
        if size < HEADER_SIZE as i32 {
            return Err(Error::IllegalMessageSize(size as i64));
        }
        let size = size as usize;
        if max_size > 0 && size > max_size {
            return Err(Error::MemoryLimit {
                size,
                max: max_size,
            });
        }
        Ok(Header {
            message_type,
            compression,
            size,
        })
    }

    /// Writes a header with a zero size; patch it with [`patch_size`] once
    /// the body is written.
    pub fn write(buf: &mut BytesMut, message_type: MessageType, compression: CompressionStatus) {
        // One 14-byte write.
        buf.put_slice(&Header::bytes(message_type, compression));
    }

    /// The 14 bytes [`Header::write`] writes: the magic, protocol and
    /// encoding 1.0, the type, the compression status and a zero size.
    pub fn bytes(message_type: MessageType, compression: CompressionStatus) -> [u8; HEADER_SIZE] {
        let [m0, m1, m2, m3] = MAGIC;
        let (kind, compressed) = (message_type as u8, compression as u8);
        [m0, m1, m2, m3, 1, 0, 1, 0, kind, compressed, 0, 0, 0, 0]
    }
}

/// Patches the size field of the frame starting at `start` in `buf` to
/// `size` bytes.
///
/// # Panics
///
/// If `buf` holds fewer than `start + 14` bytes (a programming error), or
/// `size` exceeds `i32::MAX`.
pub fn patch_size(buf: &mut [u8], start: usize, size: usize) {
    let size = i32::try_from(size).expect("Ice frames are limited to i32::MAX bytes");
    buf[start + 10..start + 14].copy_from_slice(&size.to_le_bytes());
}

/// Reads the size field of a frame that starts at `buf[0]` (0 if `buf` is
/// shorter than a header).
pub fn size_field(buf: &[u8]) -> usize {
    match buf.get(10..14) {
        Some(s) => i32::from_le_bytes([s[0], s[1], s[2], s[3]]).max(0) as usize,
        None => 0,
    }
}

/// Sets the compression byte of the frame starting at `start`.
pub fn patch_compression(buf: &mut [u8], start: usize, status: CompressionStatus) {
    buf[start + 9] = status as u8;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(bytes: &[u8]) -> Result<Header> {
        Header::parse(bytes, 1024 * 1024)
    }

    #[test]
    fn validate_and_close_frames() {
        let v = hdr(&VALIDATE_CONNECTION).unwrap();
        assert_eq!(v.message_type, MessageType::ValidateConnection);
        assert_eq!(v.compression, CompressionStatus::NotSupported);
        let c = hdr(&CLOSE_CONNECTION).unwrap();
        assert_eq!(c.message_type, MessageType::CloseConnection);
        assert_eq!(c.compression, CompressionStatus::Supported);
        assert_eq!(c.size, 14);
    }

    #[test]
    fn request_header_from_capture() {
        // protocol_basic.txt: first o() request, size 36.
        let h = hdr(&hex::decode("49636550010001000000240000000100").unwrap()).unwrap();
        assert_eq!(h.message_type, MessageType::Request);
        assert_eq!(h.size, 36);
    }

    #[test]
    fn every_check_maps_to_its_error() {
        let mut b = VALIDATE_CONNECTION;
        b[0] = b'X';
        assert!(matches!(hdr(&b), Err(Error::BadMagic(_))));
        let mut b = VALIDATE_CONNECTION;
        b[4] = 2;
        assert!(matches!(
            hdr(&b),
            Err(Error::UnsupportedProtocol { major: 2, .. })
        ));
        let mut b = VALIDATE_CONNECTION;
        b[5] = 1; // protocol 1.1 is rejected
        assert!(matches!(
            hdr(&b),
            Err(Error::UnsupportedProtocol { minor: 1, .. })
        ));
        let mut b = VALIDATE_CONNECTION;
        b[7] = 1; // protocol encoding 1.1 is rejected
        assert!(matches!(
            hdr(&b),
            Err(Error::UnsupportedEncoding { minor: 1, .. })
        ));
        let mut b = VALIDATE_CONNECTION;
        b[8] = 5;
        assert_eq!(hdr(&b), Err(Error::UnknownMessage(5)));
        // An unknown compression byte is not an error (Ice treats it as
        // "not compressed, the reply may be").
        for byte in [3, 0x80, 0xff] {
            let mut b = VALIDATE_CONNECTION;
            b[9] = byte;
            assert_eq!(hdr(&b).unwrap().compression, CompressionStatus::Supported);
        }
        assert!(CompressionStatus::from_u8(3).is_err());
        let mut b = VALIDATE_CONNECTION;
        b[10] = 13;
        assert_eq!(hdr(&b), Err(Error::IllegalMessageSize(13)));
        let mut b = VALIDATE_CONNECTION;
        b[10..14].copy_from_slice(&(-1i32).to_le_bytes());
        assert_eq!(hdr(&b), Err(Error::IllegalMessageSize(-1)));
        let mut b = VALIDATE_CONNECTION;
        b[10..14].copy_from_slice(&2000i32.to_le_bytes());
        assert_eq!(
            Header::parse(&b, 1024),
            Err(Error::MemoryLimit {
                size: 2000,
                max: 1024
            })
        );
        assert!(matches!(
            hdr(&VALIDATE_CONNECTION[..10]),
            Err(Error::UnmarshalOutOfBounds { .. })
        ));
    }

    #[test]
    fn write_and_patch() {
        let mut buf = BytesMut::new();
        Header::write(
            &mut buf,
            MessageType::CloseConnection,
            CompressionStatus::Supported,
        );
        patch_size(&mut buf, 0, 14);
        assert_eq!(&buf[..], &CLOSE_CONNECTION);
    }
}
