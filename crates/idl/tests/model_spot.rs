//! Spot checks of the model built from the benchmark Slice file and from
//! IceStorm.ice: what the code generator will read.

mod common;

use std::path::Path;

use floe_idl::model::{ConstValue, DefKind, Model, OperationMode, OptionalFormat, Type};

fn compile(path: &Path) -> Model {
    let opts = floe_idl::Options {
        include_dirs: vec![common::SYSTEM_SLICE.into()],
        ..Default::default()
    };
    match floe_idl::compile(path, &opts) {
        Ok(out) => out.model,
        Err(f) => panic!("{}:\n{}", path.display(), f.rendered()),
    }
}

#[test]
fn bench_ice_model() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench/Bench.ice");
    let path = if path.is_file() {
        path
    } else {
        "/work/shared/bench/Bench.ice".into()
    };
    let m = compile(&path);
    assert_eq!(m.roots.len(), 1);
    assert_eq!(m.module(m.roots[0]).scoped, "::Bench");
    assert_eq!(m.definitions.len(), 12);

    let byte_seq = m.lookup("::Bench::ByteSeq").expect("ByteSeq");
    let DefKind::Sequence(s) = &byte_seq.kind else {
        panic!("ByteSeq kind")
    };
    assert_eq!(s.element, Type::Byte);
    assert_eq!(
        m.optional_format(Type::Named(byte_seq.id)),
        OptionalFormat::VSize
    );

    let fixed = m.lookup("::Bench::Fixed").expect("Fixed");
    let DefKind::Struct(st) = &fixed.kind else {
        panic!("Fixed kind")
    };
    let names: Vec<_> = st.members.iter().map(|x| (x.name.as_str(), x.ty)).collect();
    assert_eq!(
        names,
        vec![("i", Type::Int), ("j", Type::Int), ("d", Type::Double)]
    );
    assert!(!m.is_variable_size(Type::Named(fixed.id)));
    assert_eq!(m.min_wire_size(Type::Named(fixed.id)), 16);
    let sd = m.lookup("::Bench::StringDouble").expect("StringDouble");
    assert!(m.is_variable_size(Type::Named(sd.id)));

    let lat = m.lookup("::Bench::Latency").expect("Latency");
    let DefKind::Interface(li) = &lat.kind else {
        panic!("Latency kind")
    };
    assert_eq!(li.operations.len(), 1);
    assert_eq!(li.operations[0].name, "o");
    assert!(li.operations[0].return_type.is_none() && li.operations[0].params.is_empty());
    assert_eq!(
        m.type_ids(lat.id),
        vec!["::Bench::Latency", "::Ice::Object"]
    );

    let thr = m.lookup("::Bench::Throughput").expect("Throughput");
    let DefKind::Interface(ti) = &thr.kind else {
        panic!("Throughput kind")
    };
    let ops: Vec<_> = ti.operations.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        ops,
        [
            "sendByteSeq",
            "recvByteSeq",
            "sendFixedSeq",
            "recvFixedSeq",
            "sendStringDoubleSeq",
            "recvStringDoubleSeq",
            "shutdown"
        ]
    );
    let send = &ti.operations[0];
    assert_eq!(send.params[0].name, "seq");
    assert_eq!(send.params[0].ty, Type::Named(byte_seq.id));
    assert_eq!(send.params[0].metadata, vec!["cpp:array".to_owned()]);
    assert!(!send.params[0].out);
    let recv = &ti.operations[1];
    assert_eq!(recv.return_type, Some(Type::Named(byte_seq.id)));
    assert_eq!(recv.params[0].ty, Type::Int);
    assert_eq!(recv.mode, OperationMode::Normal);

    let dm = m.lookup("::Bench::DataMessage").expect("DataMessage");
    let DefKind::Struct(d) = &dm.kind else {
        panic!()
    };
    assert_eq!(d.members.len(), 6);
    assert_eq!(m.type_name(d.members[5].ty), "::Bench::SignalSeq");
    let msgs = m.lookup("::Bench::Messages").expect("Messages");
    let DefKind::Interface(mi) = &msgs.kind else {
        panic!()
    };
    assert_eq!(mi.operations.len(), 6);
    assert_eq!(mi.operations[1].return_type, Some(Type::Int));
    assert_eq!(msgs.span.line, 65);
}

