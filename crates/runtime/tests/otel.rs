//! W3C trace context in the Ice request context (feature `otel`): a floe
//! client -> floe server -> floe server chain shares one trace, and a
//! Python Ice 3.7 client's `traceparent` is the parent of floe's dispatch
//! span; a failed dispatch is an error span. Spans are collected by OpenTelemetry's in-memory exporter behind
//! `tracing-opentelemetry`.

use std::process::Command;
use std::sync::OnceLock;

use floe_runtime::middleware::otel::{trace_dispatch, TraceContext};
use floe_runtime::{
    servant_fn, Communicator, Dispatch, DispatchError, Identity, ObjectAdapter, OperationMode,
};
use opentelemetry::trace::{SpanId, Status, TraceContextExt, TraceId, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

/// The process's subscriber: `tracing` spans to the in-memory exporter.
fn exporter() -> &'static InMemorySpanExporter {
    static EXPORTER: OnceLock<(InMemorySpanExporter, SdkTracerProvider)> = OnceLock::new();
    &EXPORTER
        .get_or_init(|| {
            let exporter = InMemorySpanExporter::default();
            let provider = SdkTracerProvider::builder()
                .with_simple_exporter(exporter.clone())
                .build();
            let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("floe-test"));
            tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
                .expect("the only subscriber");
            (exporter, provider)
        })
        .0
}

/// The `ice.dispatch` spans of trace `trace`.
fn dispatch_spans(trace: TraceId) -> Vec<SpanData> {
    exporter()
        .get_finished_spans()
        .expect("spans")
        .into_iter()
        .filter(|s| s.name == "ice.dispatch" && s.span_context.trace_id() == trace)
        .collect()
}

/// The value of attribute `key` of `span`.
fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

async fn traced_adapter(communicator: &Communicator, name: &str) -> ObjectAdapter {
    let adapter = communicator
        .create_object_adapter_with_endpoints(name, "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    adapter.use_middleware(trace_dispatch).unwrap();
    adapter
}

#[tokio::test]
async fn a_floe_chain_shares_one_trace_id() {
    exporter();
    // The last server answers `ice_ping`.
    let last = Communicator::new();
    let last_adapter = traced_adapter(&last, "Last").await;
    let last_proxy = last_adapter
        .add(
            Identity::from_name("last"),
            servant_fn(|current, _| Dispatch::ready(Ok(current.empty_reply()))),
        )
        .unwrap();
    last_adapter.activate();

    // The middle server's `relay` pings the last one, in its dispatch span.
    let middle = Communicator::new();
    middle.use_invocation_middleware(TraceContext::new());
    let middle_adapter = traced_adapter(&middle, "Middle").await;
    let to_last = middle.string_to_proxy(&last_proxy.to_string()).unwrap();
    let middle_proxy = middle_adapter
        .add(
            Identity::from_name("middle"),
            servant_fn(move |current, _| {
                let to_last = to_last.clone();
                Dispatch::future(async move {
                    to_last.ice_ping().await.map_err(DispatchError::unknown)?;
                    Ok::<_, DispatchError>(current.empty_reply())
                })
            }),
        )
        .unwrap();
    middle_adapter.activate();

    let client = Communicator::new();
    client.use_invocation_middleware(TraceContext::new());
    let relay = client.string_to_proxy(&middle_proxy.to_string()).unwrap();
    let root = tracing::info_span!("client.root");
    let root_context = root.context().span().span_context().clone();
    async {
        relay
            .invoke("relay", OperationMode::Normal, relay.empty_params())
            .await
            .unwrap()
            .into_ok()
            .unwrap();
    }
    .instrument(root.clone())
    .await;
    drop(root);
    for c in [&client, &middle, &last] {
        c.destroy().await;
    }

    let trace = root_context.trace_id();
    let spans = dispatch_spans(trace);
    let method = |s: &&SpanData| attribute(s, "rpc.method");
    let at_middle = spans
        .iter()
        .find(|s| method(s).as_deref() == Some("relay"))
        .expect("the middle server's dispatch span is in the client's trace");
    let at_last = spans
        .iter()
        .find(|s| method(s).as_deref() == Some("ice_ping"))
        .expect("the last server's dispatch span is in the client's trace");
    assert_eq!(spans.len(), 2, "{spans:#?}");
    assert_eq!(at_middle.parent_span_id, root_context.span_id());
    assert_eq!(at_last.parent_span_id, at_middle.span_context.span_id());
    assert_eq!(attribute(at_middle, "rpc.system").as_deref(), Some("ice"));
    assert_eq!(at_last.status, Status::Unset);
}

#[tokio::test]
async fn a_failed_dispatch_is_an_error_span() {
    exporter();
    let server = Communicator::new();
    let adapter = traced_adapter(&server, "Failing").await;
    let proxy = adapter
        .add(
            Identity::from_name("failing"),
            servant_fn(|_, _| Dispatch::error(DispatchError::unauthorized("no"))),
        )
        .unwrap();
    adapter.activate();
    let client = Communicator::new();
    client.use_invocation_middleware(TraceContext::new());
    let failing = client.string_to_proxy(&proxy.to_string()).unwrap();
    let root = tracing::info_span!("client.root");
    let trace = root.context().span().span_context().trace_id();
    let called = failing.invoke("op", OperationMode::Normal, failing.empty_params());
    assert!(called.instrument(root).await.is_err());
    client.destroy().await;
    server.destroy().await;
    let spans = dispatch_spans(trace);
    assert_eq!(spans.len(), 1, "{spans:#?}");
    assert!(
        matches!(spans[0].status, Status::Error { .. }),
        "{:?}",
        spans[0].status
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_ice_client_is_the_parent() {
    exporter();
    let server = Communicator::new();
    let adapter = traced_adapter(&server, "Traced").await;
    let proxy = adapter
        .add(
            Identity::from_name("traced"),
            servant_fn(|current, _| Dispatch::ready(Ok(current.empty_reply()))),
        )
        .unwrap();
    adapter.activate();

    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent = "00f067aa0ba902b7";
    let script = format!(
        "import sys, Ice\n\
         ic = Ice.initialize()\n\
         try:\n    \
             p = ic.stringToProxy(sys.argv[1])\n    \
             p.ice_ping({{'traceparent': '00-{trace}-{parent}-01', 'tracestate': 'congo=t61rcWkgMzE'}})\n\
         finally:\n    \
             ic.destroy()\n"
    );
    let target = proxy.to_string();
    let out = tokio::task::spawn_blocking(move || {
        Command::new("/usr/bin/python3")
            .args(["-c", &script, &target])
            .output()
    })
    .await
    .unwrap()
    .expect("/usr/bin/python3 runs (python3-zeroc-ice)");
    assert!(
        out.status.success(),
        "the Python client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    server.destroy().await;

    let spans = dispatch_spans(TraceId::from_hex(trace).unwrap());
    assert_eq!(spans.len(), 1, "{spans:#?}");
    let span = &spans[0];
    assert_eq!(span.parent_span_id, SpanId::from_hex(parent).unwrap());
    assert_eq!(attribute(span, "rpc.method").as_deref(), Some("ice_ping"));
    assert_eq!(
        span.span_context.trace_state().header(),
        "congo=t61rcWkgMzE"
    );
}
