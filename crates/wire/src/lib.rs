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
//! - [`optional`] holds the optional-value formats (§4.9 of docs/protocol.md).
//! - [`Identity`] names an object; [`identity_string`] gives its text form
//!   (`category/name`) in each [`ToStringMode`].
//! - [`ProxyData`] is what a proxy carries ([`proxy`]), with its endpoints
//!   ([`EndpointData`], [`endpoint`]); a proxy-typed value is `Option<P>`
//!   for any [`ProxyType`] `P` (null = `00 00`): `ProxyData` here, live
//!   proxies in floe-runtime and generated code. [`proxy_string`] and
//!   [`endpoint_string`] parse and print their text forms exactly like Ice
//!   (`hello -t -e 1.1:tcp -h 127.0.0.1 -p 10000 -t 60000`).
//! - [`class`] holds class instances ([`class::Value`], [`class::ClassRef`])
//!   and [`exception`] user exceptions ([`exception::UserException`]), in the
//!   compact and sliced formats of encoding 1.1 (§4.12, §4.13) and in
//!   encoding 1.0 ([`class::v10`]).
//! - [`protocol`] frames messages (header, request, batch, reply,
//!   validate/close, bzip2 compression) with check-then-parse framing.
//! - Every failure is an [`Error`] named after the Ice exception a real Ice
//!   peer would raise; no decoder panics or allocates more than the input
//!   justifies.
//!
//! Section numbers (§) refer to `docs/protocol.md`.
#![deny(missing_docs)]

pub mod base64;
pub mod class;
pub mod codec;
pub mod decoder;
pub mod encapsulation;
pub mod encoder;
pub mod endpoint;
pub mod endpoint_string;
pub mod error;
pub mod escape;
pub mod exception;
pub mod identity;
pub mod identity_string;
pub mod optional;
pub mod protocol;
pub mod proxy;
pub mod proxy_string;
pub mod proxy_type;
pub mod version;

pub use class::{ClassFormat, ClassRef, Value, ValuePtr, ValueType};
pub use codec::{Decode, Encode, WireType};
/// The inline small-string type of `["rust:type:CompactString"]` members.
pub use compact_str::CompactString;
pub use decoder::{Decoder, DecoderContext, Encapsulation};
pub use encoder::{EncapsulationMark, Encoder};
pub use endpoint::{
    EndpointData, OpaqueEndpoint, TcpEndpoint, UdpEndpoint, WsEndpoint, DEFAULT_TIMEOUT,
};
pub use endpoint_string::{
    endpoint_to_string, parse_adapter_endpoints, parse_endpoint, EndpointRole, ParseDefaults,
};
pub use error::{Error, Location, Result};
pub use escape::ToStringMode;
pub use exception::{UserException, UserExceptionRegistry, UserExceptionType};
pub use identity::Identity;
pub use identity_string::{identity_to_string, string_to_identity};
pub use optional::{OptionalFormat, OptionalKind};
pub use proxy::{ProxyData, ProxyMode};
pub use proxy_string::{proxy_to_string, string_to_proxy};
pub use proxy_type::ProxyType;
pub use version::{EncodingVersion, ProtocolVersion, ENCODING_1_0, ENCODING_1_1, PROTOCOL_1_0};

/// The `Ice::Context` type: request contexts, sorted by key as C++ peers send them.
pub type Context = std::collections::BTreeMap<String, String>;
