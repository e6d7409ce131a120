//! Request messages (type 0, §2.1): decoding the request fields from a frame
//! and encoding them into one.

use bytes::{BufMut, BytesMut};
use compact_str::CompactString;

use super::header::{patch_size, CompressionStatus, Header, MessageType, HEADER_SIZE};
use crate::decoder::{Decoder, Encapsulation};
use crate::encoder::Encoder;
use crate::error::{Error, Result};
use crate::identity::Identity;
use crate::Context;

/// The operation mode byte (§2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum OperationMode {
    /// A plain operation.
    #[default]
    Normal = 0,
    /// `["nonmutating"] idempotent`, and the built-in `ice_*` operations.
    Nonmutating = 1,
    /// `idempotent`.
    Idempotent = 2,
}

impl OperationMode {
    /// The mode for a wire byte, `None` if invalid.
    pub fn from_u8(b: u8) -> Option<Self> {
        match b {
            0 => Some(OperationMode::Normal),
            1 => Some(OperationMode::Nonmutating),
            2 => Some(OperationMode::Idempotent),
            _ => None,
        }
    }

    /// Whether a request in this mode may be retried after it was sent (§7.2).
    #[inline]
    pub fn is_idempotent(self) -> bool {
        self != OperationMode::Normal
    }

    /// The check every floe server makes of a request's mode against the
    /// operation's declaration (`self`), as Ice servers do (§2.2): a plain
    /// operation accepts only mode 0; an `idempotent` one (declared
    /// Idempotent or Nonmutating) accepts 1 and 2. Generated dispatchers
    /// and hand-written servants reach it through the runtime's
    /// `Current::check_mode`.
    ///
    /// ```
    /// use floe_wire::protocol::OperationMode as M;
    /// assert!(M::Idempotent.check_received(M::Nonmutating).is_ok());
    /// let e = M::Normal.check_received(M::Idempotent).unwrap_err();
    /// assert!(e.to_string().contains("unexpected operation mode. expected = Normal received = Idempotent"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Marshal`] on a mismatch (Ice's
    /// `MarshalException`).
    #[inline]
    pub fn check_received(self, received: OperationMode) -> crate::Result<()> {
        if self.is_idempotent() == received.is_idempotent() {
            Ok(())
        } else {
            Err(self.mismatch(received))
        }
    }

    /// The error of [`OperationMode::check_received`].
    #[cold]
    fn mismatch(self, received: OperationMode) -> crate::Error {
        crate::Error::marshal(format!(
            "unexpected operation mode. expected = {self:?} received = {received:?}"
        ))
    }
}

/// A decoded request: the fields of §2.1 and the parameters as a zero-copy
/// slice of the frame. Batched requests have `request_id` 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// 0 for oneway and batched requests.
    pub request_id: i32,
    /// The target object.
    pub identity: Identity,
    /// The facet; empty for the default facet.
    pub facet: CompactString,
    /// The operation name.
    pub operation: CompactString,
    /// The mode byte as received. It is not checked here: an invalid mode is
    /// answered with status 5 by the dispatcher, not by dropping the
    /// connection (§7.3). See [`Request::mode`].
    pub mode_byte: u8,
    /// The request context.
    pub context: Context,
    /// The parameters encapsulation (a slice of the frame).
    pub params: Encapsulation,
}

impl Request {
    /// The operation mode, `None` if the byte is not a valid mode.
    pub fn mode(&self) -> Option<OperationMode> {
        OperationMode::from_u8(self.mode_byte)
    }

    /// Decodes the request fields after the requestId (a batched request, or
    /// the rest of a Request message).
    ///
    /// # Errors
    ///
    /// Out of bounds / marshal errors when a field is truncated or invalid,
    /// or when the facet sequence has more than one element. The
    /// encapsulation's size must fit in the frame; its version is **not**
    /// checked here (an unsupported version gets status 5, §3.2).
    pub fn decode_fields(dec: &mut Decoder, request_id: i32) -> Result<Request> {
        let identity: Identity = dec.read().map_err(|e| e.at("Request"))?;
        let facet = read_facet(dec).map_err(|e| e.at("facet").at("Request"))?;
        let operation = dec
            .read_compact_string()
            .map_err(|e| e.at("operation").at("Request"))?;
        let mode_byte = dec.read_u8().map_err(|e| e.at("mode").at("Request"))?;
        let context: Context = dec.read().map_err(|e| e.at("context").at("Request"))?;
        let params = dec
            .read_encapsulation()
            .map_err(|e| e.at("params").at("Request"))?;
        Ok(Request {
            request_id,
            identity,
            facet,
            operation,
            mode_byte,
            context,
            params,
        })
    }

