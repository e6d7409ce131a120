//! [`Params`]: a request's parameters as the frame writer takes them.

use bytes::{Bytes, BytesMut};

/// A request's parameters as the frame writer takes them.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Params<'a> {
    /// A whole encapsulation, 6-byte header included.
    Encapsulation(&'a Bytes),
    /// The data of an encapsulation in `EncodingVersion`; the writer adds
    /// the header (e.g. an encapsulation received from a peer and
    /// forwarded: the data is shared, not copied).
    Body(floe_wire::EncodingVersion, &'a Bytes),
    /// The data of an encapsulation in two parts, `prefix` then `payload`
    /// (a large byte sequence the caller passed as `Bytes`, sent beside
    /// the frame head instead of copied); the writer adds the header.
    Split(floe_wire::EncodingVersion, &'a Bytes, &'a Bytes),
    /// As `Split`, with a borrowed payload (a number sequence in the
    /// caller's memory): a large one is written from where it is and
    /// copied only if the socket does not take it all at once.
    Slice(floe_wire::EncodingVersion, &'a Bytes, &'a [u8]),
}

impl<'a> Params<'a> {
    /// Bytes of the whole encapsulation on the wire.
    pub(crate) fn len(&self) -> usize {
        match self {
            Params::Encapsulation(b) => b.len(),
            Params::Body(_, b) => b.len() + 6,
            Params::Split(_, prefix, payload) => prefix.len() + payload.len() + 6,
            Params::Slice(_, prefix, payload) => prefix.len() + payload.len() + 6,
        }
    }

    /// What is sent after the frame head: the encapsulation header's
    /// version (`None` when the data is a whole encapsulation), a prefix,
    /// and the rest, with the `Bytes` it is shared from (`None` when
    /// borrowed).
    pub(crate) fn parts(
        self,
    ) -> (
        Option<floe_wire::EncodingVersion>,
        &'a [u8],
        &'a [u8],
        Option<&'a Bytes>,
    ) {
        match self {
            Params::Encapsulation(b) => (None, &[], b, Some(b)),
            Params::Body(encoding, b) => (Some(encoding), &[], b, Some(b)),
            Params::Split(encoding, prefix, b) => (Some(encoding), prefix, b, Some(b)),
            Params::Slice(encoding, prefix, b) => (Some(encoding), prefix, b, None),
        }
    }

    /// The whole encapsulation in one buffer (copies a `Body`), for the
    /// batch and datagram paths.
    pub(crate) fn framed(&self) -> Bytes {
        let (encoding, prefix, data, shared) = self.parts();
        let Some(encoding) = encoding else {
            // A whole encapsulation already.
            return shared.map_or_else(|| Bytes::copy_from_slice(data), Bytes::clone);
        };
        let size = prefix.len() + data.len() + 6;
        let mut buf = BytesMut::with_capacity(size);
        buf.extend_from_slice(&floe_wire::Encapsulation::header(size, encoding));
        buf.extend_from_slice(prefix);
        buf.extend_from_slice(data);
        buf.freeze()
    }
}
