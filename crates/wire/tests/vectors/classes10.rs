//! The golden checks of classes and user exceptions in encoding 1.0 (the
//! `cls10_*` and `exc10_*` vectors, each a whole 1.0 encapsulation written
//! by Ice's `OutputStream`): floe decodes each into the value gen.cpp
//! wrote and encodes that value back into the same bytes; a reader that
//! does not know the most-derived type slices it to a known base.

use std::collections::BTreeMap;
use std::sync::Arc;

use floe_wire::class::ValueFactoryRegistry;
use floe_wire::exception::UserExceptionRegistry;
use floe_wire::{ClassRef, Decoder, Encoder, Error, Result, ValuePtr, ENCODING_1_0};

use super::checks::Vectors;
use super::class_types::*;

/// A decoder over the data of the 1.0 encapsulation `dec` holds.
fn inner(dec: &mut Decoder, classes: Arc<ValueFactoryRegistry>) -> Result<Decoder> {
    let encaps = dec.read_encapsulation()?;
    if encaps.encoding != ENCODING_1_0 {
        return Err(Error::marshal("not a 1.0 encapsulation"));
    }
    let mut d = Decoder::from_encapsulation(encaps)?;
    d.set_value_factories(classes);
    Ok(d)
}

/// Checks a vector of class references written as parameters (then the
/// pending values) both ways; `read` reads the roots.
fn graph(
    v: &mut Vectors,
    name: &str,
    expected: Vec<Option<ValuePtr>>,
    read: impl Fn(&mut Decoder) -> Result<Vec<Option<ValuePtr>>>,
) {
    v.with(
        name,
        Graph(expected),
        |g, enc| {
            let mark = enc.start_encapsulation(ENCODING_1_0);
            for root in &g.0 {
                enc.write_value(root.as_ref());
            }
            // end_encapsulation writes the pending values.
            enc.end_encapsulation(mark);
        },
        |dec| {
            let mut d = inner(dec, class_registry(true))?;
            let roots = read(&mut d)?;
            d.finish_encapsulation()?;
            Ok(Graph(roots))
        },
    );
}

/// One untyped root.
fn one(d: &mut Decoder) -> Result<Vec<Option<ValuePtr>>> {
    Ok(vec![d.read_value()?])
}

/// One root read as a `Base` (a typed reference: its check waits for the
/// instance, which comes after).
fn one_base(d: &mut Decoder) -> Result<Vec<Option<ValuePtr>>> {
    Ok(vec![d.read_class::<Base>()?.map(ClassRef::into_ptr)])
}

fn base(a: i32) -> ClassRef<Base> {
    ClassRef::new(Base { a })
}

fn derived(a: i32, s: &str) -> ClassRef<Derived> {
    ClassRef::new(Derived {
        base: Base { a },
        s: s.into(),
    })
}

fn node(v: i32, next: Option<ClassRef<Node>>) -> ClassRef<Node> {
    ClassRef::new(Node { v, next })
}

fn ptr<T: floe_wire::ValueType>(r: &ClassRef<T>) -> Option<ValuePtr> {
    Some(r.as_ptr().clone())
}

pub fn check_all(v: &mut Vectors) {
    classes(v);
    slicing(v);
    exceptions(v);
}

