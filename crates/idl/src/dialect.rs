//! [`Dialect`]: which Ice release's Slice rules a file is read with.
//!
//! Ice 3.8 changed Slice in three ways that matter to a compiler serving
//! 3.7 and 3.8 systems at once:
//!
//! - new syntax: nested module names (`module A::B::C { ... }`), `:` for
//!   inheritance (`interface B : A`, `class D : C`, `exception E : F`), and
//!   `local`, `implements` and `LocalObject` as names, all of which Ice
//!   3.7's slice2cpp rejects;
//! - looser names: the `Ice` prefix is no longer reserved (3.7 allows it
//!   only with `--ice` or `[["ice-prefix"]]`, which Ice 3.7's own files
//!   carry and Ice 3.8's dropped), one underscore inside a name (`my_name`)
//!   is allowed (3.7 needs `--underscore` or `[["underscore"]]`), and a
//!   definition may be named like the module holding it. Leading, trailing
//!   and double underscores and the `Helper`/`Holder`/`Prx`/`Ptr` suffixes
//!   stay illegal in both;
//! - stricter definitions: what 3.7 deprecated is gone (local definitions,
//!   classes with operations or implementing interfaces, proxies to
//!   classes, interfaces by value), and types that use classes cannot be
//!   `optional`.
//!
//! Ice 3.8's compilers have no switch for this (they simply are the newer
//! compiler), so floe decides per file. With [`Dialect::Auto`] (the
//! default), a file is read as Ice 3.8 when it shows it was written for
//! Ice 3.8: it uses 3.8 syntax, or 3.8's per-language identifier metadata
//! (`["swift:identifier:..."]`, `["java:identifier:..."]`, ...), which Ice
//! 3.8 introduced and its own Slice files use; every other file is read as
//! Ice 3.7, so that floe's verdicts on it are slice2cpp 3.7's. Included
//! files are decided on their own. [`Dialect::Ice37`] and
//! [`Dialect::Ice38`] read every file one way (`slice2rs --dialect`).

use crate::ast::{self, DefinitionKind, Item, Meta};
use crate::diagnostic::SourceMap;

/// Which Ice release's Slice rules apply (see the [module](self) docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// Each file by its own content: Ice 3.8 if it uses 3.8 syntax or 3.8
    /// identifier metadata, Ice 3.7 otherwise.
    #[default]
    Auto,
    /// Every file as Ice 3.7's slice2cpp reads it: 3.8 syntax is an error,
    /// `Ice` prefixes and underscores need `--ice`/`--underscore` or file
    /// metadata.
    Ice37,
    /// Every file with Ice 3.8's rules.
    Ice38,
}

/// Per file of `map` (by index): true if it is read with Ice 3.8's rules.
pub(crate) fn ice38_files(
    dialect: Dialect,
    unit: &ast::Unit,
    text: &str,
    map: &SourceMap,
) -> Vec<bool> {
    let n = map.files.len();
    match dialect {
        Dialect::Ice37 => vec![false; n],
        Dialect::Ice38 => vec![true; n],
        Dialect::Auto => {
            let mut out = vec![false; n];
            let mut mark = |pos| {
                if let Some(f) = out.get_mut(map.span_at(text, pos).file.0 as usize) {
                    *f = true;
                }
            };
            for (pos, _) in &unit.ice38_syntax {
                mark(*pos);
            }
            each_metadata(&unit.items, &mut |m| {
                if is_ice38_metadata(&m.text) {
                    mark(m.pos);
                }
            });
            out
        }
    }
}

/// `<language>:identifier:<name>`: Ice 3.8's renaming of a definition in
/// one language mapping (Ice 3.7 has no such directive).
fn is_ice38_metadata(text: &str) -> bool {
    let mut parts = text.splitn(3, ':');
    let lang = parts.next().unwrap_or("");
    !lang.is_empty()
        && lang.bytes().all(|b| b.is_ascii_lowercase())
        && parts.next() == Some("identifier")
        && parts.next().is_some_and(|name| !name.is_empty())
}

/// Calls `f` on every metadata directive in `items`, nested ones included.
fn each_metadata(items: &[Item], f: &mut impl FnMut(&Meta)) {
    for item in items {
        let d = match item {
            Item::FileMetadata(list, _) => {
                list.iter().for_each(&mut *f);
                continue;
            }
            Item::Definition(d) => d,
        };
        d.metadata.iter().for_each(&mut *f);
        let mut operations: &[ast::Operation] = &[];
        let mut members: &[ast::DataMember] = &[];
        match &d.kind {
            DefinitionKind::Module { items, .. } => each_metadata(items, f),
            DefinitionKind::Struct { members: m, .. }
            | DefinitionKind::Exception { members: m, .. } => members = m,
            DefinitionKind::Class {
                members: m,
                operations: o,
                ..
            } => {
                members = m;
                operations = o;
            }
            DefinitionKind::Interface { operations: o, .. } => operations = o,
            DefinitionKind::Sequence {
                element_metadata, ..
            } => element_metadata.iter().for_each(&mut *f),
            DefinitionKind::Dictionary {
                key_metadata,
                value_metadata,
                ..
            } => key_metadata.iter().chain(value_metadata).for_each(&mut *f),
            DefinitionKind::Enum { enumerators, .. } => enumerators
                .iter()
                .flat_map(|e| &e.metadata)
                .for_each(&mut *f),
            DefinitionKind::Const { type_metadata, .. } => type_metadata.iter().for_each(&mut *f),
            DefinitionKind::ClassDecl { .. } | DefinitionKind::InterfaceDecl { .. } => {}
        }
        members.iter().flat_map(|m| &m.metadata).for_each(&mut *f);
        for o in operations {
            o.metadata
                .iter()
                .chain(o.params.iter().flat_map(|p| &p.metadata))
                .for_each(&mut *f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifier_metadata_marks_ice38() {
        assert!(is_ice38_metadata("swift:identifier:IceMX"));
        assert!(is_ice38_metadata("java:identifier:com.zeroc.IceGrid"));
        assert!(!is_ice38_metadata("cpp:type:string"));
        assert!(!is_ice38_metadata("identifier:x"));
        assert!(!is_ice38_metadata("cs:identifier:"));
        assert!(!is_ice38_metadata("ice-prefix"));
    }
}
