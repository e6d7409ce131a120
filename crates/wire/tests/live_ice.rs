//! Live interop: builds the golden-vector generator (`golden/gen/`, C++11
//! mapping, Ice's own `Ice::OutputStream`) against the installed Ice 3.7,
//! runs it now, and compares its fresh bytes with floe's.
//!
//! A differential test also feeds mutated vectors to Ice's own
//! `Ice::InputStream` (the generator's `--decode` mode) and to floe, and
//! requires floe to accept exactly what Ice accepts, with the same result.
//!
//! Last, a Python-mapping server (`golden/gen/echo_peer.py`) echoes
//! floe-encoded parameters, and its replies must be the same bytes; in
//! encoding 1.0 it also echoes class graphs and raises user exceptions,
//! which floe must read.
//!
//! The build is cached under `target/tmp/golden-gen-<hash of the sources>`.
//! Needs `slice2cpp`, `g++` and `libIce++11` (`cargo xtask test` installs
//! them); with `FLOE_NO_INTEROP=1` the tests print a line and return.

mod vectors;
/// The encoding 1.0 checks against the live Python peer.
mod live_ice {
    pub mod live10;
}

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bytes::Bytes;
use floe_wire::{
    Decode, Decoder, Encode, Encoder, Error, OptionalKind, ENCODING_1_0, ENCODING_1_1,
};
use types::{Color, Fixed, Mixed, Nested, Point, Sparse};
use vectors::{checks, types};

const GEN_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/gen");
const VECTORS: &str = include_str!("golden/vectors.txt");

/// Whether interop tests are switched off (prints why).
fn interop_disabled() -> bool {
    if std::env::var("FLOE_NO_INTEROP").as_deref() == Ok("1") {
        println!("FLOE_NO_INTEROP=1: skipping the live Ice comparison");
        return true;
    }
    false
}

/// Kills and reaps a child process however the test ends.
struct PeerGuard(Child);

impl Drop for PeerGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `cmd` to completion within `timeout`, returning its stdout.
fn run(cmd: &mut Command, timeout: Duration) -> String {
    run_with_input(cmd, None, timeout)
}

/// Runs `cmd` with `input` on its stdin (if any) to completion within
/// `timeout`, returning its stdout.
fn run_with_input(cmd: &mut Command, input: Option<String>, timeout: Duration) -> String {
    let what = format!("{cmd:?}");
    let child = cmd
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let mut guard = PeerGuard(child);
    let writer = guard.0.stdin.take().map(|mut stdin| {
        let input = input.unwrap_or_default();
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(input.as_bytes());
        })
    });
    let mut stdout = guard.0.stdout.take().expect("stdout is piped");
    let mut stderr = guard.0.stderr.take().expect("stderr is piped");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = guard.0.try_wait().expect("try_wait") {
            break status;
        }
        assert!(
            start.elapsed() < timeout,
            "{what} ran longer than {timeout:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    if let Some(writer) = writer {
        writer.join().expect("stdin writer");
    }
    let out = out.join().expect("stdout reader");
    let err = err.join().expect("stderr reader");
    assert!(status.success(), "{what} failed ({status}):\n{err}");
    out
}

