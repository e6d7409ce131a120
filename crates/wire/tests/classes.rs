//! Class instances against the bytes real Ice 3.7.8 peers sent
//! (captured from Ice 3.7.8 peers, copied here as hex):
//! decode, check, re-encode to the identical bytes.

mod common;

use std::sync::Arc;

use common::*;
use floe_wire::class::{ClassRef, SliceTypeId, UnknownSlicedValue, ValueFactoryRegistry, ValuePtr};
use floe_wire::{ClassFormat, Decoder, Encoder, Error};

const CLS_BASE: &str = r#"18 00 00 00 01 01 01 21 0b "::Cap::Base" 05 00 00 00"#;
const CLS_DERIVED: &str = r#"1e 00 00 00 01 01 01 01 0e "::Cap::Derived" 01 64 20 05 00 00 00"#;
const CLS_NULL: &str = "07 00 00 00 01 01 00";
const CLS_SLICED: &str = r#"32 00 00 00 01 01 01 11 0e "::Cap::Derived" 06 00 00 00 01 64
    31 0b "::Cap::Base" 08 00 00 00 05 00 00 00"#;
const GRAPH: &str =
    r#"20 00 00 00 01 01 01 21 0b "::Cap::Node" 01 00 00 00 01 22 01 02 00 00 00 02"#;
const COMPACT_PY: &str = "0d 00 00 00 01 01 01 23 07 09 00 00 00";
const COMPACT_CPP: &str = r#"1b 00 00 00 01 01 01 21 0e "::Cap::Compact" 09 00 00 00"#;
const PAIR_SAME: &str =
    r#"27 00 00 00 01 01 01 21 0b "::Cap::Pair" 01 21 0b "::Cap::Base" 01 00 00 00 03"#;
const PAIR_DERIVED: &str = r#"36 00 00 00 01 01 01 21 0b "::Cap::Pair" 01 01 0e "::Cap::Derived"
    01 71 20 02 00 00 00 01 02 02 01 72 20 03 00 00 00"#;
const PAIR_SLICED: &str = r#"52 00 00 00 01 01 01 39 0b "::Cap::Pair" 06 00 00 00 01 02 02
    01 31 0b "::Cap::Base" 08 00 00 00 01 00 00 00
    01 11 0e "::Cap::Derived" 06 00 00 00 01 72 32 02 08 00 00 00 03 00 00 00"#;
const WITHOPT_ALL: &str = r#"24 00 00 00 01 01 01 25 0e "::Cap::WithOpt" 01 00 00 00
    0a 02 00 00 00 1d 01 7a ff"#;
const WITHOPT_NONE: &str = r#"1b 00 00 00 01 01 01 21 0e "::Cap::WithOpt" 01 00 00 00"#;

fn read_one<T: floe_wire::ValueType>(
    bytes: &[u8],
    registry: &Arc<ValueFactoryRegistry>,
) -> Option<ClassRef<T>> {
    let mut dec = decoder(bytes, registry);
    let v = dec.read_class::<T>().expect("decode");
    dec.finish_encapsulation().expect("nothing left");
    v
}

fn write_one<T: floe_wire::ValueType>(format: ClassFormat, v: &Option<ClassRef<T>>) -> Vec<u8> {
    encaps(format, |enc| enc.write(v))
}

#[test]
fn cls_base_and_derived_compact() {
    let reg = all_classes();
    let b = read_one::<Base>(&hex(CLS_BASE), &reg).unwrap();
    assert_eq!(b.read().a, 5);
    assert_eq!(b.ice_id(), "::Cap::Base");
    assert_eq!(write_one(ClassFormat::Compact, &Some(b)), hex(CLS_BASE));

    // Derived, read through a Base member type, then narrowed.
    let b = read_one::<Base>(&hex(CLS_DERIVED), &reg).unwrap();
    assert_eq!(b.read().a, 5);
    assert_eq!(b.ice_id(), "::Cap::Derived");
    let d = b.downcast::<Derived>().expect("a Derived");
    assert_eq!(d.read().s, "d");
    assert!(d.downcast::<Node>().is_none());
    assert_eq!(write_one(ClassFormat::Compact, &Some(b)), hex(CLS_DERIVED));

    assert!(read_one::<Base>(&hex(CLS_NULL), &reg).is_none());
    assert_eq!(
        write_one::<Base>(ClassFormat::Compact, &None),
        hex(CLS_NULL)
    );
}

