//! Property tests for floe-wire's core codec:
//!
//! - encode → decode round trips for every built-in type, optionals and
//!   encapsulations, each checking the exact encoded length;
//! - arbitrary and mutated bytes fed to every decoder: `Ok` or `Err`, never a
//!   panic, and no allocation out of proportion to the input;
//! - counts claiming gigabytes fail at once with `UnmarshalOutOfBounds`,
//!   without allocating (a counting global allocator watches).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::time::{Duration, Instant};

use bytes::Bytes;
use floe_wire::{
    Decode, Decoder, Encode, Encoder, EncodingVersion, Error, Identity, OptionalFormat, Result,
    ENCODING_1_0, ENCODING_1_1,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

// ---------------------------------------------------------------------------
// Allocation tracking
// ---------------------------------------------------------------------------

/// The system allocator, recording the largest single request per thread.
struct Tracking;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // `try_with`: never touch a thread-local being torn down.
    let _ = LARGEST.try_with(|l| {
        if size > l.get() {
            l.set(size)
        }
    });
}

// SAFETY: every call is forwarded unchanged to `System`; only a size is noted.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Tracking = Tracking;

/// Runs `f`, returning its result and the largest allocation it made.
fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LARGEST.with(|l| l.set(0));
    let r = f();
    (r, LARGEST.with(|l| l.get()))
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Bytes a size takes on the wire.
fn size_len(n: usize) -> usize {
    if n < 255 {
        1
    } else {
        5
    }
}

fn string_len(s: &str) -> usize {
    size_len(s.len()) + s.len()
}

fn fail(e: Error) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

/// Encodes `v`, checks the length, decodes it back and checks equality and
/// that every byte was used.
fn round_trip<T: Encode + Decode + PartialEq + Debug>(
    v: &T,
    expected_len: usize,
) -> std::result::Result<(), TestCaseError> {
    let mut enc = Encoder::new();
    v.encode(&mut enc);
    prop_assert_eq!(enc.len(), expected_len, "encoded length of {:?}", v);
    let mut dec = Decoder::new(enc.finish());
    let back = T::decode(&mut dec).map_err(fail)?;
    prop_assert_eq!(&back, v);
    prop_assert!(dec.is_empty(), "{} bytes left", dec.remaining());
    Ok(())
}

/// Any string, including multi-byte characters, sometimes past 255 bytes.
fn any_string() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => ".{0,20}",
        1 => "[a-zé€]{250,300}",
    ]
}

// ---------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------

