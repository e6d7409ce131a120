//! Class instances and user exceptions in encoding 1.0, both ways.
//!
//! Encoding 1.0 lays classes out differently from 1.1 (checked byte for
//! byte against Ice 3.7.8's `OutputStream`, see `tests/golden/`):
//!
//! - A class reference is an int32: `0` is null, `-n` refers to the
//!   instance with id `n` (ids from 1, per encapsulation). Instances are
//!   never written where they are referenced.
//! - The instances come after the data that references them ("pending
//!   values": after an operation's parameters, or after a user exception),
//!   in rounds: a size `k`, then `k` times (int32 id, instance); the
//!   instances first referenced while writing a round form the next round;
//!   a size `0` ends the list. floe writes a round in id order; Ice 3.7.8
//!   writes it in the order of the instances' addresses in memory. Readers
//!   depend on neither.
//! - An instance is its slices, most-derived first, then an `::Ice::Object`
//!   slice whose only content is an empty facet map (the size `0`). A slice
//!   starts with a `bool`: `false` and the type id as a string (which
//!   enters the encapsulation's type-id table), or `true` and its index in
//!   that table (from 1); then an int32 byte size that counts itself, then
//!   the members.
//! - A user exception is a `bool` "uses classes", then its slices, each a
//!   type id string (never an index, never entered in the table), an int32
//!   size and the members, then the pending values if it uses classes.
//!   Nothing marks the last slice, so a reader that knows none of the
//!   types reports [`crate::Error::UnknownUserException`] when the data
//!   ends or the pending values start (Ice 3.7.8 reports an
//!   `UnmarshalOutOfBoundsException` "unknown exception type").
//! - There are no optional members, compact type ids, indirection tables
//!   or sliced/compact formats: tagged members are not written, a compact
//!   id is written as its string type id, and slices of unknown types are
//!   skipped by their size (no slice is preserved, as in Ice).
//!
//! The writer ([`Encoder::write_pending_values`]) and the reader
//! ([`Decoder::read_pending_values`]) are selected by the encoding of the
//! encapsulation; generated code and [`crate::class::Value`]
//! implementations are the same for both encodings.
//!
//! [`Encoder::write_pending_values`]: crate::Encoder::write_pending_values
//! [`Decoder::read_pending_values`]: crate::Decoder::read_pending_values

mod graph;
mod reader;
mod writer;

pub(crate) use reader::Reader10;
pub(crate) use writer::Writer10;

/// The type id of the slice that ends every encoding-1.0 instance.
pub(crate) const OBJECT_TYPE_ID: &str = "::Ice::Object";
