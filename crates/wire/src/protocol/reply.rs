//! Reply messages (type 2, §3): the eight reply statuses and their bodies.

use bytes::{BufMut, BytesMut};

use super::header::{patch_size, CompressionStatus, Header, MessageType};
use super::request::{read_facet, write_facet};
use crate::decoder::{Decoder, Encapsulation};
use crate::encoder::Encoder;
use crate::error::{Error, Result};
use crate::identity::Identity;

/// The reply status byte (§3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ReplyStatus {
    /// Results follow in an encapsulation.
    Ok = 0,
    /// A user exception follows in an encapsulation.
    UserException = 1,
    /// No servant for the identity.
    ObjectNotExist = 2,
    /// A servant for the identity, but not for the facet.
    FacetNotExist = 3,
    /// The servant has no such operation.
    OperationNotExist = 4,
    /// An Ice local exception in the dispatch (text follows).
    UnknownLocalException = 5,
    /// An undeclared user exception raised as `UnknownUserException` (text).
    UnknownUserException = 6,
    /// Any other exception (text).
    UnknownException = 7,
}

impl ReplyStatus {
    /// The status for a wire byte.
    ///
    /// # Errors
    ///
    /// [`Error::Marshal`] for values above 7.
    pub fn from_u8(b: u8) -> Result<Self> {
        Ok(match b {
            0 => ReplyStatus::Ok,
            1 => ReplyStatus::UserException,
            2 => ReplyStatus::ObjectNotExist,
            3 => ReplyStatus::FacetNotExist,
            4 => ReplyStatus::OperationNotExist,
            5 => ReplyStatus::UnknownLocalException,
            6 => ReplyStatus::UnknownUserException,
            7 => ReplyStatus::UnknownException,
            other => return Err(Error::marshal(format!("unknown reply status {other}"))),
        })
    }
}

/// The body of reply statuses 2–4: which request failed.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RequestFailed {
    /// The identity from the request.
    pub identity: Identity,
    /// The facet from the request (empty = default).
    pub facet: String,
    /// The operation from the request.
    pub operation: String,
}

impl RequestFailed {
    fn decode(dec: &mut Decoder) -> Result<Self> {
        let identity = dec.read()?;
        let facet = read_facet(dec)?;
        let operation = dec.read_string()?;
        Ok(RequestFailed {
            identity,
            facet,
            operation,
        })
    }

    fn encode(&self, enc: &mut Encoder) {
        enc.write(&self.identity);
        write_facet(enc, &self.facet);
        enc.write_string(&self.operation);
    }
}

/// A reply body, one variant per status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyBody {
    /// Status 0: the results encapsulation (a slice of the frame).
    Ok(Encapsulation),
    /// Status 1: the exception encapsulation.
    UserException(Encapsulation),
    /// Status 2.
    ObjectNotExist(RequestFailed),
    /// Status 3.
    FacetNotExist(RequestFailed),
    /// Status 4.
    OperationNotExist(RequestFailed),
    /// Status 5: free text.
    UnknownLocalException(String),
    /// Status 6: free text.
    UnknownUserException(String),
    /// Status 7: free text.
    UnknownException(String),
}

impl ReplyBody {
    /// The status of this body.
    pub fn status(&self) -> ReplyStatus {
        match self {
            ReplyBody::Ok(_) => ReplyStatus::Ok,
            ReplyBody::UserException(_) => ReplyStatus::UserException,
            ReplyBody::ObjectNotExist(_) => ReplyStatus::ObjectNotExist,
            ReplyBody::FacetNotExist(_) => ReplyStatus::FacetNotExist,
            ReplyBody::OperationNotExist(_) => ReplyStatus::OperationNotExist,
            ReplyBody::UnknownLocalException(_) => ReplyStatus::UnknownLocalException,
            ReplyBody::UnknownUserException(_) => ReplyStatus::UnknownUserException,
            ReplyBody::UnknownException(_) => ReplyStatus::UnknownException,
        }
    }

