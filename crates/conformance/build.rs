//! Generates the conformance suite's Rust code with `floe_idl::Builder`, as
//! a user's build script would, twice:
//!
//! - the server's view: `slice/ServerOnly.ice` and `slice/Conformance.ice`,
//!   which it includes, held together by `$OUT_DIR/server/slice.rs`;
//! - the client's view: `slice/ClientOnly.ice` and `slice/Conformance.ice`,
//!   which it includes, in `$OUT_DIR/client/` (held together by
//!   `client/slice.rs`), so that the client never knows the server-only
//!   types and the server never knows the client-only ones.

use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::var("OUT_DIR")?;
    let server = Path::new(&out).join("server");
    let client = Path::new(&out).join("client");
    std::fs::create_dir_all(&server)?;
    std::fs::create_dir_all(&client)?;
    floe_idl::Builder::new()
        .include("slice")
        .out_dir(&server)
        .compile(&["slice/ServerOnly.ice"])?;
    floe_idl::Builder::new()
        .include("slice")
        .out_dir(&client)
        .compile(&["slice/ClientOnly.ice"])?;
    Ok(())
}
