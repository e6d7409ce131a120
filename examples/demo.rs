//! A floe server and client in one process: `cargo run --release --example
//! demo`. Starts a server on a free 127.0.0.1 port, makes twoway, oneway and
//! batched calls, prints what happened with measured per-call times, and
//! exits with everything stopped.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use floe::runtime::{
    Communicator, Current, Dispatch, DispatchError, Identity, OperationMode, Servant,
};
use floe::wire::{Decoder, Encapsulation};

/// `interface Hello { void o(); string greet(string name); }` by hand.
struct Hello {
    calls: AtomicUsize,
}

impl Servant for Hello {
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch {
        self.calls.fetch_add(1, Ordering::Relaxed);
        Dispatch::ready(match current.operation.as_str() {
            "o" => Ok(current.empty_reply()),
            "greet" => (|| {
                let mut dec = Decoder::from_encapsulation(params)?;
                let name = dec.read_string()?;
                Ok(current.encode_reply(|e| e.write_string(&format!("hello, {name}"))))
            })(),
            _ => Err(DispatchError::operation_not_exist(&current)),
        })
    }

    fn ice_id(&self) -> &str {
        "::Demo::Hello"
    }

    fn ice_ids(&self) -> &[&str] {
        &["::Demo::Hello", "::Ice::Object"]
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> floe::runtime::Result<()> {
    // Server side.
    let server = Communicator::new();
    let adapter = server
        .create_object_adapter_with_endpoints("Demo", "tcp -h 127.0.0.1 -p 0")
        .await?;
    let hello = Arc::new(Hello {
        calls: AtomicUsize::new(0),
    });
    let proxy = adapter.add(Identity::from_name("hello"), hello.clone())?;
    adapter.activate();
    println!("server listening: {proxy}");

    // Client side: a separate communicator, as a separate process would use.
    let client = Communicator::new();
    let hello_prx = client.string_to_proxy(&proxy.to_string())?;
    hello_prx.ice_ping().await?;
    println!("ice_id: {}", hello_prx.ice_id().await?);

    let params = hello_prx.encode_params(|e| e.write_string("floe"));
    let reply = hello_prx
        .invoke("greet", OperationMode::Normal, params)
        .await?
        .into_ok()?;
    println!(
        "greet(\"floe\") -> {:?}",
        Decoder::from_encapsulation(reply)?.read_string()?
    );

    let empty = hello_prx.empty_params();
    let n = 10_000;
    let start = Instant::now();
    for _ in 0..n {
        hello_prx
            .invoke("o", OperationMode::Normal, empty.clone())
            .await?;
    }
    let t = start.elapsed();
    println!(
        "{n} twoway o(): {:.1} us/call",
        t.as_secs_f64() * 1e6 / n as f64
    );

    let oneway = hello_prx.ice_oneway();
    let start = Instant::now();
    for _ in 0..n {
        oneway
            .invoke("o", OperationMode::Normal, empty.clone())
            .await?;
    }
    hello_prx.ice_ping().await?; // all oneways were dispatched before this
    let t = start.elapsed();
    println!(
        "{n} oneway o() + ping: {:.2} us/call",
        t.as_secs_f64() * 1e6 / n as f64
    );

    let batch = hello_prx.ice_batch_oneway();
    let start = Instant::now();
    for _ in 0..n {
        batch
            .invoke("o", OperationMode::Normal, empty.clone())
            .await?;
    }
    batch.ice_flush_batch_requests().await?;
    hello_prx.ice_ping().await?;
    let t = start.elapsed();
    println!(
        "{n} batched o() + flush + ping: {:.2} us/call",
        t.as_secs_f64() * 1e6 / n as f64
    );

    println!("servant saw {} calls", hello.calls.load(Ordering::Relaxed));
    client.destroy().await;
    server.destroy().await;
    println!("stopped");
    Ok(())
}