    /// Decodes a status byte and its body.
    pub fn decode(dec: &mut Decoder) -> Result<ReplyBody> {
        let status = ReplyStatus::from_u8(dec.read_u8()?)?;
        Ok(match status {
            ReplyStatus::Ok => ReplyBody::Ok(dec.read_encapsulation()?),
            ReplyStatus::UserException => ReplyBody::UserException(dec.read_encapsulation()?),
            ReplyStatus::ObjectNotExist => ReplyBody::ObjectNotExist(RequestFailed::decode(dec)?),
            ReplyStatus::FacetNotExist => ReplyBody::FacetNotExist(RequestFailed::decode(dec)?),
            ReplyStatus::OperationNotExist => {
                ReplyBody::OperationNotExist(RequestFailed::decode(dec)?)
            }
            ReplyStatus::UnknownLocalException => {
                ReplyBody::UnknownLocalException(dec.read_string()?)
            }
            ReplyStatus::UnknownUserException => {
                ReplyBody::UnknownUserException(dec.read_string()?)
            }
            ReplyStatus::UnknownException => ReplyBody::UnknownException(dec.read_string()?),
        })
    }

    /// Writes the status byte and the body. For statuses 0 and 1 the
    /// encapsulation is written from its parts.
    pub fn encode(&self, enc: &mut Encoder) {
        enc.write_u8(self.status() as u8);
        match self {
            ReplyBody::Ok(e) | ReplyBody::UserException(e) => {
                enc.write_i32(e.wire_size() as i32);
                enc.write_u8(e.encoding.major);
                enc.write_u8(e.encoding.minor);
                enc.write_raw(&e.data);
            }
            ReplyBody::ObjectNotExist(f)
            | ReplyBody::FacetNotExist(f)
            | ReplyBody::OperationNotExist(f) => f.encode(enc),
            ReplyBody::UnknownLocalException(s)
            | ReplyBody::UnknownUserException(s)
            | ReplyBody::UnknownException(s) => enc.write_string(s),
        }
    }
}

/// A decoded reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The id of the request answered.
    pub request_id: i32,
    /// Status and body.
    pub body: ReplyBody,
}

impl Reply {
    /// Decodes the body of a Reply message (everything after the header).
    ///
    /// # Errors
    ///
    /// Out of bounds / marshal errors for truncated bodies, unknown statuses,
    /// or bytes left after the body.
    pub fn decode_body(dec: &mut Decoder) -> Result<Reply> {
        let request_id = dec.read_i32().map_err(|e| e.at("requestId").at("Reply"))?;
        let body = ReplyBody::decode(dec).map_err(|e| e.at("Reply"))?;
        if !dec.is_empty() {
            return Err(Error::IllegalMessageSize(dec.remaining() as i64));
        }
        Ok(Reply { request_id, body })
    }

    /// Encodes this reply as a whole frame into `buf`.
    pub fn encode(&self, buf: &mut BytesMut, compression: CompressionStatus) {
        let start = buf.len();
        Header::write(buf, MessageType::Reply, compression);
        buf.put_i32_le(self.request_id);
        let mut enc = Encoder::with_buffer(std::mem::take(buf), crate::ENCODING_1_1);
        self.body.encode(&mut enc);
        *buf = enc.into_inner();
        let size = buf.len() - start;
        patch_size(buf, start, size);
    }

    /// Bytes [`Reply::encode_head`] writes: the header, the request id and
    /// the status byte.
    pub const HEAD_SIZE: usize = super::header::HEADER_SIZE + 5;

