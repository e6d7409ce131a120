//! [`Current`]: everything a servant knows about the request it is
//! dispatching (Ice's `Current`).

use bytes::{Bytes, BytesMut};
use floe_wire::protocol::OperationMode;
use floe_wire::{CompactString, Context, Encoder, EncodingVersion, Identity};

use crate::connection::Connection;
use crate::encapsulation::encode_encapsulation;
use crate::object_model::object_adapter::ObjectAdapter;
use crate::outcome::{DispatchError, ReplyData};

/// The request being dispatched.
#[derive(Clone, Debug)]
pub struct Current {
    /// The adapter dispatching the request.
    pub adapter: ObjectAdapter,
    /// The connection it arrived on (`None` for collocated calls).
    pub connection: Option<Connection>,
    /// Target identity.
    pub id: Identity,
    /// Target facet (empty = default).
    pub facet: CompactString,
    /// Operation name.
    pub operation: CompactString,
    /// Operation mode as received (checked valid before dispatch).
    pub mode: OperationMode,
    /// Request context.
    pub ctx: Context,
    /// Request id (0 for oneway and batched requests).
    pub request_id: i32,
    /// Encoding of the request's parameters; the reply must use it (§3.2).
    pub encoding: EncodingVersion,
}

impl Current {
    /// Whether the caller waits for a reply.
    pub fn is_twoway(&self) -> bool {
        self.request_id != 0
    }

    /// An empty results encapsulation in the request's encoding (no
    /// allocation).
    pub fn empty_reply(&self) -> Bytes {
        if self.encoding == floe_wire::ENCODING_1_0 {
            Bytes::from_static(&[6, 0, 0, 0, 1, 0])
        } else if self.encoding == floe_wire::ENCODING_1_1 {
            Bytes::from_static(&[6, 0, 0, 0, 1, 1])
        } else {
            Bytes::copy_from_slice(&floe_wire::Encapsulation::header(6, self.encoding))
        }
    }

    /// A decoder for the request's parameters carrying the communicator, so
    /// that proxies in them decode as live ones and `Ice.AcceptClassCycles`
    /// applies (generated dispatchers use it for operations whose
    /// parameters may hold proxies or classes).
    ///
    /// # Errors
    ///
    /// [`floe_wire::Error::UnsupportedEncoding`] for an encapsulation
    /// neither 1.0 nor 1.1.
    pub fn params_decoder(
        &self,
        params: floe_wire::Encapsulation,
    ) -> floe_wire::Result<floe_wire::Decoder> {
        let mut dec = floe_wire::Decoder::from_encapsulation(params)?;
        if let Ok(communicator) = self.adapter.communicator() {
            communicator.configure_decoder(&mut dec);
        }
        Ok(dec)
    }

    /// Checks the received mode against the operation's declaration, as Ice
    /// servers do (§2.2): a plain operation (`declared` Normal) accepts only
    /// mode 0; an `idempotent` one (declared Idempotent or Nonmutating)
    /// accepts 1 and 2. Generated dispatchers call it for every operation;
    /// hand-written servants call it themselves. The check itself is
    /// [`OperationMode::check_received`].
    ///
    /// # Errors
    ///
    /// Status 5 with Ice's `MarshalException` text on a mismatch.
    #[inline]
    pub fn check_mode(&self, declared: OperationMode) -> Result<(), crate::DispatchError> {
        declared.check_received(self.mode).map_err(Into::into)
    }

    /// Encodes a results (or user exception) encapsulation in the request's
    /// encoding with `write`.
    ///
    /// ```no_run
    /// # fn f(current: floe_runtime::Current) {
    /// let reply = current.encode_reply(|enc| enc.write_i32(6));
    /// # }
    /// ```
    pub fn encode_reply(&self, write: impl FnOnce(&mut Encoder)) -> Bytes {
        let format = self.adapter.inner.config.class_format;
        encode_encapsulation(self.encoding, 64, |enc| {
            enc.set_class_format(format);
            write(enc)
        })
    }

    /// `e` as the dispatch's failure: a raised
    /// [`DispatchError::UserException`] is encoded in the request's
    /// encoding and in `format` (`None`: the adapter's default, from
    /// `Ice.Default.SlicedFormat`), ready to be sent with status 1; other
    /// errors are returned as they are. Generated dispatchers call this
    /// with the operation's `["format:..."]`.
    pub fn encode_user_exception(
        &self,
        e: DispatchError,
        format: Option<floe_wire::ClassFormat>,
    ) -> DispatchError {
        match e {
            DispatchError::UserException(ex) => {
                DispatchError::EncodedUserException(self.encode_reply(|enc| {
                    if let Some(f) = format {
                        enc.set_class_format(f);
                    }
                    enc.write_user_exception(ex.as_dyn());
                }))
            }
            other => other,
        }
    }

    /// A results encapsulation whose data is what `write_prefix` writes
    /// followed by the bytes of `payload` (e.g. a `sequence<byte>` result:
    /// `write_prefix` writes its size). A large payload is not copied: the
    /// connection sends it beside the reply head. Generated dispatchers use
    /// this for a trailing `sequence<byte>` result.
    ///
    /// ```no_run
    /// # fn f(current: floe_runtime::Current, data: bytes::Bytes) {
    /// let reply = current.encode_reply_with_payload(|enc| enc.write_size(data.len()), &data);
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// `::Ice::MemoryLimitException` (as status 5) when the encapsulation
    /// would exceed the 2 GB an encapsulation's size can express.
    pub fn encode_reply_with_payload(
        &self,
        write_prefix: impl FnOnce(&mut Encoder),
        payload: &Bytes,
    ) -> Result<ReplyData, DispatchError> {
        /// Payloads up to this size are copied into the head.
        const COPY_LIMIT: usize = 16 * 1024;
        let mut enc = Encoder::with_buffer(BytesMut::with_capacity(64), self.encoding);
        enc.set_class_format(self.adapter.inner.config.class_format);
        let mark = enc.start_encapsulation(self.encoding);
        write_prefix(&mut enc);
        if payload.len() <= COPY_LIMIT {
            enc.write_raw(payload);
            enc.end_encapsulation(mark);
            return Ok(ReplyData::new(enc.finish()));
        }
        enc.end_encapsulation(mark);
        let mut head = enc.into_inner();
        // The encapsulation's size counts the payload sent after the head.
        let size = head.len() + payload.len();
        if i32::try_from(size).is_err() {
            return Err(DispatchError::UnknownLocalException(format!(
                "::Ice::MemoryLimitException:\nreply encapsulation of {size} bytes exceeds 2 GB"
            )));
        }
        head[..floe_wire::Encapsulation::HEADER_SIZE]
            .copy_from_slice(&floe_wire::Encapsulation::header(size, self.encoding));
        Ok(ReplyData::split(head.freeze(), payload.clone()))
    }
}
