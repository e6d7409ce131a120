//! The one error type of floe-wire.
//!
//! Every variant is named after the Ice local exception a real Ice peer would
//! raise for the same input, so the runtime can map it onto the wire (reply
//! status 5 text, or a dropped connection) without guessing. Messages say
//! what was wrong and, where it is known, where (`at`: the field path).

use std::fmt;

/// A `Result` whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where in a message an error happened: a short path such as
/// `Request.identity.name`. Built only on the error path, so it costs nothing
/// when decoding succeeds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location(Vec<&'static str>);

impl Location {
    /// An empty location (the top of the message).
    pub fn new() -> Self {
        Location(Vec::new())
    }

    /// Adds an outer path component (called while the error travels outwards).
    pub fn push_outer(&mut self, part: &'static str) {
        self.0.insert(0, part);
    }

    /// Whether no component was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("<top>");
        }
        f.write_str(&self.0.join("."))
    }
}

/// Errors raised while encoding, decoding, framing or parsing Ice data.
///
/// Variant names follow Ice 3.7's local exceptions (`UnmarshalOutOfBoundsException`
/// is [`Error::UnmarshalOutOfBounds`], and so on); [`Error::ice_name`] gives
/// the exact Ice type id to put in an `UnknownLocalException` reply.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A read went past the end of the data or of the current encapsulation,
    /// or a count/size does not fit in the bytes that are present.
    #[error("unmarshal out of bounds: need {needed} bytes, have {available} at {at}")]
    UnmarshalOutOfBounds {
        /// Bytes the read needed.
        needed: usize,
        /// Bytes that were left.
        available: usize,
        /// Field path.
        at: Location,
    },
    /// A message or a decompressed body is larger than the configured limit
    /// (`Ice.MessageSizeMax`).
    #[error("memory limit exceeded: {size} bytes is over the limit of {max} bytes")]
    MemoryLimit {
        /// The size claimed.
        size: usize,
        /// The limit in force.
        max: usize,
    },
    /// The first four bytes of a frame were not `IceP`.
    #[error("bad magic in message header: {0:02x?}")]
    BadMagic([u8; 4]),
    /// Protocol version other than 1.0.
    #[error("unsupported protocol version {major}.{minor} (only 1.0 is supported)")]
    UnsupportedProtocol {
        /// Major version received.
        major: u8,
        /// Minor version received.
        minor: u8,
    },
    /// Encoding version not supported (protocol encoding other than 1.0, or
    /// an encapsulation with major != 1 or minor > 1).
    #[error("unsupported encoding version {major}.{minor}")]
    UnsupportedEncoding {
        /// Major version received.
        major: u8,
        /// Minor version received.
        minor: u8,
    },
    /// Message type byte outside 0..=4.
    #[error("unknown message type {0}")]
    UnknownMessage(u8),
    /// Message size field smaller than the header or inconsistent with the data.
    #[error("illegal message size {0}")]
    IllegalMessageSize(i64),
    /// The first message from a server was not ValidateConnection.
    #[error("connection not validated: expected ValidateConnection, got message type {0}")]
    ConnectionNotValidated(u8),
    /// bzip2 compression or decompression failed, or the compression status byte is invalid.
    #[error("compression error: {0}")]
    Compression(String),
    /// An encapsulation was malformed (bad size, trailing data that are not optionals, ...).
    #[error("encapsulation error: {reason} at {at}")]
    Encapsulation {
        /// What was wrong.
        reason: String,
        /// Field path.
        at: Location,
    },
    /// A proxy could not be unmarshaled (bad mode, several facets, ...).
    #[error("proxy unmarshal error: {0}")]
    ProxyUnmarshal(String),
    /// Generic marshaling error (invalid enumerator, bad optional format, invalid UTF-8, ...).
    #[error("marshal error: {reason} at {at}")]
    Marshal {
        /// What was wrong.
        reason: String,
        /// Field path.
        at: Location,
    },
    /// A class instance of an unknown type could not be skipped (compact format).
    #[error("no value factory found for type id `{type_id}`")]
    NoValueFactory {
        /// The type id that could not be instantiated.
        type_id: String,
    },
    /// A class instance was not of the type the Slice definition expects
    /// (e.g. a `Node` where a `Base` member was declared).
    #[error("unexpected class instance of type `{type_id}`, expected `{expected}`")]
    UnexpectedObject {
        /// The type id received.
        type_id: String,
        /// The type id expected.
        expected: String,
    },
    /// A user exception whose type this side does not know.
    #[error("unknown user exception `{type_id}`")]
    UnknownUserException {
        /// The most-derived type id received.
        type_id: String,
    },
    /// A stringified identity could not be parsed.
    #[error("cannot parse identity `{input}`: {reason}")]
    IdentityParse {
        /// The text.
        input: String,
        /// Why.
        reason: String,
    },
    /// A stringified proxy could not be parsed.
    #[error("cannot parse proxy `{input}`: {reason}")]
    ProxyParse {
        /// The text.
        input: String,
        /// Why.
        reason: String,
    },
    /// An identity with an empty name and a non-empty category was used
    /// where an object must be named (e.g. the proxy text `cat/`).
    #[error("illegal identity: empty name with category `{}`", .0.category)]
    IllegalIdentity(crate::Identity),
    /// A `major.minor` version text could not be parsed.
    #[error("cannot parse version `{input}`: {reason}")]
    VersionParse {
        /// The text.
        input: String,
        /// Why.
        reason: String,
    },
    /// A stringified endpoint could not be parsed.
    #[error("cannot parse endpoint `{input}`: {reason}")]
    EndpointParse {
        /// The text.
        input: String,
        /// Why.
        reason: String,
    },
}

