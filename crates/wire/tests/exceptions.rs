//! User exceptions against the reply encapsulations real Ice 3.7.8 servers
//! sent (captured from Ice 3.7.8 peers, copied here):
//! Python and C++11 forms decode; our encoding matches Python's.

mod common;

use common::*;
use floe_wire::exception::UserExceptionRegistry;
use floe_wire::{ClassFormat, ClassRef, Decoder, Error, UserException};

const BASE_PY: &str = r#"1b 00 00 00 01 01 20 0e "::Cap::BaseErr" 04 "boom""#;
const BASE_CPP: &str = r#"1b 00 00 00 01 01 00 0e "::Cap::BaseErr" 04 "boom""#;
const DERIVED_PY: &str = r#"33 00 00 00 01 01 00 11 "::Cap::DerivedErr" 2a 00 00 00
    20 0e "::Cap::BaseErr" 05 "deriv""#;
const DERIVED_CPP: &str = r#"33 00 00 00 01 01 00 11 "::Cap::DerivedErr" 2a 00 00 00
    00 0e "::Cap::BaseErr" 05 "deriv""#;
const DERIVED_SLICED_PY: &str = r#"3b 00 00 00 01 01 10 11 "::Cap::DerivedErr" 08 00 00 00
    2a 00 00 00 30 0e "::Cap::BaseErr" 0a 00 00 00 05 "deriv""#;
const DERIVED_SLICED_CPP: &str = r#"3b 00 00 00 01 01 10 11 "::Cap::DerivedErr" 08 00 00 00
    2a 00 00 00 10 0e "::Cap::BaseErr" 0a 00 00 00 05 "deriv""#;
const OPT_PY: &str = r#"1b 00 00 00 01 01 24 0d "::Cap::OptErr" 12 07 00 00 00 ff"#;
const OPT_CPP: &str = r#"1b 00 00 00 01 01 04 0d "::Cap::OptErr" 12 07 00 00 00 ff"#;
const OPT_UNSET_PY: &str = r#"15 00 00 00 01 01 20 0d "::Cap::OptErr""#;
const OPT_UNSET_CPP: &str = r#"15 00 00 00 01 01 00 0d "::Cap::OptErr""#;
const UNDECLARED_PY: &str = r#"1d 00 00 00 01 01 20 11 "::Cap::Undeclared" 05 00 00 00"#;
const UNDECLARED_CPP: &str = r#"1d 00 00 00 01 01 00 11 "::Cap::Undeclared" 05 00 00 00"#;

fn read(
    bytes: &str,
    registry: &UserExceptionRegistry,
) -> floe_wire::Result<Box<dyn UserException>> {
    let mut dec = decoder(&hex(bytes), &all_classes());
    let ex = dec.read_user_exception(registry)?;
    dec.finish_encapsulation()?;
    Ok(ex)
}

fn write(format: ClassFormat, ex: &dyn UserException) -> Vec<u8> {
    encaps(format, |enc| enc.write_user_exception(ex))
}

#[test]
fn base_err() {
    let reg = all_exceptions();
    for capture in [BASE_PY, BASE_CPP] {
        let ex = read(capture, &reg).unwrap();
        assert_eq!(ex.ice_id(), "::Cap::BaseErr");
        assert_eq!(ex.downcast_ref::<BaseErr>().unwrap().reason, "boom");
        assert_eq!(write(ClassFormat::Compact, &*ex), hex(BASE_PY));
    }
}

#[test]
fn derived_err_compact_and_sliced() {
    let reg = all_exceptions();
    for capture in [
        DERIVED_PY,
        DERIVED_CPP,
        DERIVED_SLICED_PY,
        DERIVED_SLICED_CPP,
    ] {
        let ex = read(capture, &reg).unwrap();
        assert_eq!(ex.ice_id(), "::Cap::DerivedErr");
        assert!(ex.is_a("::Cap::BaseErr"));
        let d = ex.downcast_ref::<DerivedErr>().unwrap();
        assert_eq!((d.code, d.base.reason.as_str()), (42, "deriv"));
        assert_eq!(ex.downcast_ref::<BaseErr>().unwrap().reason, "deriv");
        assert!(ex.downcast_ref::<OptErr>().is_none());
        assert_eq!(write(ClassFormat::Compact, &*ex), hex(DERIVED_PY));
        assert_eq!(write(ClassFormat::Sliced, &*ex), hex(DERIVED_SLICED_PY));
    }
}

