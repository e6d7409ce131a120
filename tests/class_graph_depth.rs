//! `Ice.ClassGraphDepthMax` (Ice's default 100) on both sides, with
//! generated code: a server refuses a request whose class graph nests
//! deeper than its limit (the client gets `UnknownLocalException` naming
//! the limit, as from an Ice server) and accepts it with a higher one; a
//! client refuses a reply deeper than its own limit.

use floe::codegen::{ClassRef, Current, DispatchError};
use floe::runtime::{Communicator, Error, Properties};
use floe::Identity;

floe::slice!("tests/slice/Depth.ice");

use depth::{ChainPrx, Node};

struct ChainI;

impl depth::Chain for ChainI {
    async fn echo(
        &self,
        list: Option<ClassRef<Node>>,
        _: &Current,
    ) -> Result<Option<ClassRef<Node>>, DispatchError> {
        Ok(list)
    }

    async fn make(
        &self,
        length: i32,
        _: &Current,
    ) -> Result<Option<ClassRef<Node>>, DispatchError> {
        Ok(chain(length))
    }
}

fn chain(length: i32) -> Option<ClassRef<Node>> {
    let mut head = None;
    for value in (0..length).rev() {
        head = Some(ClassRef::new(Node { value, next: head }));
    }
    head
}

fn length(mut list: Option<ClassRef<Node>>) -> i32 {
    let mut n = 0;
    while let Some(node) = list {
        n += 1;
        list = node.read().next.clone();
    }
    n
}

fn communicator(depth_max: Option<&str>) -> Communicator {
    let props = Properties::new();
    if let Some(d) = depth_max {
        props.set("Ice.ClassGraphDepthMax", d);
    }
    Communicator::with_properties(props)
}

async fn serve(server: &Communicator) -> String {
    let adapter = server
        .create_object_adapter_with_endpoints("Chain", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let proxy = adapter
        .add(
            Identity::from_name("chain"),
            depth::ChainDispatcher::new(ChainI),
        )
        .unwrap();
    adapter.activate();
    proxy.to_string()
}

async fn client(depth_max: Option<&str>, server: &str) -> (Communicator, ChainPrx) {
    let c = communicator(depth_max);
    let prx = ChainPrx::unchecked_cast(c.string_to_proxy(server).unwrap());
    (c, prx)
}

#[tokio::test]
async fn the_server_applies_its_depth_limit() {
    // Ice's default: 100 deep is fine, 101 is not.
    let server = communicator(None);
    let text = serve(&server).await;
    let (c, prx) = client(Some("1000"), &text).await;
    assert_eq!(length(prx.echo(&chain(100)).await.unwrap()), 100);
    match prx.echo(&chain(101)).await {
        Err(Error::UnknownLocalException(text)) => {
            assert!(text.contains("MarshalException"), "{text}");
        }
        other => panic!("expected UnknownLocalException, got {other:?}"),
    }

    // A server configured for deeper graphs takes them.
    let deep = communicator(Some("130"));
    let text = serve(&deep).await;
    let prx = ChainPrx::unchecked_cast(c.string_to_proxy(&text).unwrap());
    assert_eq!(length(prx.echo(&chain(130)).await.unwrap()), 130);
    assert!(prx.echo(&chain(131)).await.is_err());

    c.destroy().await;
    server.destroy().await;
    deep.destroy().await;
}

#[tokio::test]
async fn the_client_applies_its_depth_limit() {
    let server = communicator(Some("140"));
    let text = serve(&server).await;

    let (shallow, prx) = client(Some("40"), &text).await;
    assert_eq!(length(prx.make(40).await.unwrap()), 40);
    match prx.make(41).await {
        Err(Error::Protocol(e)) => assert!(e.to_string().contains("depth"), "{e}"),
        other => panic!("expected a marshal error, got {other:?}"),
    }

    // Below 1 is Ice's "no limit": floe's stack budget applies instead.
    let (unlimited, prx) = client(Some("0"), &text).await;
    assert_eq!(length(prx.make(140).await.unwrap()), 140);

    shallow.destroy().await;
    unlimited.destroy().await;
    server.destroy().await;
}