fn classes(v: &mut Vectors) {
    graph(v, "cls10_null", vec![None], one_base);
    graph(v, "cls10_base", vec![ptr(&base(5))], one_base);
    graph(v, "cls10_derived", vec![ptr(&derived(5, "d"))], one_base);

    let b = base(7);
    let pair = ClassRef::new(Pair {
        x: Some(b.clone()),
        y: Some(b.clone()),
    });
    graph(v, "cls10_shared", vec![ptr(&pair), ptr(&b)], |d| {
        let pair = d.read_class::<Pair>()?;
        let b = d.read_class::<Base>()?;
        Ok(vec![
            pair.map(ClassRef::into_ptr),
            b.map(ClassRef::into_ptr),
        ])
    });

    // A cycle: accepted only when asked for.
    let n1 = node(1, None);
    n1.write().next = Some(node(2, Some(n1.clone())));
    graph(v, "cls10_cycle", vec![ptr(&n1)], |d| {
        d.set_accept_class_cycles(true);
        Ok(vec![d.read_class::<Node>()?.map(ClassRef::into_ptr)])
    });
    n1.write().next = None;
    if let Some(bytes) = v.get("cls10_cycle") {
        let refused = Decoder::new(bytes).read_encapsulation().and_then(|e| {
            let mut d = Decoder::from_encapsulation(e)?;
            d.set_value_factories(class_registry(true));
            d.read_class::<Node>()?;
            d.finish_encapsulation()
        });
        v.expect(
            "cls10_cycle",
            matches!(&refused, Err(Error::Marshal { reason, .. }) if reason.contains("cycle")),
            &format!("a cycle without accept_class_cycles gave {refused:?}"),
        );
    }

    let b1 = base(1);
    let bag = ClassRef::new(Bag {
        seq: vec![
            Some(b1.clone()),
            Some(derived(2, "x").upcast::<Base>()),
            None,
            Some(b1),
        ],
        dict: BTreeMap::from([(1, Some(base(3))), (2, None)]),
    });
    graph(v, "cls10_bag", vec![ptr(&bag)], one);

    // Encoding 1.0 has no compact ids and no tagged members: Ice writes
    // the string id and drops `o`.
    let tagged = ClassRef::new(Tagged { a: 1, o: Some(2) });
    if let Some(bytes) = v.get("cls10_tagged") {
        let mut enc = Encoder::new();
        let mark = enc.start_encapsulation(ENCODING_1_0);
        enc.write_class(Some(&tagged));
        enc.end_encapsulation(mark);
        v.expect(
            "cls10_tagged",
            enc.as_slice() == &bytes[..],
            &format!("floe wrote {}", hex::encode(enc.as_slice())),
        );
    }
    graph(
        v,
        "cls10_tagged",
        vec![ptr(&ClassRef::new(Tagged { a: 1, o: None }))],
        one,
    );

    // An empty sequence of classes writes no reference: the terminating
    // size 0 of the pending values needs an explicit call.
    v.with(
        "cls10_empty_seq",
        Vec::<Option<ClassRef<Base>>>::new(),
        |seq, enc| {
            let mark = enc.start_encapsulation(ENCODING_1_0);
            enc.write(seq);
            enc.write_pending_values();
            enc.end_encapsulation(mark);
        },
        |dec| {
            let mut d = inner(dec, class_registry(true))?;
            let seq = d.read()?;
            d.read_pending_values()?;
            d.finish_encapsulation()?;
            Ok(seq)
        },
    );
}

/// `Deeper` in full, and sliced to `Derived` by a reader that does not
/// know it (its `extra` instance is still read, and dropped).
fn slicing(v: &mut Vectors) {
    let deeper = ClassRef::new(Deeper {
        base: Derived {
            base: Base { a: 1 },
            s: "s".into(),
        },
        l: -1,
        extra: Some(base(9)),
    });
    graph(v, "cls10_deeper", vec![ptr(&deeper)], one_base);
    let Some(bytes) = v.get("cls10_deeper") else {
        return;
    };
    let sliced = (|| {
        let mut d = inner(&mut Decoder::new(bytes), class_registry(false))?;
        let b = d.read_class::<Base>()?;
        d.finish_encapsulation()?;
        Ok::<_, Error>(Graph(vec![b.map(ClassRef::into_ptr)]))
    })();
    let expected = Graph(vec![ptr(&derived(1, "s"))]);
    v.expect(
        "cls10_deeper",
        sliced.as_ref().ok() == Some(&expected),
        &format!("sliced to {sliced:?}, expected {expected:?}"),
    );
}

/// Checks that a reader knowing only `registry_` decodes a vector into
/// `expected` (a known base of what was written).
fn sliced_exception(
    v: &mut Vectors,
    name: &str,
    expected: Box<dyn floe_wire::UserException>,
    registry_: &UserExceptionRegistry,
) {
    let Some(bytes) = v.get(name) else { return };
    let got = inner(&mut Decoder::new(bytes), class_registry(true)).and_then(|mut d| {
        let ex = d.read_user_exception(registry_)?;
        d.finish_encapsulation()?;
        Ok(Ex(ex))
    });
    let expected = Ex(expected);
    v.expect(
        name,
        got.as_ref().ok() == Some(&expected),
        &format!("sliced to {got:?}, expected {expected:?}"),
    );
}

