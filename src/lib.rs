//! # floe
//!
//! Ice-compatible async RPC for Rust: Ice protocol 1.0 and encoding 1.1,
//! byte for byte, on tokio.
//!
//! This facade re-exports the crates of the workspace:
//!
//! - [`wire`]: the encoding and protocol, without I/O (`floe-wire`).
//! - [`runtime`]: communicator, object adapters, proxies and connections (`floe-runtime`).
#![warn(missing_docs)]

pub mod codegen;
mod slice_export;

pub use floe_runtime as runtime;
pub use floe_wire as wire;

pub use floe_derive::slice;
pub use floe_wire::{Decode, Decoder, Encode, Encoder, Identity};

pub use floe_derive::{interface, Class, Enum, Exception, Struct};
pub use slice_export::{slice_of, SliceParts, SliceType};
