//! The golden-vector checks, shared by `golden.rs` (checked-in vectors) and
//! `live_ice.rs` (fresh output of the C++ generator): every vector is decoded
//! by floe and compared with the value gen.cpp wrote, and that value is
//! encoded by floe and compared with Ice's bytes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Debug;

use bytes::Bytes;
use floe_wire::{Decode, Decoder, Encode, Encoder, Error, Result, ENCODING_1_0, ENCODING_1_1};

use super::types::*;

/// Parsed `name hex` lines and what the checks found.
pub struct Vectors {
    source: String,
    bytes: BTreeMap<String, Vec<u8>>,
    checked: BTreeSet<String>,
    failures: Vec<String>,
}

impl Vectors {
    /// Parses the generator's output (`#` lines are comments; `-` is no bytes).
    pub fn parse(source: &str, text: &str) -> Self {
        let mut bytes = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, hex) = line
                .split_once(' ')
                .unwrap_or_else(|| panic!("{source}:{}: expected `name hex`", i + 1));
            let value = if hex == "-" {
                Vec::new()
            } else {
                hex::decode(hex).unwrap_or_else(|e| panic!("{source}:{}: {e}", i + 1))
            };
            assert!(
                bytes.insert(name.to_string(), value).is_none(),
                "{source}: duplicate vector {name}"
            );
        }
        Vectors {
            source: source.to_string(),
            bytes,
            checked: BTreeSet::new(),
            failures: Vec::new(),
        }
    }

    /// The bytes of one vector, marking it checked.
    pub fn get(&mut self, name: &str) -> Option<Bytes> {
        self.checked.insert(name.to_string());
        match self.bytes.get(name) {
            Some(b) => Some(Bytes::from(b.clone())),
            None => {
                self.failures.push(format!("{name}: no such vector"));
                None
            }
        }
    }

    fn fail(&mut self, name: &str, msg: String) {
        self.failures.push(format!("{name}: {msg}"));
    }

    /// Checks a vector with custom read/write functions: decoding the bytes
    /// must give `expected` and use every byte; encoding `expected` must give
    /// the bytes back.
    pub fn with<T: Debug + PartialEq>(
        &mut self,
        name: &str,
        expected: T,
        write: impl Fn(&T, &mut Encoder),
        read: impl Fn(&mut Decoder) -> Result<T>,
    ) {
        let Some(bytes) = self.get(name) else { return };
        let mut dec = Decoder::new(bytes.clone());
        match read(&mut dec) {
            Ok(v) if v != expected => {
                self.fail(name, format!("decoded {v:?}, expected {expected:?}"))
            }
            Ok(_) if !dec.is_empty() => self.fail(
                name,
                format!("{} bytes left after decoding", dec.remaining()),
            ),
            Ok(_) => {}
            Err(e) => self.fail(name, format!("decode failed: {e}")),
        }
        let mut enc = Encoder::new();
        write(&expected, &mut enc);
        if enc.as_slice() != &bytes[..] {
            self.fail(
                name,
                format!(
                    "floe encoded {}, Ice wrote {}",
                    hex::encode(enc.as_slice()),
                    hex::encode(&bytes)
                ),
            );
        }
    }

    /// Checks a value with its [`Encode`]/[`Decode`] implementations.
    pub fn value<T: Encode + Decode + Debug + PartialEq>(&mut self, name: &str, expected: T) {
        self.with(name, expected, |v, enc| v.encode(enc), |dec| T::decode(dec));
    }

    /// Checks a vector that is one encapsulation in `encoding`, whose
    /// contents are read and written by the given functions.
    pub fn encaps<T: Debug + PartialEq>(
        &mut self,
        name: &str,
        expected: T,
        write: impl Fn(&T, &mut Encoder),
        read: impl Fn(&mut Decoder) -> Result<T>,
    ) {
        self.with(
            name,
            expected,
            |v, enc| {
                let mark = enc.start_encapsulation(ENCODING_1_1);
                write(v, enc);
                enc.end_encapsulation(mark);
            },
            |dec| {
                let mut inner = Decoder::from_encapsulation(dec.read_encapsulation()?)?;
                let v = read(&mut inner)?;
                inner.finish_encapsulation()?;
                Ok(v)
            },
        );
    }

    /// Records a failure if `ok` is false.
    pub fn expect(&mut self, name: &str, ok: bool, what: &str) {
        if !ok {
            self.fail(name, what.to_string());
        }
    }

    /// Panics with every failure, and with every vector no check looked at.
    pub fn finish(self) -> usize {
        let unchecked: Vec<&String> = self
            .bytes
            .keys()
            .filter(|k| !self.checked.contains(*k))
            .collect();
        let mut report = self.failures.clone();
        if !unchecked.is_empty() {
            report.push(format!("vectors no check looks at: {unchecked:?}"));
        }
        assert!(
            report.is_empty(),
            "{} golden failures in {}:\n{}",
            report.len(),
            self.source,
            report.join("\n")
        );
        self.checked.len()
    }
}