#[test]
fn icestorm_ice_model() {
    let Some(dir) = common::system_slice_dir() else {
        return;
    };
    let m = compile(&dir.join("IceStorm/IceStorm.ice"));
    // Included files are in the model but not main.
    assert!(m.files[0].is_main && m.files.len() >= 4);
    assert!(m.files[0].metadata.iter().any(|x| x == "ice-prefix"));
    assert!(m.lookup("::Ice::Identity").is_some());

    let topic = m.lookup("::IceStorm::Topic").expect("Topic");
    let DefKind::Interface(t) = &topic.kind else {
        panic!()
    };
    assert!(t.defined);
    assert!(topic.doc.as_ref().is_some_and(|d| !d.summary.is_empty()));
    let get_name = t
        .operations
        .iter()
        .find(|o| o.name == "getName")
        .expect("getName");
    assert_eq!(get_name.mode, OperationMode::Idempotent);
    assert_eq!(
        get_name.metadata,
        vec!["nonmutating".to_owned(), "cpp:const".to_owned()]
    );
    assert_eq!(get_name.return_type, Some(Type::String));
    let sub = t
        .operations
        .iter()
        .find(|o| o.name == "subscribeAndGetPublisher")
        .expect("subscribe");
    assert_eq!(sub.return_type, Some(Type::ObjectProxy));
    let thrown: Vec<_> = sub
        .throws
        .iter()
        .map(|e| m.def(*e).scoped.as_str())
        .collect();
    assert_eq!(
        thrown,
        [
            "::IceStorm::AlreadySubscribed",
            "::IceStorm::InvalidSubscriber",
            "::IceStorm::BadQoS"
        ]
    );
    let doc = sub.doc.as_ref().expect("doc");
    assert_eq!(doc.params.len(), 2);
    assert_eq!(doc.params[0].0, "theQoS");
    assert!(doc.returns.is_some());
    assert_eq!(doc.throws.len(), 3);
    let qos = m.lookup("::IceStorm::QoS").expect("QoS");
    assert_eq!(sub.params[0].ty, Type::Named(qos.id));
    let link = t
        .operations
        .iter()
        .find(|o| o.name == "link")
        .expect("link");
    assert_eq!(link.params[0].ty, Type::Proxy(topic.id));
    assert_eq!(link.params[1].ty, Type::Int);
    let subs = t
        .operations
        .iter()
        .find(|o| o.name == "getSubscribers")
        .expect("getSubscribers");
    assert_eq!(
        subs.return_type.map(|r| m.type_name(r)),
        Some("::Ice::IdentitySeq".to_owned())
    );

    let link_info = m.lookup("::IceStorm::LinkInfo").expect("LinkInfo");
    let DefKind::Struct(li) = &link_info.kind else {
        panic!()
    };
    assert_eq!(li.members[0].ty, Type::Proxy(topic.id));
    // `interface Topic;` comes before LinkInfo; the definition later fills the same id.
    assert!(topic.id < link_info.id);

    let dict = m.lookup("::IceStorm::TopicDict").expect("TopicDict");
    let DefKind::Dictionary(d) = &dict.kind else {
        panic!()
    };
    assert_eq!((d.key, d.value), (Type::String, Type::Proxy(topic.id)));

    let tm = m.lookup("::IceStorm::TopicManager").expect("TopicManager");
    let DefKind::Interface(tmi) = &tm.kind else {
        panic!()
    };
    let create = tmi
        .operations
        .iter()
        .find(|o| o.name == "create")
        .expect("create");
    assert_eq!(create.return_type, Some(Type::Proxy(topic.id)));
    let finder = m.lookup("::IceStorm::Finder").expect("Finder");
    assert_eq!(finder.scoped, "::IceStorm::Finder");

    let exists = m.lookup("::IceStorm::TopicExists").expect("TopicExists");
    let DefKind::Exception(e) = &exists.kind else {
        panic!()
    };
    assert_eq!(e.members[0].name, "name");
    assert_eq!(e.members[0].ty, Type::String);

    // Main-file definitions only: what a generator would emit.
    let main: Vec<_> = m.main_definitions().map(|d| d.name.as_str()).collect();
    assert!(main.contains(&"TopicManager") && !main.contains(&"Identity"));
}

#[test]
fn constants_and_defaults_are_converted() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/valid");
    let m = compile(&dir.join("03_constants.ice"));
    let val = |n: &str| match &m.lookup(&format!("::M::{n}")).expect(n).kind {
        DefKind::Const(c) => c.value.clone(),
        _ => panic!("{n} not a const"),
    };
    assert_eq!(val("By"), ConstValue::Integer(255));
    assert_eq!(val("O"), ConstValue::Integer(0o777));
    assert_eq!(val("L"), ConstValue::Integer(i64::MIN));
    assert_eq!(val("F"), ConstValue::Float(1.5));
    assert_eq!(val("H"), ConstValue::Float(10.0));
    assert_eq!(val("Ref"), ConstValue::Integer(0x7fff_ffff));
    let color = m.lookup("::M::Color").expect("Color");
    assert_eq!(
        val("C1"),
        ConstValue::Enumerator {
            enum_id: color.id,
            index: 2
        }
    );
    let DefKind::Enum(e) = &color.kind else {
        panic!()
    };
    let values: Vec<_> = e.enumerators.iter().map(|x| x.value).collect();
    assert_eq!(values, [0, 5, 6]);
    let ConstValue::String(s) = val("S") else {
        panic!()
    };
    assert!(s.starts_with("tab\there \"quoted\" AA\u{e9}\u{1F600} \\ ?"));
}

/// `[["suppress-warning:deprecated"]]` silences deprecation warnings (as
/// slice2cpp does); other files keep them.
#[test]
fn suppress_warning_deprecated() {
    let body =
        "module M { interface I {} class C { int x; int op(); } interface J { I byValue(); } }";
    let warnings = |source: &str| {
        let out = floe_idl::compile_source(Path::new("W.ice"), source, &Default::default())
            .unwrap_or_else(|f| panic!("{}", f.rendered()));
        out.diagnostics.list.len()
    };
    assert_eq!(
        warnings(body),
        2,
        "classes with operations, interface by value"
    );
    for meta in [
        "suppress-warning:deprecated",
        "suppress-warning",
        "suppress-warning:all",
    ] {
        assert_eq!(warnings(&format!("[[\"{meta}\"]]\n{body}")), 0, "{meta}");
    }
    assert_eq!(
        warnings(&format!(
            "[[\"suppress-warning:invalid-metadata\"]]\n{body}"
        )),
        2
    );
}