proptest! {
    #[test]
    fn primitives_round_trip(b: bool, y: u8, s: i16, i: i32, l: i64, fbits: u32, dbits: u64) {
        round_trip(&b, 1)?;
        round_trip(&y, 1)?;
        round_trip(&s, 2)?;
        round_trip(&i, 4)?;
        round_trip(&l, 8)?;
        // Floats by bit pattern, NaN payloads and -0.0 included.
        let mut enc = Encoder::new();
        enc.write_f32(f32::from_bits(fbits));
        enc.write_f64(f64::from_bits(dbits));
        prop_assert_eq!(enc.len(), 12);
        let mut dec = Decoder::new(enc.finish());
        prop_assert_eq!(dec.read_f32().map_err(fail)?.to_bits(), fbits);
        prop_assert_eq!(dec.read_f64().map_err(fail)?.to_bits(), dbits);
        prop_assert!(dec.is_empty());
    }

    #[test]
    fn sizes_round_trip(n in prop_oneof![0usize..300, 0usize..=i32::MAX as usize]) {
        let mut enc = Encoder::new();
        enc.write_size(n);
        prop_assert_eq!(enc.len(), size_len(n));
        let mut dec = Decoder::new(enc.finish());
        prop_assert_eq!(dec.read_size().map_err(fail)?, n);
        prop_assert!(dec.is_empty());
    }

    #[test]
    fn strings_and_bytes_round_trip(s in any_string(), raw in prop::collection::vec(any::<u8>(), 0..600)) {
        round_trip(&s, string_len(&s))?;
        round_trip(&raw, size_len(raw.len()) + raw.len())?;
        round_trip(&Bytes::from(raw.clone()), size_len(raw.len()) + raw.len())?;
        let mut enc = Encoder::new();
        enc.write_byte_seq(&raw);
        enc.write(s.as_str());
        let mut dec = Decoder::new(enc.finish());
        prop_assert_eq!(&dec.read_byte_seq().map_err(fail)?[..], &raw[..]);
        prop_assert_eq!(dec.read_string().map_err(fail)?, s);
    }

    #[test]
    fn sequences_round_trip(
        bools in prop::collection::vec(any::<bool>(), 0..300),
        shorts in prop::collection::vec(any::<i16>(), 0..300),
        ints in prop::collection::vec(any::<i32>(), 0..300),
        longs in prop::collection::vec(any::<i64>(), 0..40),
        doubles in prop::collection::vec(any::<f64>().prop_filter("not NaN", |d| !d.is_nan()), 0..40),
        floats in prop::collection::vec(any::<f32>().prop_filter("not NaN", |d| !d.is_nan()), 0..40),
        strings in prop::collection::vec(any_string(), 0..20),
        nested in prop::collection::vec(prop::collection::vec(any::<i32>(), 0..5), 0..260),
    ) {
        round_trip(&bools, size_len(bools.len()) + bools.len())?;
        round_trip(&shorts, size_len(shorts.len()) + 2 * shorts.len())?;
        round_trip(&ints, size_len(ints.len()) + 4 * ints.len())?;
        round_trip(&longs, size_len(longs.len()) + 8 * longs.len())?;
        round_trip(&doubles, size_len(doubles.len()) + 8 * doubles.len())?;
        round_trip(&floats, size_len(floats.len()) + 4 * floats.len())?;
        let strings_len = size_len(strings.len()) + strings.iter().map(|s| string_len(s)).sum::<usize>();
        round_trip(&strings, strings_len)?;
        let nested_len = size_len(nested.len())
            + nested.iter().map(|v| size_len(v.len()) + 4 * v.len()).sum::<usize>();
        round_trip(&nested, nested_len)?;
        // A slice encodes like its Vec.
        let mut enc = Encoder::new();
        enc.write_seq(ints.as_slice());
        prop_assert_eq!(enc.len(), size_len(ints.len()) + 4 * ints.len());
    }

    #[test]
    fn dictionaries_round_trip(
        si in prop::collection::btree_map(any_string(), any::<i32>(), 0..20),
        is in prop::collection::btree_map(any::<i32>(), any_string(), 0..20),
        ii in prop::collection::hash_map(any::<i32>(), any::<i64>(), 0..300),
    ) {
        let si_len = size_len(si.len()) + si.keys().map(|k| string_len(k) + 4).sum::<usize>();
        round_trip(&si, si_len)?;
        let is_len = size_len(is.len()) + is.values().map(|v| 4 + string_len(v)).sum::<usize>();
        round_trip(&is, is_len)?;
        round_trip(&ii, size_len(ii.len()) + 12 * ii.len())?;
        // BTreeMap and HashMap agree on the content.
        let mut enc = Encoder::new();
        si.encode(&mut enc);
        let back: HashMap<String, i32> = Decoder::new(enc.finish()).read().map_err(fail)?;
        prop_assert_eq!(back, si.into_iter().collect::<HashMap<_, _>>());
    }

    #[test]
    fn identities_round_trip(name in any_string(), category in any_string()) {
        let id = Identity::new(name.clone(), category.clone());
        round_trip(&id, string_len(&name) + string_len(&category))?;
        round_trip(&vec![id.clone(), id], 1 + 2 * (string_len(&name) + string_len(&category)))?;
    }

    #[test]
    fn enums_round_trip(value in 0i32..=i32::MAX, small in 0i32..127, medium in 127i32..32767) {
        // 1.1: a size.
        let mut enc = Encoder::new();
        enc.write_enum(value, i32::MAX);
        prop_assert_eq!(enc.len(), size_len(value as usize));
        let mut dec = Decoder::new(enc.finish());
        prop_assert_eq!(dec.read_enum(i32::MAX).map_err(fail)?, value);
        // 1.0: byte, short or int by the largest enumerator.
        for (v, max, len) in [(small, 126, 1), (medium, 32766, 2), (value, i32::MAX, 4)] {
            let mut enc = Encoder::with_buffer(Default::default(), ENCODING_1_0);
            enc.write_enum(v, max);
            prop_assert_eq!(enc.len(), len);
            let mut dec = Decoder::with_encoding(enc.finish(), ENCODING_1_0);
            prop_assert_eq!(dec.read_enum(max).map_err(fail)?, v);
        }
    }

    #[test]
    fn encapsulations_round_trip(
        ints in prop::collection::vec(any::<i32>(), 0..50),
        s in any_string(),
        minor in 0u8..=1,
        nest in any::<bool>(),
    ) {
        let encoding = EncodingVersion { major: 1, minor };
        let mut enc = Encoder::new();
        let outer = enc.start_encapsulation(encoding);
        enc.write_seq(&ints);
        if nest {
            let inner = enc.start_encapsulation(ENCODING_1_1);
            enc.write_string(&s);
            enc.end_encapsulation(inner);
            prop_assert_eq!(enc.encoding(), encoding, "encoding restored after the inner encapsulation");
        } else {
            enc.write_string(&s);
        }
        enc.end_encapsulation(outer);
        prop_assert_eq!(enc.encoding(), ENCODING_1_1);
        let body = size_len(ints.len()) + 4 * ints.len() + string_len(&s) + if nest { 6 } else { 0 };
        prop_assert_eq!(enc.len(), 6 + body);
        let bytes = enc.finish();

        let mut dec = Decoder::new(bytes.clone());
        let encaps = dec.read_encapsulation().map_err(fail)?;
        prop_assert!(dec.is_empty());
        prop_assert_eq!(encaps.encoding, encoding);
        prop_assert_eq!(encaps.wire_size(), bytes.len());
        let mut inner = Decoder::from_encapsulation(encaps).map_err(fail)?;
        prop_assert_eq!(inner.encoding(), encoding);
        prop_assert_eq!(&inner.read_seq::<i32>().map_err(fail)?, &ints);
        let got = if nest {
            let mut d = Decoder::from_encapsulation(inner.read_encapsulation().map_err(fail)?).map_err(fail)?;
            let got = d.read_string().map_err(fail)?;
            d.finish_encapsulation().map_err(fail)?;
            got
        } else {
            inner.read_string().map_err(fail)?
        };
        prop_assert_eq!(got, s);
        inner.finish_encapsulation().map_err(fail)?;

        // Byte-for-byte forwarding.
        let mut dec = Decoder::new(bytes.clone());
        let raw = dec.read_encapsulation_bytes().map_err(fail)?;
        prop_assert_eq!(&raw, &bytes);
        let mut dec = Decoder::new(bytes);
        dec.skip_encapsulation().map_err(fail)?;
        prop_assert!(dec.is_empty());
    }
}