/// Runs every check; returns the number of vectors checked.
pub fn check_all(v: &mut Vectors) {
    primitives(v);
    strings(v);
    sizes(v);
    sequences(v);
    dictionaries(v);
    enums(v);
    structs(v);
    optionals(v);
    optional_skipping(v);
    encapsulations(v);
    super::classes10::check_all(v);
}

fn primitives(v: &mut Vectors) {
    v.value("bool_false", false);
    v.value("bool_true", true);
    v.value("byte_0", 0u8);
    v.value("byte_7f", 0x7fu8);
    v.value("byte_ff", 0xffu8);
    v.value("short_min", i16::MIN);
    v.value("short_max", i16::MAX);
    v.value("short_m1", -1i16);
    v.value("int_0", 0i32);
    v.value("int_m1", -1i32);
    v.value("int_min", i32::MIN);
    v.value("int_max", i32::MAX);
    v.value("int_01020304", 0x0102_0304i32);
    v.value("long_min", i64::MIN);
    v.value("long_max", i64::MAX);
    v.value("long_m2", -2i64);
    // Floats are compared by bit pattern (so -0.0 and NaN are exact).
    let f32s: [(&str, f32); 9] = [
        ("float_0", 0.0),
        ("float_neg_0", -0.0),
        ("float_1_5", 1.5),
        ("float_min_positive", f32::MIN_POSITIVE),
        ("float_denormal", f32::from_bits(1)),
        ("float_max", f32::MAX),
        ("float_inf", f32::INFINITY),
        ("float_neg_inf", f32::NEG_INFINITY),
        ("float_nan", f32::NAN),
    ];
    for (name, x) in f32s {
        v.with(
            name,
            x.to_bits(),
            |b, enc| enc.write_f32(f32::from_bits(*b)),
            |dec| f32::decode(dec).map(f32::to_bits),
        );
    }
    let f64s: [(&str, f64); 8] = [
        ("double_0", 0.0),
        ("double_neg_0", -0.0),
        ("double_m2_25", -2.25),
        ("double_min_positive", f64::MIN_POSITIVE),
        ("double_denormal", f64::from_bits(1)),
        ("double_max", f64::MAX),
        ("double_inf", f64::INFINITY),
        ("double_nan", f64::NAN),
    ];
    for (name, x) in f64s {
        v.with(
            name,
            x.to_bits(),
            |b, enc| enc.write_f64(f64::from_bits(*b)),
            |dec| f64::decode(dec).map(f64::to_bits),
        );
    }
}

fn strings(v: &mut Vectors) {
    v.value("string_empty", String::new());
    v.value("string_hi", "hi".to_string());
    v.value("string_utf8", "h\u{e9}\u{20ac}\u{1d11e}".to_string());
    v.value("string_254", "a".repeat(254));
    v.value("string_255", "b".repeat(255));
    v.value("string_300_utf8", "\u{e9}".repeat(150));
    v.value("string_nul", "a\0b".to_string());
    // `str` encodes like `String`.
    v.with(
        "string_hi",
        "hi",
        |s, enc| s.encode(enc),
        |dec| {
            Ok(if dec.read_string()? == "hi" {
                "hi"
            } else {
                "other"
            })
        },
    );
}

