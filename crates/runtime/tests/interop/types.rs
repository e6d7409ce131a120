//! Hand-written Rust forms of the Interop.ice types that are not classes or
//! exceptions (enums, structs, sequences, dictionaries), with the floe-wire
//! `Encode`/`Decode` traits, as generated code will later provide them.
#![allow(dead_code)]

use std::collections::BTreeMap;

use bytes::Bytes;
use floe_wire::{Decode, Decoder, Encode, Encoder, Error, OptionalFormat, OptionalKind, WireType};

/// `enum Color { Red, Green, Blue }`
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Color {
    /// 0
    Red,
    /// 1
    Green,
    /// 2
    Blue,
}

impl WireType for Color {
    const MIN_WIRE_SIZE: usize = 1;
    const OPTIONAL_KIND: OptionalKind = OptionalKind::Plain(OptionalFormat::Size);
}

impl Encode for Color {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_enum(*self as i32, 2);
    }
}

impl Decode for Color {
    fn decode(dec: &mut Decoder) -> floe_wire::Result<Self> {
        match dec.read_enum(2)? {
            0 => Ok(Color::Red),
            1 => Ok(Color::Green),
            2 => Ok(Color::Blue),
            v => Err(Error::marshal(format!(
                "invalid enumerator {v} for ::Interop::Color"
            ))),
        }
    }
}

/// `enum Sparse { A = 1, B = 10, C = 300 }`
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sparse {
    /// 1
    A = 1,
    /// 10
    B = 10,
    /// 300
    C = 300,
}

impl WireType for Sparse {
    const MIN_WIRE_SIZE: usize = 1;
    const OPTIONAL_KIND: OptionalKind = OptionalKind::Plain(OptionalFormat::Size);
}

impl Encode for Sparse {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_enum(*self as i32, 300);
    }
}

impl Decode for Sparse {
    fn decode(dec: &mut Decoder) -> floe_wire::Result<Self> {
        match dec.read_enum(300)? {
            1 => Ok(Sparse::A),
            10 => Ok(Sparse::B),
            300 => Ok(Sparse::C),
            v => Err(Error::marshal(format!(
                "invalid enumerator {v} for ::Interop::Sparse"
            ))),
        }
    }
}

/// `struct Point { int x; int y; }` (fixed size, 8 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Point {
    /// x
    pub x: i32,
    /// y
    pub y: i32,
}

impl WireType for Point {
    const MIN_WIRE_SIZE: usize = 8;
    const FIXED_SIZE: Option<usize> = Some(8);
    const OPTIONAL_KIND: OptionalKind = OptionalKind::VSizeLength;
}

impl Encode for Point {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_i32(self.x);
        enc.write_i32(self.y);
    }
}

impl Decode for Point {
    fn decode(dec: &mut Decoder) -> floe_wire::Result<Self> {
        Ok(Point {
            x: dec.read_i32()?,
            y: dec.read_i32()?,
        })
    }
}

/// `struct Mixed { string name; double weight; bool flag; IntSeq values; }`
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mixed {
    /// name
    pub name: String,
    /// weight
    pub weight: f64,
    /// flag
    pub flag: bool,
    /// values
    pub values: Vec<i32>,
}

impl Mixed {
    /// Shorthand constructor.
    pub fn new(name: &str, weight: f64, flag: bool, values: &[i32]) -> Mixed {
        Mixed {
            name: name.to_owned(),
            weight,
            flag,
            values: values.to_vec(),
        }
    }
}

impl WireType for Mixed {
    const MIN_WIRE_SIZE: usize = 1 + 8 + 1 + 1;
    const OPTIONAL_KIND: OptionalKind = OptionalKind::FSizeLength;
}

impl Encode for Mixed {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_string(&self.name);
        enc.write_f64(self.weight);
        enc.write_bool(self.flag);
        enc.write_seq(&self.values);
    }
}

impl Decode for Mixed {
    fn decode(dec: &mut Decoder) -> floe_wire::Result<Self> {
        Ok(Mixed {
            name: dec.read_string()?,
            weight: dec.read_f64()?,
            flag: dec.read_bool()?,
            values: dec.read_seq()?,
        })
    }
}

