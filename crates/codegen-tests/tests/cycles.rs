//! `Ice.AcceptClassCycles` in generated dispatchers: a class graph with a
//! cycle is refused by default (as by Ice for C++: the client gets an
//! `UnknownLocalException` naming the `MarshalException`) and accepted by a
//! server that sets the property to 1.
#![cfg(not(floe_no_ice_slice))]

use floe::codegen::ClassRef;
use floe::runtime::{Communicator, Error, Properties};
use floe::Identity;
use floe_codegen_tests::rich;

mod common;

/// A server of `Rich::SubEcho` with `props`; its typed proxy.
async fn server(props: Properties) -> (Communicator, rich::EchoPrx) {
    let communicator = Communicator::with_properties(props);
    let adapter = communicator
        .create_object_adapter_with_endpoints("C", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let proxy = adapter
        .add(
            Identity::from_name("echo"),
            rich::SubEchoDispatcher::new(common::Echo),
        )
        .unwrap();
    adapter.activate();
    (communicator, rich::EchoPrx::unchecked_cast(proxy))
}

/// A circle whose `inner` shape is itself.
fn cyclic_circle() -> ClassRef<rich::Circle> {
    let circle = ClassRef::new(rich::Circle::default());
    circle.write().inner = Some(circle.clone().upcast());
    circle
}

#[tokio::test]
async fn cycles_are_refused_by_default_and_accepted_when_configured() {
    let circle = cyclic_circle();
    let client = Communicator::new();

    let (refusing, echo) = server(Properties::new()).await;
    let echo = rich::EchoPrx::unchecked_cast(client.string_to_proxy(&echo.to_string()).unwrap());
    match echo.put_shape(&Some(circle.clone().upcast())).await {
        Err(Error::UnknownLocalException(text)) => {
            assert!(text.contains("MarshalException"), "{text}");
            assert!(text.contains("cycle"), "{text}");
        }
        other => panic!("a cycle was not refused: {other:?}"),
    }
    refusing.destroy().await;

    let props = Properties::new();
    props.set("Ice.AcceptClassCycles", "1");
    let (accepting, echo) = server(props).await;
    let echo = rich::EchoPrx::unchecked_cast(client.string_to_proxy(&echo.to_string()).unwrap());
    echo.put_shape(&Some(circle.clone().upcast()))
        .await
        .unwrap();
    accepting.destroy().await;

    // Cycles leak unless broken (as `shared_ptr` cycles in C++).
    circle.write().inner = None;
    client.destroy().await;
}
