//! `slice2rs`: the Slice compiler for floe. Options mirror `slice2cpp`.
//! The files are compiled together (they may include each other) to one
//! `<file stem>.rs` each in `--output-dir` (default: the current
//! directory), plus `slice.rs`, the module file that holds together the
//! files that refer to each other (see `floe_idl::Builder::compile`);
//! `--validate` only checks, `--dump-model` prints the model instead of
//! generating.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgAction, Parser};

/// Compiles Slice files for floe.
#[derive(Parser, Debug)]
#[command(
    name = "slice2rs",
    disable_version_flag = true,
    about = "Slice compiler for floe (Rust, Ice 3.7 and 3.8 compatible)",
    after_help = "Writes <file stem>.rs for each Slice file (and the user files they include) \
into --output-dir (default: the current directory), and slice.rs, which includes the files that \
refer to each other. Use --dump-model to print the validated model instead. \
Exit status: 0 on success, 1 on any error."
)]
struct Cli {
    /// Slice files to compile.
    files: Vec<PathBuf>,
    /// Put DIR in the include file search path.
    #[arg(short = 'I', value_name = "DIR", action = ArgAction::Append)]
    include: Vec<PathBuf>,
    /// Define NAME as 1, or as DEF with NAME=DEF.
    #[arg(short = 'D', value_name = "NAME[=DEF]", action = ArgAction::Append)]
    define: Vec<String>,
    /// Remove any definition for NAME.
    #[arg(short = 'U', value_name = "NAME", action = ArgAction::Append)]
    undefine: Vec<String>,
    /// Print preprocessor output on stdout.
    #[arg(short = 'E')]
    preprocess_only: bool,
    /// Create files in the directory DIR.
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
    /// Print Makefile dependencies.
    #[arg(long)]
    depend: bool,
    /// Check the Slice files only (generate nothing).
    #[arg(long)]
    validate: bool,
    /// Print the validated model (debug format) on stdout.
    #[arg(long)]
    dump_model: bool,
    /// Generate data types only (no proxies, servant traits or dispatchers;
    /// proxies become `Option<ProxyData>`), for crates without floe-runtime.
    #[arg(long)]
    no_interfaces: bool,
    /// Map proxy-typed values to `Option<ProxyData>` (plain data) instead
    /// of live typed proxies.
    #[arg(long)]
    proxy_data: bool,
    /// Map `string` data members of structs, classes and exceptions to
    /// `CompactString` (inline up to 24 bytes) instead of `String`.
    #[arg(long)]
    compact_strings: bool,
    /// Allow underscores in Slice identifiers (deprecated: use [["underscore"]]).
    #[arg(long)]
    underscore: bool,
    /// Allow the reserved Ice prefix in Slice identifiers (deprecated: use [["ice-prefix"]]).
    #[arg(long)]
    ice: bool,
    /// Which Ice release's Slice rules apply: `auto` (each file by its own
    /// content: Ice 3.8 if it uses 3.8 syntax or 3.8 identifier metadata),
    /// `3.7` (as Ice 3.7's slice2cpp) or `3.8` (Ice prefixes and single
    /// inner underscores allowed).
    #[arg(long, value_name = "auto|3.7|3.8", default_value = "auto", value_parser = parse_dialect)]
    dialect: floe_idl::Dialect,
    /// Display the version.
    #[arg(short = 'v', long = "version")]
    version: bool,
}

fn parse_dialect(s: &str) -> Result<floe_idl::Dialect, String> {
    match s {
        "auto" => Ok(floe_idl::Dialect::Auto),
        "3.7" => Ok(floe_idl::Dialect::Ice37),
        "3.8" => Ok(floe_idl::Dialect::Ice38),
        _ => Err(format!("`{s}': expected auto, 3.7 or 3.8")),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 1 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    if cli.version {
        println!("{}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    if cli.files.is_empty() {
        eprintln!("slice2rs: error: no input file");
        return ExitCode::from(1);
    }
    if let Some(dir) = &cli.output_dir {
        if !dir.is_dir() {
            eprintln!(
                "slice2rs: error: output directory `{}' does not exist",
                dir.display()
            );
            return ExitCode::from(1);
        }
    }
    let opts = floe_idl::Options {
        include_dirs: cli.include.clone(),
        defines: cli
            .define
            .iter()
            .map(|d| match d.split_once('=') {
                Some((n, v)) => (n.to_owned(), v.to_owned()),
                None => (d.clone(), "1".to_owned()),
            })
            .collect(),
        undefines: cli.undefine.clone(),
        underscore: cli.underscore,
        ice_prefix: cli.ice,
        dialect: cli.dialect,
    };
    let mut failed = false;
    for file in &cli.files {
        if cli.preprocess_only {
            let (pre, diags) = floe_idl::preprocess(file, &opts);
            print!("{}", pre.with_line_markers());
            eprint!("{}", diags.render(&pre.map));
            failed |= diags.has_errors();
            continue;
        }
        match floe_idl::compile(file, &opts) {
            Ok(out) => {
                eprint!("{}", out.rendered());
                if cli.depend {
                    let stem = file
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let mut line = format!("{stem}.rs: \\\n {}", file.display());
                    for d in &out.dependencies {
                        line.push_str(&format!(" \\\n {}", d.display()));
                    }
                    println!("{line}");
                } else if cli.dump_model && !cli.validate {
                    println!("{:#?}", out.model);
                }
            }
            Err(fail) => {
                eprint!("{}", fail.rendered());
                failed = true;
            }
        }
    }
    let generate = !(cli.preprocess_only || cli.depend || cli.validate || cli.dump_model);
    if generate && !failed && !cli.files.is_empty() {
        failed |= !generate_set(&cli, &opts);
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Compiles the files as one program and writes `<stem>.rs` for each (and
/// `slice.rs`, the module file, when they refer to each other); false on
/// failure (reported).
fn generate_set(cli: &Cli, opts: &floe_idl::Options) -> bool {
    let out = match floe_idl::compile_set(&cli.files, opts) {
        Ok(out) => out,
        Err(fail) => {
            eprint!("{}", fail.rendered());
            return false;
        }
    };
    let settings = floe_idl::codegen::Settings {
        interfaces: !cli.no_interfaces,
        proxy_data: cli.proxy_data,
        compact_strings: cli.compact_strings,
        ..Default::default()
    };
    let wanted = floe_idl::codegen::set::generated_files(&out.model);
    let set = match floe_idl::codegen::set::generate_set(&out.model, &settings, &wanted) {
        Ok(set) => set,
        Err(e) => {
            eprintln!("slice2rs: error: {e}");
            return false;
        }
    };
    let dir = cli.output_dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let files = set
        .files
        .iter()
        .map(|f| (f.name.clone(), &f.code))
        .chain(set.module_file.as_ref().map(|c| ("slice.rs".to_owned(), c)));
    let mut ok = true;
    for (name, code) in files {
        let path = dir.join(name);
        if let Err(e) = std::fs::write(&path, code) {
            eprintln!("slice2rs: error: cannot write `{}': {e}", path.display());
            ok = false;
        }
    }
    ok
}