/// `struct Nested { Point p; Mixed m; StringIntDict d; Color c; PointSeq ps; }`
#[derive(Clone, Debug, PartialEq)]
pub struct Nested {
    /// p
    pub p: Point,
    /// m
    pub m: Mixed,
    /// d
    pub d: BTreeMap<String, i32>,
    /// c
    pub c: Color,
    /// ps
    pub ps: Vec<Point>,
}

impl WireType for Nested {
    const MIN_WIRE_SIZE: usize = 8 + Mixed::MIN_WIRE_SIZE + 1 + 1 + 1;
    const OPTIONAL_KIND: OptionalKind = OptionalKind::FSizeLength;
}

impl Encode for Nested {
    fn encode(&self, enc: &mut Encoder) {
        enc.write(&self.p);
        enc.write(&self.m);
        enc.write(&self.d);
        enc.write(&self.c);
        enc.write_seq(&self.ps);
    }
}

impl Decode for Nested {
    fn decode(dec: &mut Decoder) -> floe_wire::Result<Self> {
        Ok(Nested {
            p: dec.read()?,
            m: dec.read()?,
            d: dec.read()?,
            c: dec.read()?,
            ps: dec.read_seq()?,
        })
    }
}

/// `struct Seqs { ... }`: one sequence of each primitive type.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Seqs {
    /// boolSeq
    pub bool_seq: Vec<bool>,
    /// byteSeq
    pub byte_seq: Bytes,
    /// shortSeq
    pub short_seq: Vec<i16>,
    /// intSeq
    pub int_seq: Vec<i32>,
    /// longSeq
    pub long_seq: Vec<i64>,
    /// floatSeq
    pub float_seq: Vec<f32>,
    /// doubleSeq
    pub double_seq: Vec<f64>,
    /// stringSeq
    pub string_seq: Vec<String>,
    /// stringSeqSeq
    pub string_seq_seq: Vec<Vec<String>>,
}

impl WireType for Seqs {
    const MIN_WIRE_SIZE: usize = 9;
    const OPTIONAL_KIND: OptionalKind = OptionalKind::FSizeLength;
}

impl Encode for Seqs {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_seq(&self.bool_seq);
        enc.write_byte_seq(&self.byte_seq);
        enc.write_seq(&self.short_seq);
        enc.write_seq(&self.int_seq);
        enc.write_seq(&self.long_seq);
        enc.write_seq(&self.float_seq);
        enc.write_seq(&self.double_seq);
        enc.write_seq(&self.string_seq);
        enc.write_seq(&self.string_seq_seq);
    }
}

impl Decode for Seqs {
    fn decode(dec: &mut Decoder) -> floe_wire::Result<Self> {
        Ok(Seqs {
            bool_seq: dec.read_seq()?,
            byte_seq: dec.read_byte_seq()?,
            short_seq: dec.read_seq()?,
            int_seq: dec.read_seq()?,
            long_seq: dec.read_seq()?,
            float_seq: dec.read_seq()?,
            double_seq: dec.read_seq()?,
            string_seq: dec.read_seq()?,
            string_seq_seq: dec.read_seq()?,
        })
    }
}

/// `dictionary<string, int> StringIntDict`
pub type StringIntDict = BTreeMap<String, i32>;
/// `dictionary<int, string> IntStringDict`
pub type IntStringDict = BTreeMap<i32, String>;
/// `dictionary<string, Mixed> StringMixedDict`
pub type StringMixedDict = BTreeMap<String, Mixed>;
/// `dictionary<string, string> StringStringDict`
pub type StringStringDict = BTreeMap<String, String>;

/// The Seqs value every client sends in the `seqs` check.
pub fn sample_seqs() -> Seqs {
    Seqs {
        bool_seq: vec![true, false, true],
        byte_seq: Bytes::from_static(&[0, 1, 255]),
        short_seq: vec![-1, 2, 32767],
        int_seq: (-150..150).collect(),
        long_seq: vec![1 << 40, -5],
        float_seq: vec![0.5, -1.25],
        double_seq: vec![3.125, -1e300],
        string_seq: vec!["a".into(), "".into(), "h\u{e9}".into()],
        string_seq_seq: vec![vec!["x".into()], vec![], vec!["y".into(), "z".into()]],
    }
}