/// FNV-1a, a stable hash for the cache key.
fn fnv1a(data: &[u8], mut h: u64) -> u64 {
    for b in data {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn find_on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}

/// Builds the generator once per source version; returns its path.
fn generator() -> &'static Path {
    static GEN: OnceLock<PathBuf> = OnceLock::new();
    GEN.get_or_init(|| {
        for tool in ["slice2cpp", "g++"] {
            assert!(
                find_on_path(tool),
                "`{tool}` not found: the live Ice test needs Ice 3.7 for C++ \
                 (run `cargo xtask test`, which installs zeroc-ice-compilers and \
                 libzeroc-ice-dev, or set FLOE_NO_INTEROP=1)"
            );
        }
        let src = Path::new(GEN_DIR);
        let ice = std::fs::read(src.join("Golden.ice")).expect("read Golden.ice");
        let cpp = std::fs::read(src.join("gen.cpp")).expect("read gen.cpp");
        let key = fnv1a(&cpp, fnv1a(&ice, 0xcbf2_9ce4_8422_2325));
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("golden-gen-{key:016x}"));
        let exe = dir.join("gen");
        if exe.is_file() {
            return exe;
        }
        // Build in a private directory and rename, so a concurrent or
        // interrupted build never leaves a half-written generator behind.
        let tmp = dir.with_extension(format!("tmp{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).expect("create build dir");
        let build = Duration::from_secs(600);
        run(
            Command::new("slice2cpp")
                .arg("--output-dir")
                .arg(&tmp)
                .arg(src.join("Golden.ice")),
            build,
        );
        run(
            Command::new("g++")
                .args(["-std=c++11", "-DICE_CPP11_MAPPING", "-O0"])
                .arg(format!("-I{}", tmp.display()))
                .arg("-o")
                .arg(tmp.join("gen"))
                .arg(src.join("gen.cpp"))
                .arg(tmp.join("Golden.cpp"))
                .args(["-lIce++11", "-lpthread"]),
            build,
        );
        if std::fs::rename(&tmp, &dir).is_err() {
            // Another process won the race; use its build.
            let _ = std::fs::remove_dir_all(&tmp);
        }
        assert!(exe.is_file(), "generator build left no {}", exe.display());
        exe
    })
}

/// Runs the generator, optionally only for some vectors.
fn generate(names: &[&str]) -> String {
    run(
        Command::new(generator()).args(names),
        Duration::from_secs(60),
    )
}

/// Parses `name hex` lines, ignoring comments.
fn lines(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .map(|(n, h)| (n.to_string(), h.to_string()))
        .collect()
}

fn encoded(f: impl FnOnce(&mut Encoder)) -> String {
    let mut enc = Encoder::new();
    f(&mut enc);
    hex::encode(enc.as_slice())
}

#[test]
fn floe_encodes_a_handful_of_values_like_ice_does_now() {
    if interop_disabled() {
        return;
    }
    let names = [
        "int_min",
        "double_nan",
        "string_utf8",
        "size_300",
        "seq_mixed",
        "dict_int_mixed",
        "sparse_c",
        "struct_nested",
        "opt_tag_high",
        "encaps_10",
    ];
    let fresh = lines(&generate(&names));
    assert_eq!(
        fresh.keys().collect::<Vec<_>>().len(),
        names.len(),
        "generator printed {fresh:?}"
    );
    let floe: BTreeMap<&str, String> = [
        ("int_min", encoded(|e| i32::MIN.encode(e))),
        ("double_nan", encoded(|e| f64::NAN.encode(e))),
        (
            "string_utf8",
            encoded(|e| "h\u{e9}\u{20ac}\u{1d11e}".encode(e)),
        ),
        ("size_300", encoded(|e| e.write_size(300))),
        (
            "seq_mixed",
            encoded(|e| vec![Mixed::new("s", 1.0, true), Mixed::new("", 0.0, false)].encode(e)),
        ),
        (
            "dict_int_mixed",
            encoded(|e| {
                BTreeMap::from([
                    (1i32, Mixed::new("m", 0.5, true)),
                    (2, Mixed::new("", -1.0, false)),
                ])
                .encode(e)
            }),
        ),
        ("sparse_c", encoded(|e| Sparse::C.encode(e))),
        ("struct_nested", encoded(|e| types::nested().encode(e))),
        (
            "opt_tag_high",
            encoded(|e| {
                let m = e.start_encapsulation(ENCODING_1_1);
                e.write_optional(29, Some(&29i32));
                e.write_optional(30, Some(&30i32));
                e.write_optional(40, Some(&true));
                e.write_optional(254, Some("x"));
                e.write_optional(255, Some(&255i16));
                e.write_optional(1000, Some(&1000i64));
                e.end_encapsulation(m);
            }),
        ),
        (
            "encaps_10",
            encoded(|e| {
                let m = e.start_encapsulation(ENCODING_1_0);
                e.write_i32(7);
                Color::Blue.encode(e);
                Sparse::C.encode(e);
                vec![Color::Red, Color::Green].encode(e);
                vec![Sparse::B].encode(e);
                e.write_optional(1, Some(&3i32));
                e.end_encapsulation(m);
            }),
        ),
    ]
    .into();
    for (name, ice) in &fresh {
        assert_eq!(&floe[name.as_str()], ice, "{name}: floe vs Ice 3.7 now");
    }
}

#[test]
fn every_fresh_vector_round_trips_through_floe() {
    if interop_disabled() {
        return;
    }
    let fresh = generate(&[]);
    let mut vectors = checks::Vectors::parse("live generator output", &fresh);
    checks::check_all(&mut vectors);
    let n = vectors.finish();
    assert!(n >= 100, "only {n} vectors checked");
}

#[test]
fn checked_in_vectors_match_the_installed_ice() {
    if interop_disabled() {
        return;
    }
    let fresh = lines(&generate(&[]));
    let stored = lines(VECTORS);
    let differ: Vec<&String> = fresh
        .keys()
        .chain(stored.keys())
        .filter(|k| fresh.get(*k) != stored.get(*k))
        .collect();
    assert!(
        differ.is_empty(),
        "golden/vectors.txt is stale for {differ:?}: run crates/wire/tests/golden/gen/gen.sh \
         and review the diff"
    );
}

/// A small deterministic generator (xorshift64*), so every run feeds Ice the
/// same mutants.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One to three byte-level mutations of `bytes`.
fn mutant(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    const SPECIAL: [u8; 6] = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff];
    let mut v = bytes.to_vec();
    for _ in 0..1 + rng.below(3) {
        let n = v.len();
        let byte = if rng.below(2) == 0 {
            SPECIAL[rng.below(SPECIAL.len())]
        } else {
            rng.next() as u8
        };
        match rng.below(5) {
            0 if n > 0 => v[rng.below(n)] ^= 1 << rng.below(8),
            1 if n > 0 => v[rng.below(n)] = byte,
            2 => v.truncate(rng.below(n + 1)),
            3 => v.insert(rng.below(n + 1), byte),
            4 if n > 0 => {
                v.remove(rng.below(n));
            }
            _ => {}
        }
    }
    v
}

