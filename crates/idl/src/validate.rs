//! Structural rules on the resolved model, as slice2cpp enforces them:
//! member/operation/parameter clashes (exact and case-insensitive, also
//! against inherited ones), optional tags, parameter order, throws clauses,
//! dictionary key types, structs that contain themselves, inheritance
//! cycles, ambiguous multiple inheritance and compact-id collisions.

use std::collections::{HashMap, HashSet};

use crate::diagnostic::Diagnostics;
use crate::model::{DataMember, DefId, DefKind, Definition, Model, Operation, Type};

/// Checks `model`, adding every violation to `diags`, but skips the
/// definitions in `skip` (those that already failed to resolve).
pub fn validate_except(model: &Model, skip: &HashSet<DefId>, diags: &mut Diagnostics) {
    let mut compact_ids: HashMap<i32, DefId> = HashMap::new();
    let mut key_memo: HashMap<DefId, KeyCheck> = HashMap::new();
    for def in &model.definitions {
        if skip.contains(&def.id) {
            continue;
        }
        if model
            .files
            .get(def.span.file.0 as usize)
            .is_some_and(|f| f.ice38)
        {
            no_optional_classes(model, def, diags);
        }
        match &def.kind {
            DefKind::Struct(s) => {
                if s.members.is_empty() {
                    diags.error(
                        def.span,
                        format!("struct `{}' must have at least one member", def.name),
                    );
                }
                for m in &s.members {
                    if m.tag.is_some() {
                        diags.error(m.span, "optional data members not supported in struct");
                    }
                }
                unique_members(&s.members, diags);
                if contains_struct(model, def.id) {
                    diags.error(
                        def.span,
                        format!("struct `{}' cannot contain itself", def.name),
                    );
                }
            }
            DefKind::Class(c) => {
                if has_cycle(model, def.id) {
                    diags.error(
                        def.span,
                        format!("class `{}' has an inheritance cycle", def.name),
                    );
                    continue;
                }
                unique_members(&c.members, diags);
                unique_tags(&c.members, diags);
                inherited_members(model, c.base, &c.members, "class", diags);
                if let Some(cid) = c.compact_id {
                    match compact_ids.get(&cid) {
                        Some(prev) => diags.error(
                            def.span,
                            format!(
                                "invalid compact id for class: already assigned to class `{}'",
                                model.def(*prev).scoped
                            ),
                        ),
                        None => {
                            compact_ids.insert(cid, def.id);
                        }
                    }
                }
                for o in &c.operations {
                    for m in &c.members {
                        if m.name.eq_ignore_ascii_case(&o.name) {
                            diags.error(
                                o.span,
                                format!(
                                    "redefinition of data member `{}' as operation `{}'",
                                    m.name, o.name
                                ),
                            );
                        }
                    }
                }
                base_members_vs_operations(model, def.id, diags);
                let mut inherited = Vec::new();
                let mut base = c.base;
                let mut guard = 0;
                while let Some(b) = base {
                    guard += 1;
                    if guard > model.definitions.len() {
                        break;
                    }
                    if let DefKind::Class(bc) = &model.def(b).kind {
                        inherited.extend(bc.operations.iter().map(|o| (o.name.clone(), b)));
                        base = bc.base;
                    } else {
                        break;
                    }
                }
                for i in &c.implements {
                    inherited.extend(interface_ops(model, *i));
                }
                operations(model, &c.operations, &inherited, diags);
                for o in &c.operations {
                    if o.name == def.name {
                        diags.error(
                            o.span,
                            format!("class name `{}' cannot be used as operation name", def.name),
                        );
                    } else if o.name.eq_ignore_ascii_case(&def.name) {
                        diags.error(
                            o.span,
                            format!("operation `{}' differs only in capitalization from enclosing class name `{}'", o.name, def.name),
                        );
                    }
                }
            }
            DefKind::Interface(i) => {
                if has_cycle(model, def.id) {
                    diags.error(
                        def.span,
                        format!("interface `{}' has an inheritance cycle", def.name),
                    );
                    continue;
                }
                // Operations reachable through each base, with their origin.
                let mut inherited: Vec<(String, DefId)> = Vec::new();
                for b in &i.bases {
                    for (name, origin) in interface_ops(model, *b) {
                        if let Some((_, o2)) = inherited
                            .iter()
                            .find(|(n, o)| n.eq_ignore_ascii_case(&name) && *o != origin)
                        {
                            let _ = o2;
                            diags.error(
                                def.span,
                                format!(
                                    "ambiguous multiple inheritance: `{name}' is defined in two or more base interfaces of `{}'",
                                    def.name
                                ),
                            );
                        }
                        if !inherited.iter().any(|(n, o)| *n == name && *o == origin) {
                            inherited.push((name, origin));
                        }
                    }
                }
                operations(model, &i.operations, &inherited, diags);
                for o in &i.operations {
                    if o.name == def.name {
                        diags.error(
                            o.span,
                            format!(
                                "interface name `{}' cannot be used as operation name",
                                def.name
                            ),
                        );
                    } else if o.name.eq_ignore_ascii_case(&def.name) {
                        diags.error(
                            o.span,
                            format!("operation `{}' differs only in capitalization from enclosing interface name `{}'", o.name, def.name),
                        );
                    }
                }
            }
            DefKind::Exception(e) => {
                if has_cycle(model, def.id) {
                    diags.error(
                        def.span,
                        format!("exception `{}' has an inheritance cycle", def.name),
                    );
                    continue;
                }
                unique_members(&e.members, diags);
                unique_tags(&e.members, diags);
                inherited_members(model, e.base, &e.members, "exception", diags);
            }
            DefKind::Dictionary(d) => match legal_key(model, d.key, &mut key_memo) {
                KeyCheck::Legal => {}
                KeyCheck::Deprecated if !model.suppresses_warning(def.span, "deprecated") => diags
                    .warning(
                        def.span,
                        "use of sequences in dictionary keys has been deprecated",
                    ),
                KeyCheck::Deprecated => {}
                KeyCheck::Illegal => diags.error(
                    def.span,
                    format!("dictionary `{}' uses an illegal key type", def.name),
                ),
            },
            _ => {}
        }
    }
}

