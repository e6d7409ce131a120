//! The raw-socket baseline's framing, shared by `raw_bench_server` and
//! `raw_bench_client`: the floor any RPC runtime is compared against.
//!
//! Messages have the sizes real Ice messages have for the same workloads, so
//! the kernel does the same work: a 14-byte header whose bytes 10..14 hold
//! the frame size (little-endian, as in Ice), byte 8 the message type and
//! byte 9 an operation code (where Ice has the compression status). Bytes
//! 14..18 are the request id; 0 means oneway (no reply). Nothing else in a
//! frame is looked at: that is exactly the work a runtime adds.
//!
//! | workload | request | reply |
//! |---|---|---|
//! | `o()` | 32 bytes | 25 bytes |
//! | `sendByteSeq(500,000 bytes)` | 47 + 500,000 bytes | 25 bytes |
//! | `recvByteSeq(500,000)` | 46 bytes | 30 + 500,000 bytes |

#![allow(dead_code)]

use std::io::{self, Read};

/// Header size (as Ice's).
pub const HEADER_SIZE: usize = 14;
/// Size of an `o()` request on identity `a` (header included).
pub const LATENCY_REQUEST: usize = 32;
/// Size of an empty reply (header, request id, status, empty encapsulation).
pub const EMPTY_REPLY: usize = 25;
/// Size of a `sendByteSeq` request without the sequence's bytes.
pub const SEND_HEAD: usize = 47;
/// Size of a `recvByteSeq(size)` request.
pub const RECV_REQUEST: usize = 46;
/// Size of a `recvByteSeq` reply without the sequence's bytes.
pub const RECV_REPLY_HEAD: usize = 30;
/// Payload size of the byte-sequence workloads (the Ice studies' 500 KB).
pub const BYTESEQ_SIZE: usize = 500_000;

/// Operation codes (header byte 9).
pub const OP_LATENCY: u8 = b'o';
/// `sendByteSeq`.
pub const OP_SEND: u8 = b's';
/// `recvByteSeq`; the size asked for is in the last 4 bytes of the request.
pub const OP_RECV: u8 = b'r';
/// `shutdown`: the server exits.
pub const OP_SHUTDOWN: u8 = b'x';

/// A zero-filled frame of `size` bytes with the header filled in.
pub fn frame(size: usize, message_type: u8, op: u8, request_id: i32) -> Vec<u8> {
    let mut f = vec![0u8; size];
    f[..4].copy_from_slice(b"IceP");
    f[4..8].copy_from_slice(&[1, 0, 1, 0]);
    f[8] = message_type;
    f[9] = op;
    // Invariant: benchmark frames are far below 4 GiB.
    f[10..14].copy_from_slice(&(size as u32).to_le_bytes());
    f[14..18].copy_from_slice(&request_id.to_le_bytes());
    f
}

/// Reads one whole frame into `buf` (reused across calls); returns its size.
///
/// # Errors
///
/// I/O errors, or `InvalidData` for a size field below the header size.
pub fn read_frame(stream: &mut impl Read, buf: &mut Vec<u8>) -> io::Result<usize> {
    if buf.len() < HEADER_SIZE {
        buf.resize(HEADER_SIZE, 0);
    }
    stream.read_exact(&mut buf[..HEADER_SIZE])?;
    let size = u32::from_le_bytes([buf[10], buf[11], buf[12], buf[13]]) as usize;
    if size < HEADER_SIZE {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "frame size"));
    }
    if buf.len() < size {
        buf.resize(size, 0);
    }
    stream.read_exact(&mut buf[HEADER_SIZE..size])?;
    Ok(size)
}