/// Decodes `bytes` as `T` with floe and re-encodes it: (bytes consumed, re-encoding).
fn floe_reencode<T: Decode + Encode>(bytes: &Bytes) -> floe_wire::Result<(usize, Vec<u8>)> {
    let mut dec = Decoder::new(bytes.clone());
    let v = T::decode(&mut dec)?;
    let mut enc = Encoder::new();
    v.encode(&mut enc);
    Ok((bytes.len() - dec.remaining(), enc.as_slice().to_vec()))
}

/// How an optional value is read.
type ReadOptional<T> = fn(&mut Decoder, u32) -> floe_wire::Result<Option<T>>;

/// Reads an optional value the way Ice's C++ reader does: a `VSize`/`FSize`
/// length in front of the value is skipped, not checked against the value.
fn read_optional_like_ice<T: Decode>(dec: &mut Decoder, tag: u32) -> floe_wire::Result<Option<T>> {
    if !dec.read_optional(tag, T::OPTIONAL_KIND.format())? {
        return Ok(None);
    }
    match T::OPTIONAL_KIND {
        OptionalKind::Plain(_) => {}
        OptionalKind::VSizeLength => {
            dec.read_size()?;
        }
        OptionalKind::FSizeLength => dec.skip(4)?,
    }
    T::decode(dec).map(Some)
}

/// floe's side of `OptMixed` in gen.cpp: an encapsulation with an int and
/// optionals 1-11 and 40, re-encoded as encoding 1.1.
fn floe_opt_mixed(bytes: &Bytes) -> floe_wire::Result<(usize, Vec<u8>)> {
    opt_mixed_with(bytes, Lenience::Floe)
}

/// Which optional reader [`opt_mixed_with`] uses.
#[derive(Clone, Copy)]
enum Lenience {
    /// floe's `read_optional_value` (checks length prefixes).
    Floe,
    /// [`read_optional_like_ice`].
    Ice,
}

