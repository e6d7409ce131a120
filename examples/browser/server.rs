//! A floe server for a browser: Ice for JavaScript on a web page calls it
//! over WebSocket (examples/browser/README.md).
//!
//! ```sh
//! cargo run --example browser_server      # then open http://127.0.0.1:8080/
//! ```
//!
//! Options: `--http ADDR` (default `127.0.0.1:8080`) for the page,
//! `--ice-js FILE` for Ice for JavaScript's browser bundle (default
//! `target/interop-node/node_modules/ice/lib/Ice.js`, which `cargo xtask
//! test` installs), and Ice properties such as
//! `--Hello.Endpoints='ws -h 127.0.0.1 -p 10000'` (the default). Ctrl-C stops
//! it.

#[path = "demo.rs"]
mod demo;
#[path = "site.rs"]
mod site;

use std::path::PathBuf;

use demo::{BoxError, Demo};
use floe::runtime::Communicator;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let communicator = Communicator::from_args(&mut args)?;
    if communicator.properties().get("Hello.Endpoints").is_none() {
        communicator
            .properties()
            .set("Hello.Endpoints", "ws -h 127.0.0.1 -p 10000");
    }
    let mut http = "127.0.0.1:8080".to_owned();
    let mut ice_js = default_ice_js();
    let mut rest = args.into_iter();
    while let Some(arg) = rest.next() {
        match (arg.as_str(), rest.next()) {
            ("--http", Some(v)) => http = v,
            ("--ice-js", Some(v)) => ice_js = v.into(),
            _ => {
                return Err(format!(
                    "unexpected argument {arg:?}; usage: browser_server [--http ADDR] \
                     [--ice-js FILE] [--Hello.Endpoints=...]"
                )
                .into())
            }
        }
    }
    let demo = Demo::start(&communicator, &http, &ice_js).await?;
    println!("hello: {}", demo.proxy);
    println!("open {} in a browser (Ctrl-C stops)", demo.url());
    communicator.shutdown_on_signals()?;
    communicator.wait_for_shutdown().await;
    println!("{} note(s) received", demo.notes().len());
    demo.stop().await;
    communicator.destroy().await;
    Ok(())
}

/// `target/interop-node/node_modules/ice/lib/Ice.js` in the cargo target
/// directory.
fn default_ice_js() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join("interop-node/node_modules/ice/lib/Ice.js")
}