// ---------------------------------------------------------------------------
// Optionals
// ---------------------------------------------------------------------------

/// One optional value of a type from each optional format.
#[derive(Clone, Debug, PartialEq)]
enum Opt {
    Bool(bool),
    Byte(u8),
    Short(i16),
    Int(i32),
    Long(i64),
    Float(u32),
    Double(u64),
    Enum(i32),
    Str(String),
    Bytes(Vec<u8>),
    Shorts(Vec<i16>),
    IntInt(BTreeMap<i32, i32>),
    Strings(Vec<String>),
    StrInt(BTreeMap<String, i32>),
    Id(Identity),
}

/// An enum for the `Size` format (`enum E { ... = 0x7fffffff }`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Enumerator(i32);

impl floe_wire::WireType for Enumerator {
    const MIN_WIRE_SIZE: usize = 1;
    const OPTIONAL_KIND: floe_wire::OptionalKind =
        floe_wire::OptionalKind::Plain(OptionalFormat::Size);
}
impl Encode for Enumerator {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_enum(self.0, i32::MAX);
    }
}
impl Decode for Enumerator {
    fn decode(dec: &mut Decoder) -> Result<Self> {
        dec.read_enum(i32::MAX).map(Enumerator)
    }
}

fn any_opt() -> impl Strategy<Value = Opt> {
    prop_oneof![
        any::<bool>().prop_map(Opt::Bool),
        any::<u8>().prop_map(Opt::Byte),
        any::<i16>().prop_map(Opt::Short),
        any::<i32>().prop_map(Opt::Int),
        any::<i64>().prop_map(Opt::Long),
        any::<u32>().prop_map(Opt::Float),
        any::<u64>().prop_map(Opt::Double),
        (0..=i32::MAX).prop_map(Opt::Enum),
        any_string().prop_map(Opt::Str),
        prop::collection::vec(any::<u8>(), 0..300).prop_map(Opt::Bytes),
        prop::collection::vec(any::<i16>(), 0..300).prop_map(Opt::Shorts),
        prop::collection::btree_map(any::<i32>(), any::<i32>(), 0..40).prop_map(Opt::IntInt),
        prop::collection::vec(any_string(), 0..5).prop_map(Opt::Strings),
        prop::collection::btree_map(any_string(), any::<i32>(), 0..5).prop_map(Opt::StrInt),
        (any_string(), any_string()).prop_map(|(n, c)| Opt::Id(Identity::new(n, c))),
    ]
}

