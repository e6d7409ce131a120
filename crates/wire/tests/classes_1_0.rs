//! Classes and user exceptions in encoding 1.0, floe both ways: round
//! trips of graphs (shared instances, cycles), slicing of unknown types,
//! exceptions, and hostile input. Byte-exactness against Ice 3.7.8 is
//! checked by the golden vectors (`vectors/classes10.rs`) and the live peers
//! (`class_interop.rs`, `live_ice/live10.rs`).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use common::*;
use floe_wire::class::{Value, ValueFactoryRegistry, ValueType};
use floe_wire::exception::UserExceptionRegistry;
use floe_wire::{
    ClassFormat, ClassRef, Decoder, Encoder, Error, Result, UserException, ValuePtr, ENCODING_1_0,
    ENCODING_1_1,
};

fn only(register: impl FnOnce(&mut ValueFactoryRegistry)) -> Arc<ValueFactoryRegistry> {
    let mut r = ValueFactoryRegistry::new();
    register(&mut r);
    Arc::new(r)
}

/// Reads a sequence of `T` references and the pending values.
fn read_seq10<T: ValueType>(
    bytes: &[u8],
    registry: &Arc<ValueFactoryRegistry>,
    accept_cycles: bool,
) -> Result<Vec<Option<ClassRef<T>>>> {
    let mut dec = decoder(bytes, registry);
    dec.set_accept_class_cycles(accept_cycles);
    let v = dec.read_seq::<Option<ClassRef<T>>>()?;
    dec.finish_encapsulation()?;
    Ok(v)
}

fn marshal_reason(r: Result<impl std::fmt::Debug>) -> String {
    match r {
        Err(Error::Marshal { reason, .. }) => reason,
        other => panic!("expected a marshal error, got {other:?}"),
    }
}

#[test]
fn graph_round_trip_keeps_sharing_and_cycles() {
    let reg = all_classes();
    let shared = ClassRef::new(Base { a: 7, sliced: None });
    let derived = ClassRef::new(Derived {
        base: Base { a: 8, sliced: None },
        s: "x".into(),
    });
    let pair = ClassRef::new(Pair {
        x: Some(shared.clone()),
        y: Some(shared.clone()),
    });
    let pair2 = ClassRef::new(Pair {
        x: derived.downcast::<Base>(),
        y: Some(shared),
    });
    let params = vec![Some(pair.clone()), None, Some(pair2), Some(pair)];
    let bytes = encaps10(|e| e.write_seq(&params));
    // Four references, then the rounds: [pair 1, pair2 2], [shared 3, derived 4].
    assert_eq!(
        &bytes[6..28],
        &hex("04 ffffffff 00000000 feffffff ffffffff 02 01000000")[..]
    );
    let back = read_seq10::<Pair>(&bytes, &reg, false).unwrap();
    let (p0, p3) = (back[0].as_ref().unwrap(), back[3].as_ref().unwrap());
    assert!(ClassRef::ptr_eq(p0, p3));
    assert!(back[1].is_none());
    let x = p0.read().x.clone().unwrap();
    assert!(ClassRef::ptr_eq(&x, p0.read().y.as_ref().unwrap()));
    let p2 = back[2].as_ref().unwrap().read();
    assert!(ClassRef::ptr_eq(&x, p2.y.as_ref().unwrap()));
    assert_eq!(x.read().a, 7);
    assert_eq!(
        p2.x.as_ref()
            .unwrap()
            .downcast::<Derived>()
            .unwrap()
            .read()
            .s,
        "x"
    );
    drop(p2);
    assert_eq!(encaps10(|e| e.write_seq(&back)), bytes);

    // A cycle n1 -> n2 -> n1: refused unless accepted.
    let n1 = ClassRef::new(Node { v: 1, next: None });
    n1.write().next = Some(ClassRef::new(Node {
        v: 2,
        next: Some(n1.clone()),
    }));
    let bytes = encaps10(|e| e.write_seq(&[Some(n1.clone())]));
    n1.write().next = None;
    let reason = marshal_reason(read_seq10::<Node>(&bytes, &reg, false));
    assert!(reason.contains("cycle"), "{reason}");
    let back = read_seq10::<Node>(&bytes, &reg, true).unwrap();
    let b1 = back[0].clone().unwrap();
    let b2 = b1.read().next.clone().unwrap();
    assert_eq!((b1.read().v, b2.read().v), (1, 2));
    assert!(ClassRef::ptr_eq(b2.read().next.as_ref().unwrap(), &b1));
    assert_eq!(encaps10(|e| e.write_seq(&back)), bytes);
    b1.write().next = None;
}

