//! The hello interface written in Rust: `#[floe::interface]` on a trait
//! generates what `floe_idl::Builder` generates from
//! `examples/hello/slice/Hello.ice` (the typed proxy `HelloPrx`, the
//! servant trait `Hello` with its dispatcher `HelloDispatcher`), so the
//! bytes on the wire are the same, and `HelloSlice::ice_slice()` writes the
//! interface back as Slice for Ice peers in other languages.
//!
//! Shared by the `derive-server`, `derive-client` and `export-slice` binaries.

/// Says hello.
#[floe::interface(module = "Demo")]
pub trait Hello {
    /// Prints "Hello World!" on the server after `delay` milliseconds.
    #[floe(idempotent)]
    async fn say_hello(&self, delay: i32);

    /// Stops the server.
    async fn shutdown(&self);
}
