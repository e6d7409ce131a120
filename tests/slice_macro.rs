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

/// A Slice file that includes another user file: both are generated, the
/// reopened module merged (`pair::Point` from Base.ice beside
/// `pair::MirrorPrx` from Uses.ice).
mod two_files {
    floe::slice!("tests/slice/Uses.ice");
}

struct Mirror;

impl two_files::pair::Mirror for Mirror {
    async fn swap(
        &self,
        p: Vec<two_files::pair::Point>,
        _current: &Current,
    ) -> Result<Vec<two_files::pair::Point>, DispatchError> {
        Ok(p.into_iter()
            .map(|q| two_files::pair::Point { x: q.y, y: q.x })
            .collect())
    }
}

#[tokio::test]
async fn a_file_and_the_user_file_it_includes() {
    use two_files::pair;
    let communicator = Communicator::new();
    let adapter = communicator
        .create_object_adapter_with_endpoints("Mirror", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let proxy = adapter
        .add(
            Identity::from_name("m"),
            pair::MirrorDispatcher::new(Mirror),
        )
        .unwrap();
    adapter.activate();
    let mirror = pair::MirrorPrx::unchecked_cast(proxy);
    assert_eq!(
        mirror.swap(&[pair::Point { x: 1, y: 2 }]).await.unwrap(),
        [pair::Point { x: 2, y: 1 }]
    );
    communicator.destroy().await;
}
