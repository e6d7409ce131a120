//! The bytes generated code writes match a real Ice peer: a Python Ice 3.7
//! client calls `Rich::Echo` operations (tests/py/capture.py) against a raw
//! socket that records each request's parameter encapsulation, and the
//! same values encoded with the generated Rust types must give the same
//! bytes (structs with every member kind, sequences, dictionaries, enums,
//! `Ice::Identity`, nested modules, a class graph with optionals and a
//! compact id, optional parameters).
#![cfg(not(floe_no_ice_slice))]

mod python;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use floe::codegen::{ClassRef, Encode, Encoder};
use floe_codegen_tests::rich;
use python::Peer;

fn python_capture() -> Option<Vec<(String, String)>> {
    let python = python::PYTHON;
    let has_ice = Command::new(python)
        .args(["-c", "import Ice"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_ice {
        if std::env::var_os("FLOE_NO_INTEROP").is_some() {
            println!("FLOE_NO_INTEROP set: Python Ice peer missing, interop check skipped");
            return None;
        }
        panic!("{python} with the Ice module is missing: install python3-zeroc-ice (cargo xtask test does)");
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let child = Command::new(python)
        .arg(dir.join("tests/py/capture.py"))
        .arg(dir.join("../idl/tests/codegen/Rich.ice"))
        .arg("/usr/share/ice/slice")
        .stdout(Stdio::piped())
        .spawn()
        .expect("start python3");
    let mut peer = Peer(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = peer.0.try_wait().expect("wait python3") {
            assert!(status.success(), "capture.py failed: {status}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "capture.py did not finish in 60 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut out = String::new();
    std::io::Read::read_to_string(peer.0.stdout.as_mut().expect("piped"), &mut out).unwrap();
    Some(
        out.lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(op, hex)| (op.to_owned(), hex.to_owned()))
            .collect(),
    )
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
        id: floe::Identity::new("n", "c"),
    }
}

fn hex_of(write: impl FnOnce(&mut Encoder)) -> String {
    let mut enc = Encoder::new();
    write(&mut enc);
    hex::encode(enc.finish())
}

fn one<T: Encode + ?Sized>(v: &T) -> String {
    hex_of(|enc| enc.write(v))
}

#[test]
fn generated_encoding_matches_python_ice() {
    let Some(captured) = python_capture() else {
        return;
    };
    let circle = ClassRef::new(rich::Circle {
        base: rich::Shape {
            name: "c".into(),
            sides: None,
            label: Some("L".into()),
            ice_sliced_data: None,
        },
        radius: 2.0,
        inner: Some(ClassRef::new(rich::Shape {
            name: "in".into(),
            sides: Some(3),
            label: None,
            ice_sliced_data: None,
        })),
    });
    let expected = [
        ("putPrims", one(&rich::Prims::default())),
        ("putMixed", one(&mixed())),
        (
            "putWrappers",
            one(&vec![rich::inner::Wrapper {
                p: rich::Point { x: -1, y: 9 },
                c: rich::Color::Green,
                m: mixed(),
            }]),
        ),
        ("putShape", one(&circle.downcast::<rich::Shape>())),
        (
            "putOpts",
            hex_of(|enc| {
                enc.write(&1i32);
                enc.write_optional(1, Some(&3i32));
                enc.write_optional(2, Some("x"));
                enc.write_optional(3, Some(&rich::Point { x: 1, y: 2 }));
                enc.write_optional(4, Some(&[1i32, 2][..]));
                enc.write_optional::<rich::Color>(5, None);
            }),
        ),
    ];
    assert_eq!(captured.len(), expected.len(), "captured: {captured:?}");
    for ((op, python), (want_op, rust)) in captured.iter().zip(expected.iter()) {
        assert_eq!(op, want_op);
        assert_eq!(python, rust, "{op}: Python Ice vs generated Rust");
    }
}
