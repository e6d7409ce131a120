//! Generates the Rust types of `slice/Fuzz.ice` (the classes and exceptions
//! the `decode` target reads), as a user's build script would.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo::rerun-if-changed=slice/Fuzz.ice");
    floe_idl::Builder::new().compile(&["slice/Fuzz.ice"])?;
    Ok(())
}
