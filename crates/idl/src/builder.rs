//! [`Builder`]: compiling Slice files from a `build.rs`, like
//! prost-build's `Config`.
//!
//! In `Cargo.toml`:
//!
//! ```toml
//! [dependencies]
//! floe = "0.1"
//!
//! [build-dependencies]
//! floe-idl = "0.1"
//! ```
//!
//! In `build.rs` (build scripts may simply `?` or unwrap: a failure stops
//! the build with the Slice diagnostics):
//!
//! ```no_run
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     floe_idl::Builder::new()
//!         .include("slice")
//!         .compile(&["slice/Hello.ice"])?;
//!     Ok(())
//! }
//! ```
//!
//! Then, in the crate, include the file named after the Slice file:
//!
//! ```text
//! include!(concat!(env!("OUT_DIR"), "/Hello.rs"));
//! ```
//!
//! Every file read (the Slice files and what they include) is reported
//! with `cargo:rerun-if-changed`, so editing any of them rebuilds.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::codegen::{self, Settings};
use crate::Options;

/// Compiles Slice files to Rust source files (for `build.rs`).
#[derive(Debug, Clone, Default)]
pub struct Builder {
    options: Options,
    settings: Settings,
    out_dir: Option<PathBuf>,
    quiet: bool,
    module_file: Option<String>,
}

/// Why [`Builder::compile`] failed.
#[derive(Debug)]
pub enum BuildError {
    /// The Slice files have errors (rendered `file:line:col: error: ...`).
    Slice(String),
    /// Neither [`Builder::out_dir`] nor `OUT_DIR` is set.
    NoOutDir,
    /// Writing a generated file failed.
    Io(PathBuf, std::io::Error),
    /// The generator produced invalid Rust (a bug in floe-idl).
    Codegen(String),
    /// An earlier [`Builder::compile`] of this build wrote the same file
    /// into the same directory from another set of Slice files (they
    /// share an included file, or both have a module file): the second
    /// would overwrite the first's code. Give each set its own
    /// [`Builder::out_dir`], or compile the files in one call.
    Overwrite {
        /// The generated file both would write.
        path: PathBuf,
        /// The Slice files of the earlier call.
        first: Vec<PathBuf>,
        /// The Slice files of this call.
        second: Vec<PathBuf>,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Slice(s) => write!(f, "Slice compilation failed:\n{s}"),
            BuildError::NoOutDir => f.write_str("no output directory: OUT_DIR is not set"),
            BuildError::Io(p, e) => write!(f, "cannot write {}: {e}", p.display()),
            BuildError::Codegen(s) => write!(f, "code generation failed: {s}"),
            BuildError::Overwrite {
                path,
                first,
                second,
            } => write!(
                f,
                "{} would be written twice: by the compile of {} and by the compile of {}; \
                 give each set of Slice files its own out_dir (or compile them in one call)",
                path.display(),
                list(first),
                list(second)
            ),
        }
    }
}

impl std::error::Error for BuildError {}

fn list(files: &[PathBuf]) -> String {
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    format!("[{}]", names.join(", "))
}

/// The files [`Builder::compile`] wrote in this process (one build script
/// run), each with the Slice files of the call that wrote it.
static WRITTEN: std::sync::Mutex<Vec<(PathBuf, Vec<PathBuf>)>> = std::sync::Mutex::new(Vec::new());

/// Claims `paths` for the call compiling `sources`: refuses a path that
/// another call (with other Slice files) wrote before.
fn claim(paths: &[PathBuf], sources: &[PathBuf]) -> Result<(), BuildError> {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut sources: Vec<PathBuf> = sources.iter().map(|p| canonical(p)).collect();
    sources.sort();
    let mut written = WRITTEN.lock().unwrap_or_else(|p| p.into_inner());
    for path in paths {
        if let Some((_, first)) = written.iter().find(|(p, s)| p == path && *s != sources) {
            return Err(BuildError::Overwrite {
                path: path.clone(),
                first: first.clone(),
                second: sources,
            });
        }
    }
    for path in paths {
        if !written.iter().any(|(p, _)| p == path) {
            written.push((path.clone(), sources.clone()));
        }
    }
    Ok(())
}

impl Builder {
    /// A builder with the defaults: no include directories, output to
    /// `OUT_DIR`, interfaces generated.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a directory to the `#include` search path (`-I`).
    pub fn include(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.options.include_dirs.push(dir.as_ref().to_path_buf());
        self
    }

    /// Defines a preprocessor symbol (`-D name=value`).
    pub fn define(&mut self, name: &str, value: &str) -> &mut Self {
        self.options
            .defines
            .push((name.to_owned(), value.to_owned()));
        self
    }