impl Error {
    /// An out-of-bounds error with no location yet.
    pub fn out_of_bounds(needed: usize, available: usize) -> Self {
        Error::UnmarshalOutOfBounds {
            needed,
            available,
            at: Location::new(),
        }
    }

    /// A marshal error with no location yet.
    pub fn marshal(reason: impl Into<String>) -> Self {
        Error::Marshal {
            reason: reason.into(),
            at: Location::new(),
        }
    }

    /// An encapsulation error with no location yet.
    pub fn encapsulation(reason: impl Into<String>) -> Self {
        Error::Encapsulation {
            reason: reason.into(),
            at: Location::new(),
        }
    }

    /// Records that the error happened inside `part` (e.g. a struct member
    /// name). Called from the inside out, so the final path reads outer first.
    ///
    /// ```
    /// use floe_wire::Error;
    /// let e = Error::out_of_bounds(4, 1).at("name").at("Identity");
    /// assert_eq!(e.to_string(), "unmarshal out of bounds: need 4 bytes, have 1 at Identity.name");
    /// ```
    pub fn at(mut self, part: &'static str) -> Self {
        match &mut self {
            Error::UnmarshalOutOfBounds { at, .. }
            | Error::Encapsulation { at, .. }
            | Error::Marshal { at, .. } => at.push_outer(part),
            _ => {}
        }
        self
    }

    /// The Ice type id of the local exception this error corresponds to, as a
    /// real Ice peer would name it (e.g. `::Ice::UnmarshalOutOfBoundsException`).
    pub fn ice_name(&self) -> &'static str {
        match self {
            Error::UnmarshalOutOfBounds { .. } => "::Ice::UnmarshalOutOfBoundsException",
            Error::MemoryLimit { .. } => "::Ice::MemoryLimitException",
            Error::BadMagic(_) => "::Ice::BadMagicException",
            Error::UnsupportedProtocol { .. } => "::Ice::UnsupportedProtocolException",
            Error::UnsupportedEncoding { .. } => "::Ice::UnsupportedEncodingException",
            Error::UnknownMessage(_) => "::Ice::UnknownMessageException",
            Error::IllegalMessageSize(_) => "::Ice::IllegalMessageSizeException",
            Error::ConnectionNotValidated(_) => "::Ice::ConnectionNotValidatedException",
            Error::Compression(_) => "::Ice::CompressionException",
            Error::Encapsulation { .. } => "::Ice::EncapsulationException",
            Error::ProxyUnmarshal(_) => "::Ice::ProxyUnmarshalException",
            Error::Marshal { .. } => "::Ice::MarshalException",
            Error::NoValueFactory { .. } => "::Ice::NoValueFactoryException",
            Error::UnexpectedObject { .. } => "::Ice::UnexpectedObjectException",
            Error::UnknownUserException { .. } => "::Ice::UnknownUserException",
            Error::IdentityParse { .. } => "::Ice::IdentityParseException",
            Error::ProxyParse { .. } => "::Ice::ProxyParseException",
            Error::EndpointParse { .. } => "::Ice::EndpointParseException",
            Error::IllegalIdentity(_) => "::Ice::IllegalIdentityException",
            Error::VersionParse { .. } => "::Ice::VersionParseException",
        }
    }

    /// Whether this error is a protocol-level failure after which the
    /// connection must be dropped (Ice's `ProtocolException` family).
    pub fn is_protocol_error(&self) -> bool {
        matches!(
            self,
            Error::BadMagic(_)
                | Error::UnsupportedProtocol { .. }
                | Error::UnknownMessage(_)
                | Error::IllegalMessageSize(_)
                | Error::ConnectionNotValidated(_)
                | Error::Compression(_)
                | Error::MemoryLimit { .. }
        )
    }
}
