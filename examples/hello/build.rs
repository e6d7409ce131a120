//! Compiles `slice/Hello.ice` into `$OUT_DIR/Hello.rs`, as any crate with
//! Slice files does (`floe-idl` as a build dependency).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    floe_idl::Builder::new().compile(&["slice/Hello.ice"])?;
    Ok(())
}
