//! Protocol 1.0 messages (§1–§3, §5 of docs/protocol.md): the 14-byte header,
//! check-then-parse framing, Request, BatchRequest, Reply,
//! ValidateConnection, CloseConnection, and bzip2 compression.
//!
//! Receiving is two steps, as in mini-redis: [`frame::check`] looks only at the
//! header of the bytes buffered so far and says how long the frame is (or
//! that more bytes are needed, or that the peer is hostile); once a whole
//! frame is buffered, [`Message::parse`] turns the frozen frame into a
//! message whose parameters stay zero-copy slices of it.
//!
//! Sending writes a whole frame (header, size patched) into one `BytesMut`,
//! ready for a single write syscall; large parameters can go beside it in a
//! vectored write ([`request::RequestHead::encode_head`]).

pub mod batch;
pub mod compress;
pub mod frame;
pub mod header;
pub mod reply;
pub mod request;

pub use batch::{BatchBuilder, BatchRequest, BatchRequestIter};
pub use compress::{compress_frame, decompress_frame, COMPRESSION_THRESHOLD};
pub use frame::{check, FrameCheck, Message};
pub use header::{
    CompressionStatus, Header, MessageType, CLOSE_CONNECTION, HEADER_SIZE, MAGIC,
    VALIDATE_CONNECTION,
};
pub use reply::{Reply, ReplyBody, ReplyStatus, RequestFailed};
pub use request::{OperationMode, Request, RequestHead};
