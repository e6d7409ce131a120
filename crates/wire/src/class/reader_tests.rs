//! Unit tests of the encoding-1.1 class reader (`reader.rs`).

use std::sync::Arc;

use bytes::Bytes;

use super::*;
use crate::class::ValueFactoryRegistry;
use crate::encoder::Encoder;
use crate::exception::UserExceptionRegistry;

#[derive(Debug, Default)]
struct Leaf {
    v: u8,
}
impl ValueType for Leaf {
    const TYPE_ID: &'static str = "::T::Leaf";
}
impl Value for Leaf {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::T::Leaf"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, true);
        enc.write_u8(self.v);
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.v = dec.read_u8()?;
        dec.end_slice()
    }
}

fn dec(bytes: &[u8]) -> Decoder {
    let mut r = ValueFactoryRegistry::new();
    r.register::<Leaf>();
    let mut d = Decoder::new(Bytes::copy_from_slice(bytes));
    d.set_value_factories(Arc::new(r));
    d
}

fn marshal_error(bytes: &[u8]) -> String {
    match dec(bytes).read_value() {
        Err(e) => e.to_string(),
        Ok(v) => panic!("accepted {bytes:02x?}: {v:?}"),
    }
}

#[test]
fn reads_string_index_and_second_instance() {
    // [Leaf(1), Leaf(2)]: second type id as index 1.
    let bytes = b"\x01\x21\x09::T::Leaf\x01\x01\x22\x01\x02";
    let mut d = dec(bytes);
    let a = d.read_class::<Leaf>().unwrap().unwrap();
    let b = d.read_class::<Leaf>().unwrap().unwrap();
    assert_eq!((a.read().v, b.read().v), (1, 2));
    assert!(d.is_empty());
}

#[test]
fn rejects_malformed_headers() {
    // Back-reference to an id never assigned.
    assert!(marshal_error(b"\x05").contains("id 5"));
    // Type id index 0 and past the table.
    assert!(marshal_error(b"\x01\x22\x00").contains("index"));
    assert!(marshal_error(b"\x01\x22\x03").contains("index"));
    // Indirection table without a slice size.
    assert!(marshal_error(b"\x01\x29\x09::T::Leaf\x01").contains("without a size"));
    // Slice size below 4, and past the end.
    assert!(marshal_error(b"\x01\x31\x09::T::Leaf\x03\x00\x00\x00").contains("slice size"));
    assert!(marshal_error(b"\x01\x31\x09::T::Leaf\x09\x00\x00\x00\x01").contains("bounds"));
    // A slice without a type id first.
    assert!(marshal_error(b"\x01\x20\x01").contains("type id"));
    // Members overrunning the slice size (size says 0 bytes of members).
    assert!(marshal_error(b"\x01\x31\x09::T::Leaf\x04\x00\x00\x00\x07").contains("overran"));
}

/// A class with one reference member.
#[derive(Debug, Default)]
struct Link {
    r: Option<ValuePtr>,
}
impl ValueType for Link {
    const TYPE_ID: &'static str = "::T::Link";
}
impl Value for Link {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::T::Link"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, true);
        enc.write_value(self.r.as_ref());
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        self.r = dec.read_value()?;
        dec.end_slice()
    }
}

#[test]
fn indirection_tables() {
    let mut r = ValueFactoryRegistry::new();
    r.register::<Leaf>().register::<Link>();
    let r = Arc::new(r);
    let read = |bytes: &[u8]| {
        let mut d = Decoder::new(Bytes::copy_from_slice(bytes));
        d.set_value_factories(r.clone());
        d.read_class::<Link>().map(|v| (v, d.remaining()))
    };
    // r = table[1] = Leaf(7), read ahead of the member.
    let bytes = b"\x01\x39\x09::T::Link\x05\x00\x00\x00\x01\x01\x01\x21\x09::T::Leaf\x07";
    let (v, left) = read(bytes).unwrap();
    assert_eq!(left, 0);
    let r = v.unwrap().read().r.clone().unwrap();
    assert_eq!(r.downcast::<Leaf>().unwrap().read().v, 7);
    // Index 2 in a one-entry table.
    let e = read(b"\x01\x39\x09::T::Link\x05\x00\x00\x00\x02\x01\x00").unwrap_err();
    assert!(e.to_string().contains("out of range"), "{e}");
    // A reference in a sliced slice without a table.
    let e = read(b"\x01\x31\x09::T::Link\x05\x00\x00\x00\x01").unwrap_err();
    assert!(e.to_string().contains("out of range"), "{e}");
    // Empty table.
    let e = read(b"\x01\x39\x09::T::Link\x05\x00\x00\x00\x00\x00").unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
}

#[test]
fn exception_slices_reject_index_and_compact_ids() {
    let reg = UserExceptionRegistry::new();
    for bytes in [&b"\x22\x01"[..], b"\x23\x07"] {
        let e = dec(bytes).read_user_exception(&reg).unwrap_err();
        assert!(e.to_string().contains("exception slice"), "{e}");
    }
    // Unknown compact exception: UnknownUserException with its id.
    let e = dec(b"\x20\x06::X::E")
        .read_user_exception(&reg)
        .unwrap_err();
    assert_eq!(
        e,
        Error::UnknownUserException {
            type_id: "::X::E".into()
        }
    );
}

#[test]
fn start_slice_outside_an_instance_is_an_error() {
    let mut d = dec(b"\x00");
    assert!(d.start_slice().is_err());
    assert!(d.end_slice().is_err());
}
