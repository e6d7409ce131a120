//! Sets of Slice files that refer to each other: one Rust file per Slice
//! file, plus the set's **module file** that holds them together.
//!
//! Slice reopens modules across files (`Types.ice` and `Service.ice` may
//! both add to `module Demo`); Rust modules cannot be reopened. So each
//! Slice file becomes its own Rust file (`Types.rs`, `Service.rs`), and the
//! module file (`slice.rs` by default) includes each of them as a module
//! of its own (`types_ice`, `service_ice`) and rebuilds the Slice modules
//! on top: `pub mod demo { pub use super::types_ice::demo::*; pub use
//! super::service_ice::demo::*; }`. Users include the module file and see
//! one `demo` module, as in Ice for C++; generated code refers to another
//! file's definitions through those re-exports.
//!
//! The module file also has the set's one value-factory registry
//! (`value_factories()`, every class of every file: a class derived in one
//! file from a base of another decodes as itself anywhere), and
//! `register_user_exceptions` for all its exceptions.
//!
//! A file that refers to no other generated file, and that no other refers
//! to, stays standalone (`include!` it alone, as before).

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::ident::{doc_attrs, module_ident};
use super::{codegen_path, Gen, Settings};
use crate::model::{Contained, DefId, DefKind, Model, ModuleId, Type};

/// What one file of a set needs to know about the set.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// Whether any file of the set defines classes (then the module file
    /// has `value_factories()`).
    pub has_classes: bool,
    /// Whether any file of the set defines user exceptions (then the
    /// module file has `register_user_exceptions`).
    pub has_exceptions: bool,
    /// The files of the set (indexes into [`Model::files`]).
    pub files: BTreeSet<usize>,
}

/// One generated Rust file.
#[derive(Debug, Clone)]
pub struct GeneratedFile {
    /// The Slice file it comes from (index into [`Model::files`]).
    pub file: usize,
    /// The file name to write (`Types.rs`).
    pub name: String,
    /// Whether it belongs to the set's module file (else it is standalone).
    pub in_set: bool,
    /// The code.
    pub code: String,
}

/// The Rust files of a set of Slice files.
#[derive(Debug, Clone)]
pub struct GeneratedSet {
    /// One per Slice file.
    pub files: Vec<GeneratedFile>,
    /// The module file's code, when some files refer to each other.
    pub module_file: Option<String>,
}

/// Directories of ZeroC's own Slice files (`Ice/Identity.ice`,
/// `IceStorm/IceStorm.ice`, ...): definitions included from them are not
/// generated with a user's files (floe maps the ones it has to its own
/// types), unless such a file is compiled itself.
const SYSTEM_DIRS: &[&str] = &[
    "Ice",
    "IceBox",
    "IceBT",
    "IceDiscovery",
    "IceGrid",
    "IceIAP",
    "IceLocatorDiscovery",
    "IcePatch2",
    "IceSSL",
    "IceStorm",
    "Glacier2",
];

/// Whether file `f` of the model is one of ZeroC's own Slice files.
pub fn is_system_file(model: &Model, f: usize) -> bool {
    model.files[f]
        .path
        .parent()
        .and_then(|d| d.file_name())
        .is_some_and(|d| SYSTEM_DIRS.contains(&d.to_string_lossy().as_ref()))
}

/// The files to generate for a model: its main files, and every other
/// user file (not ZeroC's own) they include that defines something.
pub fn generated_files(model: &Model) -> Vec<usize> {
    (0..model.files.len())
        .filter(|&f| {
            model.files[f].is_main
                || (!is_system_file(model, f)
                    && model
                        .definitions
                        .iter()
                        .any(|d| d.span.file.0 as usize == f && !d.local))
        })
        .collect()
}

/// One token stream with the definitions of the main file and of the user
/// files it includes, modules merged (what `floe::slice!` expands to).
pub fn merged_tokens(model: &Model, settings: &Settings) -> TokenStream {
    let wanted = generated_files(model);
    let emit = (0..model.files.len())
        .map(|f| wanted.contains(&f))
        .collect();
    Gen::new(model, settings, emit, None).tokens()
}

