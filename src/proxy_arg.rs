//! [`ProxyArg`]: how a typed proxy generated for a Rust-first interface
//! (`#[floe::interface]`) takes a parameter whose type is another
//! Rust-first struct or enum. The macro cannot see whether a type named by
//! path is an enum, so it writes `<T as ProxyArg>::Arg<'_>`, which is `T`
//! for enums (by value) and `&T` for structs, the same as proxies generated
//! from Slice take them.

use floe_wire::Encode;

/// The parameter form of a type in typed proxy methods. Implemented by
/// `#[derive(floe::Struct)]` (`&T`) and `#[derive(floe::Enum)]` (`T`).
pub trait ProxyArg: Encode {
    /// What the proxy method takes.
    type Arg<'a>
    where
        Self: 'a;

    /// The value to encode.
    fn arg_ref<'a, 'b>(arg: &'b Self::Arg<'a>) -> &'b Self
    where
        Self: 'a;
}
