//! Live interop: builds the golden-vector generator (`golden/gen/`, C++11
//! mapping, Ice's own `Ice::OutputStream`) against the installed Ice 3.7,
//! runs it now, and compares its fresh bytes with floe's.
//!
//! The build is cached under `target/tmp/golden-gen-<hash of the sources>`.
//! Needs `slice2cpp`, `g++` and `libIce++11` (`cargo xtask test` installs
//! them); with `FLOE_NO_INTEROP=1` the tests print a line and return.

#[path = "golden/checks.rs"]
mod checks;
#[path = "golden/types.rs"]
#[allow(dead_code)]
mod types;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use floe_wire::{Encode, Encoder, ENCODING_1_0, ENCODING_1_1};
use types::{Color, Mixed, Sparse};

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
    let what = format!("{cmd:?}");
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let mut guard = PeerGuard(child);
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
