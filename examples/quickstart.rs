//! Quick start: an Ice interface written as a Rust trait, a server and a
//! client in one program.
//!
//! `cargo run --example quickstart` calls the server once;
//! `cargo run --example quickstart -- --slice Hello.ice` also writes the
//! interface as Slice, for C++/Python/Java/JavaScript peers.

use floe::runtime::{Communicator, Current, DispatchError};
use floe::Identity;

#[floe::interface(module = "Demo")]
pub trait Hello {
    async fn say_hello(&self, name: String) -> String;
}

struct Greeter;

impl Hello for Greeter {
    async fn say_hello(&self, name: String, _: &Current) -> Result<String, DispatchError> {
        Ok(format!("Hello, {name}!"))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if let Some(path) = std::env::args().skip_while(|a| a != "--slice").nth(1) {
        std::fs::write(&path, HelloSlice::ice_slice())?;
    }
    let communicator = Communicator::new();
    let adapter = communicator
        .create_object_adapter_with_endpoints("Hello", "tcp -h 127.0.0.1 -p 0")
        .await?;
    let proxy = adapter.add(Identity::from_name("hello"), HelloDispatcher::new(Greeter))?;
    adapter.activate();

    let hello = HelloPrx::unchecked_cast(proxy);
    println!("{}", hello.say_hello("floe").await?);
    communicator.destroy().await;
    Ok(())
}
