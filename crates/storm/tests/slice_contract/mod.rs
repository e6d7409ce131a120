//! The wire contract of a Slice file's `IceStorm` definitions, shared by
//! `tests/slice.rs` (against Ice 3.7's Slice) and `tests/ice38.rs`
//! (against Ice 3.8's): type ids, operations with their modes, parameter
//! and return types expanded to their wire shape, exceptions.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;

use floe_idl::model::{DefKind, Model, Type};

/// The operations floe-storm serves that Ice 3.8 added to IceStorm's
/// Slice (absent from Ice 3.7's).
pub const ICE38_OPERATIONS: [(&str, &str); 1] = [("::IceStorm::TopicManager", "createOrRetrieve(")];

/// `contract` without the lines of [`ICE38_OPERATIONS`] (each must be
/// there).
pub fn without_ice38_additions(mut c: BTreeMap<String, String>) -> BTreeMap<String, String> {
    for (interface, op) in ICE38_OPERATIONS {
        let text = c.get_mut(interface).expect("the interface");
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines.iter().any(|l| l.contains(op)),
            "{interface} lacks {op}"
        );
        *text = lines
            .into_iter()
            .filter(|l| !l.contains(op))
            .collect::<Vec<_>>()
            .join("\n");
    }
    c
}

pub fn compile(path: &Path, include: Option<&str>) -> Model {
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
pub fn shape(m: &Model, t: Option<&Type>) -> String {
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
pub fn contract(m: &Model) -> BTreeMap<String, String> {
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