fn sizes(v: &mut Vectors) {
    for (name, n) in [
        ("size_0", 0usize),
        ("size_1", 1),
        ("size_254", 254),
        ("size_255", 255),
        ("size_256", 256),
        ("size_300", 300),
        ("size_65536", 65536),
        ("size_max", i32::MAX as usize),
    ] {
        v.with(name, n, |n, enc| enc.write_size(*n), |dec| dec.read_size());
    }
}

fn sequences(v: &mut Vectors) {
    v.value("seq_bool", vec![true, false, true]);
    v.value("seq_byte", vec![0u8, 1, 0xff]);
    v.value("seq_byte", Bytes::from_static(&[0, 1, 0xff]));
    v.with(
        "seq_byte",
        vec![0u8, 1, 0xff],
        |b, enc| enc.write_byte_seq(b),
        |dec| dec.read_byte_seq().map(|b| b.to_vec()),
    );
    v.value("seq_byte_300", byte_ramp(300));
    v.value("seq_byte_300", Bytes::from(byte_ramp(300)));
    v.value("seq_short", vec![-1i16, 0x1234, i16::MIN]);
    v.value("seq_int", vec![1i32, -1, i32::MAX]);
    v.value("seq_int_255", iota(255));
    v.value("seq_long", vec![i64::MIN, 0, 5]);
    v.with(
        "seq_float",
        vec![
            1.5f32.to_bits(),
            (-0.0f32).to_bits(),
            f32::INFINITY.to_bits(),
        ],
        |b, enc| enc.write_seq(&b.iter().map(|x| f32::from_bits(*x)).collect::<Vec<_>>()),
        |dec| {
            Ok(dec
                .read_seq::<f32>()?
                .into_iter()
                .map(f32::to_bits)
                .collect())
        },
    );
    v.value("seq_double", vec![-2.25f64, f64::MAX, 0.1]);
    v.value(
        "seq_string",
        vec![
            "a".to_string(),
            String::new(),
            "\u{e9}".to_string(),
            "z".repeat(260),
        ],
    );
    v.value(
        "seq_point",
        vec![Point { x: 1, y: 2 }, Point { x: -3, y: 4 }],
    );
    v.value(
        "seq_mixed",
        vec![Mixed::new("s", 1.0, true), Mixed::new("", 0.0, false)],
    );
    v.value("seq_color", vec![Color::Red, Color::Blue, Color::Green]);
    v.value("seq_sparse", vec![Sparse::A, Sparse::C, Sparse::B]);
    v.value("seq_int_seq", vec![vec![1i32], vec![], vec![2, 3]]);
    v.value("seq_empty_int", Vec::<i32>::new());
    v.value("seq_empty_string", Vec::<String>::new());
    v.value("seq_empty_point", Vec::<Point>::new());
    v.value("seq_empty_bool", Vec::<bool>::new());
    // A slice encodes like a Vec.
    v.with(
        "seq_int",
        vec![1i32, -1, i32::MAX],
        |s, enc| s.as_slice().encode(enc),
        |dec| dec.read_seq(),
    );
}