fn reader<T: Decode>(lenience: Lenience) -> ReadOptional<T> {
    match lenience {
        Lenience::Floe => |d, tag| d.read_optional_value(tag),
        Lenience::Ice => read_optional_like_ice,
    }
}

fn opt_mixed_with(bytes: &Bytes, how: Lenience) -> floe_wire::Result<(usize, Vec<u8>)> {
    let mut outer = Decoder::new(bytes.clone());
    let mut d = Decoder::from_encapsulation(outer.read_encapsulation()?)?;
    let mut e = Encoder::new();
    let mark = e.start_encapsulation(ENCODING_1_1);
    e.write_i32(d.read_i32()?);
    e.write_optional(1, reader::<bool>(how)(&mut d, 1)?.as_ref());
    e.write_optional(2, reader::<i16>(how)(&mut d, 2)?.as_ref());
    e.write_optional(3, reader::<i32>(how)(&mut d, 3)?.as_ref());
    e.write_optional(4, reader::<f64>(how)(&mut d, 4)?.as_ref());
    e.write_optional(5, reader::<Color>(how)(&mut d, 5)?.as_ref());
    e.write_optional(6, reader::<String>(how)(&mut d, 6)?.as_ref());
    e.write_optional(7, reader::<Point>(how)(&mut d, 7)?.as_ref());
    e.write_optional(8, reader::<Vec<i32>>(how)(&mut d, 8)?.as_ref());
    e.write_optional(9, reader::<Mixed>(how)(&mut d, 9)?.as_ref());
    e.write_optional(10, reader::<Vec<String>>(how)(&mut d, 10)?.as_ref());
    e.write_optional(
        11,
        reader::<BTreeMap<String, i32>>(how)(&mut d, 11)?.as_ref(),
    );
    e.write_optional(40, reader::<i32>(how)(&mut d, 40)?.as_ref());
    d.finish_encapsulation()?;
    e.end_encapsulation(mark);
    Ok((bytes.len() - outer.remaining(), e.as_slice().to_vec()))
}

/// floe's decoder for each type name gen.cpp's `--decode` knows.
fn floe_decode(ty: &str, bytes: &Bytes) -> floe_wire::Result<(usize, Vec<u8>)> {
    match ty {
        "bool" => floe_reencode::<bool>(bytes),
        "short" => floe_reencode::<i16>(bytes),
        "int" => floe_reencode::<i32>(bytes),
        "string" => floe_reencode::<String>(bytes),
        "Color" => floe_reencode::<Color>(bytes),
        "Sparse" => floe_reencode::<Sparse>(bytes),
        "Point" => floe_reencode::<Point>(bytes),
        "Fixed" => floe_reencode::<Fixed>(bytes),
        "Mixed" => floe_reencode::<Mixed>(bytes),
        "Nested" => floe_reencode::<Nested>(bytes),
        "ByteSeq" => floe_reencode::<Bytes>(bytes),
        "BoolSeq" => floe_reencode::<Vec<bool>>(bytes),
        "IntSeq" => floe_reencode::<Vec<i32>>(bytes),
        "StringSeq" => floe_reencode::<Vec<String>>(bytes),
        "PointSeq" => floe_reencode::<Vec<Point>>(bytes),
        "MixedSeq" => floe_reencode::<Vec<Mixed>>(bytes),
        "ColorSeq" => floe_reencode::<Vec<Color>>(bytes),
        "SparseSeq" => floe_reencode::<Vec<Sparse>>(bytes),
        "IntSeqSeq" => floe_reencode::<Vec<Vec<i32>>>(bytes),
        "StringIntDict" => floe_reencode::<BTreeMap<String, i32>>(bytes),
        "IntStringDict" => floe_reencode::<BTreeMap<i32, String>>(bytes),
        "StringPointDict" => floe_reencode::<BTreeMap<String, Point>>(bytes),
        "IntMixedDict" => floe_reencode::<BTreeMap<i32, Mixed>>(bytes),
        "OptMixed" => floe_opt_mixed(bytes),
        other => panic!("no floe decoder for {other}"),
    }
}

