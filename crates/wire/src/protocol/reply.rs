//! Reply messages (type 2, §3): the eight reply statuses and their bodies.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use compact_str::CompactString;

use super::header::{patch_size, CompressionStatus, Header, MessageType, HEADER_SIZE};
use super::request::{read_facet, write_facet};
use crate::decoder::{Decoder, Encapsulation};
use crate::encoder::Encoder;
use crate::error::{Error, Result};
use crate::identity::Identity;

/// The reply status byte (§3.1): any value 0–255.
///
/// Ice 3.7 defines 0–7; Ice 3.8 adds [`ReplyStatus::INVALID_DATA`] (8) and
/// [`ReplyStatus::UNAUTHORIZED`] (9) and lets a dispatch answer with any
/// other value, whose body is a message string like that of statuses 5–7.
/// A newtype over the byte (as `http::StatusCode` is), so every status a
/// peer sends has a value and a name where Ice gives it one.
///
/// ```
/// use floe_wire::protocol::ReplyStatus;
///
/// assert_eq!(ReplyStatus::from_u8(9), ReplyStatus::UNAUTHORIZED);
/// assert_eq!(ReplyStatus::UNAUTHORIZED.name(), Some("Unauthorized"));
/// assert_eq!(ReplyStatus::from_u8(200).to_string(), "200");
/// assert!(ReplyStatus::from_u8(200).has_message());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplyStatus(u8);

impl ReplyStatus {
    /// 0: results follow in an encapsulation.
    pub const OK: ReplyStatus = ReplyStatus(0);
    /// 1: a user exception follows in an encapsulation.
    pub const USER_EXCEPTION: ReplyStatus = ReplyStatus(1);
    /// 2: no servant for the identity.
    pub const OBJECT_NOT_EXIST: ReplyStatus = ReplyStatus(2);
    /// 3: a servant for the identity, but not for the facet.
    pub const FACET_NOT_EXIST: ReplyStatus = ReplyStatus(3);
    /// 4: the servant has no such operation.
    pub const OPERATION_NOT_EXIST: ReplyStatus = ReplyStatus(4);
    /// 5: an Ice local exception in the dispatch (text follows).
    pub const UNKNOWN_LOCAL_EXCEPTION: ReplyStatus = ReplyStatus(5);
    /// 6: an undeclared user exception raised as `UnknownUserException` (text).
    pub const UNKNOWN_USER_EXCEPTION: ReplyStatus = ReplyStatus(6);
    /// 7: any other exception (text).
    pub const UNKNOWN_EXCEPTION: ReplyStatus = ReplyStatus(7);
    /// 8 (Ice 3.8): the request's data was invalid (text).
    pub const INVALID_DATA: ReplyStatus = ReplyStatus(8);
    /// 9 (Ice 3.8): the caller is not authorized (text).
    pub const UNAUTHORIZED: ReplyStatus = ReplyStatus(9);

    /// The status for a wire byte; every byte is a status.
    pub const fn from_u8(b: u8) -> Self {
        ReplyStatus(b)
    }

    /// The wire byte.
    pub const fn to_u8(self) -> u8 {
        self.0
    }

    /// Whether the body is a message string: statuses 5 and above (2–4
    /// carry the request's identity, facet and operation; 0 and 1 an
    /// encapsulation).
    pub const fn has_message(self) -> bool {
        self.0 >= 5
    }

    /// Ice's name for the status (`ObjectNotExist`, `InvalidData`, ...);
    /// `None` for a value Ice does not name.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "Ok",
            1 => "UserException",
            2 => "ObjectNotExist",
            3 => "FacetNotExist",
            4 => "OperationNotExist",
            5 => "UnknownLocalException",
            6 => "UnknownUserException",
            7 => "UnknownException",
            8 => "InvalidData",
            9 => "Unauthorized",
            _ => return None,
        })
    }
}

impl std::fmt::Display for ReplyStatus {
    /// Ice's name, or the number.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "{}", self.0),
        }
    }
}

impl From<u8> for ReplyStatus {
    fn from(b: u8) -> Self {
        ReplyStatus(b)
    }
}

/// The body of reply statuses 2–4: which request failed.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RequestFailed {
    /// The identity from the request.
    pub identity: Identity,
    /// The facet from the request (empty = default).
    pub facet: CompactString,
    /// The operation from the request.
    pub operation: CompactString,
}

