//! Rust-first types are wire-identical to the equivalent Slice: the types
//! of `slice/Wire.ice` (through `floe::slice!`, the slice2rs generator) and the
//! same types written in Rust with `#[derive(floe::...)]` encode the same
//! values to the same bytes, decode each other's bytes, have the same
//! `WireType` constants, and the Rust side exports the same Slice text.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use floe::codegen::{ClassRef, UserExceptionRegistry, ValueFactoryRegistry, ValueType, WireType};
use floe::wire::{ClassFormat, ENCODING_1_1};
use floe::{Decoder, Encoder};

#[allow(clippy::all, missing_docs, dead_code)]
mod from_slice {
    floe::slice!("tests/slice/Wire.ice");
}

/// The same definitions, Rust first.
mod rust_first {
    use super::*;

    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, floe::Enum)]
    #[floe(module = "WireTest")]
    pub enum Color {
        #[default]
        Red,
        Green = 5,
        Blue,
    }

    // `Default` (the first enumerator) comes from the derive.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, floe::Enum)]
    #[floe(module = "WireTest")]
    pub enum Plain {
        One,
        Two,
        Three,
    }

    #[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
    #[floe(module = "WireTest")]
    pub struct Point {
        pub x: i32,
        pub y: i32,
    }

    #[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
    #[floe(module = "WireTest")]
    pub struct Everything {
        pub b: bool,
        pub y: u8,
        pub s: i16,
        pub i: i32,
        pub l: i64,
        pub f: f32,
        pub d: f64,
        pub str: String,
        pub bytes: Bytes,
        pub byte_list: Vec<u8>,
        pub ints: Vec<i32>,
        pub strings: Vec<String>,
        pub points: Vec<Point>,
        pub grid: Vec<Vec<Point>>,
        pub by_name: BTreeMap<String, Point>,
        pub names: HashMap<i32, String>,
        pub weights: BTreeMap<Color, f64>,
        pub color: Color,
        pub plain: Plain,
        pub origin: Point,
    }

    #[derive(Clone, Debug, Default, PartialEq, floe::Exception)]
    #[floe(module = "WireTest")]
    pub struct Oops {
        pub reason: String,
        #[floe(tag = 2)]
        pub code: Option<i32>,
        #[floe(tag = 1)]
        pub r#where: Option<Point>,
    }

    #[derive(Clone, Debug, Default, PartialEq, floe::Class)]
    #[floe(module = "WireTest", compact_id = 7)]
    pub struct Node {
        pub value: i32,
        pub next: Option<ClassRef<Node>>,
        #[floe(tag = 1)]
        pub label: Option<String>,
        pub payload: Everything,
    }

    #[derive(Clone, Debug, Default, PartialEq, floe::Class)]
    #[floe(module = "WireTest")]
    pub struct Plain2;

    #[derive(Clone, Debug, Default, PartialEq, floe::Class)]
    #[floe(module = "WireTest")]
    pub struct Shape {
        pub name: String,
    }

    #[derive(Clone, Debug, Default, PartialEq, floe::Class)]
    #[floe(module = "WireTest")]
    pub struct Circle {
        #[floe(base)]
        pub base: Shape,
        pub radius: f64,
        #[floe(tag = 2)]
        pub center: Option<Point>,
        pub next: Option<ClassRef<Shape>>,
    }
}

/// The same value in either module (field and variant names agree).
macro_rules! everything {
    ($m:ident) => {{
        use $m::*;
        let p = |x, y| Point { x, y };
        Everything {
            b: true,
            y: 0xfe,
            s: -2,
            i: 70000,
            l: -1 << 40,
            f: 1.5,
            d: -2.25,
            str: "héllo".into(),
            bytes: Bytes::from_static(&[1, 2, 3]),
            byte_list: vec![9, 8],
            ints: vec![1, -1, i32::MAX],
            strings: vec!["a".into(), String::new()],
            points: vec![p(1, 2), p(3, 4)],
            grid: vec![vec![], vec![p(5, 6)]],
            by_name: [("b".to_owned(), p(7, 8)), ("a".to_owned(), p(0, 1))].into(),
            names: [(3, "three".to_owned())].into(),
            weights: [(Color::Blue, 0.5), (Color::Red, 2.0)].into(),
            color: Color::Green,
            plain: Plain::Three,
            origin: p(-1, -2),
        }
    }};
}

fn encaps(write: impl FnOnce(&mut Encoder)) -> Vec<u8> {
    let mut enc = Encoder::new();
    enc.set_class_format(ClassFormat::Sliced);
    let mark = enc.start_encapsulation(ENCODING_1_1);
    write(&mut enc);
    enc.end_encapsulation(mark);
    enc.finish().to_vec()
}

