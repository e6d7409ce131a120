//! Compiles floe-storm's own IceStorm Slice (`slice/IceStorm.ice`) to Rust
//! with floe-idl (`slice2rs`); `src/slice.rs` includes the result.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    floe_idl::Builder::new().compile(&["slice/IceStorm.ice"])?;
    Ok(())
}