#[test]
fn cls_sliced() {
    let reg = all_classes();
    let d = read_one::<Derived>(&hex(CLS_SLICED), &reg).unwrap();
    assert_eq!((d.read().base.a, d.read().s.as_str()), (5, "d"));
    assert_eq!(
        write_one(ClassFormat::Sliced, &Some(d.clone())),
        hex(CLS_SLICED)
    );
    // The same value in the compact format is the compact capture.
    assert_eq!(write_one(ClassFormat::Compact, &Some(d)), hex(CLS_DERIVED));
}

#[test]
fn graph_cycle() {
    let reg = all_classes();
    // Rejected by default, as C++ peers do.
    let mut dec = decoder(&hex(GRAPH), &reg);
    let err = dec.read_class::<Node>().unwrap_err();
    assert!(err.to_string().contains("cycle"), "{err}");

    let mut dec = decoder(&hex(GRAPH), &reg);
    dec.set_accept_class_cycles(true);
    let n1 = dec.read_class::<Node>().unwrap().unwrap();
    dec.finish_encapsulation().unwrap();
    let n2 = n1.read().next.clone().unwrap();
    assert_eq!((n1.read().v, n2.read().v), (1, 2));
    assert!(ClassRef::ptr_eq(n2.read().next.as_ref().unwrap(), &n1));
    assert_eq!(
        write_one(ClassFormat::Compact, &Some(n1.clone())),
        hex(GRAPH)
    );
    // Debug does not recurse into the cycle.
    assert!(format!("{:?}", n1.read().next).contains("::Cap::Node"));
    // Break the cycle so that it does not leak.
    n2.write().next = None;
}

#[test]
fn compact_type_id_both_forms() {
    let reg = all_classes();
    for capture in [COMPACT_PY, COMPACT_CPP] {
        let c = read_one::<Compact>(&hex(capture), &reg).unwrap();
        assert_eq!(c.read().c, 9);
        // Written as Python does: the compact id.
        assert_eq!(write_one(ClassFormat::Compact, &Some(c)), hex(COMPACT_PY));
    }
}

#[test]
fn pair_shared_instance_and_type_id_index() {
    let reg = all_classes();
    let p = read_one::<Pair>(&hex(PAIR_SAME), &reg).unwrap();
    {
        let p = p.read();
        let (x, y) = (p.x.as_ref().unwrap(), p.y.as_ref().unwrap());
        assert!(ClassRef::ptr_eq(x, y));
        assert_eq!(x.read().a, 1);
    }
    assert_eq!(write_one(ClassFormat::Compact, &Some(p)), hex(PAIR_SAME));

    let p = read_one::<Pair>(&hex(PAIR_DERIVED), &reg).unwrap();
    {
        let p = p.read();
        let x = p.x.as_ref().unwrap().downcast::<Derived>().unwrap();
        let y = p.y.as_ref().unwrap().downcast::<Derived>().unwrap();
        assert_eq!((x.read().base.a, x.read().s.as_str()), (2, "q"));
        assert_eq!((y.read().base.a, y.read().s.as_str()), (3, "r"));
    }
    assert_eq!(write_one(ClassFormat::Compact, &Some(p)), hex(PAIR_DERIVED));
}

#[test]
fn pair_sliced_indirection_table() {
    let reg = all_classes();
    let p = read_one::<Pair>(&hex(PAIR_SLICED), &reg).unwrap();
    {
        let p = p.read();
        assert_eq!(p.x.as_ref().unwrap().read().a, 1);
        let y = p.y.as_ref().unwrap().downcast::<Derived>().unwrap();
        assert_eq!((y.read().base.a, y.read().s.as_str()), (3, "r"));
    }
    assert_eq!(write_one(ClassFormat::Sliced, &Some(p)), hex(PAIR_SLICED));
}

#[test]
fn withopt_optional_members() {
    let reg = all_classes();
    let w = read_one::<WithOpt>(&hex(WITHOPT_ALL), &reg).unwrap();
    assert_eq!(
        (w.read().a, w.read().b, w.read().s.clone()),
        (1, Some(2), Some("z".to_owned()))
    );
    assert_eq!(write_one(ClassFormat::Compact, &Some(w)), hex(WITHOPT_ALL));
    let w = read_one::<WithOpt>(&hex(WITHOPT_NONE), &reg).unwrap();
    assert_eq!(
        (w.read().a, w.read().b, w.read().s.clone()),
        (1, None, None)
    );
    assert_eq!(write_one(ClassFormat::Compact, &Some(w)), hex(WITHOPT_NONE));
}