fn decoder(bytes: &[u8]) -> Decoder {
    let mut outer = Decoder::new(Bytes::copy_from_slice(bytes));
    let encaps = outer.read_encapsulation().expect("encapsulation");
    let mut dec = Decoder::from_encapsulation(encaps).expect("1.1");
    let mut reg = ValueFactoryRegistry::new();
    reg.register::<rust_first::Node>();
    reg.register::<rust_first::Plain2>();
    reg.register::<rust_first::Shape>();
    reg.register::<rust_first::Circle>();
    dec.set_value_factories(Arc::new(reg));
    dec
}

fn slice_decoder(bytes: &[u8]) -> Decoder {
    let mut outer = Decoder::new(Bytes::copy_from_slice(bytes));
    let encaps = outer.read_encapsulation().expect("encapsulation");
    let mut dec = Decoder::from_encapsulation(encaps).expect("1.1");
    let mut reg = ValueFactoryRegistry::new();
    from_slice::register_value_factories(&mut reg);
    dec.set_value_factories(Arc::new(reg));
    dec
}

#[test]
fn structs_enums_sequences_dictionaries_encode_identically() {
    let s = everything!(wire_test);
    let r = everything!(rust_first);
    let sb = encaps(|e| e.write(&s));
    let rb = encaps(|e| e.write(&r));
    assert_eq!(sb, rb);
    // Each side decodes the other's bytes to its own value.
    let r2: rust_first::Everything = decoder(&sb).read().expect("rust decodes slice bytes");
    assert_eq!(r2, r);
    let s2: from_slice::wire_test::Everything =
        slice_decoder(&rb).read().expect("slice decodes rust bytes");
    assert_eq!(s2, s);
    for c in [
        rust_first::Color::Red,
        rust_first::Color::Green,
        rust_first::Color::Blue,
    ] {
        let sc = from_slice::wire_test::Color::from_value(c as i32).expect("same values");
        assert_eq!(encaps(|e| e.write(&c)), encaps(|e| e.write(&sc)));
    }
}

use from_slice::wire_test;

#[test]
fn wire_type_constants_agree() {
    fn consts<T: WireType>() -> (usize, Option<usize>, floe::codegen::OptionalKind) {
        (T::MIN_WIRE_SIZE, T::FIXED_SIZE, T::OPTIONAL_KIND)
    }
    assert_eq!(consts::<rust_first::Point>(), consts::<wire_test::Point>());
    assert_eq!(
        consts::<rust_first::Everything>(),
        consts::<wire_test::Everything>()
    );
    assert_eq!(consts::<rust_first::Color>(), consts::<wire_test::Color>());
    assert_eq!(
        <rust_first::Node as ValueType>::COMPACT_ID,
        <wire_test::Node as ValueType>::COMPACT_ID
    );
}

#[test]
fn exceptions_encode_identically() {
    let r = rust_first::Oops {
        reason: "bad".into(),
        code: Some(42),
        r#where: Some(rust_first::Point { x: 1, y: 2 }),
    };
    let s = wire_test::Oops {
        reason: "bad".into(),
        code: Some(42),
        r#where: Some(wire_test::Point { x: 1, y: 2 }),
    };
    let rb = encaps(|e| e.write_user_exception(&r));
    let sb = encaps(|e| e.write_user_exception(&s));
    assert_eq!(rb, sb);
    let unset = rust_first::Oops::default();
    let unset_s = wire_test::Oops::default();
    assert_eq!(
        encaps(|e| e.write_user_exception(&unset)),
        encaps(|e| e.write_user_exception(&unset_s))
    );
    let mut reg = UserExceptionRegistry::new();
    reg.register::<rust_first::Oops>();
    let got = decoder(&sb).read_user_exception(&reg).expect("decodes");
    assert_eq!(got.downcast_ref::<rust_first::Oops>(), Some(&r));
}

#[test]
fn classes_encode_identically() {
    for format in [ClassFormat::Compact, ClassFormat::Sliced] {
        let tail = rust_first::Node {
            value: 2,
            label: Some("tail".into()),
            ..Default::default()
        };
        let r = ClassRef::new(rust_first::Node {
            value: 1,
            next: Some(ClassRef::new(tail)),
            label: None,
            payload: everything!(rust_first),
        });
        let tail_s = wire_test::Node {
            value: 2,
            label: Some("tail".into()),
            ..Default::default()
        };
        let s = ClassRef::new(wire_test::Node {
            value: 1,
            next: Some(ClassRef::new(tail_s)),
            label: None,
            payload: everything!(wire_test),
        });
        let write = |f: &dyn Fn(&mut Encoder)| {
            let mut enc = Encoder::new();
            enc.set_class_format(format);
            let mark = enc.start_encapsulation(ENCODING_1_1);
            f(&mut enc);
            enc.end_encapsulation(mark);
            enc.finish().to_vec()
        };
        let rb = write(&|e| e.write(&Some(r.clone())));
        let sb = write(&|e| e.write(&Some(s.clone())));
        assert_eq!(rb, sb, "{format:?}");
        let back = decoder(&sb)
            .read_class::<rust_first::Node>()
            .expect("decodes")
            .expect("not null");
        assert_eq!(back.read().value, 1);
        assert_eq!(back.read().payload, everything!(rust_first));
        let next = back.read().next.clone().expect("next");
        assert_eq!(next.read().label.as_deref(), Some("tail"));
        let empty = write(&|e| e.write(&Some(ClassRef::new(rust_first::Plain2))));
        let empty_s = write(&|e| e.write(&Some(ClassRef::new(wire_test::Plain2 {}))));
        assert_eq!(empty, empty_s);
    }
}