impl RequestFailed {
    fn decode(dec: &mut Decoder) -> Result<Self> {
        let identity = dec.read()?;
        let facet = read_facet(dec)?;
        let operation = dec.read_compact_string()?;
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
    /// Statuses 8–255 (Ice 3.8: `InvalidData`, `Unauthorized`, or any
    /// other value a dispatch answers with): the status and its message.
    /// Written with `status` as given; use it for statuses above 7 only
    /// (lower ones decode to their own variants).
    DispatchException {
        /// The status byte.
        status: ReplyStatus,
        /// The message the peer sent.
        message: String,
    },
}

impl ReplyBody {
    /// The status of this body.
    pub fn status(&self) -> ReplyStatus {
        match self {
            ReplyBody::Ok(_) => ReplyStatus::OK,
            ReplyBody::UserException(_) => ReplyStatus::USER_EXCEPTION,
            ReplyBody::ObjectNotExist(_) => ReplyStatus::OBJECT_NOT_EXIST,
            ReplyBody::FacetNotExist(_) => ReplyStatus::FACET_NOT_EXIST,
            ReplyBody::OperationNotExist(_) => ReplyStatus::OPERATION_NOT_EXIST,
            ReplyBody::UnknownLocalException(_) => ReplyStatus::UNKNOWN_LOCAL_EXCEPTION,
            ReplyBody::UnknownUserException(_) => ReplyStatus::UNKNOWN_USER_EXCEPTION,
            ReplyBody::UnknownException(_) => ReplyStatus::UNKNOWN_EXCEPTION,
            ReplyBody::DispatchException { status, .. } => *status,
        }
    }

    /// Decodes a status byte and its body. Every status byte is valid:
    /// 8–255 become [`ReplyBody::DispatchException`] with their message.
    pub fn decode(dec: &mut Decoder) -> Result<ReplyBody> {
        let status = ReplyStatus::from_u8(dec.read_u8()?);
        Ok(match status {
            ReplyStatus::OK => ReplyBody::Ok(dec.read_encapsulation()?),
            ReplyStatus::USER_EXCEPTION => ReplyBody::UserException(dec.read_encapsulation()?),
            ReplyStatus::OBJECT_NOT_EXIST => ReplyBody::ObjectNotExist(RequestFailed::decode(dec)?),
            ReplyStatus::FACET_NOT_EXIST => ReplyBody::FacetNotExist(RequestFailed::decode(dec)?),
            ReplyStatus::OPERATION_NOT_EXIST => {
                ReplyBody::OperationNotExist(RequestFailed::decode(dec)?)
            }
            ReplyStatus::UNKNOWN_LOCAL_EXCEPTION => {
                ReplyBody::UnknownLocalException(dec.read_string()?)
            }
            ReplyStatus::UNKNOWN_USER_EXCEPTION => {
                ReplyBody::UnknownUserException(dec.read_string()?)
            }
            ReplyStatus::UNKNOWN_EXCEPTION => ReplyBody::UnknownException(dec.read_string()?),
            status => ReplyBody::DispatchException {
                status,
                message: dec.read_string()?,
            },
        })
    }