fn dictionaries(v: &mut Vectors) {
    let string_int: BTreeMap<String, i32> = [
        ("a".into(), 1),
        ("b".into(), 2),
        ("\u{e9}t\u{e9}".into(), -3),
    ]
    .into();
    v.value("dict_string_int", string_int.clone());
    v.value(
        "dict_int_string",
        BTreeMap::from([
            (5, "five".to_string()),
            (-1, "minus one".into()),
            (0, String::new()),
        ]),
    );
    v.value("dict_int_int", BTreeMap::from([(1i32, 2i32), (3, 4)]));
    v.value(
        "dict_string_point",
        BTreeMap::from([
            ("origin".to_string(), Point { x: 0, y: 0 }),
            ("p".to_string(), Point { x: 1, y: 2 }),
        ]),
    );
    v.value(
        "dict_int_mixed",
        BTreeMap::from([
            (1i32, Mixed::new("m", 0.5, true)),
            (2, Mixed::new("", -1.0, false)),
        ]),
    );
    v.value("dict_empty", BTreeMap::<String, i32>::new());
    // A HashMap decodes the same pairs (its encoding order is its own, so
    // only a one-pair map is compared byte for byte).
    if let Some(bytes) = v.get("dict_string_int") {
        let got = Decoder::new(bytes).read::<HashMap<String, i32>>();
        let want: HashMap<String, i32> = string_int.into_iter().collect();
        v.expect(
            "dict_string_int",
            got.as_ref() == Ok(&want),
            &format!("HashMap decoded {got:?}"),
        );
    }
    v.value("dict_empty", HashMap::<String, i32>::new());
}

fn enums(v: &mut Vectors) {
    v.value("enum_red", Color::Red);
    v.value("enum_green", Color::Green);
    v.value("enum_blue", Color::Blue);
    v.value("sparse_a", Sparse::A);
    v.value("sparse_b", Sparse::B);
    v.value("sparse_c", Sparse::C);
}

fn structs(v: &mut Vectors) {
    v.value("struct_point", point());
    v.value("struct_fixed", fixed_value());
    v.value(
        "struct_line",
        Line {
            a: Point { x: 1, y: 2 },
            b: Point { x: -3, y: -4 },
        },
    );
    v.value("struct_mixed", mixed());
    v.value("struct_nested", nested());
}

/// Writes each present value with its tag (in the order given: ascending).
macro_rules! write_opts {
    ($enc:expr, $( $tag:expr => $val:expr ),* $(,)?) => {{
        $( $enc.write_optional($tag, $val.as_ref()); )*
    }};
}