fn only(register: impl FnOnce(&mut ValueFactoryRegistry)) -> Arc<ValueFactoryRegistry> {
    let mut r = ValueFactoryRegistry::new();
    register(&mut r);
    Arc::new(r)
}

#[test]
fn sliced_unknown_derived_is_skipped_and_preserved() {
    // A peer that knows Base but not Derived.
    let reg = only(|r| {
        r.register::<Base>();
    });
    let b = read_one::<Base>(&hex(CLS_SLICED), &reg).unwrap();
    assert_eq!(b.read().a, 5);
    assert_eq!(b.ice_id(), "::Cap::Base");
    {
        let g = b.read();
        let sliced = g.sliced.as_ref().expect("preserved");
        assert_eq!(sliced.slices.len(), 1);
        assert_eq!(
            sliced.slices[0].type_id,
            SliceTypeId::Name("::Cap::Derived".into())
        );
        assert_eq!(&sliced.slices[0].bytes[..], b"\x01d");
    }
    // Written back unchanged in the sliced format...
    assert_eq!(
        write_one(ClassFormat::Sliced, &Some(b.clone())),
        hex(CLS_SLICED)
    );
    // ...and dropped in the compact format.
    assert_eq!(write_one(ClassFormat::Compact, &Some(b)), hex(CLS_BASE));

    // Same with instances in indirection tables.
    let reg = only(|r| {
        r.register::<Base>().register::<Pair>();
    });
    let p = read_one::<Pair>(&hex(PAIR_SLICED), &reg).unwrap();
    assert_eq!(p.read().y.as_ref().unwrap().read().a, 3);
    assert_eq!(write_one(ClassFormat::Sliced, &Some(p)), hex(PAIR_SLICED));
}

#[test]
fn sliced_all_unknown_is_unknown_sliced_value() {
    let reg = only(|_| {});
    let mut dec = decoder(&hex(CLS_SLICED), &reg);
    let v = dec.read_value().unwrap().unwrap();
    dec.finish_encapsulation().unwrap();
    assert!(v.type_ids().is_empty());
    {
        let g = v.read();
        assert_eq!(g.ice_id(), "::Cap::Derived");
        let any: &dyn std::any::Any = &**g;
        let u = any.downcast_ref::<UnknownSlicedValue>().unwrap();
        assert_eq!(u.sliced_data.slices.len(), 2);
    }
    // A typed read of it is an UnexpectedObject.
    let mut dec = decoder(&hex(CLS_SLICED), &reg);
    let err = dec.read_class::<Base>().unwrap_err();
    assert!(
        matches!(err, Error::UnexpectedObject { ref type_id, .. } if type_id == "::Cap::Derived")
    );
    // Re-marshaled unchanged, in either format.
    let v = Some(v);
    assert_eq!(
        encaps(ClassFormat::Sliced, |e| e.write(&v)),
        hex(CLS_SLICED)
    );
    assert_eq!(
        encaps(ClassFormat::Compact, |e| e.write(&v)),
        hex(CLS_SLICED)
    );

    // Pair known, Base and Derived not: the table entries become
    // UnknownSlicedValues, which are not Bases.
    let reg = only(|r| {
        r.register::<Pair>();
    });
    let mut dec = decoder(&hex(PAIR_SLICED), &reg);
    assert!(matches!(
        dec.read_class::<Pair>(),
        Err(Error::UnexpectedObject { .. })
    ));
}

#[test]
fn compact_unknown_is_no_value_factory() {
    let reg = only(|r| {
        r.register::<Base>();
    });
    let mut dec = decoder(&hex(CLS_DERIVED), &reg);
    match dec.read_value() {
        Err(Error::NoValueFactory { type_id }) => assert_eq!(type_id, "::Cap::Derived"),
        other => panic!("{other:?}"),
    }
    let mut dec = decoder(&hex(COMPACT_PY), &reg);
    match dec.read_value() {
        Err(Error::NoValueFactory { type_id }) => assert_eq!(type_id, "7"),
        other => panic!("{other:?}"),
    }
    // No registry at all.
    let mut outer = Decoder::new(hex(CLS_BASE).into());
    let mut dec = Decoder::from_encapsulation(outer.read_encapsulation().unwrap()).unwrap();
    assert!(matches!(
        dec.read_value(),
        Err(Error::NoValueFactory { .. })
    ));
}

