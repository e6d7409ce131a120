//! Transport-free dispatch: an incoming request as bytes in, a reply as
//! bytes out. The TopicManager, Topic, Finder, publisher and link servants
//! are functions over these types, so they are tested against captured
//! bytes without a network, and floe-runtime only has to carry
//! [`Request`]s in and [`Reply`]s out.
//!
//! Modes are checked as Ice does (§2.2): a plain operation must arrive with
//! mode 0, an `idempotent` one with 1 or 2, else reply status 5 with a
//! `MarshalException` text. Built-ins (`ice_ping`, `ice_isA`, `ice_ids`,
//! `ice_id`) accept any mode.

use bytes::Bytes;
use floe::wire::{Context, Decoder, Encapsulation, Encoder, EncodingVersion};

use crate::types::StormException;

/// A request addressed to one of the broker's objects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// Operation name.
    pub operation: String,
    /// Operation mode byte (0, 1 or 2).
    pub mode: u8,
    /// The request context.
    pub context: Context,
    /// The params encapsulation (zero-copy slice of the request frame).
    pub params: Encapsulation,
}

impl Request {
    /// A request with an empty context.
    pub fn new(operation: &str, mode: u8, params: Encapsulation) -> Request {
        Request {
            operation: operation.to_owned(),
            mode,
            context: Context::new(),
            params,
        }
    }

    /// The encoding of the params encapsulation; replies use it too (§3.2).
    pub fn encoding(&self) -> EncodingVersion {
        self.params.encoding
    }
}

/// Parses a whole encapsulation (size, version, data) held in `bytes`.
///
/// # Errors
///
/// Out of bounds if the size does not match the bytes.
pub fn parse_encapsulation(bytes: Bytes) -> floe::wire::Result<Encapsulation> {
    let len = bytes.len();
    let mut dec = Decoder::new(bytes);
    let e = dec.read_encapsulation()?;
    if !dec.is_empty() {
        return Err(floe::wire::Error::encapsulation(format!(
            "encapsulation of {} bytes in a buffer of {len}",
            e.wire_size()
        )));
    }
    Ok(e)
}

/// The wire form of an encapsulation (header + data). Copies; for tests
/// and the store, not for the delivery path.
pub fn encapsulation_bytes(e: &Encapsulation) -> Bytes {
    let mut enc = Encoder::with_capacity(e.wire_size());
    enc.write_i32(e.wire_size() as i32);
    enc.write_u8(e.encoding.major);
    enc.write_u8(e.encoding.minor);
    enc.write_raw(&e.data);
    enc.finish()
}

/// The outcome of a dispatch, in reply-status terms (§3.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Status 0 with this encapsulation (header included).
    Ok(Bytes),
    /// Status 1 with this encapsulation holding the exception.
    UserException(Bytes),
    /// Status 2.
    ObjectNotExist,
    /// Status 3.
    FacetNotExist,
    /// Status 4.
    OperationNotExist,
    /// Status 5 with this text.
    UnknownLocalException(String),
    /// Status 7 with this text.
    UnknownException(String),
}

impl Reply {
    /// A status-0 reply whose encapsulation (in `encoding`) is written by `f`.
    pub fn ok_with(encoding: EncodingVersion, f: impl FnOnce(&mut Encoder)) -> Reply {
        let mut enc = Encoder::new();
        let mark = enc.start_encapsulation(encoding);
        f(&mut enc);
        enc.end_encapsulation(mark);
        Reply::Ok(enc.finish())
    }

    /// A status-0 reply with an empty encapsulation.
    pub fn ok_empty(encoding: EncodingVersion) -> Reply {
        Self::ok_with(encoding, |_| {})
    }

    /// A status-1 reply carrying `e`.
    pub fn user_exception(encoding: EncodingVersion, e: &StormException) -> Reply {
        let mut enc = Encoder::new();
        let mark = enc.start_encapsulation(encoding);
        e.encode(&mut enc);
        enc.end_encapsulation(mark);
        Reply::UserException(enc.finish())
    }

    /// Status 5 for a decoding failure of the params.
    pub fn marshal_error(e: &floe::wire::Error) -> Reply {
        Reply::UnknownLocalException(format!("{}:\n{e}", e.ice_name()))
    }
}

/// How an operation is declared, for the mode check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Declared {
    /// A plain operation: mode 0 only.
    Normal,
    /// `idempotent` (or `["nonmutating"] idempotent`): mode 1 or 2.
    Idempotent,
}

/// Checks the request's mode against the declaration.
///
/// # Errors
///
/// The status-5 reply Ice sends for a mode mismatch.
pub fn check_mode(req: &Request, declared: Declared) -> Result<(), Reply> {
    let ok = match declared {
        Declared::Normal => req.mode == 0,
        Declared::Idempotent => req.mode == 1 || req.mode == 2,
    };
    if ok {
        Ok(())
    } else {
        let want = match declared {
            Declared::Normal => "::Ice::Normal",
            Declared::Idempotent => "::Ice::Idempotent",
        };
        Err(Reply::UnknownLocalException(format!(
            "::Ice::MarshalException:\nprotocol error: error during marshaling or unmarshaling:\n\
             unexpected operation mode. expected = {want} received = {}",
            match req.mode {
                0 => "::Ice::Normal",
                1 => "::Ice::Nonmutating",
                2 => "::Ice::Idempotent",
                _ => "invalid",
            }
        )))
    }
}

