//! Part of `live_ice.rs`: classes and user exceptions in encoding 1.0
//! against the Python-mapping echo server, both ways. floe encodes class
//! graphs as 1.0 parameters, the server decodes them and encodes them back
//! as 1.0 results, and floe must read the graph it sent; the server raises
//! the exceptions of the `exc10_*` golden vectors, and its replies must be
//! those bytes (an exception with two instances in one round excepted: Ice
//! orders a round by address) and decode as floe expects.

use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use floe_wire::class::ValueFactoryRegistry;
use floe_wire::{ClassRef, Decoder, Encoder, ValuePtr, ENCODING_1_0};

use crate::vectors::class_types::*;
use crate::{interop_disabled, invoke_in, lines, read_frame, EchoPeer, VECTORS};

/// The data of an encoding-1.0 encapsulation holding `roots` (written
/// with their pending values).
fn params10(roots: &[Option<ValuePtr>]) -> Vec<u8> {
    let mut enc = Encoder::new();
    let mark = enc.start_encapsulation(ENCODING_1_0);
    for root in roots {
        enc.write_value(root.as_ref());
    }
    enc.end_encapsulation(mark);
    enc.as_slice()[6..].to_vec()
}

/// Reads one class reference and the pending values from 1.0 data.
fn read_root(data: Bytes, classes: Arc<ValueFactoryRegistry>) -> floe_wire::Result<Graph> {
    let mut dec = Decoder::with_encoding(data, ENCODING_1_0);
    dec.set_value_factories(classes);
    dec.set_accept_class_cycles(true);
    let root = dec.read_value()?;
    dec.finish_encapsulation()?;
    Ok(Graph(vec![root]))
}

/// The data of a golden vector (a whole encapsulation) without its header.
fn vector_data(name: &str) -> Vec<u8> {
    let hex = &lines(VECTORS)[name];
    hex::decode(hex).expect("vectors.txt is hex")[6..].to_vec()
}

#[test]
fn python_mapping_speaks_classes_and_exceptions_in_encoding_1_0() {
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

    // Graphs: a derived instance, shared instances in a sequence and a
    // dictionary, a cycle (the C++ core under Python accepts cycles of
    // several instances in 1.0 even without Ice.AcceptClassCycles).
    let base = |a| Some(ClassRef::new(Base { a }));
    let shared = base(1);
    let bag = ClassRef::new(Bag {
        seq: vec![
            shared.clone(),
            ClassRef::new(Derived {
                base: Base { a: 2 },
                s: "x".into(),
            })
            .downcast::<Base>(),
            None,
            shared,
        ],
        dict: [(1, base(3)), (2, None)].into(),
    });
    let n1 = ClassRef::new(Node { v: 1, next: None });
    n1.write().next = Some(ClassRef::new(Node {
        v: 2,
        next: Some(n1.clone()),
    }));
    let derived = ClassRef::new(Derived {
        base: Base { a: 5 },
        s: "d".into(),
    });
    let cases: [(&str, ValuePtr); 3] = [
        ("echoBase", derived.into_ptr()),
        ("echoBag", bag.into_ptr()),
        ("echoNode", n1.clone().into_ptr()),
    ];
    let mut id = 0;
    for (op, value) in cases {
        id += 1;
        let sent = Graph(vec![Some(value)]);
        let params = params10(&sent.0);
        let (status, reply) = invoke_in(&mut stream, id, op, ENCODING_1_0, &params);
        assert_eq!((status, reply.encoding), (0, ENCODING_1_0), "{op}");
        let back = read_root(reply.data.clone(), class_registry(true))
            .unwrap_or_else(|e| panic!("{op}: floe cannot read Python's reply: {e}"));
        assert_eq!(back, sent, "{op}: Python echoed another graph");
        // Same graph, so floe writes what it sent (whatever order Python
        // chose inside a round).
        assert_eq!(hex::encode(params10(&back.0)), hex::encode(&params), "{op}");
        assert_eq!(reply.data.len(), params.len(), "{op}");
        if let Some(Some(n)) = back
            .0
            .first()
            .map(|r| r.as_ref().and_then(|p| p.downcast::<Node>()))
        {
            n.write().next = None;
        }
    }
    n1.write().next = None;

    // An empty sequence of classes: no reference, and yet the size 0 that
    // ends the pending values, which Ice requires.
    id += 1;
    let mut enc = Encoder::with_buffer(Default::default(), ENCODING_1_0);
    enc.write(&Vec::<Option<ClassRef<Base>>>::new());
    enc.write_pending_values();
    let (status, reply) = invoke_in(&mut stream, id, "echoBases", ENCODING_1_0, enc.as_slice());
    assert_eq!(status, 0);
    assert_eq!(&reply.data[..], enc.as_slice(), "echoBases([])");

    // Exceptions: the bytes of the golden vectors, read by floe, sliced to
    // a known base when the most-derived type is unknown.
    let known = exception_registry(true);
    let no_deeper = exception_registry(false);
    for (which, vector, expected, registry) in [
        (
            0i32,
            "exc10_derived",
            "::Golden::DerivedErr code:42 o:None reason:\"deriv\"",
            &known,
        ),
        (
            1,
            "exc10_deeper",
            "::Golden::DerivedErr code:42 o:None reason:\"deriv\"",
            &no_deeper,
        ),
        (
            2,
            "exc10_node",
            "::Golden::NodeErr n:#1 Node{v:1 next:#2 Node{v:2 next:null}}",
            &known,
        ),
        (
            3,
            "exc10_derived_node",
            "::Golden::DerivedNodeErr p:#1 Pair{x:#2 Base{a:4} y:#3 Derived{a:5 s:\"e\"}} \
             n:#4 Node{v:3 next:null}",
            &known,
        ),
    ] {
        id += 1;
        let (status, reply) =
            invoke_in(&mut stream, id, "fail", ENCODING_1_0, &which.to_le_bytes());
        assert_eq!((status, reply.encoding), (1, ENCODING_1_0), "fail({which})");
        let golden = vector_data(vector);
        if which != 3 {
            assert_eq!(
                hex::encode(&reply.data),
                hex::encode(&golden),
                "fail({which})"
            );
        }
        assert_eq!(reply.data.len(), golden.len(), "fail({which})");
        let mut dec = Decoder::with_encoding(reply.data, ENCODING_1_0);
        dec.set_value_factories(class_registry(true));
        let ex = dec
            .read_user_exception(registry)
            .expect("floe reads the exception");
        dec.finish_encapsulation().expect("nothing left");
        assert_eq!(format!("{:?}", Ex(ex)), expected, "fail({which})");
    }
    drop(stream);
}