#[test]
fn unexpected_type_is_rejected() {
    let reg = all_classes();
    let mut dec = decoder(&hex(CLS_BASE), &reg);
    match dec.read_class::<Node>() {
        Err(Error::UnexpectedObject { type_id, expected }) => {
            assert_eq!(
                (type_id.as_str(), expected.as_str()),
                ("::Cap::Base", "::Cap::Node")
            )
        }
        other => panic!("{other:?}"),
    }
}

fn chain(n: usize) -> Option<ClassRef<Node>> {
    let mut head = None;
    for v in (0..n).rev() {
        head = Some(ClassRef::new(Node {
            v: v as i32,
            next: head,
        }));
    }
    head
}

#[test]
fn deep_chain_hits_the_depth_limit() {
    let reg = all_classes();
    let bytes = write_one(ClassFormat::Compact, &chain(150));
    let mut dec = decoder(&bytes, &reg);
    let err = dec.read_class::<Node>().unwrap_err();
    assert!(err.to_string().contains("depth"), "{err}");

    let mut dec = decoder(&bytes, &reg);
    dec.set_class_graph_depth_max(200);
    let head = dec.read_class::<Node>().unwrap().unwrap();
    let mut n = 0;
    let mut cur = Some(head);
    while let Some(node) = cur {
        assert_eq!(node.read().v, n);
        n += 1;
        cur = node.read().next.clone();
    }
    assert_eq!(n, 150);

    // Exactly at the limit is fine.
    let bytes = write_one(ClassFormat::Compact, &chain(100));
    assert!(decoder(&bytes, &reg).read_class::<Node>().is_ok());
}

#[test]
fn long_chain_of_back_references_hits_the_height_limit() {
    // node[i].next = node[i-1]: each written at top level, so nothing nests,
    // but the chain is long.
    let n = 1500;
    let mut nodes: Vec<Option<ClassRef<Node>>> = Vec::new();
    for v in 0..n {
        let next = nodes.last().cloned().flatten();
        nodes.push(Some(ClassRef::new(Node { v, next })));
    }
    let bytes = encaps(ClassFormat::Compact, |e| e.write_seq(&nodes));
    let reg = all_classes();
    let mut dec = decoder(&bytes, &reg);
    dec.set_class_graph_height_max(1000);
    let err = dec.read_seq::<Option<ClassRef<Node>>>().unwrap_err();
    assert!(err.to_string().contains("too high"), "{err}");
    let mut dec = decoder(&bytes, &reg);
    let back = dec.read_seq::<Option<ClassRef<Node>>>().unwrap();
    assert_eq!(back.len(), n as usize);
    assert_eq!(
        back[5]
            .as_ref()
            .unwrap()
            .read()
            .next
            .as_ref()
            .unwrap()
            .read()
            .v,
        4
    );
    // Re-encodes identically (same ids, same back-references).
    assert_eq!(encaps(ClassFormat::Compact, |e| e.write_seq(&back)), bytes);
}

#[test]
fn round_trips_in_both_formats() {
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
        y: None,
    });
    let params: Vec<Option<ClassRef<Pair>>> =
        vec![Some(pair.clone()), None, Some(pair2), Some(pair)];
    for format in [ClassFormat::Compact, ClassFormat::Sliced] {
        let bytes = encaps(format, |e| {
            e.write_seq(&params);
            e.write_optional(3, Some(&Some(shared.clone())));
            e.write_i32(-1);
        });
        let mut dec = decoder(&bytes, &reg);
        let back = dec.read_seq::<Option<ClassRef<Pair>>>().unwrap();
        let opt = dec
            .read_optional_value::<Option<ClassRef<Base>>>(3)
            .unwrap();
        // The optional is a back-reference to the shared instance.
        let (p0, p3) = (back[0].as_ref().unwrap(), back[3].as_ref().unwrap());
        assert!(ClassRef::ptr_eq(p0, p3));
        assert!(back[1].is_none());
        let x = p0.read().x.clone().unwrap();
        assert!(ClassRef::ptr_eq(&x, p0.read().y.as_ref().unwrap()));
        assert!(ClassRef::ptr_eq(
            &x,
            opt.as_ref().unwrap().as_ref().unwrap()
        ));
        assert_eq!(x.read().a, 7);
        let d = back[2].as_ref().unwrap().read().x.clone().unwrap();
        assert_eq!(d.downcast::<Derived>().unwrap().read().s, "x");
        assert_eq!(dec.read_i32().unwrap(), -1);
        dec.finish_encapsulation().unwrap();
        let again = encaps(format, |e| {
            e.write_seq(&back);
            e.write_optional(3, opt.as_ref());
            e.write_i32(-1);
        });
        assert_eq!(again, bytes, "{format:?}");
    }
}