impl Opt {
    fn write(&self, tag: u32, enc: &mut Encoder) {
        match self {
            Opt::Bool(v) => enc.write_optional(tag, Some(v)),
            Opt::Byte(v) => enc.write_optional(tag, Some(v)),
            Opt::Short(v) => enc.write_optional(tag, Some(v)),
            Opt::Int(v) => enc.write_optional(tag, Some(v)),
            Opt::Long(v) => enc.write_optional(tag, Some(v)),
            Opt::Float(v) => enc.write_optional(tag, Some(&f32::from_bits(*v))),
            Opt::Double(v) => enc.write_optional(tag, Some(&f64::from_bits(*v))),
            Opt::Enum(v) => enc.write_optional(tag, Some(&Enumerator(*v))),
            Opt::Str(v) => enc.write_optional(tag, Some(v.as_str())),
            Opt::Bytes(v) => enc.write_optional(tag, Some(v)),
            Opt::Shorts(v) => enc.write_optional(tag, Some(v)),
            Opt::IntInt(v) => enc.write_optional(tag, Some(v)),
            Opt::Strings(v) => enc.write_optional(tag, Some(v)),
            Opt::StrInt(v) => enc.write_optional(tag, Some(v)),
            Opt::Id(v) => enc.write_optional(tag, Some(v)),
        }
    }

    /// Reads the optional `tag` as the same type as `self`.
    fn read_like(&self, tag: u32, dec: &mut Decoder) -> Result<Option<Opt>> {
        Ok(match self {
            Opt::Bool(_) => dec.read_optional_value(tag)?.map(Opt::Bool),
            Opt::Byte(_) => dec.read_optional_value(tag)?.map(Opt::Byte),
            Opt::Short(_) => dec.read_optional_value(tag)?.map(Opt::Short),
            Opt::Int(_) => dec.read_optional_value(tag)?.map(Opt::Int),
            Opt::Long(_) => dec.read_optional_value(tag)?.map(Opt::Long),
            Opt::Float(_) => dec
                .read_optional_value::<f32>(tag)?
                .map(|f| Opt::Float(f.to_bits())),
            Opt::Double(_) => dec
                .read_optional_value::<f64>(tag)?
                .map(|f| Opt::Double(f.to_bits())),
            Opt::Enum(_) => dec
                .read_optional_value::<Enumerator>(tag)?
                .map(|e| Opt::Enum(e.0)),
            Opt::Str(_) => dec.read_optional_value(tag)?.map(Opt::Str),
            Opt::Bytes(_) => dec.read_optional_value(tag)?.map(Opt::Bytes),
            Opt::Shorts(_) => dec.read_optional_value(tag)?.map(Opt::Shorts),
            Opt::IntInt(_) => dec.read_optional_value(tag)?.map(Opt::IntInt),
            Opt::Strings(_) => dec.read_optional_value(tag)?.map(Opt::Strings),
            Opt::StrInt(_) => dec.read_optional_value(tag)?.map(Opt::StrInt),
            Opt::Id(_) => dec.read_optional_value(tag)?.map(Opt::Id),
        })
    }

    /// Bytes after the tag: the value, plus its length prefix if its format has one.
    fn wire_len(&self) -> usize {
        let vsize = |n: usize| size_len(n) + n;
        match self {
            Opt::Bool(_) | Opt::Byte(_) => 1,
            Opt::Short(_) => 2,
            Opt::Int(_) | Opt::Float(_) => 4,
            Opt::Long(_) | Opt::Double(_) => 8,
            Opt::Enum(v) => size_len(*v as usize),
            Opt::Str(s) => string_len(s),
            Opt::Bytes(b) => vsize(b.len()),
            Opt::Shorts(v) => vsize(size_len(v.len()) + 2 * v.len()),
            Opt::IntInt(m) => vsize(size_len(m.len()) + 8 * m.len()),
            Opt::Strings(v) => {
                4 + size_len(v.len()) + v.iter().map(|s| string_len(s)).sum::<usize>()
            }
            Opt::StrInt(m) => {
                4 + size_len(m.len()) + m.keys().map(|k| string_len(k) + 4).sum::<usize>()
            }
            Opt::Id(id) => 4 + string_len(&id.name) + string_len(&id.category),
        }
    }
}

fn tag_len(tag: u32) -> usize {
    if tag < 30 {
        1
    } else {
        1 + size_len(tag as usize)
    }
}

