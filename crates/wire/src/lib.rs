//! # floe-wire
//!
//! The Ice protocol 1.0 and encoding 1.1, byte for byte, with no I/O and no
//! tokio: bytes in, values out, and back.
//!
//! A tour:
//!
//! - [`Encoder`] writes into a `BytesMut`; [`Decoder`] reads from a `Bytes`
//!   without copying (byte sequences come out as slices of the frame).
//! - [`Encode`] / [`Decode`] are implemented for Slice's built-in types
//!   (see [`codec`]) and by generated code for structs, enums and so on.
//! - [`optional`] holds the optional-value formats (§4.9 of the reference).
//! - [`Identity`] names an object.
//! - [`protocol`] frames messages (header, request, batch, reply,
//!   validate/close, bzip2 compression) with check-then-parse framing.
//! - Every failure is an [`Error`] named after the Ice exception a real Ice
//!   peer would raise; no decoder panics or allocates more than the input
//!   justifies.
//!
//! Section numbers (§) refer to `shared/reference/ice-protocol.md`.
#![warn(missing_docs)]

pub mod class;
pub mod codec;
pub mod decoder;
pub mod encoder;
pub mod error;
pub mod identity;
pub mod optional;
pub mod protocol;
pub mod version;

pub use codec::{Decode, Encode, WireType};
pub use decoder::{Decoder, Encapsulation};
pub use encoder::{EncapsulationMark, Encoder};
pub use error::{Error, Location, Result};
pub use identity::Identity;
pub use optional::{OptionalFormat, OptionalKind};
pub use version::{EncodingVersion, ProtocolVersion, ENCODING_1_0, ENCODING_1_1, PROTOCOL_1_0};

/// The `Ice::Context` type: request contexts, sorted by key as C++ peers send them.
pub type Context = std::collections::BTreeMap<String, String>;
