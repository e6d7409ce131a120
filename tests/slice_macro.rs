//! `floe::slice!` expands a Slice file into a typed proxy and servant trait
//! that talk to each other over floe-runtime.

use floe::codegen::{Current, DispatchError};
use floe::runtime::Communicator;
use floe::Identity;

floe::slice!("crates/idl/tests/codegen/Hello.ice");

struct Greeter;

impl demo::Hello for Greeter {
    async fn say_hello(&self, delay: i32, current: &Current) -> Result<String, DispatchError> {
        Ok(format!("hello after {delay} ms from {}", current.id.name))
    }

    async fn ping(&self, _current: &Current) -> Result<(), DispatchError> {
        Ok(())
    }
}

#[tokio::test]
async fn hello_through_the_macro() {
    let communicator = Communicator::new();
    let adapter = communicator
        .create_object_adapter_with_endpoints("Hello", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let proxy = adapter
        .add(
            Identity::from_name("hello"),
            demo::HelloDispatcher::new(Greeter),
        )
        .unwrap();
    adapter.activate();
    let hello = demo::HelloPrx::checked_cast(proxy).await.unwrap().unwrap();
    assert_eq!(
        hello.say_hello(5).await.unwrap(),
        "hello after 5 ms from hello"
    );
    hello.ping().await.unwrap();
    assert_eq!(hello.ice_id().await.unwrap(), "::Demo::Hello");
    communicator.destroy().await;
}
