//! `floe::slice!("file.ice")`: compiles a Slice file at macro-expansion
//! time with floe-idl and expands to the generated Rust (the same code
//! `slice2rs` writes).

use std::path::{Path, PathBuf};

use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{LitStr, Token};

/// `"file.ice"` then optional `, include = "dir"` pairs and flags
/// (`compact_strings`).
struct SliceInput {
    file: LitStr,
    includes: Vec<LitStr>,
    compact_strings: bool,
}

impl Parse for SliceInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let file: LitStr = input.parse()?;
        let mut includes = Vec::new();
        let mut compact_strings = false;
        while input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: syn::Ident = input.parse()?;
            if key == "compact_strings" {
                compact_strings = true;
                continue;
            }
            if key != "include" {
                return Err(syn::Error::new(
                    key.span(),
                    "expected `include = \"dir\"` or `compact_strings`",
                ));
            }
            input.parse::<Token![=]>()?;
            includes.push(input.parse()?);
        }
        Ok(SliceInput {
            file,
            includes,
            compact_strings,
        })
    }
}

/// Compiles a Slice file and expands to its generated Rust code: the
/// Slice modules become `pub mod`s at the call site, with typed proxies,
/// servant traits, dispatchers and data types (see `floe_idl::codegen`).
///
/// Paths are relative to the crate's `CARGO_MANIFEST_DIR`; the file's own
/// directory is always searched for `#include`s, and more directories can
/// be given with `include = "dir"`. Slice errors become `compile_error!`s
/// pointing at the macro call. Editing the Slice file (or anything it
/// includes) recompiles the crate.
///
/// ```text
/// floe::slice!("slice/Hello.ice", include = "/usr/share/ice/slice");
/// // `string` members of structs, classes and exceptions as `CompactString`:
/// floe::slice!("slice/Bench.ice", compact_strings);
/// ```
pub fn slice(input: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    match syn::parse2::<SliceInput>(input) {
        Ok(input) => expand(&input).unwrap_or_else(|e| e.to_compile_error()),
        Err(e) => e.to_compile_error(),
    }
}

fn expand(input: &SliceInput) -> syn::Result<proc_macro2::TokenStream> {
    let span = input.file.span();
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_default();
    let path = root.join(input.file.value());
    let mut opts = floe_idl::Options::default();
    if let Some(dir) = path.parent() {
        opts.include_dirs.push(dir.to_path_buf());
    }
    for inc in &input.includes {
        opts.include_dirs.push(root.join(inc.value()));
    }
    opts.include_dirs = floe_idl::with_system_slice_dir(opts.include_dirs);
    let out = floe_idl::compile(&path, &opts)
        .map_err(|fail| syn::Error::new(span, format!("Slice errors:\n{}", fail.rendered())))?;
    let settings = floe_idl::codegen::Settings {
        compact_strings: input.compact_strings,
        ..Default::default()
    };
    // The file and the user files it includes, modules merged.
    let code = floe_idl::codegen::set::merged_tokens(&out.model, &settings);
    let tracked = std::iter::once(path.clone())
        .chain(out.dependencies.iter().map(|d| absolute(&root, d)))
        .map(|p| {
            let p = p.to_string_lossy().into_owned();
            quote!(
                const _: &[u8] = include_bytes!(#p);
            )
        });
    Ok(quote! {
        #(#tracked)*
        #code
    })
}

fn absolute(root: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_errors_become_one_spanned_error() {
        let dir = std::env::temp_dir().join(format!("floe-derive-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("Bad.ice");
        std::fs::write(&bad, "module M { struct S { Missing m; } }\n").unwrap();
        let input: SliceInput =
            syn::parse_str(&format!("{:?}", bad.display().to_string())).unwrap();
        let err = expand(&input).unwrap_err().to_string();
        assert!(err.contains("Slice errors"), "{err}");
        assert!(err.contains("Bad.ice:1:"), "{err}");
        assert!(err.contains("Missing"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn include_option_parses() {
        let input: SliceInput =
            syn::parse_str(r#""a.ice", include = "slice", include = "/usr/share/ice/slice""#)
                .unwrap();
        assert_eq!(input.includes.len(), 2);
        assert!(!input.compact_strings);
        assert!(syn::parse_str::<SliceInput>(r#""a.ice", exclude = "x""#).is_err());
        let input: SliceInput =
            syn::parse_str(r#""a.ice", compact_strings, include = "slice""#).unwrap();
        assert!(input.compact_strings);
        assert_eq!(input.includes.len(), 1);
    }
}