#[test]
fn unknown_derived_types_slice_to_a_known_base() {
    let d = ClassRef::new(Derived {
        base: Base { a: 5, sliced: None },
        s: "d".into(),
    });
    let bytes = encaps10(|e| e.write(&Some(d.clone())));
    // A reader that knows Base only.
    let reg = only(|r| {
        r.register::<Base>();
    });
    let mut dec = decoder(&bytes, &reg);
    let b = dec.read_class::<Base>().unwrap().unwrap();
    dec.finish_encapsulation().unwrap();
    assert_eq!((b.ice_id(), b.read().a), ("::Cap::Base", 5));
    // 1.0 keeps no sliced data: written back as a plain Base.
    assert!(b.read().sliced.is_none());
    let plain = encaps10(|e| e.write(&Some(ClassRef::new(Base { a: 5, sliced: None }))));
    assert_eq!(encaps10(|e| e.write(&Some(b))), plain);
    // A reader that knows neither: the most-derived id.
    let mut dec = decoder(&bytes, &only(|_| {}));
    dec.read_value().unwrap();
    assert_eq!(
        dec.finish_encapsulation(),
        Err(Error::NoValueFactory {
            type_id: "::Cap::Derived".into()
        })
    );
    // The same Derived in a sequence with a shared Base after it: slicing
    // keeps the ids and the type-id table in step.
    let shared = Some(ClassRef::new(Base { a: 1, sliced: None }));
    let seq = vec![d.downcast::<Base>(), shared.clone(), shared];
    let bytes = encaps10(|e| e.write_seq(&seq));
    let back = read_seq10::<Base>(&bytes, &reg, false).unwrap();
    assert_eq!(back[0].as_ref().unwrap().read().a, 5);
    assert!(ClassRef::ptr_eq(
        back[1].as_ref().unwrap(),
        back[2].as_ref().unwrap()
    ));
}