/// Opens the params encapsulation for reading.
///
/// # Errors
///
/// The status-5 reply for a malformed encapsulation or unsupported encoding.
pub fn open_params(req: &Request) -> Result<Decoder, Reply> {
    Decoder::from_encapsulation(req.params.clone()).map_err(|e| Reply::marshal_error(&e))
}

/// Ends reading params (trailing bytes are skipped as optionals, as Ice does).
///
/// # Errors
///
/// The status-5 reply if bytes are left that are not optionals.
pub fn close_params(dec: &mut Decoder) -> Result<(), Reply> {
    dec.finish_encapsulation()
        .map_err(|e| Reply::marshal_error(&e))
}

/// Checks that an operation without in-parameters got none.
///
/// # Errors
///
/// As [`open_params`] / [`close_params`].
pub fn no_params(req: &Request) -> Result<(), Reply> {
    let mut dec = open_params(req)?;
    close_params(&mut dec)
}

/// Answers the built-in operations for an object implementing `ids`
/// (sorted, `::Ice::Object` included) whose most-derived type is `most_derived`.
/// `None` if `req` is not a built-in.
pub fn builtin(req: &Request, ids: &[&str], most_derived: &str) -> Option<Reply> {
    let enc = req.encoding();
    let r = match req.operation.as_str() {
        "ice_ping" => no_params(req).map(|()| Reply::ok_empty(enc)),
        "ice_isA" => open_params(req).and_then(|mut dec| {
            let id = dec.read_string().map_err(|e| Reply::marshal_error(&e))?;
            close_params(&mut dec)?;
            let found = ids.contains(&id.as_str());
            Ok(Reply::ok_with(enc, |e| e.write_bool(found)))
        }),
        "ice_ids" => no_params(req).map(|()| {
            Reply::ok_with(enc, |e| {
                e.write_size(ids.len());
                for id in ids {
                    e.write_string(id);
                }
            })
        }),
        "ice_id" => no_params(req).map(|()| Reply::ok_with(enc, |e| e.write_string(most_derived))),
        _ => return None,
    };
    Some(r.unwrap_or_else(|reply| reply))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty_params() -> Encapsulation {
        Encapsulation::empty(floe::wire::ENCODING_1_1)
    }

    fn empty_reply() -> Bytes {
        Bytes::from_static(&[6, 0, 0, 0, 1, 1])
    }

    #[test]
    fn mode_checks() {
        let r = Request::new("getName", 0, empty_params());
        assert!(check_mode(&r, Declared::Normal).is_ok());
        assert!(matches!(
            check_mode(&r, Declared::Idempotent),
            Err(Reply::UnknownLocalException(t)) if t.contains("unexpected operation mode")
        ));
        let r = Request::new("getName", 1, empty_params());
        assert!(check_mode(&r, Declared::Idempotent).is_ok());
        assert!(check_mode(&r, Declared::Normal).is_err());
    }

    #[test]
    fn builtins() {
        let ids = ["::Ice::Object", "::IceStorm::Finder"];
        let r = Request::new("ice_ping", 1, empty_params());
        assert_eq!(builtin(&r, &ids, ids[1]), Some(Reply::Ok(empty_reply())));
        let mut enc = Encoder::new();
        let m = enc.start_encapsulation(floe::wire::ENCODING_1_1);
        enc.write_string("::IceStorm::Finder");
        enc.end_encapsulation(m);
        let r = Request::new("ice_isA", 1, parse_encapsulation(enc.finish()).unwrap());
        assert_eq!(
            builtin(&r, &ids, ids[1]),
            Some(Reply::Ok(Bytes::from_static(&[7, 0, 0, 0, 1, 1, 1])))
        );
        assert_eq!(
            builtin(&Request::new("x", 0, empty_params()), &ids, ids[1]),
            None
        );
        // Truncated params: status 5, not a panic.
        let r = Request::new(
            "ice_isA",
            1,
            parse_encapsulation(Bytes::from_static(&[7, 0, 0, 0, 1, 1, 5])).unwrap(),
        );
        assert!(matches!(
            builtin(&r, &ids, ids[1]),
            Some(Reply::UnknownLocalException(_))
        ));
    }

    #[test]
    fn encoding_1_0_replies() {
        let r = Request::new(
            "ice_ping",
            1,
            Encapsulation::empty(floe::wire::ENCODING_1_0),
        );
        assert_eq!(
            builtin(&r, &["::Ice::Object"], "::Ice::Object"),
            Some(Reply::Ok(Bytes::from_static(&[6, 0, 0, 0, 1, 0])))
        );
    }
}