    /// Writes the header, request id and status byte of a status-0 or
    /// status-1 reply whose encapsulation (`encaps_len` bytes, header
    /// included) is appended by the caller or sent beside it in a vectored
    /// write. The frame size is already set.
    pub fn encode_head(
        buf: &mut BytesMut,
        request_id: i32,
        status: ReplyStatus,
        encaps_len: usize,
        compression: CompressionStatus,
    ) {
        let start = buf.len();
        Header::write(buf, MessageType::Reply, compression);
        buf.put_i32_le(request_id);
        buf.put_u8(status as u8);
        let size = buf.len() - start + encaps_len;
        patch_size(buf, start, size);
        debug_assert_eq!(buf.len() - start, Self::HEAD_SIZE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Message;
    use bytes::Bytes;

    fn parse(hex_str: &str) -> Reply {
        let f = Bytes::from(hex::decode(hex_str.replace(' ', "")).unwrap());
        let Message::Reply(r) = Message::parse(f.clone()).unwrap().1 else {
            panic!("not a reply")
        };
        let mut out = BytesMut::new();
        r.encode(&mut out, CompressionStatus::NotSupported);
        assert_eq!(&out[..], &f[..], "re-encoding differs");
        r
    }

    #[test]
    fn captured_replies() {
        // protocol_basic.txt: Ok with no results; Ok with int 6.
        let r = parse("4963655001000100020019000000 01000000 00 060000000101");
        assert_eq!(r.request_id, 1);
        assert_eq!(
            r.body,
            ReplyBody::Ok(Encapsulation::empty(crate::ENCODING_1_1))
        );
        let r = parse("496365500100010002001d000000 03000000 00 0a0000000101 06000000");
        let ReplyBody::Ok(e) = r.body else { panic!() };
        assert_eq!(&e.data[..], &[6, 0, 0, 0]);
        // ObjectNotExist for ego/cat ice_ping.
        let r = parse(
            "4963655001000100020025000000 0a000000 02 03656 76f03636174 00 0869636 55f70696e67",
        );
        assert_eq!(
            r.body,
            ReplyBody::ObjectNotExist(RequestFailed {
                identity: Identity::new("ego", "cat"),
                facet: String::new(),
                operation: "ice_ping".into()
            })
        );
        // FacetNotExist on facet "nope".
        let r = parse("4963655001000100020022000000 0b000000 03 0568656c6c6f00 01046e6f7065 016f");
        let ReplyBody::FacetNotExist(f) = r.body else {
            panic!()
        };
        assert_eq!(f.facet, "nope");
        // UnknownException from a C++ server.
        let mut text = hex::encode("std::exception: c++ error");
        text.insert_str(0, "19");
        let r = parse(&format!("496365500100010002002d000000 12000000 07 {text}"));
        assert_eq!(
            r.body,
            ReplyBody::UnknownException("std::exception: c++ error".into())
        );
    }

    #[test]
    fn every_status_round_trips() {
        let failed = RequestFailed {
            identity: Identity::new("n", "c"),
            facet: "f".into(),
            operation: "op".into(),
        };
        let enc = Encapsulation {
            encoding: crate::ENCODING_1_0,
            data: Bytes::from_static(&[1, 2, 3]),
        };
        let bodies = [
            ReplyBody::Ok(enc.clone()),
            ReplyBody::UserException(enc),
            ReplyBody::ObjectNotExist(failed.clone()),
            ReplyBody::FacetNotExist(failed.clone()),
            ReplyBody::OperationNotExist(failed),
            ReplyBody::UnknownLocalException("a".into()),
            ReplyBody::UnknownUserException("b".into()),
            ReplyBody::UnknownException("c".into()),
        ];
        for (i, body) in bodies.into_iter().enumerate() {
            assert_eq!(body.status() as usize, i);
            let reply = Reply {
                request_id: 7,
                body,
            };
            let mut buf = BytesMut::new();
            reply.encode(&mut buf, CompressionStatus::NotSupported);
            let (_, Message::Reply(back)) = Message::parse(buf.freeze()).unwrap() else {
                panic!()
            };
            assert_eq!(back, reply);
        }
    }

    #[test]
    fn bad_status_and_trailing_bytes_fail() {
        let mut f = hex::decode("49636550010001000200190000000100000008060000000101").unwrap();
        assert!(Message::parse(Bytes::from(f.clone())).is_err());
        f[18] = 0;
        f.push(0);
        f[10] = 26;
        assert!(Message::parse(Bytes::from(f)).is_err());
    }

    #[test]
    fn encode_head_sets_the_size() {
        let mut buf = BytesMut::new();
        Reply::encode_head(
            &mut buf,
            1,
            ReplyStatus::Ok,
            6,
            CompressionStatus::NotSupported,
        );
        buf.extend_from_slice(&[6, 0, 0, 0, 1, 1]);
        assert_eq!(
            hex::encode(&buf),
            "49636550010001000200190000000100000000060000000101"
        );
    }
}