fn optionals(v: &mut Vectors) {
    v.encaps(
        "opt_f1",
        (Some(true), Some(0xabu8)),
        |t, enc| write_opts!(enc, 1 => t.0, 2 => t.1),
        |dec| Ok((dec.read_optional_value(1)?, dec.read_optional_value(2)?)),
    );
    v.encaps(
        "opt_f2",
        Some(-2i16),
        |t, enc| write_opts!(enc, 3 => t),
        |dec| dec.read_optional_value(3),
    );
    v.encaps(
        "opt_f4",
        (Some(0x0102_0304i32), Some(1.5f32)),
        |t, enc| write_opts!(enc, 4 => t.0, 5 => t.1),
        |dec| Ok((dec.read_optional_value(4)?, dec.read_optional_value(5)?)),
    );
    v.encaps(
        "opt_f8",
        (Some(-5i64), Some(-2.25f64)),
        |t, enc| write_opts!(enc, 6 => t.0, 7 => t.1),
        |dec| Ok((dec.read_optional_value(6)?, dec.read_optional_value(7)?)),
    );
    v.encaps(
        "opt_size",
        (Some(Color::Blue), Some(Sparse::C)),
        |t, enc| write_opts!(enc, 8 => t.0, 9 => t.1),
        |dec| Ok((dec.read_optional_value(8)?, dec.read_optional_value(9)?)),
    );
    v.encaps(
        "opt_vsize_string",
        (Some("hello".to_string()), Some("s".repeat(300))),
        |t, enc| write_opts!(enc, 10 => t.0, 11 => t.1),
        |dec| Ok((dec.read_optional_value(10)?, dec.read_optional_value(11)?)),
    );
    // `&str` as an optional.
    v.encaps(
        "opt_vsize_string",
        (),
        |_, enc| {
            enc.write_optional(10, Some("hello"));
            enc.write_optional(11, Some("s".repeat(300).as_str()));
        },
        |dec| {
            dec.read_optional_value::<String>(10)?;
            dec.read_optional_value::<String>(11)?;
            Ok(())
        },
    );
    v.encaps(
        "opt_vsize_bytes",
        (
            Some(Bytes::from_static(&[9, 8, 7])),
            Some(vec![true, false]),
        ),
        |t, enc| write_opts!(enc, 12 => t.0, 13 => t.1),
        |dec| Ok((dec.read_optional_value(12)?, dec.read_optional_value(13)?)),
    );
    v.encaps(
        "opt_vsize_bytes",
        (Some(vec![9u8, 8, 7]), Some(vec![true, false])),
        |t, enc| write_opts!(enc, 12 => t.0, 13 => t.1),
        |dec| Ok((dec.read_optional_value(12)?, dec.read_optional_value(13)?)),
    );
    v.encaps(
        "opt_vsize_struct",
        (
            Some(point()),
            Some(fixed_value()),
            Some(Line {
                a: Point { x: 5, y: 6 },
                b: Point { x: 7, y: 8 },
            }),
        ),
        |t, enc| write_opts!(enc, 14 => t.0, 15 => t.1, 16 => t.2),
        |dec| {
            Ok((
                dec.read_optional_value(14)?,
                dec.read_optional_value(15)?,
                dec.read_optional_value(16)?,
            ))
        },
    );
    v.encaps(
        "opt_vsize_seq",
        (
            Some(vec![1i32, 2, 3]),
            Some(vec![point()]),
            Some(vec![0.5f64]),
            Some(iota(300)),
            Some(BTreeMap::from([(1i32, 2i32), (3, 4)])),
            Some(Vec::<i16>::new()),
        ),
        |t, enc| write_opts!(enc, 17 => t.0, 18 => t.1, 19 => t.2, 20 => t.3, 21 => t.4, 22 => t.5),
        |dec| {
            Ok((
                dec.read_optional_value(17)?,
                dec.read_optional_value(18)?,
                dec.read_optional_value(19)?,
                dec.read_optional_value(20)?,
                dec.read_optional_value(21)?,
                dec.read_optional_value(22)?,
            ))
        },
    );
    v.encaps(
        "opt_fsize_struct",
        (Some(mixed()), Some(nested())),
        |t, enc| write_opts!(enc, 23 => t.0, 24 => t.1),
        |dec| Ok((dec.read_optional_value(23)?, dec.read_optional_value(24)?)),
    );
    v.encaps(
        "opt_fsize_seq",
        (
            Some(vec!["a".to_string(), "bc".to_string()]),
            Some(vec![mixed()]),
            Some(vec![vec![1i32], vec![]]),
            Some(vec![Color::Green]),
        ),
        |t, enc| write_opts!(enc, 25 => t.0, 26 => t.1, 27 => t.2, 28 => t.3),
        |dec| {
            Ok((
                dec.read_optional_value(25)?,
                dec.read_optional_value(26)?,
                dec.read_optional_value(27)?,
                dec.read_optional_value(28)?,
            ))
        },
    );
    v.encaps(
        "opt_fsize_dict",
        (
            Some(BTreeMap::from([("k".to_string(), 1i32)])),
            Some(BTreeMap::from([(1i32, "v".to_string())])),
            Some(BTreeMap::from([("p".to_string(), point())])),
            Some(BTreeMap::from([(7i32, mixed())])),
        ),
        |t, enc| write_opts!(enc, 29 => t.0, 30 => t.1, 31 => t.2, 32 => t.3),
        |dec| {
            Ok((
                dec.read_optional_value(29)?,
                dec.read_optional_value(30)?,
                dec.read_optional_value(31)?,
                dec.read_optional_value(32)?,
            ))
        },
    );
    v.encaps(
        "opt_tag_high",
        (
            Some(29i32),
            Some(30i32),
            Some(true),
            Some("x".to_string()),
            Some(255i16),
            Some(1000i64),
        ),
        |t, enc| write_opts!(enc, 29 => t.0, 30 => t.1, 40 => t.2, 254 => t.3, 255 => t.4, 1000 => t.5),
        |dec| {
            Ok((
                dec.read_optional_value(29)?,
                dec.read_optional_value(30)?,
                dec.read_optional_value(40)?,
                dec.read_optional_value(254)?,
                dec.read_optional_value(255)?,
                dec.read_optional_value(1000)?,
            ))
        },
    );
    v.encaps(
        "opt_absent",
        (None::<i32>, None::<String>, None::<Mixed>),
        |t, enc| write_opts!(enc, 1 => t.0, 2 => t.1, 3 => t.2),
        |dec| {
            Ok((
                dec.read_optional_value(1)?,
                dec.read_optional_value(2)?,
                dec.read_optional_value(3)?,
            ))
        },
    );
}