/// Ascending tags (some ≥ 30, some ≥ 255) with a value each.
fn any_opts() -> impl Strategy<Value = Vec<(u32, Opt)>> {
    prop::collection::vec(
        (prop_oneof![1u32..4, 1u32..40, 200u32..300], any_opt()),
        0..12,
    )
    .prop_map(|v| {
        let mut tag = 0;
        v.into_iter()
            .map(|(delta, o)| {
                tag += delta;
                (tag, o)
            })
            .collect()
    })
}

fn encode_opts(opts: &[(u32, Opt)]) -> Bytes {
    let mut enc = Encoder::new();
    let mark = enc.start_encapsulation(ENCODING_1_1);
    enc.write_i32(-1);
    for (tag, o) in opts {
        o.write(*tag, &mut enc);
    }
    enc.end_encapsulation(mark);
    enc.finish()
}

fn open_opts(bytes: Bytes) -> Result<Decoder> {
    let mut outer = Decoder::new(bytes);
    let mut dec = Decoder::from_encapsulation(outer.read_encapsulation()?)?;
    dec.read_i32()?;
    Ok(dec)
}

proptest! {
    #[test]
    fn optionals_round_trip(opts in any_opts(), keep in any::<u16>()) {
        let bytes = encode_opts(&opts);
        let expected: usize = opts.iter().map(|(t, o)| tag_len(*t) + o.wire_len()).sum();
        prop_assert_eq!(bytes.len(), 6 + 4 + expected);

        // Reading every tag gives every value back.
        let mut dec = open_opts(bytes.clone()).map_err(fail)?;
        for (tag, o) in &opts {
            prop_assert_eq!(o.read_like(*tag, &mut dec).map_err(fail)?, Some(o.clone()), "tag {}", tag);
        }
        prop_assert!(dec.is_empty());

        // Reading a subset skips the others; tags in between are absent.
        let mut dec = open_opts(bytes.clone()).map_err(fail)?;
        for (i, (tag, o)) in opts.iter().enumerate() {
            if keep & (1 << (i % 16)) != 0 {
                prop_assert_eq!(o.read_like(*tag, &mut dec).map_err(fail)?, Some(o.clone()));
                if opts.iter().all(|(t, _)| *t != *tag + 1) {
                    let absent = dec.read_optional_value::<i32>(*tag + 1).map_err(fail)?;
                    prop_assert_eq!(absent, None);
                }
            }
        }
        dec.finish_encapsulation().map_err(fail)?;

        // Encoding 1.0 drops optionals entirely.
        let mut enc = Encoder::with_buffer(Default::default(), ENCODING_1_0);
        for (tag, o) in &opts {
            o.write(*tag, &mut enc);
        }
        prop_assert!(enc.is_empty());
    }
}

// ---------------------------------------------------------------------------
// Hostile input
// ---------------------------------------------------------------------------

type DecodeFn = fn(&mut Decoder) -> Result<()>;