#[test]
fn opt_err() {
    let reg = all_exceptions();
    for capture in [OPT_PY, OPT_CPP] {
        let ex = read(capture, &reg).unwrap();
        assert_eq!(ex.downcast_ref::<OptErr>().unwrap().o, Some(7));
        assert_eq!(write(ClassFormat::Compact, &*ex), hex(OPT_PY));
    }
    for capture in [OPT_UNSET_PY, OPT_UNSET_CPP] {
        let ex = read(capture, &reg).unwrap();
        assert_eq!(ex.downcast_ref::<OptErr>().unwrap().o, None);
        assert_eq!(write(ClassFormat::Compact, &*ex), hex(OPT_UNSET_PY));
    }
}

fn unknown_id(r: floe_wire::Result<Box<dyn UserException>>) -> String {
    match r {
        Err(Error::UnknownUserException { type_id }) => type_id,
        other => panic!("expected UnknownUserException, got {other:?}"),
    }
}

#[test]
fn undeclared_is_unknown_user_exception() {
    let reg = all_exceptions();
    for capture in [UNDECLARED_PY, UNDECLARED_CPP] {
        assert_eq!(unknown_id(read(capture, &reg)), "::Cap::Undeclared");
    }
}

#[test]
fn unknown_derived_sliced_is_read_as_known_base() {
    // The client knows BaseErr only.
    let mut reg = UserExceptionRegistry::new();
    reg.register::<BaseErr>();
    for capture in [DERIVED_SLICED_PY, DERIVED_SLICED_CPP] {
        let ex = read(capture, &reg).unwrap();
        assert_eq!(ex.ice_id(), "::Cap::BaseErr");
        assert_eq!(ex.downcast_ref::<BaseErr>().unwrap().reason, "deriv");
    }
    // Compact slices cannot be skipped.
    for capture in [DERIVED_PY, DERIVED_CPP] {
        assert_eq!(unknown_id(read(capture, &reg)), "::Cap::DerivedErr");
    }
    // Nothing known: the most-derived id when the last slice says so (Ice
    // for Python sets the flag); Ice 3.7 C++11 never sets it, and an Ice
    // client then reads past the end: UnmarshalOutOfBoundsException.
    let empty = UserExceptionRegistry::new();
    assert_eq!(
        unknown_id(read(DERIVED_SLICED_PY, &empty)),
        "::Cap::DerivedErr"
    );
    assert_eq!(
        read(DERIVED_SLICED_CPP, &empty).unwrap_err().ice_name(),
        "::Ice::UnmarshalOutOfBoundsException"
    );
}

#[test]
fn exception_with_class_member() {
    let mut reg = all_exceptions();
    reg.register::<NodeErr>();
    let node = ClassRef::new(Node { v: 3, next: None });
    let ex = NodeErr {
        n: Some(node.clone()),
        m: Some(node),
    };
    for format in [ClassFormat::Compact, ClassFormat::Sliced] {
        let bytes = encaps(format, |enc| enc.write_user_exception(&ex));
        let mut dec = Decoder::new(bytes.clone().into());
        let mut dec = Decoder::from_encapsulation(dec.read_encapsulation().unwrap()).unwrap();
        dec.set_value_factories(all_classes());
        let back = dec.read_user_exception(&reg).unwrap();
        dec.finish_encapsulation().unwrap();
        let n = back.downcast_ref::<NodeErr>().unwrap().n.clone().unwrap();
        assert_eq!(n.read().v, 3);
        assert_eq!(
            encaps(format, |enc| enc.write_user_exception(&*back)),
            bytes
        );
        // Unknown to the reader: skipped in the sliced format (its table too).
        let mut dec = Decoder::new(bytes.clone().into());
        let mut dec = Decoder::from_encapsulation(dec.read_encapsulation().unwrap()).unwrap();
        dec.set_value_factories(all_classes());
        assert_eq!(
            unknown_id(dec.read_user_exception(&all_exceptions())),
            "::Cap::NodeErr"
        );
    }
}

/// `DerivedNodeErr extends NodeErr { Node k; }`, `NodeErr { Node n; Node m; }`
/// with n = Node(1), m = Node(2), k = Node(3, next = n), as written by an
/// Ice 3.7.8 C++11 `OutputStream::writeException` (no last-slice flags).
/// Shows that exception type ids are not entered in the type-id table (the
/// second Node is index 1) and how ids flow through indirection tables.
const NODE_ERR_CPP_COMPACT: &str = r#"50 00 00 00 01 01 00 15 "::Cap::DerivedNodeErr"
    01 21 0b "::Cap::Node" 03 00 00 00 01 22 01 01 00 00 00 00
    00 0e "::Cap::NodeErr" 03 01 22 01 02 00 00 00 00"#;
const NODE_ERR_CPP_SLICED: &str = r#"6b 00 00 00 01 01 18 15 "::Cap::DerivedNodeErr" 05 00 00 00 01
    01 01 39 0b "::Cap::Node" 09 00 00 00 03 00 00 00 01 01 01 32 01 09 00 00 00 01 00 00 00 00
    18 0e "::Cap::NodeErr" 06 00 00 00 01 02 02 03 01 32 01 09 00 00 00 02 00 00 00 00"#;

