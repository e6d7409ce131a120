//! What a connection tells about itself and offers, as Ice's `Connection`:
//! the endpoint (`getEndpoint`: transport, host, port, timeout, compress)
//! on both sides, a WebSocket connection's upgrade headers, and
//! `create_proxy` (a proxy fixed to the connection: a server calls back a
//! client through the client's own connection).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use floe_runtime::{
    servant_fn, Communicator, Dispatch, DispatchError, Endpoint, Identity, OperationMode, Transport,
};

/// What the server saw of the connection of its last request.
#[derive(Default)]
struct Seen {
    endpoint: Option<Endpoint>,
    headers: Vec<(String, String)>,
}

/// A server on `endpoints` whose "o" records its connection and whose
/// "callback" calls "cb" back through `create_proxy` on the same
/// connection.
async fn server(endpoints: &str) -> (Communicator, u16, Arc<Mutex<Seen>>) {
    let communicator = Communicator::new();
    let adapter = communicator
        .create_object_adapter_with_endpoints("Info", endpoints)
        .await
        .unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let record = seen.clone();
    let servant = servant_fn(move |current, _| match current.operation.as_str() {
        "o" => {
            let conn = current.connection.as_ref().expect("a connection");
            let mut seen = record.lock().unwrap();
            seen.endpoint = conn.endpoint().cloned();
            seen.headers = conn.info().headers.clone();
            Dispatch::ready(Ok(current.empty_reply()))
        }
        "callback" => {
            let conn = current.connection.clone().expect("a connection");
            Dispatch::future(async move {
                let back = conn.create_proxy(Identity::from_name("cb"));
                let params = back.empty_params();
                back.invoke("ping", OperationMode::Normal, params)
                    .await
                    .map_err(DispatchError::from)?;
                Ok(current.empty_reply())
            })
        }
        _ => Dispatch::error(DispatchError::operation_not_exist()),
    });
    adapter.add(Identity::from_name("info"), servant).unwrap();
    adapter.activate();
    let port = adapter.endpoints()[0].port;
    (communicator, port, seen)
}

#[tokio::test]
async fn tcp_endpoint_info_on_both_sides() {
    let (server, port, seen) = server("tcp -h 127.0.0.1 -p 0 -t 15000").await;
    let client = Communicator::new();
    let p = client
        .string_to_proxy(&format!("info:tcp -h 127.0.0.1 -p {port} -t 12000 -z"))
        .unwrap();
    p.invoke("o", OperationMode::Normal, p.empty_params())
        .await
        .unwrap();
    let conn = p.ice_get_connection().await.unwrap();
    let ours = conn.endpoint().expect("the client's endpoint");
    assert_eq!(ours.transport, Transport::Tcp);
    assert_eq!((ours.host.as_str(), ours.port), ("127.0.0.1", port));
    assert_eq!((ours.timeout, ours.compress), (12000, true));
    assert!(conn.info().headers.is_empty());
    let theirs = seen.lock().unwrap().endpoint.clone();
    let theirs = theirs.expect("the server's endpoint");
    assert_eq!(theirs.transport, Transport::Tcp);
    assert_eq!((theirs.host.as_str(), theirs.port), ("127.0.0.1", port));
    assert_eq!((theirs.timeout, theirs.compress), (15000, false));
    client.destroy().await;
    server.destroy().await;
}

#[tokio::test]
async fn ws_connections_keep_the_upgrade_headers() {
    let (server, port, seen) = server("ws -h 127.0.0.1 -p 0 -r /info").await;
    let client = Communicator::new();
    let p = client
        .string_to_proxy(&format!("info:ws -h 127.0.0.1 -p {port} -r /info"))
        .unwrap();
    p.invoke("o", OperationMode::Normal, p.empty_params())
        .await
        .unwrap();
    let has = |headers: &[(String, String)], name: &str, value: &str| {
        headers
            .iter()
            .any(|(k, v)| k == name && v.eq_ignore_ascii_case(value))
    };
    let conn = p.ice_get_connection().await.unwrap();
    assert_eq!(conn.endpoint().unwrap().transport, Transport::Ws);
    // The client keeps the response's headers, the server the request's.
    let response = &conn.info().headers;
    assert!(
        has(response, "sec-websocket-protocol", "ice.zeroc.com"),
        "{response:?}"
    );
    let (headers, endpoint) = {
        let seen = seen.lock().unwrap();
        (seen.headers.clone(), seen.endpoint.clone())
    };
    assert!(has(&headers, "upgrade", "websocket"), "{headers:?}");
    assert!(has(&headers, "sec-websocket-protocol", "ice.zeroc.com"));
    assert_eq!(endpoint.unwrap().resource, "/info");
    client.destroy().await;
    server.destroy().await;
}

#[tokio::test]
async fn create_proxy_calls_back_through_the_connection() {
    let (server, port, _) = server("tcp -h 127.0.0.1 -p 0").await;
    let client = Communicator::new();
    // The client's adapter has no endpoints: the server reaches it only
    // through the client's connection (bidirectional).
    let callbacks = client
        .create_object_adapter_with_endpoints("Callbacks", "")
        .await
        .unwrap();
    let pings = Arc::new(AtomicUsize::new(0));
    let count = pings.clone();
    callbacks
        .add(
            Identity::from_name("cb"),
            servant_fn(move |current, _| {
                count.fetch_add(1, Ordering::SeqCst);
                Dispatch::ready(Ok(current.empty_reply()))
            }),
        )
        .unwrap();
    callbacks.activate();
    let p = client
        .string_to_proxy(&format!("info:tcp -h 127.0.0.1 -p {port}"))
        .unwrap();
    p.ice_get_connection()
        .await
        .unwrap()
        .set_adapter(Some(callbacks));
    p.invoke("callback", OperationMode::Normal, p.empty_params())
        .await
        .unwrap();
    assert_eq!(pings.load(Ordering::SeqCst), 1);
    client.destroy().await;
    server.destroy().await;
}