/// Generates `wanted` (indices into `model.files`): one Rust file each,
/// named `<stem>.rs` (made unique), and the module file for the ones that
/// refer to each other.
///
/// # Errors
///
/// A message if generated tokens do not parse (a generator bug).
pub fn generate_set(
    model: &Model,
    settings: &Settings,
    wanted: &[usize],
) -> Result<GeneratedSet, String> {
    let names = file_names(model, wanted);
    let linked = linked_files(model, wanted);
    let layout = Layout {
        has_classes: model.definitions.iter().any(|d| {
            linked.contains(&(d.span.file.0 as usize))
                && !d.local
                && matches!(&d.kind, DefKind::Class(c) if c.defined)
        }),
        has_exceptions: model.definitions.iter().any(|d| {
            linked.contains(&(d.span.file.0 as usize))
                && !d.local
                && matches!(d.kind, DefKind::Exception(_))
        }),
        files: linked.clone(),
    };
    let mut files = Vec::new();
    for (&file, (name, _)) in wanted.iter().zip(&names) {
        let emit = (0..model.files.len()).map(|f| f == file).collect();
        let in_set = linked.contains(&file);
        let gen = Gen::new(model, settings, emit, in_set.then_some(&layout));
        files.push(GeneratedFile {
            file,
            name: format!("{name}.rs"),
            in_set,
            code: format_file(gen.tokens())?,
        });
    }
    let module_file = if linked.is_empty() {
        None
    } else {
        Some(format_file(module_file(
            model, settings, wanted, &names, &linked, &layout,
        ))?)
    };
    Ok(GeneratedSet { files, module_file })
}

fn format_file(tokens: TokenStream) -> Result<String, String> {
    let file: syn::File = syn::parse2(tokens).map_err(|e| format!("generated code: {e}"))?;
    let header = "// Generated by floe-idl from Slice. Do not edit.\n";
    Ok(format!("{header}{}", prettyplease::unparse(&file)))
}

/// Per wanted file: its output stem (the Slice file's, made unique) and its
/// module in the module file (`<stem>_ice`, snake case).
fn file_names(model: &Model, wanted: &[usize]) -> Vec<(String, String)> {
    let mut taken = BTreeSet::new();
    wanted
        .iter()
        .map(|&f| {
            let stem = model.files[f]
                .path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "slice".to_owned());
            let mut name = stem.clone();
            let mut n = 2;
            while !taken.insert(name.to_lowercase()) {
                name = format!("{stem}{n}");
                n += 1;
            }
            let module = format!("{}_ice", snake(&name));
            (name, module)
        })
        .collect()
}

fn snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.push('_');
        }
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// The wanted files that refer to another wanted file or are referred to.
fn linked_files(model: &Model, wanted: &[usize]) -> BTreeSet<usize> {
    let mut linked = BTreeSet::new();
    for def in &model.definitions {
        let from = def.span.file.0 as usize;
        if !wanted.contains(&from) {
            continue;
        }
        for to in referenced(model, def.id) {
            let to_file = model.def(to).span.file.0 as usize;
            if to_file != from && wanted.contains(&to_file) {
                linked.insert(from);
                linked.insert(to_file);
            }
        }
    }
    linked
}

/// The definitions `id` refers to (types of members, parameters, results,
/// bases, exceptions, elements, keys, constant values).
fn referenced(model: &Model, id: DefId) -> Vec<DefId> {
    let mut out = Vec::new();
    let mut ty = |t: Type| {
        if let Type::Named(d) | Type::Proxy(d) = t {
            out.push(d);
        }
    };
    match &model.def(id).kind {
        DefKind::Struct(s) => s.members.iter().for_each(|m| ty(m.ty)),
        DefKind::Class(c) => {
            c.members.iter().for_each(|m| ty(m.ty));
            c.base
                .into_iter()
                .chain(c.implements.iter().copied())
                .for_each(|b| ty(Type::Named(b)));
            for op in &c.operations {
                op.params.iter().for_each(|p| ty(p.ty));
                op.return_type.into_iter().for_each(&mut ty);
                op.throws.iter().for_each(|t| ty(Type::Named(*t)));
            }
        }
        DefKind::Exception(e) => {
            e.members.iter().for_each(|m| ty(m.ty));
            e.base.into_iter().for_each(|b| ty(Type::Named(b)));
        }
        DefKind::Interface(i) => {
            i.bases.iter().for_each(|b| ty(Type::Named(*b)));
            for op in &i.operations {
                op.params.iter().for_each(|p| ty(p.ty));
                op.return_type.into_iter().for_each(&mut ty);
                op.throws.iter().for_each(|t| ty(Type::Named(*t)));
            }
        }
        DefKind::Sequence(s) => ty(s.element),
        DefKind::Dictionary(d) => {
            ty(d.key);
            ty(d.value);
        }
        DefKind::Const(c) => {
            ty(c.ty);
            if let crate::model::ConstValue::Enumerator { enum_id, .. } = c.value {
                ty(Type::Named(enum_id));
            }
        }
        DefKind::Enum(_) => {}
    }
    out
}