    /// Writes the generated files into `dir` instead of `OUT_DIR`.
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Whether to generate proxies, servant traits and dispatchers (default
    /// true). Without them proxy-typed values are `Option<ProxyData>`.
    pub fn interfaces(&mut self, on: bool) -> &mut Self {
        self.settings.interfaces = on;
        self
    }

    /// Maps proxy-typed values to `Option<ProxyData>` (plain data) instead
    /// of live typed proxies (default false; `--proxy-data`).
    pub fn proxy_data(&mut self, on: bool) -> &mut Self {
        self.settings.proxy_data = on;
        self
    }

    /// Maps `string` data members of structs, classes and exceptions to
    /// `CompactString` (kept inline up to 24 bytes: decoding a short string
    /// allocates nothing) instead of `String` (default false;
    /// `--compact-strings`). Same bytes on the wire.
    pub fn compact_strings(&mut self, on: bool) -> &mut Self {
        self.settings.compact_strings = on;
        self
    }

    /// Allows the reserved `Ice` prefix in identifiers (`--ice`).
    pub fn ice_prefix(&mut self, on: bool) -> &mut Self {
        self.options.ice_prefix = on;
        self
    }

    /// Which Ice release's Slice rules apply (`--dialect`; default
    /// [`Dialect::Auto`](crate::Dialect::Auto): each file by its own
    /// content, see [`crate::dialect`]). [`Dialect::Ice38`](crate::Dialect::Ice38)
    /// reads every file as Ice 3.8 does (`Ice` prefixes and single inner
    /// underscores allowed everywhere).
    pub fn dialect(&mut self, dialect: crate::Dialect) -> &mut Self {
        self.options.dialect = dialect;
        self
    }

    /// Does not print `cargo:` lines (when used outside a build script).
    pub fn quiet(&mut self, on: bool) -> &mut Self {
        self.quiet = on;
        self
    }

    /// The name (without `.rs`) of the module file written when the files
    /// compiled together refer to each other (default `slice`; see
    /// [`Builder::compile`]).
    pub fn module_file(&mut self, name: &str) -> &mut Self {
        self.module_file = Some(name.to_owned());
        self
    }

    /// Compiles the Slice files as one program (they may include each
    /// other) and writes one `<out dir>/<file stem>.rs` per file, for the
    /// files given and the user files they include. Returns the paths
    /// written.
    ///
    /// A file that refers to no other generated file is standalone:
    /// `include!` it alone. Files that refer to each other (a `Service.ice`
    /// that includes `Types.ice` and uses its types, or a class derived in
    /// one file from a base in another) are held together by the module
    /// file, `<out dir>/slice.rs` ([`Builder::module_file`] renames it):
    /// include that one, and the Slice modules appear merged as in Ice for
    /// C++ (`demo::Point` and `demo::ServicePrx` side by side):
    ///
    /// ```text
    /// include!(concat!(env!("OUT_DIR"), "/slice.rs"));
    /// ```
    ///
    /// Each call writes its own files: two calls into one directory must
    /// not write the same file (two sets of Slice files that include one
    /// shared file would each write its `.rs`, and each its own module
    /// file), or the second would replace the first's code. Such a
    /// second call fails with [`BuildError::Overwrite`]; give each set its
    /// own [`Builder::out_dir`] (as a client's and a server's view of the
    /// same files need), or compile the files in one call.
    ///
    /// ZeroC's own Slice files that the files include (`Ice/Identity.ice`,
    /// ...) are not generated; the types floe has (`Identity`, `Context`)
    /// map to floe's. Their directory (`/usr/share/ice/slice`) is searched
    /// last when it exists, without an explicit [`Builder::include`].
    ///
    /// # Errors
    ///
    /// [`BuildError::Slice`] with every diagnostic if a file does not
    /// compile; [`BuildError::NoOutDir`], [`BuildError::Io`] otherwise.
    pub fn compile(&self, files: &[impl AsRef<Path>]) -> Result<Vec<PathBuf>, BuildError> {
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(BuildError::NoOutDir)?,
        };
        let files: Vec<PathBuf> = files.iter().map(|f| f.as_ref().to_path_buf()).collect();
        if !self.quiet {
            for file in &files {
                println!("cargo:rerun-if-changed={}", file.display());
            }
        }
        let options = crate::Options {
            include_dirs: crate::with_system_slice_dir(self.options.include_dirs.clone()),
            ..self.options.clone()
        };
        let out = crate::compile_set(&files, &options)
            .map_err(|fail| BuildError::Slice(fail.rendered()))?;
        if !self.quiet {
            for dep in &out.dependencies {
                println!("cargo:rerun-if-changed={}", dep.display());
            }
            for line in out.rendered().lines() {
                println!("cargo:warning={line}");
            }
        }
        let wanted = codegen::set::generated_files(&out.model);
        let set = codegen::set::generate_set(&out.model, &self.settings, &wanted)
            .map_err(BuildError::Codegen)?;
        let module_name = set.module_file.as_ref().map(|code| {
            (
                format!("{}.rs", self.module_file.as_deref().unwrap_or("slice")),
                code,
            )
        });
        let outputs: Vec<(String, &String)> = set
            .files
            .iter()
            .map(|f| (f.name.clone(), &f.code))
            .chain(module_name)
            .collect();
        let dir = std::fs::canonicalize(&out_dir).unwrap_or_else(|_| out_dir.clone());
        let paths: Vec<PathBuf> = outputs.iter().map(|(name, _)| dir.join(name)).collect();
        claim(&paths, &files)?;
        let mut written = Vec::new();
        for (name, code) in outputs {
            let path = out_dir.join(name);
            std::fs::write(&path, code).map_err(|e| BuildError::Io(path.clone(), e))?;
            written.push(path);
        }
        Ok(written)
    }
}