/// Every decoder, by name.
const DECODERS: &[(&str, DecodeFn)] = &[
    ("bool", |d| d.read::<bool>().map(drop)),
    ("u8", |d| d.read::<u8>().map(drop)),
    ("i16", |d| d.read::<i16>().map(drop)),
    ("i32", |d| d.read::<i32>().map(drop)),
    ("i64", |d| d.read::<i64>().map(drop)),
    ("f32", |d| d.read::<f32>().map(drop)),
    ("f64", |d| d.read::<f64>().map(drop)),
    ("size", |d| d.read_size().map(drop)),
    ("count", |d| d.read_count(8).map(drop)),
    ("string", |d| d.read::<String>().map(drop)),
    ("byte_seq", |d| d.read_byte_seq().map(drop)),
    ("Bytes", |d| d.read::<Bytes>().map(drop)),
    ("Vec<u8>", |d| d.read::<Vec<u8>>().map(drop)),
    ("Vec<bool>", |d| d.read::<Vec<bool>>().map(drop)),
    ("Vec<i16>", |d| d.read::<Vec<i16>>().map(drop)),
    ("Vec<i32>", |d| d.read::<Vec<i32>>().map(drop)),
    ("Vec<i64>", |d| d.read::<Vec<i64>>().map(drop)),
    ("Vec<f32>", |d| d.read::<Vec<f32>>().map(drop)),
    ("Vec<f64>", |d| d.read::<Vec<f64>>().map(drop)),
    ("Vec<String>", |d| d.read::<Vec<String>>().map(drop)),
    ("Vec<Vec<i32>>", |d| d.read::<Vec<Vec<i32>>>().map(drop)),
    ("Vec<Vec<Vec<u8>>>", |d| {
        d.read::<Vec<Vec<Vec<u8>>>>().map(drop)
    }),
    ("Vec<Identity>", |d| d.read::<Vec<Identity>>().map(drop)),
    ("BTreeMap<String,i32>", |d| {
        d.read::<BTreeMap<String, i32>>().map(drop)
    }),
    ("BTreeMap<i32,Vec<String>>", |d| {
        d.read::<BTreeMap<i32, Vec<String>>>().map(drop)
    }),
    ("HashMap<i32,String>", |d| {
        d.read::<HashMap<i32, String>>().map(drop)
    }),
    ("HashMap<String,Vec<i64>>", |d| {
        d.read::<HashMap<String, Vec<i64>>>().map(drop)
    }),
    ("Identity", |d| d.read::<Identity>().map(drop)),
    ("enum", |d| d.read_enum(i32::MAX).map(drop)),
    ("enum small", |d| d.read_enum(3).map(drop)),
    ("enum medium", |d| d.read_enum(300).map(drop)),
    ("encapsulation", |d| {
        let mut inner = Decoder::from_encapsulation(d.read_encapsulation()?)?;
        inner.read::<Vec<String>>()?;
        inner.finish_encapsulation()
    }),
    ("encapsulation bytes", |d| {
        d.read_encapsulation_bytes().map(drop)
    }),
    ("skip encapsulation", |d| d.skip_encapsulation()),
    ("finish encapsulation", |d| d.finish_encapsulation()),
    ("optional header", |d| d.read_optional_header().map(drop)),
    ("optionals to end marker", |d| {
        d.skip_optionals_to_end_marker()
    }),
    ("fsize section", |d| d.read_fsize_section().map(drop)),
    ("optional F1", |d| {
        d.read_optional_value::<bool>(1).map(drop)
    }),
    ("optional F2", |d| d.read_optional_value::<i16>(2).map(drop)),
    ("optional F4", |d| d.read_optional_value::<i32>(3).map(drop)),
    ("optional F8", |d| d.read_optional_value::<f64>(4).map(drop)),
    ("optional Size", |d| {
        d.read_optional_value::<Enumerator>(5).map(drop)
    }),
    ("optional VSize string", |d| {
        d.read_optional_value::<String>(6).map(drop)
    }),
    ("optional VSize bytes", |d| {
        d.read_optional_value::<Bytes>(7).map(drop)
    }),
    ("optional VSize seq", |d| {
        d.read_optional_value::<Vec<i32>>(8).map(drop)
    }),
    ("optional VSize dict", |d| {
        d.read_optional_value::<BTreeMap<i32, i64>>(9).map(drop)
    }),
    ("optional FSize seq", |d| {
        d.read_optional_value::<Vec<String>>(10).map(drop)
    }),
    ("optional FSize dict", |d| {
        d.read_optional_value::<HashMap<String, i32>>(11).map(drop)
    }),
    ("optional FSize identity", |d| {
        d.read_optional_value::<Identity>(12).map(drop)
    }),
    ("optional high tag", |d| {
        d.read_optional_value::<i64>(300).map(drop)
    }),
];

/// The most a decoder may allocate for `len` input bytes: counts are checked
/// against the bytes present, so memory follows the input, times the ratio
/// of an element's in-memory size to its minimum wire size (a `String` is 24
/// bytes for 1 wire byte; a `HashMap<String, Vec<_>>` entry 48 bytes for 2,
/// doubled by the table's power-of-two rounding).
fn allocation_limit(len: usize) -> usize {
    64 * len + 4096
}

/// Runs every decoder on `bytes` in both encodings. Each must return (not
/// panic; proptest reports a panic as a failure) and allocate at most
/// [`allocation_limit`].
fn every_decoder_survives(bytes: &Bytes) -> std::result::Result<(), TestCaseError> {
    let limit = allocation_limit(bytes.len());
    for encoding in [ENCODING_1_1, ENCODING_1_0] {
        for (name, decode) in DECODERS {
            let mut dec = Decoder::with_encoding(bytes.clone(), encoding);
            let (_, largest) = largest_allocation(|| decode(&mut dec));
            prop_assert!(
                largest <= limit,
                "{} allocated {} bytes for {} input bytes",
                name,
                largest,
                bytes.len()
            );
        }
    }
    Ok(())
}

/// A byte-level mutation of a valid message.
#[derive(Clone, Debug)]
enum Mutation {
    Flip(usize, u8),
    Set(usize, u8),
    Truncate(usize),
    Insert(usize, u8),
    Remove(usize),
}