fn compile(text: &str) -> floe_idl::model::Model {
    match floe_idl::compile_source(Path::new("Exported.ice"), text, &Default::default()) {
        Ok(out) => out.model,
        Err(f) => panic!("{}\n--- exported:\n{text}", f.rendered()),
    }
}

#[test]
fn exported_slice_matches_the_slice_file() {
    let original =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slice/Wire.ice"))
            .expect("Wire.ice");
    let original = compile(&original);
    for text in [
        floe::slice_of::<rust_first::Node>(),
        floe::slice_of::<rust_first::Oops>(),
        floe::slice_of::<rust_first::Plain2>(),
        floe::slice_of::<rust_first::Circle>(),
    ] {
        let exported = compile(&text);
        let mut checked = 0;
        for def in &exported.definitions {
            if matches!(&def.kind, floe_idl::model::DefKind::Class(c) if !c.defined) {
                continue;
            }
            let other = original
                .lookup(&def.scoped)
                .unwrap_or_else(|| panic!("{} is not in Wire.ice:\n{text}", def.scoped));
            assert_eq!(
                floe_idl::export::definition_to_slice(&exported, def.id, 0),
                floe_idl::export::definition_to_slice(&original, other.id, 0),
                "{}",
                def.scoped
            );
            checked += 1;
        }
        assert!(checked >= 1);
    }
}

#[test]
fn derived_classes_encode_identically() {
    use floe::codegen::Value;
    assert_eq!(rust_first::Plain::default(), rust_first::Plain::One);
    for format in [ClassFormat::Compact, ClassFormat::Sliced] {
        let r = rust_first::Circle {
            base: rust_first::Shape { name: "c".into() },
            radius: 2.5,
            center: Some(rust_first::Point { x: 1, y: 2 }),
            next: Some(ClassRef::new(rust_first::Shape { name: "s".into() })),
        };
        let s = wire_test::Circle {
            base: wire_test::Shape { name: "c".into() },
            radius: 2.5,
            center: Some(wire_test::Point { x: 1, y: 2 }),
            next: Some(ClassRef::new(wire_test::Shape { name: "s".into() })),
        };
        assert_eq!(r.ice_ids(), s.ice_ids());
        let write = |f: &dyn Fn(&mut Encoder)| {
            let mut enc = Encoder::new();
            enc.set_class_format(format);
            let mark = enc.start_encapsulation(ENCODING_1_1);
            f(&mut enc);
            enc.end_encapsulation(mark);
            enc.finish().to_vec()
        };
        let rb = write(&|e| e.write(&Some(ClassRef::new(r.clone()))));
        let sb = write(&|e| e.write(&Some(ClassRef::new(s.clone()))));
        assert_eq!(rb, sb, "{format:?}");
        let back = decoder(&sb)
            .read_class::<rust_first::Circle>()
            .expect("decodes")
            .expect("not null");
        let got = back.read();
        assert_eq!(
            (&got.base, got.radius, &got.center),
            (&r.base, r.radius, &r.center)
        );
        let next = got.next.clone().expect("next");
        assert_eq!(next.read().name, "s");
        let back = slice_decoder(&rb)
            .read_class::<wire_test::Circle>()
            .expect("decodes")
            .expect("not null");
        let got = back.read();
        assert_eq!(
            (&got.base, got.radius, &got.center),
            (&s.base, s.radius, &s.center)
        );
    }
}

/// A Rust-first struct may hold a `CompactString` where Slice says
/// `string`: same bytes as `String`, exported as `string`.
#[test]
fn compact_string_fields_encode_as_strings() {
    #[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
    #[floe(module = "WireTest")]
    pub struct Named {
        pub name: floe::CompactString,
        pub d: f64,
    }
    let v = Named {
        name: "hello".into(),
        d: 3.25,
    };
    let bytes = encaps(|e| e.write(&v));
    let expected = encaps(|e| {
        e.write("hello");
        e.write(&3.25f64);
    });
    assert_eq!(bytes, expected);
    let back: Named = decoder(&bytes).read().expect("decodes");
    assert_eq!(back, v);
}