fn exception(
    v: &mut Vectors,
    name: &str,
    expected: Box<dyn floe_wire::UserException>,
    registry_: UserExceptionRegistry,
) {
    let registry_ = Arc::new(registry_);
    v.with(
        name,
        Ex(expected),
        |ex, enc| {
            let mark = enc.start_encapsulation(ENCODING_1_0);
            enc.write_user_exception(&*ex.0);
            enc.end_encapsulation(mark);
        },
        move |dec| {
            let mut d = inner(dec, class_registry(true))?;
            let ex = d.read_user_exception(&registry_)?;
            d.finish_encapsulation()?;
            Ok(Ex(ex))
        },
    );
}

fn exceptions(v: &mut Vectors) {
    let boom = || BaseErr {
        reason: "boom".into(),
    };
    let deriv = |o| DerivedErr {
        base: BaseErr {
            reason: "deriv".into(),
        },
        code: 42,
        o,
    };
    exception(v, "exc10_base", Box::new(boom()), exception_registry(true));
    // The tagged member `o` is not written in 1.0.
    if let Some(bytes) = v.get("exc10_derived") {
        let mut enc = Encoder::new();
        let mark = enc.start_encapsulation(ENCODING_1_0);
        enc.write_user_exception(&deriv(Some(7)));
        enc.end_encapsulation(mark);
        v.expect(
            "exc10_derived",
            enc.as_slice() == &bytes[..],
            &format!("floe wrote {}", hex::encode(enc.as_slice())),
        );
    }
    exception(
        v,
        "exc10_derived",
        Box::new(deriv(None)),
        exception_registry(true),
    );
    let deeper = DeeperErr {
        base: deriv(None),
        more: "more".into(),
    };
    exception(
        v,
        "exc10_deeper",
        Box::new(deeper),
        exception_registry(true),
    );
    // Sliced to the known base; unknown altogether.
    sliced_exception(
        v,
        "exc10_deeper",
        Box::new(deriv(None)),
        &exception_registry(false),
    );
    let mut only_node = UserExceptionRegistry::new();
    only_node.register::<NodeErr>();
    for (name, id) in [
        ("exc10_deeper", "::Golden::DeeperErr"),
        ("exc10_base", "::Golden::BaseErr"),
        ("exc10_derived_node", "::Golden::DerivedNodeErr"),
    ] {
        let Some(bytes) = v.get(name) else { continue };
        let mut registry_ = UserExceptionRegistry::new();
        if name == "exc10_derived_node" {
            registry_.register::<BaseErr>();
        }
        let got = inner(&mut Decoder::new(bytes), class_registry(true))
            .and_then(|mut d| d.read_user_exception(&registry_));
        // 1.0 has no last-slice flag: without classes, Ice reads on past
        // the end (UnmarshalOutOfBoundsException); where pending values
        // follow, floe stops at them with the most-derived id.
        let ok = match &got {
            Err(Error::UnknownUserException { type_id }) => {
                name == "exc10_derived_node" && type_id == id
            }
            Err(e) => {
                name != "exc10_derived_node"
                    && e.ice_name() == "::Ice::UnmarshalOutOfBoundsException"
            }
            Ok(_) => false,
        };
        v.expect(name, ok, &format!("with no known type: {got:?}"));
    }

    let n1 = node(1, Some(node(2, None)));
    exception(
        v,
        "exc10_node",
        Box::new(NodeErr { n: Some(n1) }),
        exception_registry(true),
    );
    exception(
        v,
        "exc10_node_null",
        Box::new(NodeErr { n: None }),
        exception_registry(true),
    );
    let pair = ClassRef::new(Pair {
        x: Some(base(4)),
        y: Some(derived(5, "e").upcast::<Base>()),
    });
    let dn = DerivedNodeErr {
        base: NodeErr {
            n: Some(node(3, None)),
        },
        p: Some(pair),
    };
    exception(
        v,
        "exc10_derived_node",
        Box::new(dn),
        exception_registry(true),
    );
    // Sliced to NodeErr: the pair is read and dropped.
    sliced_exception(
        v,
        "exc10_derived_node",
        Box::new(NodeErr {
            n: Some(node(3, None)),
        }),
        &only_node,
    );
}
