//! Calls `Bench::Latency::o()` through a Glacier2 router:
//!
//! ```text
//! glacier2_client ROUTER PROXY [--Ice.Prop=value...]
//! cargo run --example glacier2_client -- \
//!     'Glacier2/router:tcp -h 127.0.0.1 -p 4063' 'a:tcp -h 10.0.0.5 -p 10000'
//! ```
//!
//! Creates a session (user `floe`, password `floe`: run the router with a
//! permissive verifier, `Glacier2.PermissionsVerifier=Glacier2/NullPermissionsVerifier`),
//! calls `o()` on `PROXY` through the router (an indirect `PROXY` is
//! resolved by the router's own locator), destroys the session, and prints
//! `ok` (exit 0) or the error (exit 1).

#[path = "one_call/mod.rs"]
mod one_call;

// The Bench.ice proxies (benches/Bench.ice), shared with the benchmark programs.
use floe::runtime::Glacier2Session;
use floe_bench::LatencyPrx;
use one_call::one_call_main;

fn main() {
    one_call_main(
        "glacier2_client",
        "ROUTER PROXY",
        |_, _| {},
        async |communicator, router, proxy| {
            let router = communicator.string_to_proxy(router)?;
            let session = Glacier2Session::create(communicator, &router, "floe", "floe").await?;
            let target = session.routed(&communicator.string_to_proxy(proxy)?);
            LatencyPrx::unchecked_cast(target).o().await?;
            session.destroy().await
        },
    );
}