/// Operations of a class must not clash with data members of its bases,
/// nor its data members with operations of its bases.
fn base_members_vs_operations(model: &Model, id: DefId, diags: &mut Diagnostics) {
    let DefKind::Class(c) = &model.def(id).kind else {
        return;
    };
    let mut base = c.base;
    let mut guard = 0;
    while let Some(b) = base {
        guard += 1;
        if guard > model.definitions.len() {
            return;
        }
        let DefKind::Class(bc) = &model.def(b).kind else {
            return;
        };
        for o in &c.operations {
            if let Some(m) = bc
                .members
                .iter()
                .find(|m| m.name.eq_ignore_ascii_case(&o.name))
            {
                diags.error(
                    o.span,
                    inherited_clash("operation", &o.name, "data member", &m.name),
                );
            }
        }
        for m in &c.members {
            if let Some(o) = bc
                .operations
                .iter()
                .find(|o| o.name.eq_ignore_ascii_case(&m.name))
            {
                diags.error(
                    m.span,
                    inherited_clash("data member", &m.name, "operation", &o.name),
                );
            }
        }
        base = bc.base;
    }
}

fn inherited_clash(kind: &str, name: &str, other_kind: &str, other: &str) -> String {
    if name == other {
        format!(
            "{kind} `{name}' is already defined as {} in a base interface or class",
            article(other_kind)
        )
    } else {
        format!("{kind} `{name}' differs only in capitalization from {other_kind} `{other}', which is defined in a base interface or class")
    }
}

fn article(kind: &str) -> String {
    if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        format!("an {kind}")
    } else {
        format!("a {kind}")
    }
}

fn clash_message(kind: &str, new: &str, old: &str) -> String {
    if new == old {
        format!("redefinition of {kind} `{new}'")
    } else {
        format!("{kind} `{new}' differs only in capitalization from {kind} `{old}'")
    }
}

