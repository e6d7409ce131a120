//! floe-idl: the Slice compiler front-end (preprocessor, nom grammar, name
//! resolution, validation) and the interface model shared with
//! `floe-derive` and the code generator.
//!
//! The phases are internal, one module each: `preprocess` → `parse`
//! (tokens in `lexer`, syntax tree in `ast`) → `resolve` (builds the
//! [`model`]) → `validate`. Every phase reports into
//! [`diagnostic::Diagnostics`]; [`compile`] (and [`compile_source`],
//! [`compile_set`]) runs them all and returns the model only if there was
//! no error; [`preprocess`] runs the first alone (`slice2rs -E`).
//! [`codegen`] turns the model into Rust (`slice2rs`, the [`Builder`] for
//! build scripts, and `floe::slice!` all use it), [`export`] back into
//! Slice.
//!
//! ```no_run
//! let opts = floe_idl::Options {
//!     include_dirs: vec!["/usr/share/ice/slice".into()],
//!     ..Default::default()
//! };
//! match floe_idl::compile("Hello.ice".as_ref(), &opts) {
//!     Ok(out) => println!("{} definitions", out.model.definitions.len()),
//!     Err(fail) => eprint!("{}", fail.rendered()),
//! }
//! ```
#![deny(missing_docs)]

mod ast;
pub mod builder;
pub mod codegen;
pub mod diagnostic;
pub mod dialect;
pub mod export;
pub mod ident;
mod lexer;
pub mod model;
mod parse;
mod preprocess;
mod resolve;
mod validate;

use std::path::{Path, PathBuf};

pub use builder::{BuildError, Builder};
pub use dialect::Dialect;

use diagnostic::{Diagnostics, SourceMap};
use model::Model;
use preprocess::PreprocessOptions;
pub use preprocess::Preprocessed;

/// Compiler options (the `slice2rs` command line).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `-I DIR`.
    pub include_dirs: Vec<PathBuf>,
    /// `-D NAME[=DEF]`.
    pub defines: Vec<(String, String)>,
    /// `-U NAME`.
    pub undefines: Vec<String>,
    /// `--underscore`: allow underscores in identifiers.
    pub underscore: bool,
    /// `--ice`: allow the reserved `Ice` prefix.
    pub ice_prefix: bool,
    /// `--dialect`: which Ice release's Slice rules apply ([`Dialect::Auto`]:
    /// each file by its own content).
    pub dialect: Dialect,
}

/// A successful compilation.
#[derive(Debug, Clone)]
pub struct Output {
    /// The validated model.
    pub model: Model,
    /// Warnings (no errors).
    pub diagnostics: Diagnostics,
    /// The file table, to render the warnings.
    pub map: SourceMap,
    /// Included files (for `--depend`).
    pub dependencies: Vec<PathBuf>,
}

/// A failed compilation.
#[derive(Debug, Clone)]
pub struct Failure {
    /// Errors and warnings.
    pub diagnostics: Diagnostics,
    /// The file table, to render them.
    pub map: SourceMap,
}

impl Failure {
    /// Every diagnostic as `file:line:col: error: message` lines.
    pub fn rendered(&self) -> String {
        self.diagnostics.render(&self.map)
    }
}

impl Output {
    /// Warnings about the main file as `file:line:col: warning: message`
    /// lines (like slice2cpp, warnings in included files are not shown).
    pub fn rendered(&self) -> String {
        let main = Diagnostics {
            list: self
                .diagnostics
                .list
                .iter()
                .filter(|d| {
                    d.span.is_none_or(|s| {
                        self.map
                            .files
                            .get(s.file.0 as usize)
                            .is_some_and(|f| f.is_main)
                    })
                })
                .cloned()
                .collect(),
        };
        main.render(&self.map)
    }
}

/// Runs only the preprocessor on the Slice file at `path` (`slice2rs -E`):
/// the text the parser would read, with the diagnostics (`#error`, a
/// missing include) rendered against [`Preprocessed::map`].
pub fn preprocess(path: &Path, opts: &Options) -> (Preprocessed, Diagnostics) {
    preprocess::preprocess(path, &pre_opts(opts))
}