#[test]
fn preserved_slices_from_1_1_are_not_written_in_1_0() {
    // Decoded from the 1.1 sliced format by a reader that knows Base only.
    let sliced = hex(
        r#"32 00 00 00 01 01 01 11 0e "::Cap::Derived" 06 00 00 00 01 64
        31 0b "::Cap::Base" 08 00 00 00 05 00 00 00"#,
    );
    let reg = only(|r| {
        r.register::<Base>();
    });
    let mut dec = decoder(&sliced, &reg);
    let b = dec.read_class::<Base>().unwrap();
    assert!(b.as_ref().unwrap().read().sliced.is_some());
    let plain = encaps10(|e| e.write(&Some(ClassRef::new(Base { a: 5, sliced: None }))));
    assert_eq!(encaps10(|e| e.write(&b)), plain);
    // An instance none of whose types was known is only its Object slice.
    let mut dec = decoder(&sliced, &only(|_| {}));
    let unknown = dec.read_value().unwrap();
    let bytes = encaps10(|e| e.write(&unknown));
    assert_eq!(
        &bytes[6..],
        &hex(r#"ffffffff 01 01000000 00 0d "::Ice::Object" 05000000 00 00"#)[..]
    );
}

#[test]
fn typed_references_are_checked_when_the_instance_arrives() {
    let bytes = encaps10(|e| e.write(&Some(ClassRef::new(Node { v: 1, next: None }))));
    let mut dec = decoder(&bytes, &all_classes());
    let pair = dec.read_class::<Pair>().unwrap();
    assert!(pair.is_some());
    assert_eq!(
        dec.finish_encapsulation(),
        Err(Error::UnexpectedObject {
            type_id: "::Cap::Node".into(),
            expected: "::Cap::Pair".into()
        })
    );
}

#[test]
fn exceptions_round_trip_and_slice() {
    let derived = DerivedErr {
        base: BaseErr {
            reason: "deriv".into(),
        },
        code: 42,
    };
    let bytes = encaps10(|e| e.write_user_exception(&derived));
    assert_eq!(
        &bytes[6..],
        &hex(
            r#"00 11 "::Cap::DerivedErr" 08000000 2a000000 0e "::Cap::BaseErr" 0a000000 05 "deriv""#
        )[..]
    );
    let read = |bytes: &[u8], reg: &UserExceptionRegistry| {
        let mut dec = decoder(bytes, &all_classes());
        let ex = dec.read_user_exception(reg)?;
        dec.finish_encapsulation()?;
        Ok::<_, Error>(ex)
    };
    let ex = read(&bytes, &all_exceptions()).unwrap();
    let d = ex.downcast_ref::<DerivedErr>().unwrap();
    assert_eq!((d.code, d.base.reason.as_str()), (42, "deriv"));
    assert_eq!(encaps10(|e| e.write_user_exception(&*ex)), bytes);
    // Sliced to the base, or unknown altogether.
    let mut base_only = UserExceptionRegistry::new();
    base_only.register::<BaseErr>();
    let ex = read(&bytes, &base_only).unwrap();
    assert_eq!(ex.ice_id(), "::Cap::BaseErr");
    // Unknown altogether: 1.0 has no last-slice flag, so Ice reads on past
    // the end and raises UnmarshalOutOfBoundsException; so does floe.
    assert_eq!(
        read(&bytes, &UserExceptionRegistry::new())
            .unwrap_err()
            .ice_name(),
        "::Ice::UnmarshalOutOfBoundsException"
    );
}

#[test]
fn exceptions_with_classes_set_the_flag_and_write_the_instances() {
    let n = ClassRef::new(Node { v: 1, next: None });
    let m = ClassRef::new(Node {
        v: 2,
        next: Some(n.clone()),
    });
    let ex = DerivedNodeErr {
        base: NodeErr {
            n: Some(n.clone()),
            m: Some(m),
        },
        k: Some(n),
    };
    // NodeErr does not override ice_uses_classes: the references set it.
    assert!(!UserException::ice_uses_classes(&ex));
    let bytes = encaps10(|e| e.write_user_exception(&ex));
    assert_eq!(bytes[6], 1, "uses classes");
    let mut reg = UserExceptionRegistry::new();
    reg.register::<NodeErr>().register::<DerivedNodeErr>();
    let mut dec = decoder(&bytes, &all_classes());
    let back = dec.read_user_exception(&reg).unwrap();
    dec.finish_encapsulation().unwrap();
    let d = back.downcast_ref::<DerivedNodeErr>().unwrap();
    let (n, m) = (d.base.n.clone().unwrap(), d.base.m.clone().unwrap());
    assert!(ClassRef::ptr_eq(&n, d.k.as_ref().unwrap()));
    assert!(ClassRef::ptr_eq(&n, m.read().next.as_ref().unwrap()));
    assert_eq!(encaps10(|e| e.write_user_exception(&*back)), bytes);
    // Sliced to NodeErr (the slice with `k` skipped), and unknown: the
    // pending values after the slices are not taken for another slice.
    let mut node_only = UserExceptionRegistry::new();
    node_only.register::<NodeErr>();
    let mut dec = decoder(&bytes, &all_classes());
    let ex = dec.read_user_exception(&node_only).unwrap();
    dec.finish_encapsulation().unwrap();
    assert_eq!(ex.ice_id(), "::Cap::NodeErr");
    let mut dec = decoder(&bytes, &all_classes());
    assert_eq!(
        dec.read_user_exception(&all_exceptions()).unwrap_err(),
        Error::UnknownUserException {
            type_id: "::Cap::DerivedNodeErr".into()
        }
    );
}

#[test]
fn pending_values_belong_to_their_encapsulation() {
    // A 1.0 encapsulation inside a 1.1 one: its instances end it.
    let b = Some(ClassRef::new(Base { a: 3, sliced: None }));
    let mut enc = Encoder::new();
    let outer = enc.start_encapsulation(ENCODING_1_1);
    enc.write_i32(9);
    let inner = enc.start_encapsulation(ENCODING_1_0);
    enc.write(&b);
    enc.end_encapsulation(inner);
    enc.write_i32(-9);
    enc.end_encapsulation(outer);
    let bytes = enc.finish();
    let mut dec = Decoder::new(bytes.clone());
    let mut outer = Decoder::from_encapsulation(dec.read_encapsulation().unwrap()).unwrap();
    assert_eq!(outer.read_i32().unwrap(), 9);
    let mut inner = Decoder::from_encapsulation(outer.read_encapsulation().unwrap()).unwrap();
    inner.set_value_factories(all_classes());
    let back = inner.read_class::<Base>().unwrap();
    inner.finish_encapsulation().unwrap();
    assert_eq!(back.unwrap().read().a, 3);
    assert_eq!(outer.read_i32().unwrap(), -9);
    outer.finish_encapsulation().unwrap();
    // Explicit calls are no-ops in 1.1 and not repeated by 1.0's close.
    let mut enc = Encoder::new();
    enc.write_pending_values();
    assert!(enc.is_empty());
    let with_call = encaps10(|e| {
        e.write(&b);
        e.write_pending_values();
    });
    assert_eq!(with_call, encaps10(|e| e.write(&b)));
    let mut dec = Decoder::new(Bytes::from_static(b"\x07"));
    dec.read_pending_values().unwrap();
    assert_eq!(dec.remaining(), 1);
}

/// Patches the size of the encapsulation `v` after an edit.
fn fix_size(v: &mut [u8]) {
    let size = v.len() as i32;
    v[..4].copy_from_slice(&size.to_le_bytes());
}

/// Raw 1.0 data: `refs` (instance references), then one round of
/// `instances` (id, Node value, next reference), then the end.
fn nodes10(refs: &[i32], instances: &[(i32, i32, i32)]) -> Vec<u8> {
    let mut enc = Encoder::new();
    let mark = enc.start_encapsulation(ENCODING_1_0);
    for r in refs {
        enc.write_i32(*r);
    }
    enc.write_size(instances.len());
    for (i, (id, v, next)) in instances.iter().enumerate() {
        enc.write_i32(*id);
        // Type ids: `::Cap::Node` then `::Ice::Object` as strings the
        // first time, then indexes 1 and 2.
        if i == 0 {
            enc.write_bool(false);
            enc.write_string("::Cap::Node");
        } else {
            enc.write_bool(true);
            enc.write_size(1);
        }
        enc.write_i32(12);
        enc.write_i32(*v);
        enc.write_i32(*next);
        if i == 0 {
            enc.write_bool(false);
            enc.write_string("::Ice::Object");
        } else {
            enc.write_bool(true);
            enc.write_size(2);
        }
        enc.write_i32(5);
        enc.write_size(0);
    }
    enc.write_size(0);
    enc.end_encapsulation(mark);
    enc.finish().to_vec()
}

#[test]
fn hostile_references_and_instances_are_refused() {
    let reg = all_classes();
    let read = |bytes: &[u8]| read_seq10::<Node>(bytes, &reg, false);
    let seq = |refs: &[i32], instances: &[(i32, i32, i32)]| {
        let mut v = nodes10(refs, instances);
        v.insert(6, refs.len() as u8);
        fix_size(&mut v);
        v
    };
    // Sanity: a well-formed one.
    assert!(read(&seq(&[-1], &[(1, 5, 0)])).is_ok());
    // A positive reference, a reference that never comes, i32::MIN.
    assert!(marshal_reason(read(&seq(&[1], &[]))).contains("invalid object id"));
    assert!(marshal_reason(read(&seq(&[-2], &[(1, 5, 0)]))).contains("no instance"));
    assert!(marshal_reason(read(&seq(&[i32::MIN], &[(1, 5, 0)]))).contains("no instance"));
    // An instance id that is not positive, or comes twice.
    assert!(marshal_reason(read(&seq(&[-1], &[(0, 5, 0)]))).contains("invalid object id"));
    assert!(marshal_reason(read(&seq(&[-1], &[(1, 5, 0), (1, 6, 0)]))).contains("twice"));
    // A self-reference is a cycle.
    assert!(marshal_reason(read(&seq(&[-1], &[(1, 5, -1)]))).contains("cycle"));
    // A round count far beyond the data: out of bounds, no allocation.
    let mut v = nodes10(&[], &[]);
    v.truncate(6);
    v.extend_from_slice(&[1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    fix_size(&mut v);
    assert!(matches!(read(&v), Err(Error::UnmarshalOutOfBounds { .. })));
}

#[test]
fn malformed_slices_are_refused() {
    let reg = all_classes();
    let read = |body: &str| {
        let mut v = vec![0, 0, 0, 0, 1, 0];
        v.extend(hex(body));
        fix_size(&mut v);
        let mut dec = decoder(&v, &reg);
        dec.read_value()?;
        dec.finish_encapsulation()
    };
    let node = r#"00 0b "::Cap::Node" 0c000000 01000000 00000000"#;
    assert_eq!(
        read(&format!(
            "ffffffff 01 01000000 {node} 00 0d \"::Ice::Object\" 05000000 00 00"
        )),
        Ok(())
    );
    // The Object slice with a facet map.
    let reason = marshal_reason(read(&format!(
        "ffffffff 01 01000000 {node} 00 0d \"::Ice::Object\" 05000000 01 00"
    )));
    assert!(reason.contains("Object slice"), "{reason}");
    // A type id index never defined; a slice size below 4 or past the end.
    assert!(marshal_reason(read("ffffffff 01 01000000 01 05 08000000")).contains("index 5"));
    assert!(
        marshal_reason(read(r#"ffffffff 01 01000000 00 0b "::Cap::Node" 03000000"#))
            .contains("slice size")
    );
    assert!(matches!(
        read(r#"ffffffff 01 01000000 00 0b "::Cap::Node" 7f000000 00"#),
        Err(Error::UnmarshalOutOfBounds { .. })
    ));
    // Members overrunning their slice (size says 4 bytes of members).
    let reason = marshal_reason(read(
        r#"ffffffff 01 01000000 00 0b "::Cap::Node" 08000000 01000000 00000000"#,
    ));
    assert!(reason.contains("overran"), "{reason}");
    // Only the Object slice: no known type.
    assert_eq!(
        read(r#"ffffffff 01 01000000 00 0d "::Ice::Object" 05000000 00 00"#),
        Err(Error::NoValueFactory {
            type_id: "::Ice::Object".into()
        })
    );
}

#[test]
fn depth_and_height_limits() {
    // A chain written by floe: one instance per round, each one deeper.
    fn chain(n: i32) -> Option<ClassRef<Node>> {
        let mut head = None;
        for v in (0..n).rev() {
            head = Some(ClassRef::new(Node { v, next: head }));
        }
        head
    }
    let reg = all_classes();
    let bytes = encaps10(|e| e.write_seq(&[chain(150)]));
    let reason = marshal_reason(read_seq10::<Node>(&bytes, &reg, false));
    assert!(reason.contains("depth"), "{reason}");
    let mut dec = decoder(&bytes, &reg);
    dec.set_class_graph_depth_max(200);
    dec.read_seq::<Option<ClassRef<Node>>>().unwrap();
    dec.finish_encapsulation().unwrap();
    assert!(read_seq10::<Node>(&encaps10(|e| e.write_seq(&[chain(100)])), &reg, false).is_ok());

    // A hostile peer sends the chain in one round, last link first: no
    // instance is referenced before it is read, so the depth stays 1, but
    // the chain is as long as ever.
    let n = 3000;
    let instances: Vec<(i32, i32, i32)> = (1..=n)
        .rev()
        .map(|id| (id, id, if id == n { 0 } else { -(id + 1) }))
        .collect();
    let mut v = nodes10(&[-1], &instances);
    v.insert(6, 1);
    fix_size(&mut v);
    let reason = marshal_reason(read_seq10::<Node>(&v, &reg, false));
    assert!(reason.contains("too high"), "{reason}");
    let mut dec = decoder(&v, &reg);
    dec.set_class_graph_height_max(4000);
    let back = dec.read_seq::<Option<ClassRef<Node>>>().unwrap();
    dec.finish_encapsulation().unwrap();
    assert_eq!(back[0].as_ref().unwrap().read().v, 1);
}

static DROPS: AtomicUsize = AtomicUsize::new(0);

/// Counts its drops: shows that a refused cycle does not leak.
#[derive(Debug, Default)]
struct Counted {
    next: Option<ValuePtr>,
}
impl ValueType for Counted {
    const TYPE_ID: &'static str = "::Cap::Node";
}
impl Value for Counted {
    fn ice_id(&self) -> &str {
        Self::TYPE_ID
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &["::Cap::Node"]
    }
    fn write_slices(&self, enc: &mut Encoder) {
        enc.start_slice(Self::TYPE_ID, None, true);
        enc.write_i32(0);
        enc.write_value(self.next.as_ref());
        enc.end_slice();
    }
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()> {
        dec.start_slice()?;
        dec.read_i32()?;
        self.next = dec.read_value()?;
        dec.end_slice()
    }
}
impl Drop for Counted {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_refused_cycle_does_not_leak() {
    let bytes = nodes10(&[-1], &[(1, 1, -2), (2, 2, -1)]);
    let reg = only(|r| {
        r.register::<Counted>();
    });
    let before = DROPS.load(Ordering::SeqCst);
    {
        let mut dec = decoder(&bytes, &reg);
        let root = dec.read_value().unwrap();
        let reason = marshal_reason(dec.finish_encapsulation());
        assert!(reason.contains("cycle"), "{reason}");
        // The handle stays a valid (reset) instance of its type.
        assert!(root
            .unwrap()
            .downcast::<Counted>()
            .unwrap()
            .read()
            .next
            .is_none());
    }
    // The two instances read, and the two defaults that replaced them.
    assert_eq!(DROPS.load(Ordering::SeqCst) - before, 4);
}

#[test]
fn compact_format_setting_does_not_matter_in_1_0() {
    let c = Some(ClassRef::new(Compact { c: 9 }));
    let write = |format| {
        let mut enc = Encoder::new();
        enc.set_class_format(format);
        let mark = enc.start_encapsulation(ENCODING_1_0);
        enc.write(&c);
        enc.end_encapsulation(mark);
        enc.finish()
    };
    let compact = write(ClassFormat::Compact);
    assert_eq!(compact, write(ClassFormat::Sliced));
    // The compact id is written as the string id.
    assert!(compact.windows(14).any(|w| w == b"::Cap::Compact"));
}
