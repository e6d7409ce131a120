//! Values of generated types (Bench.ice, Rich.ice, IceStorm.ice) encode
//! and decode back to themselves, with the sizes the WireType constants
//! promise, and hostile input is rejected.

use std::collections::{BTreeMap, HashMap};

use bytes::Bytes;
use floe::codegen::{ClassRef, Decode, Decoder, Encode, Encoder, OptionalKind, WireType};
use floe_codegen_tests::bench;

fn encode<T: Encode + ?Sized>(v: &T) -> Bytes {
    let mut enc = Encoder::new();
    enc.write(v);
    enc.finish()
}

fn roundtrip<T: Encode + Decode + PartialEq + std::fmt::Debug>(v: &T) -> Bytes {
    let bytes = encode(v);
    let mut dec = Decoder::new(bytes.clone());
    let back: T = dec.read().expect("decodes");
    assert_eq!(&back, v);
    assert!(dec.is_empty(), "trailing bytes");
    assert!(bytes.len() >= T::MIN_WIRE_SIZE);
    if let Some(n) = T::FIXED_SIZE {
        assert_eq!(bytes.len(), n);
    }
    bytes
}

#[test]
fn bench_types() {
    assert_eq!(<bench::Fixed as WireType>::MIN_WIRE_SIZE, 16);
    assert_eq!(<bench::Fixed as WireType>::FIXED_SIZE, Some(16));
    assert_eq!(
        <bench::Fixed as WireType>::OPTIONAL_KIND,
        OptionalKind::VSizeLength
    );
    assert_eq!(<bench::StringDouble as WireType>::FIXED_SIZE, None);
    assert_eq!(
        <bench::StringDouble as WireType>::OPTIONAL_KIND,
        OptionalKind::FSizeLength
    );
    let f = bench::Fixed { i: 1, j: 2, d: 0.5 };
    assert_eq!(
        &roundtrip(&f)[..],
        &[1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f]
    );
    let seq: bench::FixedSeq = vec![f.clone(); 3];
    assert_eq!(roundtrip(&seq).len(), 1 + 3 * 16);
    let bytes: bench::ByteSeq = Bytes::from_static(b"abc");
    assert_eq!(&roundtrip(&bytes)[..], b"\x03abc");
    let msg = bench::DataMessage {
        name: "m".into(),
        id: 7,
        signal_count: 1,
        sample_count: 2,
        times: vec![0.0, 1.0],
        signals: vec![bench::SignalData {
            name: "s".into(),
            samples: vec![1.5, 2.5],
        }],
    };
    roundtrip(&msg);
}

#[cfg(not(floe_no_ice_slice))]
mod rich_tests {
    use super::*;
    use floe::codegen::{UserException, UserExceptionRegistry, Value};
    use floe_codegen_tests::{ice_storm, rich, rich_gen};

    #[test]
    fn constants() {
        const { assert!(rich::CONST_BOOL) };
        assert_eq!(rich::CONST_BYTE, 254u8);
        assert_eq!(rich::CONST_SHORT, -7i16);
        assert_eq!(rich::CONST_INT, 100000);
        assert_eq!(rich::CONST_LONG, -5_000_000_000i64);
        assert_eq!(rich::CONST_FLOAT, 1.5f32);
        assert_eq!(rich::CONST_DOUBLE, 2.25);
        assert_eq!(rich::CONST_STRING, "hello \"world\"");
        assert_eq!(rich::CONST_COLOR, rich::Color::Blue);
    }

    #[test]
    fn defaults_come_from_slice() {
        let p = rich::Prims::default();
        assert!(p.bo);
        assert_eq!((p.by, p.sh, p.i, p.l), (7, -3, 42, 1234567890123));
        assert_eq!((p.f, p.d), (0.5, -1.25));
        assert_eq!(p.s, "def");
        assert_eq!(p.c, rich::Color::Green);
        assert_eq!(rich::Mixed::default().sparse, rich::Sparse::C);
        assert_eq!(rich::Circle::default().radius, 1.0);
        roundtrip(&p);
    }