/// Compiles the Slice file at `path`.
pub fn compile(path: &Path, opts: &Options) -> Result<Output, Failure> {
    let (pre, diags) = preprocess::preprocess(path, &pre_opts(opts));
    finish(pre, diags, opts)
}

/// Where Debian's `zeroc-ice-slice` puts Ice's own Slice files.
pub const SYSTEM_SLICE_DIR: &str = "/usr/share/ice/slice";

/// `include_dirs` with Ice's own Slice directory appended when it exists
/// and is not there already, so that `#include <Ice/Identity.ice>` resolves
/// without an explicit `-I` (as Ice for Python's `loadSlice` does). Used by
/// [`Builder`] and `floe::slice!`; `slice2rs` keeps slice2cpp's explicit
/// `-I`.
pub fn with_system_slice_dir(mut include_dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    let system = Path::new(SYSTEM_SLICE_DIR);
    if system.join("Ice").is_dir() && !include_dirs.iter().any(|d| d == system) {
        include_dirs.push(system.to_path_buf());
    }
    include_dirs
}

/// Compiles several Slice files as one program: they may include each
/// other and refer to each other's definitions, as the files of one
/// slice2cpp build do. Each of them is a main file of the output (its
/// warnings are shown, and [`codegen::set`] generates it); one file alone
/// is [`compile`].
pub fn compile_set(paths: &[PathBuf], opts: &Options) -> Result<Output, Failure> {
    match paths {
        [] => compile_source(Path::new("empty.ice"), "", opts),
        [one] => compile(one, opts),
        _ => {
            let canonical: Vec<PathBuf> = paths
                .iter()
                .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
                .collect();
            let root_dir = canonical[0]
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            let source: String = canonical
                .iter()
                .map(|p| format!("#include \"{}\"\n", p.display()))
                .collect();
            let mut out = compile_source(&root_dir.join("<set>.ice"), &source, opts).map_err(
                |mut fail| {
                    mark_main(&mut fail.map, &canonical);
                    fail
                },
            )?;
            mark_main(&mut out.map, &canonical);
            for (file, source) in out.model.files.iter_mut().zip(&out.map.files) {
                file.is_main = source.is_main;
            }
            Ok(out)
        }
    }
}

/// Makes the files at `paths` the main files of `map` (the set's root is
/// not one).
fn mark_main(map: &mut SourceMap, paths: &[PathBuf]) {
    for f in &mut map.files {
        let path = std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.clone());
        f.is_main = paths.contains(&path);
    }
}

/// Compiles `source` as if it were the file `path` (includes come from disk).
pub fn compile_source(path: &Path, source: &str, opts: &Options) -> Result<Output, Failure> {
    let (pre, diags) = preprocess::preprocess_source(path, source, &pre_opts(opts));
    finish(pre, diags, opts)
}

fn pre_opts(opts: &Options) -> PreprocessOptions {
    PreprocessOptions {
        include_dirs: opts.include_dirs.clone(),
        defines: opts.defines.clone(),
        undefines: opts.undefines.clone(),
    }
}

fn finish(pre: Preprocessed, mut diags: Diagnostics, opts: &Options) -> Result<Output, Failure> {
    if diags.has_errors() {
        return Err(Failure {
            diagnostics: diags,
            map: pre.map,
        });
    }
    let unit = match parse::parse_unit(&pre.text) {
        Ok(u) => u,
        Err(errors) => {
            for e in errors {
                let span = pre.map.span_at(&pre.text, e.pos);
                diags.error(span, e.message);
            }
            return Err(Failure {
                diagnostics: diags,
                map: pre.map,
            });
        }
    };
    let ropts = resolve::ResolveOptions {
        underscore: opts.underscore,
        ice_prefix: opts.ice_prefix,
        dialect: opts.dialect,
    };
    let (model, incomplete) = resolve::resolve(&unit, &pre.text, &pre.map, ropts, &mut diags);
    // Structural checks run even after resolution errors, so that one run
    // reports everything (a definition whose parts failed to resolve is
    // checked with what did resolve, as slice2cpp does).
    validate::validate_except(&model, &incomplete, &mut diags);
    if diags.has_errors() {
        return Err(Failure {
            diagnostics: diags,
            map: pre.map,
        });
    }
    Ok(Output {
        model,
        diagnostics: diags,
        map: pre.map,
        dependencies: pre.dependencies,
    })
}
