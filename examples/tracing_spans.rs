//! Tracing spans: follow calls from the proxy to the servant with a
//! `tracing` subscriber.
//!
//! floe opens a `connection` span per connection, an `invoke` span per
//! proxy call and a `dispatch` span per servant dispatch (fields and levels
//! in `floe::runtime::spans`). This example installs `tracing-subscriber`
//! with a small layer that records every span the way an OpenTelemetry
//! exporter would (name, parent, attributes, duration), makes a few calls
//! — a twoway call whose servant calls another server, a user exception,
//! a oneway — and prints the span tree:
//!
//! ```text
//! example client
//! ├── invoke operation=lookup identity=directory mode=twoway request_id=1 connection=1   1.21 ms
//! …
//! connection id=2 transport=tcp incoming=true adapter=Directory
//! ├── dispatch operation=lookup identity=directory mode=twoway request_id=1 connection=2   0.93 ms
//! │   └── invoke operation=get identity=store mode=twoway request_id=1 connection=3   0.61 ms
//! ```
//!
//! ```sh
//! cargo run --example tracing_spans
//! ```
//!
//! The server and the client run in one process here, each with its own
//! communicator, over TCP on 127.0.0.1. To export the same spans to an
//! OpenTelemetry collector, replace the recording layer with
//! `tracing-opentelemetry`'s.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use floe::runtime::{Communicator, Current, DispatchError, Error};
use floe::Identity;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Instrument, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

floe::slice!("examples/slice/Tracing.ice");

use demo::{DirectoryPrx, NotFound, StorePrx};

/// The back end's object.
struct Store;

impl demo::Store for Store {
    async fn get(&self, key: String, _: &Current) -> Result<String, DispatchError> {
        match key.as_str() {
            "ice" => Ok("ZeroC's RPC".into()),
            "floe" => Ok("Ice, in Rust".into()),
            _ => Err(NotFound { key }.into()),
        }
    }
}

/// The front end's object: every lookup is a call to the store.
struct Directory {
    store: StorePrx,
}

impl demo::Directory for Directory {
    async fn lookup(&self, key: String, _: &Current) -> Result<String, DispatchError> {
        // A NotFound from the store is passed on to our caller as it is.
        match self.store.get(&key).await {
            Ok(value) => Ok(value),
            Err(e) => match e.user_exception::<NotFound>() {
                Some(not_found) => Err(not_found.clone().into()),
                None => Err(DispatchError::unknown(e.to_string())),
            },
        }
    }

    async fn touch(&self, key: String, _: &Current) -> Result<(), DispatchError> {
        tracing::info!(%key, "touched");
        Ok(())
    }
}

/// One span, as an exporter sees it.
#[derive(Clone, Debug)]
pub struct SpanRecord {
    /// Creation order: an index into the recorded spans.
    pub seq: usize,
    /// The parent span's `seq`.
    pub parent: Option<usize>,
    /// The span's name (`connection`, `invoke`, `dispatch`, ...).
    pub name: &'static str,
    /// Its fields, in the order they were recorded.
    pub fields: Vec<(&'static str, String)>,
    start: Instant,
    /// How long it was open; `None` while it is.
    pub duration: Option<Duration>,
}

impl SpanRecord {
    /// The value of field `name`.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A `tracing-subscriber` layer that records every span.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<SpanRecord>>>);

impl Recorder {
    fn spans(&self) -> MutexGuard<'_, Vec<SpanRecord>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The `seq` of a span, kept in the registry's extensions.
struct Seq(usize);

/// Writes a span's field values as text.
struct Fields<'a>(&'a mut Vec<(&'static str, String)>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.set(field.name(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field.name(), value.to_string());
    }
}

impl Fields<'_> {
    fn set(&mut self, name: &'static str, value: String) {
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.0.push((name, value)),
        }
    }
}

impl<S> Layer<S> for Recorder
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let parent = span
            .parent()
            .and_then(|p| p.extensions().get::<Seq>().map(|s| s.0));
        let mut fields = Vec::new();
        attrs.record(&mut Fields(&mut fields));
        let mut spans = self.spans();
        let seq = spans.len();
        spans.push(SpanRecord {
            seq,
            parent,
            name: attrs.metadata().name(),
            fields,
            start: Instant::now(),
            duration: None,
        });
        span.extensions_mut().insert(Seq(seq));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let Some(seq) = span.extensions().get::<Seq>().map(|s| s.0) else {
            return;
        };
        if let Some(record) = self.spans().get_mut(seq) {
            values.record(&mut Fields(&mut record.fields));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(seq) = span.extensions().get::<Seq>().map(|s| s.0) else {
            return;
        };
        if let Some(record) = self.spans().get_mut(seq) {
            record.duration = Some(record.start.elapsed());
        }
    }
}

/// Prints the spans as trees, roots in creation order.
fn print_tree(spans: &[SpanRecord]) {
    fn line(s: &SpanRecord) -> String {
        let fields: Vec<String> = s.fields.iter().map(|(n, v)| format!("{n}={v}")).collect();
        let time = match s.duration {
            Some(d) => format!("   {:.2} ms", d.as_secs_f64() * 1e3),
            None => "   (open)".into(),
        };
        format!("{} {}{time}", s.name, fields.join(" "))
    }
    fn children(spans: &[SpanRecord], parent: usize, prefix: &str) {
        let kids: Vec<&SpanRecord> = spans.iter().filter(|s| s.parent == Some(parent)).collect();
        for (i, kid) in kids.iter().enumerate() {
            let last = i + 1 == kids.len();
            println!(
                "{prefix}{}{}",
                if last { "└── " } else { "├── " },
                line(kid)
            );
            let deeper = format!("{prefix}{}", if last { "    " } else { "│   " });
            children(spans, kid.seq, &deeper);
        }
    }
    for root in spans.iter().filter(|s| s.parent.is_none()) {
        println!("{}", line(root));
        children(spans, root.seq, "");
        println!();
    }
}