/// The values of `opt_mixed`, one per format.
type MixedOpts = (
    i32,
    Option<bool>,
    Option<i16>,
    Option<i32>,
    Option<f64>,
    Option<Color>,
    Option<String>,
    Option<Point>,
    Option<Vec<i32>>,
    Option<Mixed>,
    Option<Vec<String>>,
    Option<BTreeMap<String, i32>>,
);

fn optional_skipping(v: &mut Vectors) {
    let all: MixedOpts = (
        -7,
        Some(true),
        Some(2),
        Some(3),
        Some(4.0),
        Some(Color::Green),
        Some("six".into()),
        Some(point()),
        Some(vec![8, 8]),
        Some(mixed()),
        Some(vec!["ten".into()]),
        Some(BTreeMap::from([("eleven".to_string(), 11)])),
    );
    v.encaps(
        "opt_mixed",
        (all, Some(40i32)),
        |(t, forty), enc| {
            enc.write_i32(t.0);
            write_opts!(enc, 1 => t.1, 2 => t.2, 3 => t.3, 4 => t.4, 5 => t.5, 6 => t.6,
                7 => t.7, 8 => t.8, 9 => t.9, 10 => t.10, 11 => t.11, 40 => forty);
        },
        |dec| {
            let t: MixedOpts = (
                dec.read_i32()?,
                dec.read_optional_value(1)?,
                dec.read_optional_value(2)?,
                dec.read_optional_value(3)?,
                dec.read_optional_value(4)?,
                dec.read_optional_value(5)?,
                dec.read_optional_value(6)?,
                dec.read_optional_value(7)?,
                dec.read_optional_value(8)?,
                dec.read_optional_value(9)?,
                dec.read_optional_value(10)?,
                dec.read_optional_value(11)?,
            );
            Ok((t, dec.read_optional_value(40)?))
        },
    );

    let Some(bytes) = v.get("opt_mixed") else {
        return;
    };
    let open = |bytes: &Bytes| -> Result<Decoder> {
        let mut outer = Decoder::new(bytes.clone());
        let mut dec = Decoder::from_encapsulation(outer.read_encapsulation()?)?;
        dec.read_i32()?;
        Ok(dec)
    };
    // A reader that knows only tags 11 and 40 (an older or newer peer)
    // skips every other format on the way.
    let sparse = (|| -> Result<_> {
        let mut dec = open(&bytes)?;
        let eleven = dec.read_optional_value::<BTreeMap<String, i32>>(11)?;
        let twelve = dec.read_optional_value::<i32>(12)?;
        let forty = dec.read_optional_value::<i32>(40)?;
        dec.finish_encapsulation()?;
        Ok((eleven.map(|m| m.len()), twelve, forty))
    })();
    v.expect(
        "opt_mixed",
        sparse == Ok((Some(1), None, Some(40))),
        &format!("reading only tags 11, 12, 40 gave {sparse:?}"),
    );
    // A reader that knows none: finish_encapsulation skips all of them.
    let none = open(&bytes).and_then(|mut dec| dec.finish_encapsulation());
    v.expect(
        "opt_mixed",
        none.is_ok(),
        &format!("skipping every optional gave {none:?}"),
    );
    // Asking for tag 5 (an enum, Size format) as an int (F4) is a marshal error.
    let wrong = open(&bytes).and_then(|mut dec| dec.read_optional_value::<i32>(5));
    v.expect(
        "opt_mixed",
        matches!(wrong, Err(Error::Marshal { .. })),
        &format!("tag 5 read as int gave {wrong:?}"),
    );
}

