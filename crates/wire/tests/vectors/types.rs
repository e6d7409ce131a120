//! floe twins of the Slice types in `gen/Golden.ice`, written by hand until
//! the code generator exists: what generated code must do for enums,
//! fixed-size structs and variable-size structs.

use std::collections::BTreeMap;

use floe_wire::{
    Decode, Decoder, Encode, Encoder, Error, OptionalFormat, OptionalKind, Result, WireType,
};

/// `enum Color { Red, Green, Blue }`
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Color {
    Red = 0,
    Green = 1,
    Blue = 2,
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
    fn decode(dec: &mut Decoder) -> Result<Self> {
        match dec.read_enum(2)? {
            0 => Ok(Color::Red),
            1 => Ok(Color::Green),
            2 => Ok(Color::Blue),
            v => Err(Error::marshal(format!(
                "{v} is not an enumerator of Golden::Color"
            ))),
        }
    }
}

/// `enum Sparse { A = 1, B = 10, C = 300 }`
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Sparse {
    A = 1,
    B = 10,
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
    fn decode(dec: &mut Decoder) -> Result<Self> {
        match dec.read_enum(300)? {
            1 => Ok(Sparse::A),
            10 => Ok(Sparse::B),
            300 => Ok(Sparse::C),
            v => Err(Error::marshal(format!(
                "{v} is not an enumerator of Golden::Sparse"
            ))),
        }
    }
}

/// `struct Point { int x; int y; }` (fixed size, 8 bytes)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Point {
    pub x: i32,
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
    fn decode(dec: &mut Decoder) -> Result<Self> {
        Ok(Point {
            x: dec.read_i32().map_err(|e| e.at("x").at("Point"))?,
            y: dec.read_i32().map_err(|e| e.at("y").at("Point"))?,
        })
    }
}

/// `struct Fixed { bool bo; byte by; short sh; int i; long l; float f; double d; }`
/// (fixed size, 28 bytes)
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fixed {
    pub bo: bool,
    pub by: u8,
    pub sh: i16,
    pub i: i32,
    pub l: i64,
    pub f: f32,
    pub d: f64,
}

impl WireType for Fixed {
    const MIN_WIRE_SIZE: usize = 28;
    const FIXED_SIZE: Option<usize> = Some(28);
    const OPTIONAL_KIND: OptionalKind = OptionalKind::VSizeLength;
}
impl Encode for Fixed {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_bool(self.bo);
        enc.write_u8(self.by);
        enc.write_i16(self.sh);
        enc.write_i32(self.i);
        enc.write_i64(self.l);
        enc.write_f32(self.f);
        enc.write_f64(self.d);
    }
}
impl Decode for Fixed {
    fn decode(dec: &mut Decoder) -> Result<Self> {
        let at = |e: Error| e.at("Fixed");
        Ok(Fixed {
            bo: dec.read_bool().map_err(at)?,
            by: dec.read_u8().map_err(at)?,
            sh: dec.read_i16().map_err(at)?,
            i: dec.read_i32().map_err(at)?,
            l: dec.read_i64().map_err(at)?,
            f: dec.read_f32().map_err(at)?,
            d: dec.read_f64().map_err(at)?,
        })
    }
}

/// `struct Line { Point a; Point b; }` (fixed size, 16 bytes)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Line {
    pub a: Point,
    pub b: Point,
}

impl WireType for Line {
    const MIN_WIRE_SIZE: usize = 16;
    const FIXED_SIZE: Option<usize> = Some(16);
    const OPTIONAL_KIND: OptionalKind = OptionalKind::VSizeLength;
}
impl Encode for Line {
    fn encode(&self, enc: &mut Encoder) {
        self.a.encode(enc);
        self.b.encode(enc);
    }
}
impl Decode for Line {
    fn decode(dec: &mut Decoder) -> Result<Self> {
        Ok(Line {
            a: Point::decode(dec).map_err(|e| e.at("a").at("Line"))?,
            b: Point::decode(dec).map_err(|e| e.at("b").at("Line"))?,
        })
    }
}

/// `struct Mixed { string s; double d; bool b; }` (variable size, at least 10 bytes)
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mixed {
    pub s: String,
    pub d: f64,
    pub b: bool,
}

impl Mixed {
    pub fn new(s: &str, d: f64, b: bool) -> Self {
        Mixed {
            s: s.to_owned(),
            d,
            b,
        }
    }
}

impl WireType for Mixed {
    const MIN_WIRE_SIZE: usize = 10;
    const OPTIONAL_KIND: OptionalKind = OptionalKind::FSizeLength;
}
impl Encode for Mixed {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_string(&self.s);
        enc.write_f64(self.d);
        enc.write_bool(self.b);
    }
}
impl Decode for Mixed {
    fn decode(dec: &mut Decoder) -> Result<Self> {
        Ok(Mixed {
            s: dec.read_string().map_err(|e| e.at("s").at("Mixed"))?,
            d: dec.read_f64().map_err(|e| e.at("d").at("Mixed"))?,
            b: dec.read_bool().map_err(|e| e.at("b").at("Mixed"))?,
        })
    }
}

/// `struct Nested { string name; Point p; Mixed m; ColorSeq colors; StringIntDict counts; }`
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Nested {
    pub name: String,
    pub p: Point,
    pub m: Mixed,
    pub colors: Vec<Color>,
    pub counts: BTreeMap<String, i32>,
}

impl WireType for Nested {
    const MIN_WIRE_SIZE: usize = 1 + 8 + 10 + 1 + 1;
    const OPTIONAL_KIND: OptionalKind = OptionalKind::FSizeLength;
}
impl Encode for Nested {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_string(&self.name);
        self.p.encode(enc);
        self.m.encode(enc);
        enc.write_seq(&self.colors);
        self.counts.encode(enc);
    }
}
impl Decode for Nested {
    fn decode(dec: &mut Decoder) -> Result<Self> {
        Ok(Nested {
            name: dec.read_string().map_err(|e| e.at("name").at("Nested"))?,
            p: dec.read().map_err(|e| e.at("p").at("Nested"))?,
            m: dec.read().map_err(|e| e.at("m").at("Nested"))?,
            colors: dec.read_seq().map_err(|e| e.at("colors").at("Nested"))?,
            counts: dec.read().map_err(|e| e.at("counts").at("Nested"))?,
        })
    }
}

/// The test values gen.cpp shares between vectors.
pub fn point() -> Point {
    Point { x: 1, y: 2 }
}

/// `fixedValue` in gen.cpp.
pub fn fixed_value() -> Fixed {
    Fixed {
        bo: true,
        by: 0x7f,
        sh: -2,
        i: 0x0102_0304,
        l: -1,
        f: 1.5,
        d: -2.25,
    }
}

/// `mixed` in gen.cpp.
pub fn mixed() -> Mixed {
    Mixed::new("ab", 0.5, false)
}

/// `nested()` in gen.cpp.
pub fn nested() -> Nested {
    Nested {
        name: "nest".into(),
        p: Point { x: -1, y: 7 },
        m: Mixed::new("m", 1.0, true),
        colors: vec![Color::Blue, Color::Red],
        counts: [("a".to_string(), 1), ("b".to_string(), 2)].into(),
    }
}

/// `iota(n)` in gen.cpp.
pub fn iota(n: i32) -> Vec<i32> {
    (0..n).map(|i| i * 7 - 100).collect()
}

/// `byteRamp(n)` in gen.cpp.
pub fn byte_ramp(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i & 0xff) as u8).collect()
}