/// The module file: each linked file as a module, the Slice modules
/// re-exporting them, and the set's registries.
fn module_file(
    model: &Model,
    settings: &Settings,
    wanted: &[usize],
    names: &[(String, String)],
    linked: &BTreeSet<usize>,
    layout: &Layout,
) -> TokenStream {
    let c = codegen_path();
    let members: Vec<(usize, &str, &str)> = wanted
        .iter()
        .zip(names)
        .filter(|(f, _)| linked.contains(f))
        .map(|(&f, (name, module))| (f, name.as_str(), module.as_str()))
        .collect();
    let gens: Vec<Gen> = members
        .iter()
        .map(|&(f, _, _)| {
            let emit = (0..model.files.len()).map(|g| g == f).collect();
            Gen::new(model, settings, emit, Some(layout))
        })
        .collect();
    let includes = members.iter().map(|(_, name, module)| {
        let m = format_ident!("{}", module);
        let file = format!("{name}.rs");
        let doc = format!(" The code generated from `{name}.ice`.");
        quote! {
            #[doc = #doc]
            pub mod #m {
                include!(#file);
            }
        }
    });
    let modules = model
        .roots
        .iter()
        .map(|&root| reexport_module(model, &members, &gens, root, &[]));
    let mut registries = TokenStream::new();
    let with_classes: Vec<TokenStream> = members
        .iter()
        .zip(&gens)
        .filter(|(_, g)| {
            g.main_definitions()
                .any(|d| !d.local && matches!(&d.kind, DefKind::Class(c) if c.defined))
        })
        .map(|((_, _, module), _)| {
            let m = format_ident!("{}", module);
            quote!(#m::register_value_factories(registry);)
        })
        .collect();
    if layout.has_classes {
        registries.extend(super::value_factories_fn(
            " The factories of [`register_value_factories`], built once: what\n the generated decoders of every file of the set use.",
        ));
        registries.extend(quote! {
            /// Registers a factory for every class of every file of the set.
            #[allow(dead_code)]
            pub fn register_value_factories(registry: &mut #c::ValueFactoryRegistry) {
                #(#with_classes)*
            }
        });
    }
    let with_exceptions: Vec<TokenStream> = members
        .iter()
        .zip(&gens)
        .filter(|(_, g)| {
            g.main_definitions()
                .any(|d| !d.local && matches!(d.kind, DefKind::Exception(_)))
        })
        .map(|((_, _, module), _)| {
            let m = format_ident!("{}", module);
            quote!(#m::register_user_exceptions(registry);)
        })
        .collect();
    if layout.has_exceptions {
        registries.extend(super::user_exceptions_fn(
            " The user exceptions of [`register_user_exceptions`], built once:\n what the generated proxies of every file of the set decode replies with.",
        ));
        registries.extend(quote! {
            /// Registers every user exception of every file of the set.
            #[allow(dead_code)]
            pub fn register_user_exceptions(registry: &mut #c::UserExceptionRegistry) {
                #(#with_exceptions)*
            }
        });
    }
    quote! {
        #(#includes)*
        #(#modules)*
        #registries
    }
}

/// `pub mod m { pub use super::<file>::m::*; ... pub mod n { ... } }` for
/// Slice module `id`, over the files that generate something in it.
fn reexport_module(
    model: &Model,
    members: &[(usize, &str, &str)],
    gens: &[Gen],
    id: ModuleId,
    outer: &[ModuleId],
) -> TokenStream {
    let present: Vec<usize> = (0..members.len())
        .filter(|&i| gens[i].module_present(id))
        .collect();
    if present.is_empty() {
        return TokenStream::new();
    }
    let module = model.module(id);
    let name = module_ident(&module.name);
    let doc = module
        .doc
        .as_ref()
        .map(|d| doc_attrs(&d.text))
        .unwrap_or_else(|| doc_attrs(&format!("Slice module `{}`.", module.scoped)));
    let depth = outer.len() + 1;
    let mut chain: Vec<_> = outer
        .iter()
        .map(|m| module_ident(&model.module(*m).name))
        .collect();
    chain.push(name.clone());
    let uses = present.iter().map(|&i| {
        let supers = (0..depth).map(|_| quote!(super));
        let file = format_ident!("{}", members[i].2);
        quote!(pub use #(#supers)::* :: #file #(:: #chain)* ::*;)
    });
    let mut inner_outer = outer.to_vec();
    inner_outer.push(id);
    let nested = module.contents.iter().filter_map(|c| match c {
        Contained::Module(m) => Some(reexport_module(model, members, gens, *m, &inner_outer)),
        Contained::Definition(_) => None,
    });
    let allow = if outer.is_empty() {
        quote!(#[allow(unused_imports)])
    } else {
        TokenStream::new()
    };
    quote! {
        #doc
        #allow
        pub mod #name {
            #(#uses)*
            #(#nested)*
        }
    }
}