    /// Writes the status byte and the body. For statuses 0 and 1 the
    /// encapsulation is written from its parts.
    pub fn encode(&self, enc: &mut Encoder) {
        enc.write_u8(self.status().to_u8());
        match self {
            ReplyBody::Ok(e) | ReplyBody::UserException(e) => {
                enc.write_raw(&e.wire_header());
                enc.write_raw(&e.data);
            }
            ReplyBody::ObjectNotExist(f)
            | ReplyBody::FacetNotExist(f)
            | ReplyBody::OperationNotExist(f) => f.encode(enc),
            ReplyBody::UnknownLocalException(s)
            | ReplyBody::UnknownUserException(s)
            | ReplyBody::UnknownException(s)
            | ReplyBody::DispatchException { message: s, .. } => enc.write_string(s),
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
    /// Out of bounds / marshal errors for truncated bodies, or bytes left
    /// after the body.
    pub fn decode_body(dec: &mut Decoder) -> Result<Reply> {
        let request_id = dec.read_i32().map_err(|e| e.at("requestId").at("Reply"))?;
        let body = ReplyBody::decode(dec).map_err(|e| e.at("Reply"))?;
        if !dec.is_empty() {
            return Err(Error::IllegalMessageSize(dec.remaining() as i64));
        }
        Ok(Reply { request_id, body })
    }

    /// The common reply, status 0 with an encapsulation that ends the
    /// message, read straight from `body` (everything after the header):
    /// no [`Decoder`], and the results are `body` itself, advanced (no
    /// reference count touched). Anything else is given back, for
    /// [`Reply::decode_body`], which decodes every reply and reports
    /// every error; what both accept, they decode alike.
    ///
    /// # Errors
    ///
    /// `body`, when it is not such a reply.
    pub fn decode_ok(mut body: Bytes) -> std::result::Result<Reply, Bytes> {
        // requestId (4), status (1), encapsulation size (4), encoding (2).
        let Some(&[i0, i1, i2, i3, status, s0, s1, s2, s3, major, minor]) = body.get(..11) else {
            return Err(body);
        };
        let size = i32::from_le_bytes([s0, s1, s2, s3]);
        if status != ReplyStatus::OK.0 || size < 6 || size as usize != body.len() - 5 {
            return Err(body);
        }
        body.advance(11);
        Ok(Reply {
            request_id: i32::from_le_bytes([i0, i1, i2, i3]),
            body: ReplyBody::Ok(Encapsulation {
                encoding: crate::EncodingVersion { major, minor },
                data: body,
            }),
        })
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
    pub const HEAD_SIZE: usize = HEADER_SIZE + 5;

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
        buf.extend_from_slice(&Self::head(request_id, status, encaps_len, compression));
    }

    /// The bytes [`Reply::encode_head`] writes, as an array: for a reply
    /// encoded where no buffer is at hand (on the stack).
    ///
    /// ```
    /// use floe_wire::protocol::{CompressionStatus, Reply, ReplyStatus};
    ///
    /// let head = Reply::head(7, ReplyStatus::OK, 6, CompressionStatus::NotSupported);
    /// assert_eq!(&head[..4], b"IceP");
    /// assert_eq!(head[10..14], 25i32.to_le_bytes()); // 19 + 6
    /// assert_eq!(head[14..18], 7i32.to_le_bytes());
    /// ```
    ///
    /// # Panics
    ///
    /// If the frame would exceed `i32::MAX` bytes (a programming error:
    /// frames are bounded by `Ice.MessageSizeMax` first).
    pub fn head(
        request_id: i32,
        status: ReplyStatus,
        encaps_len: usize,
        compression: CompressionStatus,
    ) -> [u8; Self::HEAD_SIZE] {
        let mut head = [0; Self::HEAD_SIZE];
        head[..HEADER_SIZE].copy_from_slice(&Header::bytes(MessageType::Reply, compression));
        head[HEADER_SIZE..HEADER_SIZE + 4].copy_from_slice(&request_id.to_le_bytes());
        head[HEADER_SIZE + 4] = status.to_u8();
        patch_size(&mut head, 0, Self::HEAD_SIZE + encaps_len);
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Message;

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

    /// `decode_ok` against `decode_body`: the same reply where it takes
    /// one, and every status-0 reply `decode_body` takes.
    fn agree(body: &[u8]) {
        let general = Reply::decode_body(&mut Decoder::new(Bytes::copy_from_slice(body)));
        match Reply::decode_ok(Bytes::copy_from_slice(body)) {
            Ok(fast) => assert_eq!(general.ok(), Some(fast)),
            Err(back) => {
                assert_eq!(&back[..], body);
                assert!(!matches!(
                    general,
                    Ok(Reply {
                        body: ReplyBody::Ok(_),
                        ..
                    })
                ));
            }
        }
    }

    #[test]
    fn decode_ok_agrees_with_decode_body() {
        for hex_str in [
            "01000000 00 060000000101",
            "03000000 00 0a0000000101 06000000",
            "03000000 00 0a0000000100 06000000",
            // Trailing byte, short encapsulation, size below 6, too long.
            "03000000 00 060000000101 00",
            "03000000 00 0a0000000101 0600",
            "03000000 00 050000000101",
            "03000000 00 ffffffff0101",
            // A user exception, and a body cut short.
            "03000000 01 060000000101",
            "03000000 00 0600",
            "",
        ] {
            agree(&hex::decode(hex_str.replace(' ', "")).unwrap());
        }
    }

    proptest::proptest! {
        #[test]
        fn decode_ok_agrees_on_any_body(
            id in proptest::prelude::any::<i32>(),
            status in 0u8..3,
            size in -2i32..20,
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..16),
        ) {
            let mut body = id.to_le_bytes().to_vec();
            body.push(status);
            body.extend_from_slice(&size.to_le_bytes());
            body.extend_from_slice(&data);
            agree(&body);
        }
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
                facet: Default::default(),
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
            ReplyBody::DispatchException {
                status: ReplyStatus::INVALID_DATA,
                message: "d".into(),
            },
            ReplyBody::DispatchException {
                status: ReplyStatus::UNAUTHORIZED,
                message: "e".into(),
            },
        ];
        for (i, body) in bodies.into_iter().enumerate() {
            assert_eq!(usize::from(body.status().to_u8()), i);
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
    fn statuses_above_7_carry_a_message() {
        // Ice 3.8's InvalidData (8) with "bad", and a status no Ice names.
        let r = parse("4963655001000100020017000000 01000000 08 03626164");
        assert_eq!(
            r.body,
            ReplyBody::DispatchException {
                status: ReplyStatus::INVALID_DATA,
                message: "bad".into()
            }
        );
        let r = parse("4963655001000100020014000000 01000000 ff 00");
        assert_eq!(r.body.status().to_u8(), 255);
        assert_eq!(r.body.status().name(), None);
        // A message cut short is a marshal error, as for statuses 5-7.
        let short =
            Bytes::from(hex::decode("4963655001000100020017000000010000000804626164").unwrap());
        assert!(Message::parse(short).is_err());
    }

    #[test]
    fn trailing_bytes_fail() {
        let mut f = hex::decode("49636550010001000200190000000100000000060000000101").unwrap();
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
            ReplyStatus::OK,
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
