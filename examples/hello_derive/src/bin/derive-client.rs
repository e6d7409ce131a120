//! The hello client, Rust-first: calls `sayHello` through the `HelloPrx`
//! that `#[floe::interface]` generated, then optionally shuts the server
//! down. It talks to the Rust-first server, to the Slice one
//! (`examples/hello`) and to the Python one alike.
//!
//! ```sh
//! cargo run -p floe-example-hello-derive --bin derive-client
//! cargo run -p floe-example-hello-derive --bin derive-client -- --Hello.Proxy="hello:tcp -h 127.0.0.1 -p 10001" --shutdown
//! ```

use floe::runtime::Communicator;
use floe_example_hello_derive::HelloPrx;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().collect();
    let communicator = Communicator::from_args(&mut args)?;
    let text = communicator
        .properties()
        .get_or("Hello.Proxy", "hello:tcp -h 127.0.0.1 -p 10000");
    // `checked_cast` asks the object whether it is a `::Demo::Hello`.
    let hello = HelloPrx::checked_cast(communicator.string_to_proxy(&text)?)
        .await?
        .ok_or("the object is not a ::Demo::Hello")?;

    // Twoway: returns when the server has answered.
    hello.say_hello(0).await?;
    // Oneway: no reply, returns once sent.
    hello.ice_oneway().say_hello(0).await?;
    // Batched oneways: queued, then sent together in one message.
    let batch = hello.ice_batch_oneway();
    batch.say_hello(0).await?;
    batch.say_hello(0).await?;
    batch.ice_flush_batch_requests().await?;
    println!("said hello 4 times");
    if args.iter().any(|a| a == "--shutdown") {
        hello.shutdown().await?;
    }
    communicator.destroy().await;
    Ok(())
}
