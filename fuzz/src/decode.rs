//! The `Decode` entry points over parameter/result encapsulation data:
//! class graphs (typed, untyped, in sequences and dictionaries, sliced
//! unknown types), user exceptions, structs and sequences, in encodings 1.1
//! and 1.0, with the classes and exceptions generated from
//! `slice/Fuzz.ice`.
//!
//! Whatever decodes is written back, read again and written again: both
//! writes must give the same bytes.

use bytes::Bytes;
use floe_wire::{
    ClassFormat, Decoder, Encoder, EncodingVersion, UserExceptionRegistry, ENCODING_1_0,
    ENCODING_1_1,
};

use crate::fuzz_gen::{fuzz, register_user_exceptions, value_factories};

/// The first byte picks the encoding (bit 0: 1.0), the class format of the
/// writes (bit 1: sliced) and the entry point (the rest); the remaining
/// bytes are the encapsulation's data.
pub fn run(data: &[u8]) {
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    let encoding = if sel & 1 == 0 {
        ENCODING_1_1
    } else {
        ENCODING_1_0
    };
    let format = if sel & 2 == 0 {
        ClassFormat::Compact
    } else {
        ClassFormat::Sliced
    };
    let io = Io { encoding, format };
    match (sel >> 2) % 8 {
        0 => io.roundtrip(body, |d| d.read_class::<fuzz::Shape>(), |e, v| e.write(v)),
        1 => io.roundtrip(body, |d| d.read_class::<fuzz::Bag>(), |e, v| e.write(v)),
        2 => io.roundtrip(body, |d| d.read_class::<fuzz::Node>(), |e, v| e.write(v)),
        3 => io.roundtrip(body, |d| d.read::<fuzz::ShapeSeq>(), |e, v| e.write_seq(v)),
        4 => io.roundtrip(body, |d| d.read::<fuzz::ShapeDict>(), |e, v| e.write(v)),
        5 => io.roundtrip(body, |d| d.read_value(), |e, v| e.write(v)),
        6 => io.roundtrip(
            body,
            |d| Ok((d.read::<fuzz::PointSeq>()?, d.read::<fuzz::ByteSeq>()?)),
            |e, (p, b)| {
                e.write_seq(p);
                e.write(b);
            },
        ),
        _ => {
            let mut registry = UserExceptionRegistry::new();
            register_user_exceptions(&mut registry);
            io.roundtrip(
                body,
                |d| d.read_user_exception(&registry),
                |e, ex| e.write_user_exception(&**ex),
            )
        }
    }
}

/// The encoding and class format of one run.
struct Io {
    encoding: EncodingVersion,
    format: ClassFormat,
}

impl Io {
    /// A decoder over `data` with the generated class factories.
    fn decoder(&self, data: Bytes) -> Decoder {
        let mut dec = Decoder::with_encoding(data, self.encoding);
        dec.set_value_factories(value_factories());
        dec
    }

    /// Reads `data` with `read` as a whole encapsulation; if that works,
    /// writes the value, reads it back and writes it again.
    fn roundtrip<T>(
        &self,
        data: &[u8],
        read: impl Fn(&mut Decoder) -> floe_wire::Result<T>,
        write: impl Fn(&mut Encoder, &T),
    ) {
        let Some(value) = self.read_all(Bytes::copy_from_slice(data), &read) else {
            return;
        };
        let first = self.write_all(&value, &write);
        drop(value);
        let Some(again) = self.read_all(first.slice(6..), &read) else {
            panic!("floe cannot read what it wrote: {:02x?}", &first[..]);
        };
        let second = self.write_all(&again, &write);
        assert_eq!(first, second, "writing a value read back changed its bytes");
    }

    /// `read`, then the end of the encapsulation (encoding 1.0 instances).
    fn read_all<T>(
        &self,
        data: Bytes,
        read: &impl Fn(&mut Decoder) -> floe_wire::Result<T>,
    ) -> Option<T> {
        let mut dec = self.decoder(data);
        let value = read(&mut dec).ok()?;
        dec.finish_encapsulation().ok()?;
        Some(value)
    }

    /// An encapsulation holding `value`.
    fn write_all<T>(&self, value: &T, write: &impl Fn(&mut Encoder, &T)) -> Bytes {
        let mut enc = Encoder::new();
        enc.set_class_format(self.format);
        let mark = enc.start_encapsulation(self.encoding);
        write(&mut enc, value);
        enc.end_encapsulation(mark);
        enc.finish()
    }
}