    /// Decodes the body of a Request message (everything after the header).
    ///
    /// # Errors
    ///
    /// As [`Request::decode_fields`]; also if bytes are left after the
    /// parameters ([`Error::IllegalMessageSize`]).
    pub fn decode_body(dec: &mut Decoder) -> Result<Request> {
        let request_id = dec
            .read_i32()
            .map_err(|e| e.at("requestId").at("Request"))?;
        let request = Self::decode_fields(dec, request_id)?;
        if !dec.is_empty() {
            return Err(Error::IllegalMessageSize(dec.remaining() as i64));
        }
        Ok(request)
    }

    /// Encodes this request as a whole frame into `buf`, with its mode
    /// byte as received (valid or not).
    ///
    /// # Panics
    ///
    /// If the frame would be over `i32::MAX` bytes, as
    /// [`RequestHead::encode_head`].
    pub fn encode(&self, buf: &mut BytesMut, compression: CompressionStatus) {
        let head = RequestHead {
            identity: &self.identity,
            facet: &self.facet,
            operation: &self.operation,
            // Not written: the byte as received is.
            mode: self.mode().unwrap_or_default(),
            context: &self.context,
        };
        let start = buf.len();
        head.encode_head_as(
            buf,
            self.request_id,
            self.params.wire_size(),
            compression,
            self.mode_byte,
        );
        buf.put_i32_le(self.params.wire_size() as i32);
        buf.put_u8(self.params.encoding.major);
        buf.put_u8(self.params.encoding.minor);
        buf.put_slice(&self.params.data);
        debug_assert_eq!(buf.len() - start, super::header::size_field(&buf[start..]));
    }
}

/// Reads a facet: a sequence of zero or one string (§2.1).
pub(crate) fn read_facet(dec: &mut Decoder) -> Result<CompactString> {
    match dec.read_count(1)? {
        0 => Ok(CompactString::default()),
        1 => dec.read_compact_string(),
        n => Err(Error::marshal(format!(
            "facet sequence with {n} elements (at most 1 allowed)"
        ))),
    }
}

/// Writes a facet as a sequence of zero or one string.
pub(crate) fn write_facet(enc: &mut Encoder, facet: &str) {
    if facet.is_empty() {
        enc.write_size(0);
    } else {
        enc.write_size(1);
        enc.write_string(facet);
    }
}

/// The request fields other than the id and the parameters, borrowed: what
/// a proxy knows before a call. Encodes request frames without building a
/// [`Request`].
#[derive(Clone, Copy, Debug)]
pub struct RequestHead<'a> {
    /// Target identity.
    pub identity: &'a Identity,
    /// Facet, empty for the default.
    pub facet: &'a str,
    /// Operation name.
    pub operation: &'a str,
    /// Operation mode (one byte on the wire).
    pub mode: OperationMode,
    /// Context.
    pub context: &'a Context,
}

/// Bytes of a size (§4.1: one byte below 255, five from 255).
fn size_len(n: usize) -> usize {
    if n < 255 {
        1
    } else {
        5
    }
}

/// Writes a size (§4.1), as `Encoder::write_size` does.
#[inline]
fn put_size<B: BufMut>(buf: &mut B, n: usize) {
    if n < 255 {
        buf.put_u8(n as u8);
    } else {
        buf.put_u8(0xff);
        buf.put_i32_le(i32::try_from(n).unwrap_or(i32::MAX));
    }
}

/// Writes a string (§4.3), as `Encoder::write_string` does.
#[inline]
fn put_string<B: BufMut>(buf: &mut B, s: &str) {
    put_size(buf, s.len());
    buf.put_slice(s.as_bytes());
}

/// Bytes of an encoded string.
fn string_len(s: &str) -> usize {
    size_len(s.len()) + s.len()
}