fn unique_members(members: &[DataMember], diags: &mut Diagnostics) {
    for (i, m) in members.iter().enumerate() {
        if let Some(prev) = members[..i]
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(&m.name))
        {
            diags.error(m.span, clash_message("member", &m.name, &prev.name));
        }
    }
}

fn unique_tags(members: &[DataMember], diags: &mut Diagnostics) {
    for (i, m) in members.iter().enumerate() {
        if let Some(t) = m.tag {
            if members[..i].iter().any(|p| p.tag == Some(t)) {
                diags.error(
                    m.span,
                    format!(
                        "tag for optional data member `{}' is already in use",
                        m.name
                    ),
                );
            }
        }
    }
}

fn inherited_members(
    model: &Model,
    mut base: Option<DefId>,
    members: &[DataMember],
    kind: &str,
    diags: &mut Diagnostics,
) {
    let mut guard = 0;
    while let Some(b) = base {
        guard += 1;
        if guard > model.definitions.len() {
            return;
        }
        let (bmembers, next) = match &model.def(b).kind {
            DefKind::Class(c) => (&c.members, c.base),
            DefKind::Exception(e) => (&e.members, e.base),
            _ => return,
        };
        for m in members {
            if let Some(p) = bmembers
                .iter()
                .find(|p| p.name.eq_ignore_ascii_case(&m.name))
            {
                if p.name == m.name {
                    diags.error(
                        m.span,
                        format!(
                            "{kind} member `{}' is already defined in a base {kind}",
                            m.name
                        ),
                    );
                } else {
                    diags.error(
                        m.span,
                        format!("{kind} member `{}' differs only in capitalization from member `{}' in base {kind}", m.name, p.name),
                    );
                }
            }
        }
        base = next;
    }
}

/// Every operation of interface `id` and its bases, with the interface that
/// defines it.
fn interface_ops(model: &Model, id: DefId) -> Vec<(String, DefId)> {
    let mut out = Vec::new();
    let mut ids = vec![id];
    ids.extend(model.all_bases(id));
    for i in ids {
        if let DefKind::Interface(it) = &model.def(i).kind {
            out.extend(it.operations.iter().map(|o| (o.name.clone(), i)));
        }
    }
    out
}

fn operations(
    model: &Model,
    ops: &[Operation],
    inherited: &[(String, DefId)],
    diags: &mut Diagnostics,
) {
    for (i, o) in ops.iter().enumerate() {
        if let Some(prev) = ops[..i]
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(&o.name))
        {
            if prev.name == o.name {
                diags.error(
                    o.span,
                    format!(
                        "redefinition of operation `{}' as operation `{}'",
                        prev.name, o.name
                    ),
                );
            } else {
                diags.error(
                    o.span,
                    format!(
                        "operation `{}' differs only in capitalization from operation `{}'",
                        o.name, prev.name
                    ),
                );
            }
        }
        if let Some((name, _)) = inherited
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(&o.name))
        {
            if *name == o.name {
                diags.error(o.span, format!("operation `{}' is already defined as an operation in a base interface or class", o.name));
            } else {
                diags.error(
                    o.span,
                    format!("operation `{}' differs only in capitalization from operation `{name}', which is defined in a base interface or class", o.name),
                );
            }
        }
        operation(model, o, diags);
    }
}