/// Where floe is deliberately stricter than Ice's C++ reader: it validates
/// UTF-8 (C++ strings are bytes) and rejects undeclared enumerators (the
/// C++11 reader checks only the min..max range).
fn floe_is_stricter(e: &Error) -> bool {
    let text = e.to_string();
    matches!(e, Error::Marshal { .. })
        && (text.contains("UTF-8") || text.contains("is not an enumerator"))
}

#[test]
fn floe_accepts_and_rejects_like_ice() {
    if interop_disabled() {
        return;
    }
    const CASES: &[(&str, &[&str])] = &[
        ("bool", &["bool_true"]),
        ("short", &["short_min"]),
        ("int", &["int_01020304"]),
        ("string", &["string_utf8", "string_255", "string_empty"]),
        ("Color", &["enum_blue"]),
        ("Sparse", &["sparse_c", "sparse_b"]),
        ("Point", &["struct_point"]),
        ("Fixed", &["struct_fixed"]),
        ("Mixed", &["struct_mixed"]),
        ("Nested", &["struct_nested"]),
        ("ByteSeq", &["seq_byte", "seq_byte_300"]),
        ("BoolSeq", &["seq_bool"]),
        ("IntSeq", &["seq_int", "seq_empty_int"]),
        ("StringSeq", &["seq_string"]),
        ("PointSeq", &["seq_point"]),
        ("MixedSeq", &["seq_mixed"]),
        ("ColorSeq", &["seq_color"]),
        ("SparseSeq", &["seq_sparse"]),
        ("IntSeqSeq", &["seq_int_seq"]),
        ("StringIntDict", &["dict_string_int"]),
        ("IntStringDict", &["dict_int_string"]),
        ("StringPointDict", &["dict_string_point"]),
        ("IntMixedDict", &["dict_int_mixed"]),
        ("OptMixed", &["opt_mixed", "opt_absent"]),
    ];
    const MUTANTS: usize = 40;
    let vectors = lines(VECTORS);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut inputs: Vec<(&str, Vec<u8>)> = Vec::new();
    for (ty, names) in CASES {
        for name in *names {
            let hex = &vectors[*name];
            let valid = if hex == "-" {
                Vec::new()
            } else {
                hex::decode(hex).expect("vectors.txt is hex")
            };
            inputs.push((ty, valid.clone()));
            for _ in 0..MUTANTS {
                inputs.push((ty, mutant(&valid, &mut rng)));
            }
        }
    }
    // Sequence counts near 2^31: Ice 3.7.8's C++ reader overflows its count
    // check on these and allocates gigabytes (std::bad_alloc under the
    // generator's 1 GiB limit; without it, a crash); floe must reject them.
    for (ty, hostile) in [
        ("IntSeq", &[0xff, 0xff, 0xff, 0xff, 0x7f][..]),
        ("IntSeq", &[0xff, 0xff, 0xff, 0xff, 0x3f]),
        ("PointSeq", &[0xff, 0xff, 0xff, 0xff, 0x1f, 0, 0, 0, 0]),
        ("StringSeq", &[0xff, 0xff, 0xff, 0xff, 0x7f, 0]),
        ("IntSeqSeq", &[0x01, 0xff, 0xff, 0xff, 0xff, 0x7f]),
    ] {
        inputs.push((ty, hostile.to_vec()));
    }
    let stdin: String = inputs
        .iter()
        .map(|(ty, b)| {
            let hex = if b.is_empty() {
                "-".to_string()
            } else {
                hex::encode(b)
            };
            format!("{ty} {hex}\n")
        })
        .collect();
    let out = run_with_input(
        Command::new(generator()).arg("--decode"),
        Some(stdin),
        Duration::from_secs(300),
    );
    let verdicts: Vec<&str> = out.lines().collect();
    assert_eq!(
        verdicts.len(),
        inputs.len(),
        "one verdict per input:\n{out}"
    );

    let (mut ok, mut rejected, mut crashed, mut stricter) = (0, 0, 0, 0);
    let mut disagreements = Vec::new();
    for ((ty, bytes), verdict) in inputs.iter().zip(&verdicts) {
        let input = format!("{ty} {}", hex::encode(bytes));
        let floe = floe_decode(ty, &Bytes::from(bytes.clone()));
        let mut words = verdict.split(' ');
        match (words.next(), &floe) {
            (Some("ok"), Ok((consumed, reencoded))) => {
                let ice_consumed: usize =
                    words.next().and_then(|w| w.parse().ok()).expect("consumed");
                let ice_hex = words.next().expect("re-encoding");
                let floe_hex = if reencoded.is_empty() {
                    "-".to_string()
                } else {
                    hex::encode(reencoded)
                };
                if ice_consumed != *consumed || ice_hex != floe_hex {
                    disagreements.push(format!(
                        "{input}: Ice read {ice_consumed} bytes -> {ice_hex}, floe read {consumed} -> {floe_hex}"
                    ));
                }
                ok += 1;
            }
            (Some("ok"), Err(e)) if floe_is_stricter(e) => stricter += 1,
            (Some("ok"), Err(_))
                if *ty == "OptMixed"
                    && opt_mixed_with(&Bytes::from(bytes.clone()), Lenience::Ice).is_ok() =>
            {
                // floe checks an optional's length prefix; Ice skips it.
                stricter += 1
            }
            (Some("ok"), Err(e)) => disagreements.push(format!("{input}: Ice accepted, floe: {e}")),
            // Ice's C++ reader runs out of memory (its 1 GiB test limit) or
            // crashes where its count check overflows.
            _ if (*verdict == "err std::exception" || verdict.starts_with("crash"))
                && floe.is_err() =>
            {
                crashed += 1
            }
            (Some("err"), Err(_)) => rejected += 1,
            (Some("err" | "crash"), Ok(_)) => {
                disagreements.push(format!("{input}: Ice said `{verdict}`, floe accepted it"))
            }
            _ => panic!("{input}: generator said `{verdict}`"),
        }
    }
    println!(
        "differential: {} inputs; both accepted {ok}, both rejected {rejected}, \
         Ice out of memory or crashed while floe rejected {crashed}, floe stricter {stricter}",
        inputs.len()
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements with Ice:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    assert!(
        ok > 50 && rejected > 50,
        "too few of each kind: ok {ok}, rejected {rejected}"
    );
}

/// The Python-mapping echo server, killed when dropped.
struct EchoPeer {
    port: u16,
    _guard: PeerGuard,
}

impl EchoPeer {
    fn start() -> EchoPeer {
        let python = Path::new("/usr/bin/python3");
        assert!(
            python.is_file(),
            "/usr/bin/python3 not found: the live Ice test needs python3-zeroc-ice \
             (run `cargo xtask test`, or set FLOE_NO_INTEROP=1)"
        );
        let child = Command::new(python)
            .arg(Path::new(GEN_DIR).join("echo_peer.py"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start echo_peer.py");
        let mut guard = PeerGuard(child);
        let stdout = guard.0.stdout.take().expect("stdout is piped");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the echo server's port");
        let port = line
            .strip_prefix("PORT ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| {
                panic!("echo_peer.py did not print its port (is python3-zeroc-ice installed?): {line:?}")
            });
        EchoPeer {
            port,
            _guard: guard,
        }
    }
}

/// Reads one protocol frame (the header's size field gives its length).
fn read_frame(stream: &mut TcpStream) -> Bytes {
    let mut head = [0u8; 14];
    stream.read_exact(&mut head).expect("frame header");
    assert_eq!(&head[..4], b"IceP", "magic");
    let size = i32::from_le_bytes([head[10], head[11], head[12], head[13]]);
    assert!((14..1 << 24).contains(&size), "frame size {size}");
    let mut frame = head.to_vec();
    frame.resize(size as usize, 0);
    stream.read_exact(&mut frame[14..]).expect("frame body");
    Bytes::from(frame)
}

/// Sends a twoway request to identity `echo` whose parameters are `params`
/// (the contents of a 1.1 encapsulation) and returns the reply's
/// encapsulation contents.
fn invoke(stream: &mut TcpStream, id: i32, op: &str, params: &[u8]) -> Bytes {
    let (status, encaps) = invoke_in(stream, id, op, ENCODING_1_1, params);
    assert_eq!(status, 0, "{op}: reply status");
    assert_eq!(encaps.encoding, ENCODING_1_1);
    encaps.data
}

/// Sends a twoway request whose parameters are `params` (the contents of
/// an encapsulation in `encoding`); returns the reply status (0 or 1) and
/// the reply's encapsulation.
fn invoke_in(
    stream: &mut TcpStream,
    id: i32,
    op: &str,
    encoding: floe_wire::EncodingVersion,
    params: &[u8],
) -> (u8, floe_wire::Encapsulation) {
    let mut enc = Encoder::new();
    enc.write_raw(b"IceP");
    enc.write_raw(&[1, 0, 1, 0, 0, 0]); // protocol 1.0, encoding 1.0, Request, uncompressed
    enc.write_i32(0); // size, patched below
    enc.write_i32(id);
    enc.write(&floe_wire::Identity::from_name("echo"));
    enc.write_size(0); // no facet
    enc.write_string(op);
    enc.write_u8(0); // Normal
    enc.write_size(0); // empty context
    let mark = enc.start_encapsulation(encoding);
    enc.write_raw(params);
    enc.end_encapsulation(mark);
    let size = enc.len() as i32;
    enc.buffer_mut()[10..14].copy_from_slice(&size.to_le_bytes());
    stream.write_all(enc.as_slice()).expect("send request");

    let mut dec = Decoder::new(read_frame(stream));
    dec.skip(14).expect("header");
    assert_eq!(dec.read_i32().expect("request id"), id);
    let status = dec.read_u8().expect("reply status");
    if status > 1 {
        let text = dec.read_string().unwrap_or_default();
        panic!("{op}: reply status {status}: {text}");
    }
    let encaps = dec.read_encapsulation().expect("reply encapsulation");
    (status, encaps)
}

#[test]
fn python_mapping_echoes_floe_bytes() {
    if interop_disabled() {
        return;
    }
    let peer = EchoPeer::start();
    let mut stream = TcpStream::connect(("127.0.0.1", peer.port)).expect("connect to echo_peer.py");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("read timeout");
    let validate = read_frame(&mut stream);
    assert_eq!(validate[8], 3, "ValidateConnection first");

    let vectors = lines(VECTORS);
    let mut id = 0;
    for (op, name) in [
        ("echoNested", "struct_nested"),
        ("echoFixed", "struct_fixed"),
        ("echoMixedSeq", "seq_mixed"),
        ("echoIntMixedDict", "dict_int_mixed"),
        ("echoStringPointDict", "dict_string_point"),
        ("echoSparseSeq", "seq_sparse"),
        ("echoStrings", "seq_string"),
    ] {
        id += 1;
        let bytes = hex::decode(&vectors[name]).expect("vectors.txt is hex");
        let reply = invoke(&mut stream, id, op, &bytes);
        assert_eq!(
            hex::encode(&reply),
            hex::encode(&bytes),
            "{op}({name}) through Python"
        );
    }

    // Optional parameters in, optional result and outs back, under other tags.
    let s = Some("h\u{e9}".to_string());
    let seq = Some(types::iota(300));
    let p = Some(types::point());
    let d = Some(BTreeMap::from([
        ("k".to_string(), 1i32),
        ("l".to_string(), -2),
    ]));
    for present in [true, false] {
        let pick = |tags: [u32; 4]| {
            let mut e = Encoder::new();
            if present {
                e.write_optional(tags[0], s.as_ref());
                e.write_optional(tags[1], seq.as_ref());
                e.write_optional(tags[2], p.as_ref());
                e.write_optional(tags[3], d.as_ref());
            }
            e.as_slice().to_vec()
        };
        id += 1;
        let reply = invoke(&mut stream, id, "echoOpts", &pick([1, 2, 3, 30]));
        assert_eq!(
            hex::encode(&reply),
            hex::encode(pick([10, 11, 12, 40])),
            "echoOpts (values present: {present})"
        );
    }
    drop(stream);
}
