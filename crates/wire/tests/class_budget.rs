//! The class-graph memory budget: a graph of instances so small on the wire
//! that, decoded, they would take more than `Floe.ClassGraphMemoryFactor`
//! × their encapsulation (plus a fixed allowance) is a `MarshalException`,
//! in encodings 1.1 and 1.0, for known and for sliced unknown types; a
//! factor of 0 turns the budget off, and ordinary graphs stay below it.

mod common;

use std::sync::Arc;

use common::*;
use floe_wire::class::{SlicedData, Value, ValueFactoryRegistry, ValueType};
use floe_wire::{ClassFormat, ClassRef, Decoder, Encoder, Error, Result, ValuePtr};

/// `class Empty {}`: three bytes on the wire in the compact format (`01`,
/// flags, type id index), some 110 in memory.
#[derive(Debug, Default)]
struct Empty;

impl ValueType for Empty {
    const TYPE_ID: &'static str = "::Cap::Empty";
}

impl Value for Empty {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::Empty"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, true);
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        dec.end_slice()
    }
    fn ice_sliced_data(&self) -> Option<&SlicedData> {
        None
    }
    fn ice_set_sliced_data(&mut self, _: SlicedData) {}
}

/// An encapsulation (header included) of a sequence of `n` instances made
/// by `make`, in `format` (None: encoding 1.0).
fn sequence<T: ValueType>(
    n: usize,
    format: Option<ClassFormat>,
    make: impl Fn(i32) -> T,
) -> Vec<u8> {
    let items: Vec<_> = (0..n as i32)
        .map(|i| Some(ClassRef::new(make(i))))
        .collect();
    match format {
        Some(format) => encaps(format, |e| e.write_seq(&items)),
        None => encaps10(|e| e.write_seq(&items)),
    }
}

fn empties(n: usize, format: Option<ClassFormat>) -> Vec<u8> {
    sequence(n, format, |_| Empty)
}

fn factories() -> Arc<ValueFactoryRegistry> {
    let mut r = ValueFactoryRegistry::new();
    r.register::<Empty>()
        .register::<Base>()
        .register::<Derived>();
    Arc::new(r)
}

/// Reads the sequence with `factor` (None: the default): the number of
/// instances, or the error.
fn read(bytes: &[u8], classes: &Arc<ValueFactoryRegistry>, factor: Option<usize>) -> Result<usize> {
    let mut dec = decoder(bytes, classes);
    if let Some(f) = factor {
        dec.set_class_graph_memory_factor(f);
    }
    let items: Vec<Option<ValuePtr>> = dec.read_seq()?;
    dec.finish_encapsulation()?;
    Ok(items.iter().flatten().count())
}

fn assert_over_budget(result: Result<usize>) {
    match result {
        Err(e @ Error::Marshal { .. }) => {
            assert_eq!(e.ice_name(), "::Ice::MarshalException");
            assert!(e.to_string().contains("class graph too large"), "{e}");
        }
        other => panic!("expected a MarshalException, got {other:?}"),
    }
}

#[test]
fn a_graph_of_empty_instances_is_over_the_default_budget() {
    let classes = factories();
    let bytes = empties(200_000, Some(ClassFormat::Compact));
    assert!(bytes.len() < 650_000, "{} bytes", bytes.len());
    assert_over_budget(read(&bytes, &classes, None));
    // Off, or generous enough: the whole graph decodes.
    assert_eq!(read(&bytes, &classes, Some(0)).unwrap(), 200_000);
    assert_eq!(read(&bytes, &classes, Some(64)).unwrap(), 200_000);
}

#[test]
fn every_encoding_and_format_is_charged() {
    let classes = factories();
    for format in [Some(ClassFormat::Compact), Some(ClassFormat::Sliced), None] {
        let bytes = empties(30_000, format);
        assert_over_budget(read(&bytes, &classes, Some(2)));
        assert_eq!(read(&bytes, &classes, Some(0)).unwrap(), 30_000);
    }
}

#[test]
fn unknown_sliced_instances_are_charged_for_their_slices() {
    // No factory: every instance is kept as sliced data (seven bytes on the
    // wire, some 300 in memory).
    let none = Arc::new(ValueFactoryRegistry::new());
    let bytes = empties(100_000, Some(ClassFormat::Sliced));
    assert_over_budget(read(&bytes, &none, None));
    assert_eq!(read(&bytes, &none, Some(0)).unwrap(), 100_000);
}

#[test]
fn ordinary_graphs_stay_below_the_default_budget() {
    let classes = factories();
    // Thousands of instances always fit the fixed allowance, however small
    // the encapsulation.
    let bytes = empties(8_000, Some(ClassFormat::Compact));
    assert_eq!(read(&bytes, &classes, None).unwrap(), 8_000);
    // Instances with a member or two fit the factor, in any number.
    for format in [Some(ClassFormat::Compact), Some(ClassFormat::Sliced), None] {
        let bytes = sequence(60_000, format, |a| Base { a, sliced: None });
        assert_eq!(read(&bytes, &classes, None).unwrap(), 60_000);
    }
    let bytes = sequence(40_000, Some(ClassFormat::Compact), |a| Derived {
        base: Base { a, sliced: None },
        s: "name".into(),
    });
    assert_eq!(read(&bytes, &classes, None).unwrap(), 40_000);
}