impl RequestHead<'_> {
    /// Bytes [`RequestHead::encode_head`] writes: the frame header, the
    /// request id and the fields. A buffer of exactly this size (plus the
    /// parameters) is frozen into `Bytes` without a second allocation.
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use floe_wire::{Context, Identity};
    /// use floe_wire::protocol::{CompressionStatus, OperationMode, RequestHead};
    /// let id = Identity::from_name("hello");
    /// let ctx = Context::from([("k".to_string(), "v".to_string())]);
    /// let head = RequestHead { identity: &id, facet: "f", operation: "o", mode: OperationMode::Normal, context: &ctx };
    /// let mut buf = BytesMut::new();
    /// head.encode_head(&mut buf, 1, 0, CompressionStatus::NotSupported);
    /// assert_eq!(buf.len(), head.encoded_len());
    /// ```
    pub fn encoded_len(&self) -> usize {
        let facet = if self.facet.is_empty() {
            1
        } else {
            1 + string_len(self.facet)
        };
        let context: usize = self
            .context
            .iter()
            .map(|(k, v)| string_len(k) + string_len(v))
            .sum();
        super::header::HEADER_SIZE
            + 4
            + string_len(&self.identity.name)
            + string_len(&self.identity.category)
            + facet
            + string_len(self.operation)
            + 1
            + size_len(self.context.len())
            + context
    }

    /// Writes the request fields (identity to context), without requestId
    /// and without the parameters: the batch-request form.
    pub fn encode_fields(&self, buf: &mut BytesMut) {
        self.write_fields(buf, self.mode as u8);
    }

    /// [`RequestHead::encode_fields`] with `mode` as the mode byte (a
    /// decoded [`Request`] keeps the byte it came with, valid or not).
    fn write_fields<B: BufMut>(&self, buf: &mut B, mode: u8) {
        // Written straight into `buf` (no `Encoder`): these fields are on
        // every request's path. A size over `i32::MAX` cannot come out of a
        // frame: `try_encode_head` refuses the frame afterwards.
        put_string(buf, &self.identity.name);
        put_string(buf, &self.identity.category);
        if self.facet.is_empty() {
            buf.put_u8(0);
        } else {
            buf.put_u8(1);
            put_string(buf, self.facet);
        }
        put_string(buf, self.operation);
        buf.put_u8(mode);
        put_size(buf, self.context.len());
        for (k, v) in self.context {
            put_string(buf, k);
            put_string(buf, v);
        }
    }

    /// Writes a whole Request frame header and fields, with the frame size
    /// already set as if `params_len` bytes of parameters encapsulation
    /// followed. Append the parameters (or send them in a vectored write
    /// after these bytes).
    ///
    /// # Panics
    ///
    /// If the frame would be over `i32::MAX` bytes (see
    /// [`RequestHead::try_encode_head`]).
    pub fn encode_head(
        &self,
        buf: &mut BytesMut,
        request_id: i32,
        params_len: usize,
        compression: CompressionStatus,
    ) {
        self.encode_head_as(buf, request_id, params_len, compression, self.mode as u8);
    }

    /// [`RequestHead::encode_head`] with `mode` as the mode byte.
    fn encode_head_as(
        &self,
        buf: &mut BytesMut,
        request_id: i32,
        params_len: usize,
        compression: CompressionStatus,
        mode: u8,
    ) {
        self.write_head(buf, request_id, params_len, compression, mode)
            .expect("Ice frames are limited to i32::MAX bytes")
    }

    /// [`RequestHead::encode_head`], refusing a frame over `i32::MAX`
    /// bytes (an Ice frame's size is an `i32`).
    ///
    /// # Errors
    ///
    /// [`Error::MemoryLimit`] (Ice's `MemoryLimitException`) when the head
    /// and `params_len` bytes of parameters would not fit in a frame;
    /// `buf` is left as it was.
    pub fn try_encode_head(
        &self,
        buf: &mut BytesMut,
        request_id: i32,
        params_len: usize,
        compression: CompressionStatus,
    ) -> Result<()> {
        self.write_head(buf, request_id, params_len, compression, self.mode as u8)
    }

    /// [`RequestHead::try_encode_head`] into the start of `out`, a buffer
    /// that is not a `BytesMut` (a frame built on the stack), for the
    /// common request without a context. Returns the length of the head,
    /// or `None` when the request has a context or `out` might be too
    /// small for it; nothing is written then (use `try_encode_head`).
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use floe_wire::{Context, Identity};
    /// use floe_wire::protocol::{CompressionStatus, OperationMode, RequestHead};
    /// let id = Identity::from_name("hello");
    /// let ctx = Context::new();
    /// let head = RequestHead { identity: &id, facet: "", operation: "o", mode: OperationMode::Normal, context: &ctx };
    /// let mut room = [0u8; 128];
    /// let len = head.encode_head_into(&mut room, 1, 6, CompressionStatus::NotSupported)?.unwrap();
    /// let mut buf = BytesMut::new();
    /// head.try_encode_head(&mut buf, 1, 6, CompressionStatus::NotSupported)?;
    /// assert_eq!(&room[..len], &buf[..]);
    /// assert!(head.encode_head_into(&mut room[..20], 1, 6, CompressionStatus::NotSupported)?.is_none());
    /// # Ok::<(), floe_wire::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`RequestHead::try_encode_head`].
    pub fn encode_head_into(
        &self,
        out: &mut [u8],
        request_id: i32,
        params_len: usize,
        compression: CompressionStatus,
    ) -> Result<Option<usize>> {
        // Every size takes at most 5 bytes: header, request id, identity,
        // facet flag and string, operation, mode, empty context.
        let bound = super::header::HEADER_SIZE
            + 4
            + (5 + self.identity.name.len())
            + (5 + self.identity.category.len())
            + (1 + 5 + self.facet.len())
            + (5 + self.operation.len())
            + 2;
        if !self.context.is_empty() || bound > out.len() {
            return Ok(None);
        }
        let room = out.len();
        let mut at = &mut out[..];
        at.put_slice(&Header::bytes(MessageType::Request, compression));
        at.put_i32_le(request_id);
        self.write_fields(&mut at, self.mode as u8);
        let len = room - at.len();
        let size = len.saturating_add(params_len);
        if i32::try_from(size).is_err() {
            return Err(Error::MemoryLimit {
                size,
                max: i32::MAX as usize,
            });
        }
        patch_size(out, 0, size);
        Ok(Some(len))
    }

    /// [`RequestHead::try_encode_head`] with `mode` as the mode byte.
    fn write_head(
        &self,
        buf: &mut BytesMut,
        request_id: i32,
        params_len: usize,
        compression: CompressionStatus,
        mode: u8,
    ) -> Result<()> {
        let start = buf.len();
        Header::write(buf, MessageType::Request, compression);
        buf.put_i32_le(request_id);
        self.write_fields(buf, mode);
        let size = (buf.len() - start).saturating_add(params_len);
        if i32::try_from(size).is_err() {
            buf.truncate(start);
            return Err(Error::MemoryLimit {
                size,
                max: i32::MAX as usize,
            });
        }
        patch_size(buf, start, size);
        debug_assert_eq!(buf.len() - start, self.encoded_len());
        Ok(())
    }

    /// Writes a whole Request frame whose parameters are the already encoded
    /// encapsulation `params` (6-byte header included).
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use floe_wire::{Context, Identity};
    /// use floe_wire::protocol::{CompressionStatus, OperationMode, RequestHead};
    /// let id = Identity::from_name("hello");
    /// let ctx = Context::new();
    /// let head = RequestHead { identity: &id, facet: "", operation: "o", mode: OperationMode::Normal, context: &ctx };
    /// let mut buf = BytesMut::new();
    /// head.encode(&mut buf, 1, &[6, 0, 0, 0, 1, 1], CompressionStatus::NotSupported);
    /// assert_eq!(buf.len(), 36);
    /// ```
    pub fn encode(
        &self,
        buf: &mut BytesMut,
        request_id: i32,
        params: &[u8],
        compression: CompressionStatus,
    ) {
        self.encode_head(buf, request_id, params.len(), compression);
        buf.put_slice(params);
    }
}

/// The minimal length of a Request frame (header, id, and an empty identity,
/// facet, operation, mode, context and encapsulation).
pub const MIN_REQUEST_SIZE: usize = HEADER_SIZE + 4 + 2 + 1 + 1 + 1 + 1 + 6;

mod simple;
#[cfg(test)]
mod tests;