fn operation(model: &Model, o: &Operation, diags: &mut Diagnostics) {
    let mut seen_out = false;
    let mut tags: Vec<i32> = o.return_tag.into_iter().collect();
    for (i, p) in o.params.iter().enumerate() {
        if let Some(prev) = o.params[..i]
            .iter()
            .find(|q| q.name.eq_ignore_ascii_case(&p.name))
        {
            diags.error(p.span, clash_message("parameter", &p.name, &prev.name));
        }
        if p.out {
            seen_out = true;
        } else if seen_out {
            diags.error(
                p.span,
                format!("`{}': in parameters cannot follow out parameters", p.name),
            );
        }
        if let Some(t) = p.tag {
            if tags.contains(&t) {
                diags.error(
                    p.span,
                    format!("tag for optional parameter `{}' is already in use", p.name),
                );
            }
            tags.push(t);
        }
    }
    for (i, t) in o.throws.iter().enumerate() {
        if o.throws[..i].contains(t) {
            diags.error(
                o.span,
                format!(
                    "operation `{}' has a throws clause with a duplicate exception: `{}'",
                    o.name,
                    model.def(*t).name
                ),
            );
        }
    }
}

/// Ice 3.8 forbids `optional` on types that use classes (Ice 3.7 allows it).
fn no_optional_classes(model: &Model, def: &Definition, diags: &mut Diagnostics) {
    const MESSAGE: &str = "types that use classes cannot be marked with `optional'";
    let (members, ops): (&[DataMember], &[Operation]) = match &def.kind {
        DefKind::Class(c) => (&c.members, &c.operations),
        DefKind::Exception(e) => (&e.members, &[]),
        DefKind::Interface(i) => (&[], &i.operations),
        _ => return,
    };
    for m in members {
        if m.tag.is_some() && model.uses_classes(m.ty) {
            diags.error(m.span, MESSAGE);
        }
    }
    for o in ops {
        if o.return_tag.is_some() && o.return_type.is_some_and(|t| model.uses_classes(t)) {
            diags.error(o.span, MESSAGE);
        }
        for p in &o.params {
            if p.tag.is_some() && model.uses_classes(p.ty) {
                diags.error(p.span, MESSAGE);
            }
        }
    }
}

fn has_cycle(model: &Model, id: DefId) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![id];
    while let Some(cur) = stack.pop() {
        let next: Vec<DefId> = match &model.def(cur).kind {
            DefKind::Class(c) => c.base.into_iter().collect(),
            DefKind::Exception(e) => e.base.into_iter().collect(),
            DefKind::Interface(i) => i.bases.clone(),
            _ => vec![],
        };
        for n in next {
            if n == id {
                return true;
            }
            if seen.insert(n) {
                stack.push(n);
            }
        }
    }
    false
}

/// A struct can only name types declared before it, so the only way to
/// contain itself is a member of its own type.
fn contains_struct(model: &Model, id: DefId) -> bool {
    let DefKind::Struct(s) = &model.def(id).kind else {
        return false;
    };
    s.members.iter().any(|m| m.ty == Type::Named(id))
}

#[derive(Clone, Copy)]
enum KeyCheck {
    Legal,
    Deprecated,
    Illegal,
}

fn legal_key(model: &Model, t: Type, memo: &mut HashMap<DefId, KeyCheck>) -> KeyCheck {
    match t {
        Type::Bool | Type::Byte | Type::Short | Type::Int | Type::Long | Type::String => {
            KeyCheck::Legal
        }
        Type::Named(id) => {
            if let Some(k) = memo.get(&id) {
                return *k;
            }
            // Provisional answer guards against self-reference.
            memo.insert(id, KeyCheck::Illegal);
            let res = match &model.def(id).kind {
                DefKind::Enum(_) => KeyCheck::Legal,
                DefKind::Struct(s) => {
                    let mut res = KeyCheck::Legal;
                    for m in &s.members {
                        match legal_key(model, m.ty, memo) {
                            KeyCheck::Illegal => {
                                res = KeyCheck::Illegal;
                                break;
                            }
                            KeyCheck::Deprecated => res = KeyCheck::Deprecated,
                            KeyCheck::Legal => {}
                        }
                    }
                    res
                }
                DefKind::Sequence(s) => match legal_key(model, s.element, memo) {
                    KeyCheck::Illegal => KeyCheck::Illegal,
                    _ => KeyCheck::Deprecated,
                },
                _ => KeyCheck::Illegal,
            };
            memo.insert(id, res);
            res
        }
        _ => KeyCheck::Illegal,
    }
}
