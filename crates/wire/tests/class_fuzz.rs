//! Hostile input: arbitrary and mutated bytes never panic the class and
//! exception decoders, in encoding 1.1 and 1.0 (and whatever they accept
//! re-encodes without panic).

mod common;

use bytes::Bytes;
use common::*;
use floe_wire::{ClassFormat, ClassRef, Decoder, ValuePtr, ENCODING_1_0};
use proptest::prelude::*;

/// Capture bodies (after the 6-byte encapsulation header) and a few more.
fn seeds() -> Vec<Vec<u8>> {
    [
        r#"01 21 0b "::Cap::Base" 05 00 00 00"#,
        r#"01 01 0e "::Cap::Derived" 01 64 20 05 00 00 00"#,
        r#"01 11 0e "::Cap::Derived" 06 00 00 00 01 64 31 0b "::Cap::Base" 08 00 00 00 05 00 00 00"#,
        r#"01 21 0b "::Cap::Node" 01 00 00 00 01 22 01 02 00 00 00 02"#,
        "01 23 07 09 00 00 00",
        r#"01 21 0b "::Cap::Pair" 01 21 0b "::Cap::Base" 01 00 00 00 03"#,
        r#"01 39 0b "::Cap::Pair" 06 00 00 00 01 02 02 01 31 0b "::Cap::Base" 08 00 00 00 01 00 00 00
           01 11 0e "::Cap::Derived" 06 00 00 00 01 72 32 02 08 00 00 00 03 00 00 00"#,
        r#"01 25 0e "::Cap::WithOpt" 01 00 00 00 0a 02 00 00 00 1d 01 7a ff"#,
        r#"10 11 "::Cap::DerivedErr" 08 00 00 00 2a 00 00 00 30 0e "::Cap::BaseErr" 0a 00 00 00 05 "deriv""#,
        r#"24 0d "::Cap::OptErr" 12 07 00 00 00 ff"#,
        r#"00 11 "::Cap::DerivedErr" 2a 00 00 00 00 0e "::Cap::BaseErr" 05 "deriv""#,
    ]
    .iter()
    .map(|s| hex(s))
    .chain(seeds10())
    .collect()
}

/// Encoding-1.0 bodies written by floe: a shared instance and a cycle, a
/// derived instance, an exception with class members.
fn seeds10() -> Vec<Vec<u8>> {
    let b = Some(ClassRef::new(Base { a: 1, sliced: None }));
    let pair = Some(ClassRef::new(Pair { x: b.clone(), y: b }));
    let n = ClassRef::new(Node { v: 1, next: None });
    n.write().next = Some(ClassRef::new(Node {
        v: 2,
        next: Some(n.clone()),
    }));
    let d = ClassRef::new(Derived {
        base: Base { a: 5, sliced: None },
        s: "d".into(),
    });
    let seeds = [
        encaps10(|e| {
            e.write(&pair);
            e.write(&Some(n.clone()));
        }),
        encaps10(|e| e.write(&d.downcast::<Base>())),
        encaps10(|e| {
            e.write_user_exception(&NodeErr {
                n: Some(n.clone()),
                m: None,
            })
        }),
    ];
    n.write().next = None;
    seeds.into_iter().map(|s| s[6..].to_vec()).collect()
}

