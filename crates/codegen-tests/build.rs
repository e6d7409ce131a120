//! Generates Rust from Slice with `floe_idl::Builder`, as a user's build
//! script would: `benches/Bench.ice`, the rich test file, and IceStorm's
//! Slice from the system Ice installation (ZeroC's Slice files are GPL, so
//! floe ships no copy: they are read from /usr/share/ice/slice when
//! present, and the cfg `floe_no_ice_slice` is set when they are not).

use std::path::Path;

const ICE_SLICE: &str = "/usr/share/ice/slice";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo::rustc-check-cfg=cfg(floe_no_ice_slice)");
    floe_idl::Builder::new().compile(&["../../benches/Bench.ice"])?;
    floe_idl::Builder::new().compile(&["slice/Ice38.ice"])?;
    // The slicing tests: the server's view (with server-only derived
    // types) and, in a directory of its own, the client's.
    floe_idl::Builder::new().compile(&["slice/Slicing.ice"])?;
    floe_idl::Builder::new().compile(&["slice/ClassGraph.ice"])?;
    let base = Path::new(&std::env::var("OUT_DIR")?).join("slicing_base");
    std::fs::create_dir_all(&base)?;
    floe_idl::Builder::new()
        .out_dir(&base)
        .compile(&["slice/SlicingBase.ice"])?;
    if Path::new(ICE_SLICE).join("Ice/Identity.ice").is_file() {
        // A two-file program (Service.ice includes Types.ice): one Rust
        // file each, held together by `multi.rs`.
        let multi = Path::new(&std::env::var("OUT_DIR")?).join("multi");
        std::fs::create_dir_all(&multi)?;
        floe_idl::Builder::new()
            .include(ICE_SLICE)
            .out_dir(&multi)
            .module_file("multi")
            .compile(&["slice/multi/Service.ice"])?;
        floe_idl::Builder::new().include(ICE_SLICE).compile(&[
            "../idl/tests/codegen/Rich.ice".to_owned(),
            format!("{ICE_SLICE}/IceStorm/IceStorm.ice"),
        ])?;
        // Rich.ice again with `string` members as CompactString.
        let compact = Path::new(&std::env::var("OUT_DIR")?).join("compact");
        std::fs::create_dir_all(&compact)?;
        floe_idl::Builder::new()
            .include(ICE_SLICE)
            .out_dir(&compact)
            .compact_strings(true)
            .compile(&["../idl/tests/codegen/Rich.ice"])?;
    } else {
        println!("cargo::rustc-cfg=floe_no_ice_slice");
    }
    Ok(())
}