fn any_mutation() -> impl Strategy<Value = Mutation> {
    let byte = prop_oneof![Just(0u8), Just(0xff), Just(0x7f), Just(0xfe), any::<u8>()];
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(i, x)| Mutation::Flip(i, x)),
        (any::<usize>(), byte.clone()).prop_map(|(i, b)| Mutation::Set(i, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), byte).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Remove),
    ]
}

fn mutate(bytes: &[u8], mutations: &[Mutation]) -> Bytes {
    let mut v = bytes.to_vec();
    for m in mutations {
        let n = v.len();
        match *m {
            Mutation::Flip(i, x) if n > 0 => v[i % n] ^= x,
            Mutation::Set(i, b) if n > 0 => v[i % n] = b,
            Mutation::Truncate(i) => v.truncate(i % (n + 1)),
            Mutation::Insert(i, b) => v.insert(i % (n + 1), b),
            Mutation::Remove(i) if n > 0 => {
                v.remove(i % n);
            }
            _ => {}
        }
    }
    Bytes::from(v)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(raw in prop::collection::vec(any::<u8>(), 0..128)) {
        every_decoder_survives(&Bytes::from(raw))?;
    }

    #[test]
    fn mutated_messages_never_panic(
        opts in any_opts(),
        seq in prop::collection::vec(prop::collection::vec(any_string(), 0..3), 0..4),
        mutations in prop::collection::vec(any_mutation(), 1..4),
    ) {
        // A valid message: strings, nested sequences, optionals, in an encapsulation.
        let mut enc = Encoder::new();
        enc.write(&seq);
        enc.write_encapsulation_bytes(&encode_opts(&opts));
        let valid = enc.finish();
        let bad = mutate(&valid, &mutations);
        every_decoder_survives(&bad)?;
        // And the reader made for this message: whatever it returns, it returns.
        let limit = allocation_limit(bad.len());
        let (_, largest) = largest_allocation(|| {
            let mut dec = Decoder::new(bad.clone());
            let _ = dec.read::<Vec<Vec<String>>>();
            if let Ok(mut d) = dec.read_encapsulation().and_then(Decoder::from_encapsulation) {
                let _ = d.read_i32();
                for (tag, o) in &opts {
                    let _ = o.read_like(*tag, &mut d);
                }
                let _ = d.finish_encapsulation();
            }
        });
        prop_assert!(largest <= limit, "allocated {} for {} bytes", largest, bad.len());
    }
}

// ---------------------------------------------------------------------------
// Huge claimed counts
// ---------------------------------------------------------------------------

/// Decodes `input` with `decode`, requiring an `UnmarshalOutOfBounds` error,
/// no allocation over 1 KiB, and a prompt return.
fn rejects_without_allocating(
    what: &str,
    input: &[u8],
    encoding: EncodingVersion,
    decode: DecodeFn,
) {
    let mut dec = Decoder::with_encoding(Bytes::copy_from_slice(input), encoding);
    let start = Instant::now();
    let (result, largest) = largest_allocation(|| decode(&mut dec));
    let elapsed = start.elapsed();
    assert!(
        matches!(result, Err(Error::UnmarshalOutOfBounds { .. })),
        "{what}: expected UnmarshalOutOfBounds, got {result:?}"
    );
    assert!(largest <= 1024, "{what}: allocated {largest} bytes");
    assert!(
        elapsed < Duration::from_millis(500),
        "{what}: took {elapsed:?}"
    );
}

/// `ff` + int32 `0x7fffffff`: a count of 2^31 - 1.
const HUGE: [u8; 5] = [0xff, 0xff, 0xff, 0xff, 0x7f];

#[test]
fn allocation_tracking_sees_decoder_allocations() {
    // The allocation checks mean something only if the tracker sees allocations.
    let mut enc = Encoder::new();
    enc.write(&vec![7u8; 5000]);
    let mut dec = Decoder::new(enc.finish());
    let (v, largest) = largest_allocation(|| dec.read::<Vec<u8>>());
    assert_eq!(v.map(|v| v.len()), Ok(5000));
    assert!(largest >= 5000, "tracker saw only {largest} bytes");
}

