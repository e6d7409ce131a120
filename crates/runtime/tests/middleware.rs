//! Dispatch and invocation middleware: order, per-servant layers and the
//! built-ins, the context a layer adds, a refused invocation, middleware
//! installed too late, and a panicking middleware.

use std::sync::{Arc, Mutex};

use floe_runtime::middleware::{layered, InvocationMiddleware, Outgoing};
use floe_runtime::{
    servant_fn, Communicator, Dispatch, Error, Identity, ObjectAdapter, Proxy, Response,
};

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, entry: impl Into<String>) {
    log.lock().unwrap().push(entry.into());
}

fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

/// A dispatch middleware that logs `name` and the operation.
fn logging(
    log: &Log,
    name: &'static str,
) -> impl FnOnce(Arc<dyn floe_runtime::Servant>) -> Arc<dyn floe_runtime::Servant> {
    let log = log.clone();
    move |next| {
        servant_fn(move |current, params| {
            push(&log, format!("{name} {}", current.operation));
            next.clone().dispatch(current, params)
        })
    }
}

async fn adapter(communicator: &Communicator) -> ObjectAdapter {
    communicator
        .create_object_adapter_with_endpoints("M", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap()
}

fn echo_context() -> Arc<dyn floe_runtime::Servant> {
    servant_fn(|current, _| {
        let value = current.ctx.get("k").cloned().unwrap_or_default();
        Dispatch::ready(Ok(current.encode_reply(|e| e.write_string(&value))))
    })
}

async fn read_string(proxy: &Proxy, operation: &str) -> Result<String, Error> {
    let reply = proxy
        .invoke(
            operation,
            floe_runtime::OperationMode::Normal,
            proxy.empty_params(),
        )
        .await?
        .into_ok()?;
    Ok(floe_wire::Decoder::from_encapsulation(reply)?.read_string()?)
}

#[tokio::test]
async fn adapter_middleware_runs_in_order_for_every_request() {
    let communicator = Communicator::new();
    let adapter = adapter(&communicator).await;
    let log = Log::default();
    adapter.use_middleware(logging(&log, "first")).unwrap();
    adapter.use_middleware(logging(&log, "second")).unwrap();
    let proxy = adapter
        .add(Identity::from_name("o"), echo_context())
        .unwrap();
    adapter.activate();
    proxy.ice_ping().await.unwrap();
    let missing = proxy.ice_identity(Identity::from_name("missing"));
    assert!(matches!(
        missing.ice_ping().await,
        Err(Error::ObjectNotExist(_))
    ));
    assert_eq!(
        take(&log),
        [
            "first ice_ping",
            "second ice_ping",
            "first ice_ping",
            "second ice_ping"
        ]
    );
    // Installed after the first dispatch: refused, as Ice 3.8's `use`.
    assert!(matches!(
        adapter.use_middleware(logging(&log, "late")),
        Err(Error::Initialization(_))
    ));
    communicator.destroy().await;
}

#[tokio::test]
async fn a_layered_servant_keeps_its_type_ids_and_sees_the_builtins() {
    let communicator = Communicator::new();
    let adapter = adapter(&communicator).await;
    let log = Log::default();
    struct Typed;
    impl floe_runtime::Servant for Typed {
        fn dispatch(
            self: Arc<Self>,
            current: floe_runtime::Current,
            _: floe_wire::Encapsulation,
        ) -> Dispatch {
            Dispatch::ready(Ok(current.empty_reply()))
        }
        fn ice_id(&self) -> &str {
            "::M::Typed"
        }
        fn ice_ids(&self) -> &[&str] {
            &["::Ice::Object", "::M::Typed"]
        }
    }
    let servant = layered(Arc::new(Typed), logging(&log, "servant"));
    let proxy = adapter.add(Identity::from_name("t"), servant).unwrap();
    adapter.activate();
    assert_eq!(proxy.ice_id().await.unwrap(), "::M::Typed");
    assert!(proxy.ice_is_a("::M::Typed").await.unwrap());
    proxy
        .invoke(
            "op",
            floe_runtime::OperationMode::Normal,
            proxy.empty_params(),
        )
        .await
        .unwrap();
    assert_eq!(
        take(&log),
        ["servant ice_id", "servant ice_isA", "servant op"]
    );
    communicator.destroy().await;
}

/// Adds `k=value` to the context; the `inner` one refuses operation
/// `refused`; logs what it sees after.
struct Tagger {
    value: &'static str,
    log: Log,
}

impl InvocationMiddleware for Tagger {
    fn before(&self, request: &mut Outgoing<'_>) -> floe_runtime::Result<()> {
        if self.value == "inner" && request.operation == "refused" {
            return Err(Error::Initialization("refused by middleware".into()));
        }
        request
            .context
            .to_mut()
            .insert("k".into(), self.value.into());
        Ok(())
    }

    fn after(&self, request: &Outgoing<'_>, result: &floe_runtime::Result<Response>) {
        push(
            &self.log,
            format!("{} {} {}", self.value, request.operation, result.is_ok()),
        );
    }
}

#[tokio::test]
async fn invocation_middleware_sets_the_context_and_sees_the_outcome() {
    let server = Communicator::new();
    let adapter = adapter(&server).await;
    let proxy = adapter
        .add(Identity::from_name("o"), echo_context())
        .unwrap();
    adapter.activate();

    let log = Log::default();
    let client = Communicator::new();
    client.use_invocation_middleware(Tagger {
        value: "outer",
        log: log.clone(),
    });
    let before = client.string_to_proxy(&proxy.to_string()).unwrap();
    assert_eq!(read_string(&before, "get").await.unwrap(), "outer");
    // A per-proxy layer runs inside the communicator's: its value wins.
    let inner = before.ice_middleware(Tagger {
        value: "inner",
        log: log.clone(),
    });
    assert_eq!(read_string(&inner, "get").await.unwrap(), "inner");
    assert_eq!(
        take(&log),
        ["outer get true", "inner get true", "outer get true"]
    );
    // A layer that refuses: nothing is sent, the outer layer sees the error.
    let refused = inner.invoke(
        "refused",
        floe_runtime::OperationMode::Normal,
        inner.empty_params(),
    );
    assert!(matches!(refused.await, Err(Error::Initialization(_))));
    assert_eq!(take(&log), ["outer refused false"]);
    // A proxy without middleware sends the proxy's own context.
    let plain = Communicator::new();
    let bare = plain.string_to_proxy(&proxy.to_string()).unwrap();
    assert_eq!(read_string(&bare, "get").await.unwrap(), "");
    plain.destroy().await;
    client.destroy().await;
    server.destroy().await;
}

#[tokio::test]
async fn a_panicking_middleware_is_status_7() {
    let communicator = Communicator::new();
    let adapter = adapter(&communicator).await;
    adapter
        .use_middleware(|_next| servant_fn(|_, _| panic!("middleware bug")))
        .unwrap();
    let proxy = adapter
        .add(Identity::from_name("o"), echo_context())
        .unwrap();
    adapter.activate();
    match proxy.ice_ping().await {
        Err(Error::UnknownException(text)) => assert!(text.contains("middleware bug")),
        other => panic!("expected UnknownException, got {other:?}"),
    }
    // The connection survives: the next request gets the same answer.
    let connection = proxy.ice_get_cached_connection().map(|c| c.info().id);
    assert!(connection.is_some());
    assert!(matches!(
        proxy.ice_ping().await,
        Err(Error::UnknownException(_))
    ));
    assert_eq!(
        proxy.ice_get_cached_connection().map(|c| c.info().id),
        connection
    );
    communicator.destroy().await;
}
