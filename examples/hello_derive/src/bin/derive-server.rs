//! The hello server, Rust-first: serves the object `hello` on the adapter
//! `Hello` with a servant of the `#[floe::interface]` trait.
//!
//! ```sh
//! cargo run -p floe-example-hello-derive --bin derive-server
//! cargo run -p floe-example-hello-derive --bin derive-server -- --Hello.Endpoints="tcp -h 127.0.0.1 -p 10001"
//! ```
//!
//! It prints the endpoint it listens on, and runs until Ctrl-C or a
//! client's `shutdown()`. The Slice hello client (`examples/hello`) and
//! the Python one talk to it unchanged.

use std::time::Duration;

use floe::runtime::{Communicator, Current, DispatchError};
use floe::Identity;
use floe_example_hello_derive::{Hello, HelloDispatcher};

struct HelloI;

impl Hello for HelloI {
    async fn say_hello(&self, delay: i32, _: &Current) -> Result<(), DispatchError> {
        if delay > 0 {
            tokio::time::sleep(Duration::from_millis(delay as u64)).await;
        }
        println!("Hello World!");
        Ok(())
    }

    async fn shutdown(&self, current: &Current) -> Result<(), DispatchError> {
        println!("Shutting down...");
        current.adapter.communicator()?.shutdown();
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `--Ice.Config=FILE` and `--Hello.Endpoints=...` come from the command line.
    let mut args: Vec<String> = std::env::args().collect();
    let communicator = Communicator::from_args(&mut args)?;
    if communicator.properties().get("Hello.Endpoints").is_none() {
        communicator
            .properties()
            .set("Hello.Endpoints", "tcp -h 127.0.0.1 -p 10000");
    }
    let adapter = communicator.create_object_adapter("Hello").await?;
    adapter.add(Identity::from_name("hello"), HelloDispatcher::new(HelloI))?;
    adapter.activate();
    println!("listening on {}", adapter.endpoints()[0]);

    let on_signal = communicator.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_signal.shutdown();
        }
    });
    communicator.wait_for_shutdown().await;
    communicator.destroy().await;
    Ok(())
}
