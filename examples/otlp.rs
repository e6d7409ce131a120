//! OpenTelemetry traces across floe calls, exported to an OTLP collector.
//!
//! A client calls `relay` on a front server, which calls `greet` on a back
//! server. [`TraceContext`] puts the W3C `traceparent`/`tracestate` of the
//! caller's span in each request's context; [`trace_dispatch`] runs each
//! dispatch in an `ice.dispatch` span whose parent that is. The spans reach
//! OpenTelemetry through `tracing-opentelemetry` and leave the process
//! over OTLP/HTTP (protobuf): one trace, client span → `relay` dispatch →
//! `greet` dispatch.
//!
//! ```sh
//! # a collector listening for OTLP/HTTP, e.g. the OpenTelemetry Collector
//! # or Jaeger on its default port 4318:
//! OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 \
//!     cargo run --example otlp --features otlp
//! ```
//!
//! The example's test runs it against a minimal collector in the test and
//! checks that the exported spans carry the printed trace id.

use std::time::Duration;

use floe::runtime::middleware::otel::{trace_dispatch, TraceContext};
use floe::runtime::{Communicator, Current, DispatchError, Error};
use floe::Identity;
use opentelemetry::trace::{TraceContextExt, TraceId, TracerProvider as _};
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

#[floe::interface(module = "Demo")]
pub trait Greeter {
    /// A greeting for `name`.
    async fn greet(&self, name: String) -> String;
    /// Asks the back server to greet `name`.
    async fn relay(&self, name: String) -> String;
}

/// The back server: greets.
struct Back;

impl Greeter for Back {
    async fn greet(&self, name: String, _: &Current) -> Result<String, DispatchError> {
        Ok(format!("hello, {name}"))
    }
    async fn relay(&self, _: String, _: &Current) -> Result<String, DispatchError> {
        Err(DispatchError::operation_not_exist())
    }
}

/// The front server: relays to the back server, inside its dispatch span.
struct Front {
    back: GreeterPrx,
}

impl Greeter for Front {
    async fn greet(&self, _: String, _: &Current) -> Result<String, DispatchError> {
        Err(DispatchError::operation_not_exist())
    }
    async fn relay(&self, name: String, _: &Current) -> Result<String, DispatchError> {
        self.back.greet(&name).await.map_err(DispatchError::unknown)
    }
}

/// An OTLP/HTTP exporter to `endpoint` (e.g. `http://127.0.0.1:4318`),
/// batching spans in a thread of its own.
///
/// Build and shut it down outside the tokio runtime: its HTTP client is
/// a blocking one.
fn tracer_provider(endpoint: &str) -> Result<SdkTracerProvider, Box<dyn std::error::Error>> {
    let exporter = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')))
        .with_timeout(Duration::from_secs(5))
        .build()?;
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name("floe-otlp-example")
                .build(),
        )
        .build())
}

/// The calls: client → front `relay` → back `greet`, in the client's
/// span. Returns the trace id.
async fn calls() -> Result<TraceId, Error> {
    let back = Communicator::new();
    let back_adapter = back
        .create_object_adapter_with_endpoints("Back", "tcp -h 127.0.0.1 -p 0")
        .await?;
    back_adapter.use_middleware(trace_dispatch)?;
    let back_proxy = back_adapter.add(Identity::from_name("back"), GreeterDispatcher::new(Back))?;
    back_adapter.activate();

    let front = Communicator::new();
    front.use_invocation_middleware(TraceContext::new());
    let front_adapter = front
        .create_object_adapter_with_endpoints("Front", "tcp -h 127.0.0.1 -p 0")
        .await?;
    front_adapter.use_middleware(trace_dispatch)?;
    let to_back = GreeterPrx::unchecked_cast(front.string_to_proxy(&back_proxy.to_string())?);
    let front_proxy = front_adapter.add(
        Identity::from_name("front"),
        GreeterDispatcher::new(Front { back: to_back }),
    )?;
    front_adapter.activate();

    let client = Communicator::new();
    client.use_invocation_middleware(TraceContext::new());
    let greeter = GreeterPrx::unchecked_cast(client.string_to_proxy(&front_proxy.to_string())?);
    let span = tracing::info_span!("otlp-example.client");
    let trace = span.context().span().span_context().trace_id();
    let greeting = greeter.relay("otlp").instrument(span).await?;
    println!("{greeting} (trace {trace})");
    for c in [&client, &front, &back] {
        c.destroy().await;
    }
    Ok(trace)
}

/// Runs the calls with spans exported to `endpoint`; returns the trace id
/// once the spans are flushed.
fn run(endpoint: &str) -> Result<TraceId, Box<dyn std::error::Error>> {
    let provider = tracer_provider(endpoint)?;
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("floe-example"));
    let subscriber = tracing_subscriber::registry().with(layer);
    let trace = tracing::subscriber::with_default(subscriber, || {
        // One thread: the subscriber above is this thread's default.
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(calls())
            .map_err(Box::<dyn std::error::Error>::from)
    })?;
    // Fails when the collector did not take the spans.
    provider.force_flush()?;
    provider.shutdown()?;
    Ok(trace)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let endpoint = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
        .unwrap_or_else(|_| "http://127.0.0.1:4318".to_string());
    let trace = run(&endpoint)?;
    println!("spans of trace {trace} exported to {endpoint}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::mpsc;

    /// A minimal OTLP/HTTP collector: answers every POST with 200 and
    /// passes on (path, body).
    fn collector() -> (String, mpsc::Receiver<(String, Vec<u8>)>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut request_line = String::new();
                    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                        break;
                    }
                    let path = request_line
                        .split_whitespace()
                        .nth(1)
                        .unwrap_or("")
                        .to_string();
                    let mut length = 0;
                    loop {
                        let mut line = String::new();
                        reader.read_line(&mut line).unwrap();
                        let line = line.trim_end();
                        if line.is_empty() {
                            break;
                        }
                        if let Some((k, v)) = line.split_once(':') {
                            if k.eq_ignore_ascii_case("content-length") {
                                length = v.trim().parse().unwrap();
                            }
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    let _ = tx.send((path, body));
                    stream
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                        .unwrap();
                }
            }
        });
        (endpoint, rx)
    }

    /// CI runs the example against the collector above (`test = true`).
    #[test]
    fn exports_one_trace_over_otlp() {
        let (endpoint, rx) = collector();
        let trace = super::run(&endpoint).unwrap();
        let (path, body) = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        assert_eq!(path, "/v1/traces");
        let contains = |needle: &[u8]| body.windows(needle.len()).any(|w| w == needle);
        // An ExportTraceServiceRequest (protobuf): the trace id as 16 raw
        // bytes, the dispatch span names and the service name as strings.
        assert!(contains(&trace.to_bytes()), "trace id {trace} not exported");
        assert!(contains(b"ice.dispatch"));
        assert!(contains(b"otlp-example.client"));
        assert!(contains(b"floe-otlp-example"));
        let dispatches = body
            .windows(b"ice.dispatch".len())
            .filter(|w| *w == b"ice.dispatch")
            .count();
        assert_eq!(dispatches, 2, "the relay and greet dispatch spans");
    }
}
