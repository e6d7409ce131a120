//! Compiles floe-storm's own Slice to Rust with floe-idl (`slice2rs`):
//! `slice/IceStorm.ice` (IceStorm's wire contract) and `slice/Replica.ice`
//! (between the replicas of a replicated broker), held together by the
//! module file `storm_slice.rs` that `src/slice.rs` includes.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Proxies as plain `ProxyData` (the broker stores and forwards them).
    floe_idl::Builder::new()
        .proxy_data(true)
        .module_file("storm_slice")
        .compile(&["slice/IceStorm.ice", "slice/Replica.ice"])?;
    Ok(())
}