#[test]
fn two_gigabyte_claims_fail_fast() {
    for (name, decode) in DECODERS.iter().filter(|(n, _)| {
        n.starts_with("Vec")
            || n.starts_with("BTreeMap")
            || n.starts_with("HashMap")
            || *n == "string"
            || *n == "byte_seq"
            || *n == "Bytes"
    }) {
        rejects_without_allocating(name, &HUGE, ENCODING_1_1, *decode);
        // The same claim with a few bytes of "data" after it.
        let mut with_data = HUGE.to_vec();
        with_data.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        rejects_without_allocating(name, &with_data, ENCODING_1_1, *decode);
    }
    // Four bytes: a count of 254 ints with 3 bytes of data.
    rejects_without_allocating("Vec<i32> 4 bytes", &[0xfe, 1, 2, 3], ENCODING_1_1, |d| {
        d.read::<Vec<i32>>().map(drop)
    });
    rejects_without_allocating("read_count", &HUGE, ENCODING_1_1, |d| {
        d.read_count(1).map(drop)
    });
}

#[test]
fn nested_huge_counts_fail_fast() {
    // Outer count 3, first inner count 2^31 - 1.
    let mut input = vec![3];
    input.extend_from_slice(&HUGE);
    rejects_without_allocating("Vec<Vec<i32>>", &input, ENCODING_1_1, |d| {
        d.read::<Vec<Vec<i32>>>().map(drop)
    });
    rejects_without_allocating("Vec<Vec<String>>", &input, ENCODING_1_1, |d| {
        d.read::<Vec<Vec<String>>>().map(drop)
    });
    // Three levels, the innermost claims 2 GB.
    let mut input = vec![1, 1];
    input.extend_from_slice(&HUGE);
    rejects_without_allocating("Vec<Vec<Vec<u8>>>", &input, ENCODING_1_1, |d| {
        d.read::<Vec<Vec<Vec<u8>>>>().map(drop)
    });
    // A dictionary whose value is a sequence claiming 2 GB.
    let mut input = vec![1, 1, b'k'];
    input.extend_from_slice(&HUGE);
    rejects_without_allocating("HashMap<String,Vec<i64>>", &input, ENCODING_1_1, |d| {
        d.read::<HashMap<String, Vec<i64>>>().map(drop)
    });
    // An outer count of 2^31 - 1 sequences.
    rejects_without_allocating("Vec<Vec<u8>> outer", &HUGE, ENCODING_1_1, |d| {
        d.read::<Vec<Vec<u8>>>().map(drop)
    });
}

#[test]
fn huge_encapsulations_and_optionals_fail_fast() {
    // An encapsulation claiming 2 GB.
    let encaps = [0xff, 0xff, 0xff, 0x7f, 1, 1, 0];
    for (name, decode) in DECODERS.iter().filter(|(n, _)| n.contains("encapsulation")) {
        if *name != "finish encapsulation" {
            rejects_without_allocating(name, &encaps, ENCODING_1_1, *decode);
        }
    }
    // FSize optional (tag 10) claiming 2 GB.
    let fsize = [(10 << 3) | 6, 0xff, 0xff, 0xff, 0x7f, 0];
    rejects_without_allocating("FSize optional", &fsize, ENCODING_1_1, |d| {
        d.read_optional_value::<Vec<String>>(10).map(drop)
    });
    rejects_without_allocating("skipping FSize", &fsize, ENCODING_1_1, |d| {
        d.finish_encapsulation()
    });
    // VSize optional (tag 8) claiming 2 GB.
    let mut vsize = vec![(8 << 3) | 5];
    vsize.extend_from_slice(&HUGE);
    rejects_without_allocating("VSize optional", &vsize, ENCODING_1_1, |d| {
        d.read_optional_value::<Vec<i32>>(8).map(drop)
    });
    rejects_without_allocating("VSize string optional", &vsize, ENCODING_1_1, |d| {
        d.read_optional_value::<String>(8).map(drop)
    });
    rejects_without_allocating("skipping VSize", &vsize, ENCODING_1_1, |d| {
        d.finish_encapsulation()
    });
}

#[test]
fn negative_sizes_are_rejected() {
    let negative = [0xff, 0x00, 0x00, 0x00, 0x80];
    for (name, decode) in DECODERS
        .iter()
        .filter(|(n, _)| n.starts_with("Vec") || *n == "string")
    {
        rejects_without_allocating(name, &negative, ENCODING_1_1, *decode);
    }
    rejects_without_allocating(
        "encapsulation size 5",
        &[5, 0, 0, 0, 1, 1],
        ENCODING_1_1,
        |d| d.read_encapsulation().map(drop),
    );
    rejects_without_allocating(
        "negative FSize",
        &[0x0e, 0xff, 0xff, 0xff, 0xff],
        ENCODING_1_1,
        |d| d.finish_encapsulation(),
    );
}
