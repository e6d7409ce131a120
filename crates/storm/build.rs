//! Compiles floe-storm's own IceStorm Slice (`slice/IceStorm.ice`) to Rust
//! with floe-idl (`slice2rs`); `src/slice.rs` includes the result.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Proxies as plain `ProxyData` (the broker stores and forwards them).
    floe_idl::Builder::new()
        .proxy_data(true)
        .compile(&["slice/IceStorm.ice"])?;
    Ok(())
}
