//! `slice/IceStorm.ice` (floe-storm's own Slice) is wire-equivalent to the
//! IceStorm 3.7 Slice installed by Debian Ice: same type ids, operations,
//! parameters (types expanded to their wire shape), modes (including the
//! `nonmutating` wire mode), return types, exceptions and their members.
//! Its broker-to-broker part (not in the installed Slice) is checked
//! against the wire facts of §8.5.

use std::collections::BTreeMap;
use std::path::Path;

use floe_idl::model::{DefKind, Model, Type};

fn compile(path: &Path, include: Option<&str>) -> Model {
    let opts = floe_idl::Options {
        include_dirs: include.into_iter().map(Into::into).collect(),
        ice_prefix: true,
        ..Default::default()
    };
    match floe_idl::compile(path, &opts) {
        Ok(out) => out.model,
        Err(fail) => panic!("{} does not compile:\n{}", path.display(), fail.rendered()),
    }
}

/// A type as the wire sees it: named types expanded, proxies by type id.
fn shape(m: &Model, t: Option<&Type>) -> String {
    let Some(t) = t else {
        return "void".into();
    };
    match t {
        Type::Proxy(id) => format!("{}*", m.def(*id).type_id()),
        Type::Named(id) => match &m.def(*id).kind {
            DefKind::Struct(s) => {
                let members: Vec<String> = s
                    .members
                    .iter()
                    .map(|d| format!("{} {}", shape(m, Some(&d.ty)), d.name))
                    .collect();
                format!("struct{{{}}}", members.join("; "))
            }
            DefKind::Sequence(s) => format!("sequence<{}>", shape(m, Some(&s.element))),
            DefKind::Dictionary(d) => format!(
                "dictionary<{}, {}>",
                shape(m, Some(&d.key)),
                shape(m, Some(&d.value))
            ),
            other => format!("{} {}", other.keyword(), m.def(*id).type_id()),
        },
        other => format!("{other:?}"),
    }
}

/// Every non-local `::IceStorm::` definition, described by its wire facts.
fn contract(m: &Model) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for d in &m.definitions {
        if !d.scoped.starts_with("::IceStorm::") || d.local {
            continue;
        }
        let text = match &d.kind {
            DefKind::Interface(i) if i.defined => {
                let mut lines = vec![format!("ids {:?}", m.type_ids(d.id))];
                for op in &i.operations {
                    let params: Vec<String> = op
                        .params
                        .iter()
                        .map(|p| {
                            format!(
                                "{}{} {} tag={:?}",
                                if p.out { "out " } else { "" },
                                shape(m, Some(&p.ty)),
                                p.name,
                                p.tag
                            )
                        })
                        .collect();
                    let mut throws: Vec<&str> =
                        op.throws.iter().map(|t| m.def(*t).type_id()).collect();
                    throws.sort_unstable();
                    lines.push(format!(
                        "{:?}{} {} {}({}) throws {:?}",
                        op.mode,
                        if op.metadata.iter().any(|x| x == "nonmutating") {
                            " nonmutating"
                        } else {
                            ""
                        },
                        shape(m, op.return_type.as_ref()),
                        op.name,
                        params.join(", "),
                        throws
                    ));
                }
                lines.join("\n")
            }
            DefKind::Interface(_) => continue,
            DefKind::Exception(e) => {
                let members: Vec<String> = e
                    .members
                    .iter()
                    .map(|x| format!("{} {}", shape(m, Some(&x.ty)), x.name))
                    .collect();
                format!(
                    "exception base={:?} {{{}}}",
                    e.base.map(|b| m.def(b).type_id().to_string()),
                    members.join("; ")
                )
            }
            DefKind::Struct(_) | DefKind::Sequence(_) | DefKind::Dictionary(_) => {
                shape(m, Some(&Type::Named(d.id)))
            }
            other => format!("{} {}", other.keyword(), d.type_id()),
        };
        out.insert(d.scoped.clone(), text);
    }
    out
}

/// The broker-to-broker definitions, which the installed Slice lacks.
const INTERNAL: [&str; 5] = [
    "::IceStorm::EventData",
    "::IceStorm::EventDataSeq",
    "::IceStorm::TopicInternal",
    "::IceStorm::TopicLink",
    "::IceStorm::TopicManagerInternal",
];

fn ours() -> Model {
    compile(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("slice/IceStorm.ice"),
        None,
    )
}

#[test]
fn own_slice_compiles_without_system_slice() {
    let c = contract(&ours());
    assert!(c["::IceStorm::Topic"].contains("getLinkInfoSeq"), "{c:#?}");
    assert_eq!(c.len(), 14 + INTERNAL.len(), "{c:#?}");
}

#[test]
fn internal_interfaces_match_the_wire_facts() {
    let c = contract(&ours());
    // §8.5: forward(EventDataSeq), mode 0; EventData members in wire order.
    assert_eq!(
        c["::IceStorm::EventData"],
        "struct{String op; enum ::Ice::OperationMode mode; sequence<Byte> data; \
         dictionary<String, String> context}"
    );
    assert_eq!(
        c["::IceStorm::TopicLink"],
        "ids [\"::Ice::Object\", \"::IceStorm::TopicLink\"]\n\
         Normal void forward(sequence<struct{String op; enum ::Ice::OperationMode mode; \
         sequence<Byte> data; dictionary<String, String> context}> events tag=None) throws []"
    );
    // The type ids IceStorm's topics and topic manager announce (ice_ids).
    assert!(c["::IceStorm::TopicInternal"].starts_with(
        "ids [\"::Ice::Object\", \"::IceStorm::Topic\", \"::IceStorm::TopicInternal\"]\n\
         Idempotent nonmutating ::IceStorm::TopicLink* getLinkProxy()"
    ));
    assert!(c["::IceStorm::TopicManagerInternal"].starts_with(
        "ids [\"::Ice::Object\", \"::IceStorm::TopicManager\", \
         \"::IceStorm::TopicManagerInternal\"]\n"
    ));
}

#[test]
fn own_slice_is_wire_equivalent_to_the_system_one() {
    let system = Path::new("/usr/share/ice/slice");
    if !system.join("IceStorm/IceStorm.ice").exists() {
        if std::env::var("FLOE_NO_INTEROP").as_deref() == Ok("1") {
            println!("FLOE_NO_INTEROP=1: /usr/share/ice/slice missing, skipping");
            return;
        }
        panic!("/usr/share/ice/slice/IceStorm missing; install zeroc-ice-slice, or set FLOE_NO_INTEROP=1");
    }
    let theirs = contract(&compile(
        &system.join("IceStorm/IceStorm.ice"),
        Some("/usr/share/ice/slice"),
    ));
    let mut mine = contract(&ours());
    mine.retain(|k, _| !INTERNAL.contains(&k.as_str()));
    assert_eq!(
        mine.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>()
    );
    for (k, v) in &theirs {
        assert_eq!(&mine[k], v, "{k}");
    }
}
