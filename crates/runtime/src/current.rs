//! [`Current`]: everything a servant knows about the request it is
//! dispatching (Ice's `Current`).

use bytes::{Bytes, BytesMut};
use floe_wire::protocol::OperationMode;
use floe_wire::{Context, Encoder, EncodingVersion, Identity};

use crate::connection::Connection;
use crate::object_adapter::ObjectAdapter;

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
    pub facet: String,
    /// Operation name.
    pub operation: String,
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
            Bytes::from(vec![6, 0, 0, 0, self.encoding.major, self.encoding.minor])
        }
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
        encode_encapsulation(self.encoding, 64, write)
    }
}

/// Encodes an encapsulation (header included) in `encoding`.
pub fn encode_encapsulation(
    encoding: EncodingVersion,
    capacity: usize,
    write: impl FnOnce(&mut Encoder),
) -> Bytes {
    let mut enc = Encoder::with_buffer(BytesMut::with_capacity(capacity), encoding);
    let mark = enc.start_encapsulation(encoding);
    write(&mut enc);
    enc.end_encapsulation(mark);
    enc.finish()
}