fn encapsulations(v: &mut Vectors) {
    v.with(
        "encaps_empty_11",
        ENCODING_1_1,
        |e, enc| enc.write_empty_encapsulation(*e),
        |dec| {
            let encaps = dec.read_encapsulation()?;
            if !encaps.data.is_empty() {
                return Err(Error::encapsulation("not empty"));
            }
            Ok(encaps.encoding)
        },
    );
    v.with(
        "encaps_empty_10",
        ENCODING_1_0,
        |e, enc| {
            let mark = enc.start_encapsulation(*e);
            enc.end_encapsulation(mark);
        },
        |dec| Ok(dec.read_encapsulation()?.encoding),
    );
    // Forwarding an encapsulation byte for byte.
    if let Some(bytes) = v.get("encaps_11") {
        let mut dec = Decoder::new(bytes.clone());
        let raw = dec.read_encapsulation_bytes();
        let mut enc = Encoder::new();
        if let Ok(raw) = &raw {
            enc.write_encapsulation_bytes(raw);
        }
        v.expect(
            "encaps_11",
            raw.is_ok() && dec.is_empty() && enc.as_slice() == &bytes[..],
            &format!("read_encapsulation_bytes gave {raw:?}"),
        );
    }
    v.with(
        "encaps_11",
        (7i32, "x".to_string(), Color::Blue, Sparse::C, Some(3i32)),
        |t, enc| {
            let mark = enc.start_encapsulation(ENCODING_1_1);
            enc.write_i32(t.0);
            enc.write_string(&t.1);
            t.2.encode(enc);
            t.3.encode(enc);
            enc.write_optional(1, t.4.as_ref());
            enc.end_encapsulation(mark);
        },
        |dec| {
            let mut d = Decoder::from_encapsulation(dec.read_encapsulation()?)?;
            let t = (
                d.read()?,
                d.read()?,
                d.read()?,
                d.read()?,
                d.read_optional_value(1)?,
            );
            d.finish_encapsulation()?;
            Ok(t)
        },
    );
    v.with(
        "encaps_10",
        (
            7i32,
            Color::Blue,
            Sparse::C,
            vec![Color::Red, Color::Green],
            vec![Sparse::B],
        ),
        |t, enc| {
            let mark = enc.start_encapsulation(ENCODING_1_0);
            enc.write_i32(t.0);
            t.1.encode(enc);
            t.2.encode(enc);
            enc.write_seq(&t.3);
            enc.write_seq(&t.4);
            enc.write_optional(1, Some(&3i32)); // 1.0 has no optionals: nothing
            enc.end_encapsulation(mark);
        },
        |dec| {
            let mut d = Decoder::from_encapsulation(dec.read_encapsulation()?)?;
            let t = (
                d.read()?,
                d.read()?,
                d.read()?,
                d.read_seq()?,
                d.read_seq()?,
            );
            if d.read_optional_value::<i32>(1)?.is_some() {
                return Err(Error::marshal("optional in encoding 1.0"));
            }
            d.finish_encapsulation()?;
            Ok(t)
        },
    );
    v.with(
        "encaps_nested",
        ("outer".to_string(), Sparse::B, -1i32),
        |t, enc| {
            let outer = enc.start_encapsulation(ENCODING_1_1);
            enc.write_string(&t.0);
            let inner = enc.start_encapsulation(ENCODING_1_0);
            t.1.encode(enc);
            enc.end_encapsulation(inner);
            enc.write_i32(t.2);
            enc.end_encapsulation(outer);
        },
        |dec| {
            let mut outer = Decoder::from_encapsulation(dec.read_encapsulation()?)?;
            let s = outer.read_string()?;
            let mut inner = Decoder::from_encapsulation(outer.read_encapsulation()?)?;
            let sparse = inner.read()?;
            inner.finish_encapsulation()?;
            let n = outer.read_i32()?;
            outer.finish_encapsulation()?;
            Ok((s, sparse, n))
        },
    );
}