/// Runs every class/exception entry point over `data`; must not panic.
fn exercise(data: &[u8]) {
    let classes = all_classes();
    let exceptions = all_exceptions();
    for accept_cycles in [false, true] {
        let new_dec = || {
            let mut dec = Decoder::new(Bytes::copy_from_slice(data));
            dec.set_value_factories(classes.clone());
            dec.set_accept_class_cycles(accept_cycles);
            dec
        };
        exercise10(data, accept_cycles);
        let mut dec = new_dec();
        if let Ok(v) = dec.read_value() {
            let _ = dec.finish_encapsulation();
            for format in [ClassFormat::Compact, ClassFormat::Sliced] {
                let _ = encaps(format, |e| e.write(&v));
            }
            break_cycles(v);
        }
        let mut dec = new_dec();
        if let Ok(v) = dec.read_class::<Pair>() {
            let _ = encaps(ClassFormat::Sliced, |e| e.write(&v));
        }
        let mut dec = new_dec();
        if let Ok(v) = dec.read_seq::<Option<ClassRef<Node>>>() {
            let _ = encaps(ClassFormat::Compact, |e| e.write_seq(&v));
            for n in v.into_iter().flatten() {
                n.write().next = None;
            }
        }
        let mut dec = new_dec();
        if let Ok(ex) = dec.read_user_exception(&exceptions) {
            let _ = encaps(ClassFormat::Sliced, |e| e.write_user_exception(&*ex));
        }
        let mut dec = new_dec();
        let _ = dec.finish_encapsulation();
    }
}

/// The encoding-1.0 entry points: references, then the pending values.
fn exercise10(data: &[u8], accept_cycles: bool) {
    let new_dec = || {
        let mut dec = Decoder::with_encoding(Bytes::copy_from_slice(data), ENCODING_1_0);
        dec.set_value_factories(all_classes());
        dec.set_accept_class_cycles(accept_cycles);
        dec
    };
    let mut dec = new_dec();
    if let Ok(v) = dec.read_class::<Pair>() {
        // A typed view works before the instance arrives (a stand-in).
        let _ = v.as_ref().map(|p| p.read().x.is_some());
        if dec.finish_encapsulation().is_ok() {
            let _ = v.as_ref().map(|p| p.read().y.is_some());
            let _ = encaps10(|e| e.write(&v));
        }
    }
    let mut dec = new_dec();
    if let Ok(v) = dec.read_seq::<Option<ClassRef<Node>>>() {
        if dec.finish_encapsulation().is_ok() {
            let _ = encaps10(|e| e.write_seq(&v));
        }
        for n in v.into_iter().flatten() {
            n.write().next = None;
        }
    }
    let mut dec = new_dec();
    if let Ok(v) = dec.read_value() {
        let _ = dec.finish_encapsulation();
        let _ = encaps10(|e| e.write(&v));
        break_cycles(v);
    }
    let mut dec = new_dec();
    if let Ok(ex) = dec.read_user_exception(&all_exceptions()) {
        let _ = encaps10(|e| e.write_user_exception(&*ex));
    }
}

/// Cuts `next` links of decoded nodes so that accepted cycles do not leak
/// across many cases.
fn break_cycles(v: Option<ValuePtr>) {
    if let Some(n) = v.and_then(|p| p.downcast::<Node>()) {
        n.write().next = None;
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Set(usize, u8),
    Truncate(usize),
    Insert(usize, u8),
    Remove(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Remove),
    ]
}

fn apply(mut data: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = data.len().max(1);
        match *m {
            Mutation::Set(i, b) => {
                if !data.is_empty() {
                    data[i % len] = b;
                }
            }
            Mutation::Truncate(i) => data.truncate(i % len),
            Mutation::Insert(i, b) => data.insert(i % (data.len() + 1), b),
            Mutation::Remove(i) => {
                if !data.is_empty() {
                    data.remove(i % len);
                }
            }
        }
    }
    data
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..200)) {
        exercise(&data);
    }

    #[test]
    fn arbitrary_bytes_with_class_prefix_never_panic(
        flags in any::<u8>(),
        data in proptest::collection::vec(any::<u8>(), 0..120),
    ) {
        let mut bytes = vec![1, flags];
        bytes.extend(data);
        exercise(&bytes);
    }

    #[test]
    fn mutated_captures_never_panic(
        seed in 0usize..14,
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let seeds = seeds();
        let data = apply(seeds[seed % seeds.len()].clone(), &mutations);
        exercise(&data);
    }
}

#[test]
fn seeds_decode() {
    // The seeds themselves are valid for at least one entry point.
    for s in seeds() {
        exercise(&s);
    }
}
