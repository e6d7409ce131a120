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

#[path = "bench_common/mod.rs"]
mod bench_common;

use bench_common::LatencyPrx;
use floe::runtime::{Communicator, Glacier2Session, Properties};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let props = Properties::from_args(&mut args).unwrap_or_else(|e| {
        eprintln!("glacier2_client: {e}");
        std::process::exit(2)
    });
    let [router, proxy] = args.as_slice() else {
        eprintln!("usage: glacier2_client ROUTER PROXY [--Ice.Prop=value...]");
        std::process::exit(2)
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| {
            eprintln!("glacier2_client: {e}");
            std::process::exit(1)
        });
    let result = rt.block_on(async {
        let communicator = Communicator::with_properties(props);
        let result = async {
            let router = communicator.string_to_proxy(router)?;
            let session = Glacier2Session::create(&communicator, &router, "floe", "floe").await?;
            let latency =
                LatencyPrx::unchecked_cast(session.routed(&communicator.string_to_proxy(proxy)?));
            latency.o().await?;
            session.destroy().await
        }
        .await;
        communicator.destroy().await;
        result
    });
    match result {
        Ok(()) => println!("ok"),
        Err(e) => {
            println!("error: {e}");
            std::process::exit(1)
        }
    }
}
