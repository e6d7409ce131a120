//! The bench service's protobuf messages, written by hand with
//! `#[derive(prost::Message)]` (no `.proto`, no `protoc`), and the
//! generated service stubs.

#![allow(dead_code)]

use bytes::Bytes;

/// Size of the byte-sequence workloads' payload (the Ice studies' 500 KB,
/// as in the floe, Ice C++ and raw pairs).
pub const BYTESEQ_SIZE: usize = 500_000;

/// No fields: the argument and result of `o()`, `sendByteSeq`'s result.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Empty {}

/// A byte sequence, kept in a `Bytes` (no copy on decode).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ByteSeq {
    /// The payload.
    #[prost(bytes = "bytes", tag = "1")]
    pub seq: Bytes,
}

/// `recvByteSeq(size)`'s argument.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RecvByteSeq {
    /// Payload size asked for.
    #[prost(uint32, tag = "1")]
    pub size: u32,
}

/// The generated `floe.bench.Bench` client and server.
pub mod bench {
    include!(concat!(env!("OUT_DIR"), "/floe.bench.Bench.rs"));
}