#[test]
fn exceptions_with_class_members_match_cpp() {
    let mut reg = UserExceptionRegistry::new();
    reg.register::<NodeErr>().register::<DerivedNodeErr>();
    for (capture, format) in [
        (NODE_ERR_CPP_COMPACT, ClassFormat::Compact),
        (NODE_ERR_CPP_SLICED, ClassFormat::Sliced),
    ] {
        let ex = read(capture, &reg).unwrap();
        let d = ex.downcast_ref::<DerivedNodeErr>().unwrap();
        let (n, m) = (d.base.n.clone().unwrap(), d.base.m.clone().unwrap());
        let k = d.k.clone().unwrap();
        assert_eq!((n.read().v, m.read().v, k.read().v), (1, 2, 3));
        assert!(ClassRef::ptr_eq(k.read().next.as_ref().unwrap(), &n));
        // We write what C++ wrote, plus the last-slice flag (as Python does).
        let mut expected = hex(capture);
        let base_id = b"\x0e::Cap::NodeErr";
        let at = expected
            .windows(base_id.len())
            .position(|w| w == base_id)
            .unwrap()
            - 1;
        assert_eq!(expected[at] & 0x20, 0);
        expected[at] |= 0x20;
        assert_eq!(write(format, &*ex), expected);
        // And the same value built by hand encodes the same way.
        let n = ClassRef::new(Node { v: 1, next: None });
        let built = DerivedNodeErr {
            base: NodeErr {
                n: Some(n.clone()),
                m: Some(ClassRef::new(Node { v: 2, next: None })),
            },
            k: Some(ClassRef::new(Node {
                v: 3,
                next: Some(n),
            })),
        };
        assert_eq!(write(format, &built), expected);
    }
}

/// `BaseErr` with `["preserve-slice"]`, as generated code writes it.
#[derive(Debug, Default)]
struct PreservedBaseErr {
    reason: String,
    sliced: Option<floe_wire::class::SlicedData>,
}

impl floe_wire::exception::UserExceptionType for PreservedBaseErr {
    const TYPE_ID: &'static str = "::Cap::BaseErr";
}

impl UserException for PreservedBaseErr {
    fn ice_id(&self) -> &'static str {
        "::Cap::BaseErr"
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::BaseErr"]
    }
    fn write_slices(&self, enc: &mut floe_wire::Encoder) {
        enc.start_slice("::Cap::BaseErr", None, true);
        enc.write_string(&self.reason);
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> floe_wire::Result<()> {
        dec.start_slice()?;
        self.reason = dec.read_string()?;
        dec.end_slice()
    }
    fn ice_sliced_data(&self) -> Option<&floe_wire::class::SlicedData> {
        self.sliced.as_ref()
    }
    fn ice_set_sliced_data(&mut self, sliced: floe_wire::class::SlicedData) {
        self.sliced = Some(sliced);
    }
}

#[test]
fn preserved_unknown_slices_are_relayed_in_the_sliced_format() {
    // A relaying server that knows only a preserved BaseErr keeps
    // DerivedErr's slice and sends it on: the caller gets DerivedErr back.
    let mut reg = UserExceptionRegistry::new();
    reg.register::<PreservedBaseErr>();
    for capture in [DERIVED_SLICED_PY, DERIVED_SLICED_CPP] {
        let ex = read(capture, &reg).unwrap();
        assert_eq!(ex.ice_id(), "::Cap::BaseErr");
        let sliced = ex.ice_sliced_data().expect("the unknown slice is kept");
        assert_eq!(sliced.slices.len(), 1);
        let relayed = write(ClassFormat::Sliced, &*ex);
        assert_eq!(relayed, hex(DERIVED_SLICED_PY));
        let mut dec = decoder(&relayed, &all_classes());
        let again = dec.read_user_exception(&all_exceptions()).unwrap();
        let d = again
            .downcast_ref::<DerivedErr>()
            .expect("the caller's own type");
        assert_eq!((d.code, d.base.reason.as_str()), (42, "deriv"));
        // The compact format drops preserved slices, as Ice does.
        let base = BaseErr {
            reason: "deriv".into(),
        };
        assert_eq!(
            write(ClassFormat::Compact, &*ex),
            write(ClassFormat::Compact, &base)
        );
    }
    // Without ["preserve-slice"] nothing is kept.
    let mut reg = UserExceptionRegistry::new();
    reg.register::<BaseErr>();
    let ex = read(DERIVED_SLICED_PY, &reg).unwrap();
    assert!(ex.ice_sliced_data().is_none());
}
