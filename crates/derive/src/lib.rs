//! floe-derive: Rust-first Ice definitions.
//!
//! The macros read a Rust item, build the floe-idl model with it (syn →
//! model, `ast`), check it (`valid`) and call the same code generator
//! as `slice2rs` (`expand`), so a Rust-first type or interface is
//! wire-identical to the equivalent Slice definition by construction. On
//! error they emit the spanned diagnostics and stubs (`fallback`).
//! Use them through the `floe` crate: `floe::interface`, `floe::Struct`,
//! `floe::Enum`, `floe::Exception`, `floe::Class`, and `floe::slice!`, which
//! compiles a `.ice` file at expansion time (`slice_macro`).
#![deny(missing_docs)]

use proc_macro::TokenStream;
use syn::parse_macro_input;

mod ast;
mod attr;
mod ctxt;
mod expand;
mod fallback;
mod inherit;
mod slice_macro;
mod valid;

use ast::DataKind;

/// A Slice struct: `Encode`, `Decode`, `WireType` and the Slice text.
/// Needs `#[floe(module = "M")]`; fields map to Slice types (`i32` → `int`,
/// `String` → `string`, `Bytes` → `sequence<byte>`, `Vec<T>` →
/// `sequence<T>`, `BTreeMap`/`HashMap` → `dictionary`, other derived types
/// by name).
#[proc_macro_derive(Struct, attributes(floe))]
pub fn derive_struct(input: TokenStream) -> TokenStream {
    expand::derive(
        parse_macro_input!(input as syn::DeriveInput),
        DataKind::Struct,
    )
    .into()
}

/// A Slice enum (unit variants, optional explicit `= value`s); the enum
/// must also derive `Clone` and `Copy`. `Default` is the first
/// enumerator (as slice2rs generates) unless a variant is marked
/// `#[default]` and the enum derives `Default` itself.
#[proc_macro_derive(Enum, attributes(floe))]
pub fn derive_enum(input: TokenStream) -> TokenStream {
    expand::derive(
        parse_macro_input!(input as syn::DeriveInput),
        DataKind::Enum,
    )
    .into()
}

/// A Slice user exception; optional members are `Option<T>` with
/// `#[floe(tag = N)]`; a base exception is the field
/// `#[floe(base)] base: Base` (as slice2rs embeds it). The type must also
/// derive `Clone`, `Debug`, `Default` and `PartialEq`.
#[proc_macro_derive(Exception, attributes(floe))]
pub fn derive_exception(input: TokenStream) -> TokenStream {
    expand::derive(
        parse_macro_input!(input as syn::DeriveInput),
        DataKind::Exception,
    )
    .into()
}

/// A Slice class (`#[floe(compact_id = N)]` optional); class references
/// are `Option<ClassRef<T>>`, optional members `Option<T>` with
/// `#[floe(tag = N)]`, a base class the field `#[floe(base)] base: Base`.
/// The type must also derive `Clone`, `Debug` and `Default`.
#[proc_macro_derive(Class, attributes(floe))]
pub fn derive_class(input: TokenStream) -> TokenStream {
    expand::derive(
        parse_macro_input!(input as syn::DeriveInput),
        DataKind::Class,
    )
    .into()
}

/// A Slice interface from a trait of `async fn`s: `#[floe(idempotent)]`,
/// `#[floe(name = "wireName")]`, optional values as `Option<T>` with
/// `#[floe(tag = N)]`, user exceptions as `Result<T, E>`, the module as
/// `#[floe::interface(module = "M")]`.
///
/// A tuple result `(R, A, B)` is the return value `R` (`()` for none)
/// and out-parameters `out1: A`, `out2: B`: Slice
/// `R op(..., out A out1, out B out2)`.
///
/// Base interfaces are supertraits (`trait D: Base + other::Base2`) that
/// are `#[floe::interface]` traits of the same crate, named where they
/// are or by a module path (`other::Base2`): the derived trait reaches
/// `Base2Prx`, `Base2Slice` and the types of `Base2`'s operations through
/// that path (an imported `use other::Base2` alone is not enough).
/// Generates what `slice2rs` generates for the equivalent Slice interface,
/// plus `<Trait>Slice::ice_slice()` (the `.ice` text).
#[proc_macro_attribute]
pub fn interface(args: TokenStream, input: TokenStream) -> TokenStream {
    let item = parse_macro_input!(input as syn::ItemTrait);
    expand::interface(args.into(), item).into()
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
/// ```
#[proc_macro]
pub fn slice(input: TokenStream) -> TokenStream {
    slice_macro::slice(input.into()).into()
}

/// One step of interface inheritance (see `inherit`): called by the
/// hidden macros `#[floe::interface]` emits, not by hand.
#[doc(hidden)]
#[proc_macro]
pub fn __interface_inherit(input: TokenStream) -> TokenStream {
    match inherit::callback(input.into()) {
        inherit::Step::Done { args, item, bases } => {
            expand::interface_with_bases(args, *item, &bases).into()
        }
        inherit::Step::Next(tokens) => tokens.into(),
    }
}