    /// `string` members generated as `CompactString` (Builder::
    /// compact_strings) read and write the same bytes as `String` ones, and
    /// keep their Slice defaults.
    #[test]
    fn compact_string_members_are_wire_identical() {
        use floe_codegen_tests::rich_compact_gen::rich as compact;
        let p = compact::Prims::default();
        assert_eq!(p.s, "def");
        let _: &floe::codegen::CompactString = &p.s;
        assert_eq!(encode(&p), encode(&rich::Prims::default()));
        let m = mixed();
        let bytes = encode(&m);
        let back: compact::Mixed = Decoder::new(bytes.clone()).read().unwrap();
        assert_eq!(back.r#type, "t");
        assert!(!back.r#type.is_heap_allocated());
        assert_eq!(encode(&back), bytes);
        let long = rich::Mixed {
            r#type: "a string longer than twenty-four bytes, on the heap".into(),
            ..mixed()
        };
        let back: compact::Mixed = Decoder::new(encode(&long)).read().unwrap();
        assert_eq!(back.r#type, long.r#type);
        assert_eq!(encode(&back), encode(&long));
        // Invalid UTF-8 is refused as for `String`.
        let mut bad = encode(&m).to_vec();
        bad[1] = 0xff;
        assert!(Decoder::new(Bytes::from(bad))
            .read::<compact::Mixed>()
            .is_err());
    }

    #[test]
    fn enums() {
        assert_eq!(&roundtrip(&rich::Sparse::C)[..], &[0xff, 0x2c, 1, 0, 0]);
        assert_eq!(&roundtrip(&rich::Color::Blue)[..], &[2]);
        assert_eq!(rich::Sparse::MAX_VALUE, 300);
        assert_eq!(rich::Sparse::from_value(10), Some(rich::Sparse::B));
        // 2 is within 0..=300 but no enumerator: rejected (Marshal).
        let err = Decoder::new(Bytes::from_static(&[2]))
            .read::<rich::Sparse>()
            .unwrap_err();
        assert_eq!(err.ice_name(), "::Ice::MarshalException");
        assert!(Decoder::new(Bytes::from_static(&[3]))
            .read::<rich::Color>()
            .is_err());
    }

    fn mixed() -> rich::Mixed {
        rich::Mixed {
            r#type: "t".into(),
            d: 0.25,
            self_: true,
            bytes: Bytes::from_static(&[1, 2, 3]),
            vec: vec![4, 5],
            points: vec![rich::Point { x: 1, y: 2 }],
            colors: vec![rich::Color::Red, rich::Color::Blue],
            nested: vec![vec![1], vec![], vec![2, 3]],
            counts: BTreeMap::from([("a".to_owned(), 1), ("b".to_owned(), 2)]),
            names: HashMap::from([(1, "one".to_owned())]),
            sparse: rich::Sparse::B,
            id: floe::Identity {
                name: "n".into(),
                category: "c".into(),
            },
        }
    }

    #[test]
    fn structs_sequences_dictionaries() {
        roundtrip(&mixed());
        let w = rich::inner::Wrapper {
            p: rich::Point { x: -1, y: 9 },
            c: rich::Color::Green,
            m: mixed(),
        };
        let ws: rich::inner::WrapperSeq = vec![w.clone(), w];
        roundtrip(&ws);
        let keyed: rich::PointKeyDict = BTreeMap::from([(rich::Point { x: 1, y: 1 }, "p".into())]);
        roundtrip(&keyed);
        // A count larger than the bytes present is refused before allocating.
        let err = Decoder::new(Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0x7f]))
            .read::<rich::inner::WrapperSeq>()
            .unwrap_err();
        assert_eq!(err.ice_name(), "::Ice::UnmarshalOutOfBoundsException");
    }

    #[test]
    fn bulk_fixed_sequences() {
        let v: rich::AllFixedSeq = (0..100)
            .map(|i| rich::AllFixed {
                bo: i % 2 == 0,
                by: i as u8,
                sh: -(i as i16),
                i: i * 1000,
                l: -(i as i64) << 40,
                f: i as f32 / 4.0,
                d: i as f64 * -0.5,
            })
            .collect();
        let bytes = roundtrip(&v);
        assert_eq!(bytes.len(), 1 + 100 * 28);
        // The bulk path writes what element-by-element writing writes.
        let mut enc = Encoder::new();
        enc.write_size(v.len());
        for item in &v {
            item.encode(&mut enc);
        }
        assert_eq!(enc.finish(), bytes);
        // Too few bytes for the count: refused.
        let mut short = bytes[..bytes.len() - 1].to_vec();
        short[0] = 100;
        assert!(Decoder::new(Bytes::from(short))
            .read::<rich::AllFixedSeq>()
            .is_err());
    }

    #[test]
    fn classes() {
        let inner = ClassRef::new(rich::Shape {
            name: "in".into(),
            sides: Some(3),
            label: None,
            ice_sliced_data: None,
        });
        let c = rich::Circle {
            base: rich::Shape {
                name: "c".into(),
                sides: None,
                label: Some("L".into()),
                ice_sliced_data: None,
            },
            radius: 2.0,
            inner: Some(inner),
        };
        let mut enc = Encoder::new();
        enc.write(&Some(ClassRef::new(c)));
        let bytes = enc.finish();
        let mut dec = Decoder::new(bytes);
        dec.set_value_factories(rich_gen::value_factories());
        let back = dec
            .read::<Option<ClassRef<rich::Shape>>>()
            .unwrap()
            .unwrap();
        assert_eq!(back.ice_id(), "::Rich::Circle");
        let circle = back.downcast::<rich::Circle>().unwrap();
        let circle = circle.read();
        assert_eq!(circle.radius, 2.0);
        assert_eq!(circle.base.label.as_deref(), Some("L"));
        let inner = circle.inner.as_ref().unwrap().read();
        assert_eq!((inner.name.as_str(), inner.sides), ("in", Some(3)));
        assert_eq!(
            rich::Circle::default().ice_ids(),
            &["::Rich::Circle", "::Rich::Shape"]
        );
        assert_eq!(
            <rich::Shape as floe::codegen::ValueType>::COMPACT_ID,
            Some(7)
        );
    }

    /// `["preserve-slice"] class Shape`: a receiver that knows only Shape
    /// keeps Circle's slice and sends it back; a receiver knowing Circle
    /// then sees the whole instance.
    #[test]
    fn preserve_slice_keeps_unknown_derived_slices() {
        let circle = rich::Circle {
            base: rich::Shape {
                name: "c".into(),
                ..Default::default()
            },
            radius: 2.0,
            inner: None,
        };
        let mut enc = Encoder::new();
        enc.set_class_format(floe::wire::ClassFormat::Sliced);
        enc.write(&Some(ClassRef::new(circle)));
        let mut only_shape = floe::codegen::ValueFactoryRegistry::new();
        only_shape.register::<rich::Shape>();
        let mut dec = Decoder::new(enc.finish());
        dec.set_value_factories(std::sync::Arc::new(only_shape));
        let shape = dec
            .read::<Option<ClassRef<rich::Shape>>>()
            .unwrap()
            .unwrap();
        assert_eq!(shape.read().name, "c");
        assert!(shape.read().ice_sliced_data.is_some());
        let mut enc = Encoder::new();
        enc.set_class_format(floe::wire::ClassFormat::Sliced);
        enc.write(&Some(shape));
        let mut dec = Decoder::new(enc.finish());
        dec.set_value_factories(rich_gen::value_factories());
        let back = dec
            .read::<Option<ClassRef<rich::Shape>>>()
            .unwrap()
            .unwrap();
        let circle = back.downcast::<rich::Circle>().unwrap();
        assert_eq!(circle.read().radius, 2.0);
        assert_eq!(circle.read().base.name, "c");
    }

    #[test]
    fn class_references_everywhere() {
        let communicator = floe::runtime::Communicator::new();
        let shape = ClassRef::new(rich::Shape {
            name: "s".into(),
            ..Default::default()
        });
        let holder = rich::Container {
            opt: Some(shape.clone()),
            shapes: vec![Some(shape.clone()), None, Some(shape.clone())],
            by_name: BTreeMap::from([("k".to_owned(), Some(shape.clone()))]),
            any: Some(shape.as_ptr().clone()),
            obj: Some(communicator.string_to_proxy("o").unwrap()),
            echo: None,
            maybe_echo: None,
            fwd: Some(ClassRef::new(rich::Forward { back: None })),
        };
        let mut enc = Encoder::new();
        enc.write(&Some(ClassRef::new(holder)));
        let bytes = enc.finish();
        // Proxies need a communicator to decode: without one, a clean error.
        let mut dec = Decoder::new(bytes.clone());
        dec.set_value_factories(rich_gen::value_factories());
        let err = dec.read::<Option<ClassRef<rich::Container>>>().unwrap_err();
        assert!(matches!(err, floe::wire::Error::Marshal { .. }), "{err}");
        let mut dec = Decoder::new(bytes);
        dec.set_value_factories(rich_gen::value_factories());
        dec.set_context(communicator.decoder_context());
        let back = dec
            .read::<Option<ClassRef<rich::Container>>>()
            .unwrap()
            .unwrap();
        let back = back.read();
        let shapes = &back.shapes;
        // One instance, shared: every reference decodes to the same one.
        assert!(ClassRef::ptr_eq(
            shapes[0].as_ref().unwrap(),
            shapes[2].as_ref().unwrap()
        ));
        assert!(shapes[1].is_none());
        assert!(ClassRef::ptr_eq(
            back.opt.as_ref().unwrap(),
            shapes[0].as_ref().unwrap()
        ));
        assert_eq!(back.by_name["k"].as_ref().unwrap().read().name, "s");
        assert!(back.any.as_ref().unwrap().is_a("::Rich::Shape"));
        assert_eq!(back.obj.as_ref().unwrap().identity().name, "o");
        // An optional proxy is one `Option`: not set and null are both `None`.
        assert_eq!(back.maybe_echo, None);
        assert!(back.fwd.is_some());
    }

    #[test]
    fn exceptions() {
        let ex = rich::DerivedError {
            base: rich::BaseError { reason: "r".into() },
            code: 5,
            detail: Some("d".into()),
            ice_sliced_data: None,
        };
        let mut enc = Encoder::new();
        enc.write_user_exception(&ex);
        let mut registry = UserExceptionRegistry::new();
        rich_gen::register_user_exceptions(&mut registry);
        let mut dec = Decoder::new(enc.finish());
        let back = dec.read_user_exception(&registry).unwrap();
        assert_eq!(back.ice_id(), "::Rich::DerivedError");
        assert!(back.is_a("::Rich::BaseError"));
        assert_eq!(back.downcast_ref::<rich::DerivedError>(), Some(&ex));
        assert_eq!(back.downcast_ref::<rich::BaseError>().unwrap().reason, "r");
        assert_eq!(ex.to_string(), "::Rich::DerivedError");
    }

    #[test]
    fn ice_storm_types() {
        let mut qos = ice_storm::QoS::new();
        qos.insert("reliability".into(), "ordered".into());
        roundtrip(&qos);
        let link = ice_storm::LinkInfo {
            the_topic: None,
            name: "l".into(),
            cost: 3,
        };
        assert_eq!(&roundtrip(&link)[..], &[0, 0, 1, b'l', 3, 0, 0, 0]);
        let ex = ice_storm::NoSuchTopic { name: "x".into() };
        assert_eq!(ex.ice_ids(), &["::IceStorm::NoSuchTopic"]);
        assert_eq!(ice_storm::TopicPrx::TYPE_ID, "::IceStorm::Topic");
    }
}

#[cfg(floe_no_ice_slice)]
#[test]
fn ice_slice_present() {
    if std::env::var_os("FLOE_NO_INTEROP").is_some() {
        println!("FLOE_NO_INTEROP set: Rich.ice and IceStorm.ice tests skipped");
        return;
    }
    panic!(
        "/usr/share/ice/slice is missing: install zeroc-ice-slice (cargo xtask test installs it)"
    );
}