/// Runs the calls; the spans are recorded by whatever subscriber is
/// installed.
async fn run() -> Result<(), Error> {
    // The back end.
    let backend = Communicator::new();
    let adapter = backend
        .create_object_adapter_with_endpoints("Store", "tcp -h 127.0.0.1 -p 0")
        .await?;
    let store = adapter.add(
        Identity::from_name("store"),
        demo::StoreDispatcher::new(Store),
    )?;
    adapter.activate();

    // The front end, a client of the back end.
    let frontend = Communicator::new();
    let adapter = frontend
        .create_object_adapter_with_endpoints("Directory", "tcp -h 127.0.0.1 -p 0")
        .await?;
    let store = StorePrx::unchecked_cast(frontend.string_to_proxy(&store.to_string())?);
    let directory = adapter.add(
        Identity::from_name("directory"),
        demo::DirectoryDispatcher::new(Directory { store }),
    )?;
    adapter.activate();

    // The client, in a span of its own: its invocations are children.
    let client = Communicator::new();
    let directory = DirectoryPrx::unchecked_cast(client.string_to_proxy(&directory.to_string())?);
    async {
        let value = directory.lookup("floe").await?;
        println!("lookup(\"floe\") = {value:?}");
        match directory.lookup("corba").await {
            Err(e) if e.user_exception::<NotFound>().is_some() => {
                println!("lookup(\"corba\") raised NotFound");
            }
            other => panic!("expected NotFound, got {other:?}"),
        }
        directory.ice_oneway().touch("floe").await?;
        // A twoway call on the same connection: the oneway was dispatched.
        directory.ice_ping().await?;
        Ok::<_, Error>(())
    }
    .instrument(tracing::info_span!("example client"))
    .await?;

    client.destroy().await;
    frontend.destroy().await;
    backend.destroy().await;
    Ok(())
}

/// Installs the recording layer (with `RUST_LOG` as the filter, default
/// `floe_runtime=debug,tracing_spans=info`), runs the calls and returns
/// the recorded spans.
fn record() -> Result<Vec<SpanRecord>, Error> {
    let recorder = Recorder::default();
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("floe_runtime=debug,tracing_spans=info"));
    tracing_subscriber::registry()
        .with(filter)
        .with(recorder.clone())
        .try_init()
        .map_err(|e| Error::Initialization(format!("a global subscriber is already set: {e}")))?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Initialization(e.to_string()))?
        .block_on(run())?;
    let spans = recorder.spans().clone();
    Ok(spans)
}

fn main() -> Result<(), Error> {
    let spans = record()?;
    print_tree(&spans);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CI runs the example (`test = true` in Cargo.toml) and checks the
    /// tree: the client's invocations under its span, each dispatch under
    /// its server connection, the store call under the dispatch that made
    /// it, with request ids and connections matching across the sides.
    #[test]
    fn runs_and_records_the_span_tree() {
        let spans = record().expect("the example runs");
        print_tree(&spans);
        let find = |name: &str, op: &str, parent: Option<usize>| {
            spans
                .iter()
                .filter(|s| s.name == name && s.field("operation") == Some(op))
                .find(|s| parent.is_none() || s.parent == parent)
                .unwrap_or_else(|| panic!("no {name} span for {op}"))
                .clone()
        };
        let client = spans
            .iter()
            .find(|s| s.name == "example client")
            .expect("client span");

        // Client side: the first lookup, in the client's span.
        let invoke = find("invoke", "lookup", Some(client.seq));
        assert_eq!(invoke.field("identity"), Some("directory"));
        assert_eq!(invoke.field("mode"), Some("twoway"));
        assert_eq!(invoke.field("request_id"), Some("1"));
        assert!(invoke.duration.is_some(), "closed once the call returned");

        // Server side: its dispatch, under the front end's connection.
        let dispatch = spans
            .iter()
            .find(|s| {
                s.name == "dispatch"
                    && s.field("operation") == Some("lookup")
                    && s.field("request_id") == Some("1")
            })
            .expect("dispatch of lookup");
        let conn = &spans[dispatch.parent.expect("a connection parent")];
        assert_eq!(conn.name, "connection");
        assert_eq!(conn.field("incoming"), Some("true"));
        assert_eq!(conn.field("adapter"), Some("Directory"));
        assert_eq!(conn.field("transport"), Some("tcp"));
        assert_eq!(dispatch.field("connection"), conn.field("id"));
        // The client's connection is the other end of the same socket.
        let client_conn = spans
            .iter()
            .find(|s| s.name == "connection" && s.field("id") == invoke.field("connection"))
            .expect("the client's connection span");
        assert_eq!(client_conn.field("incoming"), Some("false"));
        assert_eq!(client_conn.field("local"), conn.field("remote"));

        // The store call the servant made is a child of the dispatch.
        let get = find("invoke", "get", Some(dispatch.seq));
        assert_eq!(get.field("identity"), Some("store"));

        // The oneway: request id 0 on both sides.
        let touch = find("invoke", "touch", Some(client.seq));
        assert_eq!(touch.field("mode"), Some("oneway"));
        assert_eq!(touch.field("request_id"), Some("0"));
        let touched = find("dispatch", "touch", None);
        assert_eq!(touched.field("mode"), Some("oneway"));
    }
}
