//! Callbacks: a server that calls its client back, two ways.
//!
//! - **On a client adapter:** the client listens on endpoints of its own and
//!   sends a proxy to its receiver; the server connects to it like any
//!   client would.
//! - **Bidirectional:** the client has no endpoints (behind a firewall, say).
//!   It attaches its adapter to the connection it made to the server
//!   (`Connection::set_adapter`), and the server sends the callbacks back
//!   over that same connection (`ice_fixed(current.connection)`).
//!
//! ```sh
//! cargo run --example callback
//! ```
//!
//! The server and the client run in one process here, each with its own
//! communicator, talking over TCP on 127.0.0.1.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use floe::runtime::{Communicator, Current, DispatchError, Error};
use floe::Identity;

floe::slice!("examples/slice/Callback.ice");

use demo::{CallbackReceiverPrx, CallbackSenderPrx};

/// The server's object.
struct Sender;

impl demo::CallbackSender for Sender {
    async fn initiate_callback(
        &self,
        receiver: Option<CallbackReceiverPrx>,
        count: i32,
        _: &Current,
    ) -> Result<(), DispatchError> {
        let receiver = receiver.ok_or_else(|| DispatchError::unknown("null receiver"))?;
        for n in 1..=count {
            receiver.callback(n).await?;
        }
        Ok(())
    }

    async fn call_me_back(
        &self,
        receiver: Option<CallbackReceiverPrx>,
        count: i32,
        current: &Current,
    ) -> Result<(), DispatchError> {
        let receiver = receiver.ok_or_else(|| DispatchError::unknown("null receiver"))?;
        let connection = current
            .connection
            .as_ref()
            .ok_or_else(|| DispatchError::unknown("not over a connection"))?;
        // The same identity, reached over the caller's own connection.
        let receiver = receiver.ice_fixed(connection);
        for n in 1..=count {
            receiver.callback(n).await?;
        }
        Ok(())
    }

    async fn shutdown(&self, current: &Current) -> Result<(), DispatchError> {
        current.adapter.communicator()?.shutdown();
        Ok(())
    }
}

/// The client's object: counts the callbacks.
struct Receiver(Arc<AtomicI32>);

impl demo::CallbackReceiver for Receiver {
    async fn callback(&self, n: i32, _: &Current) -> Result<(), DispatchError> {
        println!("callback #{n}");
        self.0.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    // The server.
    let server = Communicator::new();
    let adapter = server
        .create_object_adapter_with_endpoints("Sender", "tcp -h 127.0.0.1 -p 0")
        .await?;
    let sender = adapter.add(
        Identity::from_name("sender"),
        demo::CallbackSenderDispatcher::new(Sender),
    )?;
    adapter.activate();

    let client = Communicator::new();
    let sender = CallbackSenderPrx::unchecked_cast(client.string_to_proxy(&sender.to_string())?);
    let received = Arc::new(AtomicI32::new(0));

    // 1. On a client adapter with endpoints: the server connects back.
    let listening = client
        .create_object_adapter_with_endpoints("Receiver", "tcp -h 127.0.0.1 -p 0")
        .await?;
    let receiver = listening.add(
        Identity::from_name("receiver"),
        demo::CallbackReceiverDispatcher::new(Receiver(received.clone())),
    )?;
    listening.activate();
    let receiver = CallbackReceiverPrx::unchecked_cast(receiver);
    sender.initiate_callback(&Some(receiver), 3).await?;
    println!(
        "{} callbacks on the client's adapter",
        received.load(Ordering::Relaxed)
    );

    // 2. Bidirectional: an adapter without endpoints, attached to the
    //    connection to the server.
    let bidir = client
        .create_object_adapter_with_endpoints("Bidir", "")
        .await?;
    let receiver = bidir.add(
        Identity::from_name("bidir-receiver"),
        demo::CallbackReceiverDispatcher::new(Receiver(received.clone())),
    )?;
    bidir.activate();
    sender.ice_get_connection().await?.set_adapter(Some(bidir));
    let receiver = CallbackReceiverPrx::unchecked_cast(receiver);
    sender.call_me_back(&Some(receiver), 3).await?;
    println!("{} callbacks in all", received.load(Ordering::Relaxed));
    assert_eq!(received.load(Ordering::Relaxed), 6);

    sender.shutdown().await?;
    server.wait_for_shutdown().await;
    client.destroy().await;
    server.destroy().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    /// CI runs the example to completion (`test = true` in Cargo.toml).
    #[test]
    fn runs_to_completion() {
        super::main().expect("the example runs");
    }
}