#[test]
fn optional_class_members_and_skipping() {
    let holder = ClassRef::new(Keeper {
        h: 4,
        b: Some(Some(ClassRef::new(Base { a: 9, sliced: None }))),
    });
    let trailing = Some(ClassRef::new(Node { v: 1, next: None }));
    for format in [ClassFormat::Compact, ClassFormat::Sliced] {
        let bytes = encaps(format, |e| {
            e.write(&Some(holder.clone()));
            // An optional parameter nobody reads: skipped at the end.
            e.write_optional(9, Some(&trailing));
        });
        let mut dec = decoder(&bytes, &all_classes());
        let h = dec.read_class::<Keeper>().unwrap().unwrap();
        dec.finish_encapsulation().unwrap();
        let b = h.read().b.clone().unwrap().unwrap();
        assert_eq!((h.read().h, b.read().a), (4, 9));

        // A reader whose Keeper has no optional member skips it (and the
        // instance in it) at end_slice.
        let mut reg = ValueFactoryRegistry::new();
        reg.register::<KeeperV1>()
            .register::<Base>()
            .register::<Node>();
        let mut dec = decoder(&bytes, &Arc::new(reg));
        let h = dec.read_class::<KeeperV1>().unwrap().unwrap();
        assert_eq!(h.read().h, 4);
        dec.finish_encapsulation().unwrap();
    }
}

#[test]
fn value_ptr_api() {
    let p = ValuePtr::new(Derived::default());
    assert!(p.is_a("::Cap::Base"));
    assert!(!p.is_a("::Cap::Node"));
    let b = p.downcast::<Base>().unwrap();
    b.write().a = 3;
    assert_eq!(p.downcast::<Derived>().unwrap().read().base.a, 3);
    assert_eq!(p.read().ice_id(), "::Cap::Derived");
    let q = p.clone();
    assert_eq!(p, q);
    assert_ne!(p, ValuePtr::new(Derived::default()));
    let as_ptr: ValuePtr = b.into();
    assert_eq!(as_ptr, p);
}

#[test]
fn absent_optional_member_does_not_read_past_its_slice() {
    // Found by the differential test: Keeper(b unset) followed by a null
    // element. The slice has no 0x04 flag, so the `00` after it is the next
    // element, not an optional with tag 0.
    let roots = vec![Some(ClassRef::new(Keeper { h: 0, b: None })), None];
    let bytes = encaps(ClassFormat::Compact, |e| e.write_seq(&roots));
    assert_eq!(
        bytes,
        hex(r#"1c 00 00 00 01 01 02 01 21 0d "::Cap::Keeper" 00 00 00 00 00"#)
    );
    let mut dec = decoder(&bytes, &all_classes());
    let back = dec.read_seq::<Option<ClassRef<Keeper>>>().unwrap();
    dec.finish_encapsulation().unwrap();
    assert_eq!(back.len(), 2);
    assert!(back[0].as_ref().unwrap().read().b.is_none());
    assert!(back[1].is_none());
}

#[test]
fn handles_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<ValuePtr>();
    check::<ClassRef<Node>>();
    check::<Box<dyn floe_wire::UserException>>();
    check::<floe_wire::class::ValueFactoryRegistry>();
    check::<Decoder>();
    check::<Encoder>();
}

/// Decoding nests once per inline instance: at the largest depth limit a
/// communicator accepts (`CLASS_GRAPH_DEPTH_LIMIT`), a chain decodes and
/// drops within a 2 MiB stack (a tokio worker's) in this build profile.
#[test]
fn the_depth_limit_fits_a_worker_stack() {
    let depth = floe_wire::class::CLASS_GRAPH_DEPTH_LIMIT;
    let bytes = write_one(ClassFormat::Compact, &chain(depth));
    let done = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let reg = all_classes();
            let mut dec = decoder(&bytes, &reg);
            dec.set_class_graph_depth_max(depth);
            let head = dec.read_class::<Node>().unwrap().unwrap();
            drop(head);
            let mut dec = decoder(&bytes, &reg);
            dec.set_class_graph_depth_max(depth - 1);
            assert!(dec.read_class::<Node>().is_err());
        })
        .unwrap()
        .join();
    assert!(done.is_ok());
}
