//! Middleware around dispatch and invocation (see `floe::runtime::middleware`):
//!
//! - **auth**: the client's invocation middleware sends a token in each
//!   request's context; the server's dispatch middleware refuses requests
//!   without the right one with Ice 3.8's `Unauthorized` (reply status 9),
//!   before any servant runs;
//! - **deadline**: the client puts a deadline (`deadline`: milliseconds
//!   since the Unix epoch) in the context; the server refuses a request
//!   whose deadline has passed and cancels a dispatch that runs past it;
//! - **metrics**: a dispatch layer counts dispatches and their time per
//!   operation, an invocation layer counts the client's calls and
//!   failures.
//!
//! ```sh
//! cargo run --example middleware
//! ```

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use floe::runtime::middleware::{InvocationMiddleware, Outgoing};
use floe::runtime::{
    servant_fn, Communicator, Current, Dispatch, DispatchError, Error, ReplyStatus, Response,
};
use floe::Identity;

#[floe::interface(module = "Demo")]
pub trait Greeter {
    /// A greeting for `name`.
    async fn greet(&self, name: String) -> String;
    /// Answers after `ms` milliseconds.
    async fn work(&self, ms: i32);
}

struct GreeterI;

impl Greeter for GreeterI {
    async fn greet(&self, name: String, _: &Current) -> Result<String, DispatchError> {
        Ok(format!("hello, {name}"))
    }
    async fn work(&self, ms: i32, _: &Current) -> Result<(), DispatchError> {
        tokio::time::sleep(Duration::from_millis(ms.max(0) as u64)).await;
        Ok(())
    }
}

/// The context key of the auth token.
const TOKEN: &str = "token";
/// The context key of the deadline: milliseconds since the Unix epoch.
const DEADLINE: &str = "deadline";

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Client side: the token and a deadline `budget` from now in every request.
struct ClientContext {
    token: String,
    budget: Duration,
}

impl InvocationMiddleware for ClientContext {
    fn before(&self, request: &mut Outgoing<'_>) -> floe::runtime::Result<()> {
        let deadline = now_ms() + self.budget.as_millis() as u64;
        let ctx = request.context.to_mut();
        ctx.insert(TOKEN.into(), self.token.clone());
        ctx.insert(DEADLINE.into(), deadline.to_string());
        Ok(())
    }
}

/// Client side: calls and failures.
#[derive(Default)]
struct ClientCounts {
    calls: AtomicU64,
    failures: AtomicU64,
}

impl InvocationMiddleware for ClientCounts {
    fn after(&self, _: &Outgoing<'_>, result: &floe::runtime::Result<Response>) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        if result.is_err() {
            self.failures.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Server side: dispatches per operation (count, failures, total time).
#[derive(Default)]
struct DispatchStats(Mutex<BTreeMap<String, (u64, u64, Duration)>>);

impl DispatchStats {
    fn record(&self, operation: &str, failed: bool, took: Duration) {
        let mut stats = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let entry = stats.entry(operation.to_string()).or_default();
        entry.0 += 1;
        entry.1 += u64::from(failed);
        entry.2 += took;
    }
}

/// The checks the deadline layer makes: `None` to go on, or the error.
fn deadline_of(current: &Current) -> Result<Option<Duration>, DispatchError> {
    let Some(deadline) = current.ctx.get(DEADLINE) else {
        return Ok(None);
    };
    let deadline: u64 = deadline
        .parse()
        .map_err(|_| DispatchError::invalid_data(format!("bad deadline `{deadline}`")))?;
    let now = now_ms();
    if deadline <= now {
        return Err(expired());
    }
    Ok(Some(Duration::from_millis(deadline - now)))
}

fn expired() -> DispatchError {
    DispatchError::UnknownLocalException(
        "::Ice::InvocationTimeoutException:\nthe request's deadline passed".into(),
    )
}

async fn run() -> Result<(), Error> {
    let server = Communicator::new();
    let adapter = server
        .create_object_adapter_with_endpoints("Greeter", "tcp -h 127.0.0.1 -p 0")
        .await?;
    let stats = Arc::new(DispatchStats::default());
    // Outermost first: metrics see every request, refused ones included.
    let recorder = stats.clone();
    adapter.use_middleware(move |next| {
        servant_fn(move |current, params| {
            let started = Instant::now();
            let operation = current.operation.clone();
            let recorder = recorder.clone();
            next.clone()
                .dispatch(current, params)
                .inspect(move |result| {
                    recorder.record(&operation, result.is_err(), started.elapsed())
                })
        })
    })?;
    adapter.use_middleware(|next| {
        servant_fn(move |current, params| {
            if current.ctx.get(TOKEN).map(String::as_str) != Some("let-me-in") {
                return Dispatch::error(DispatchError::unauthorized("a valid token is required"));
            }
            next.clone().dispatch(current, params)
        })
    })?;
    adapter.use_middleware(|next| {
        servant_fn(move |current, params| match deadline_of(&current) {
            Err(e) => Dispatch::error(e),
            Ok(None) => next.clone().dispatch(current, params),
            Ok(Some(left)) => match next.clone().dispatch(current, params) {
                ready @ Dispatch::Ready(_) => ready,
                Dispatch::Pending(fut) => Dispatch::future(async move {
                    tokio::time::timeout(left, fut)
                        .await
                        .unwrap_or_else(|_| Err(expired()))
                }),
            },
        })
    })?;
    let proxy = adapter.add(
        Identity::from_name("greeter"),
        GreeterDispatcher::new(GreeterI),
    )?;
    adapter.activate();

    // A client with the right token and a 200 ms budget per call.
    let counts = Arc::new(ClientCounts::default());
    let client = Communicator::new();
    client.use_invocation_middleware(ClientContext {
        token: "let-me-in".into(),
        budget: Duration::from_millis(200),
    });
    client.use_invocation_middleware(counts.clone());
    let greeter = GreeterPrx::unchecked_cast(client.string_to_proxy(&proxy.to_string())?);
    println!("{}", greeter.greet("middleware").await?);
    greeter.work(10).await?;
    match greeter.work(1_000).await {
        Err(Error::UnknownLocalException(text)) if text.contains("deadline") => {
            println!("work(1000): refused, the deadline passed")
        }
        other => panic!("work(1000) should miss its deadline: {other:?}"),
    }

    // A client without a token is refused before any servant runs.
    let stranger = Communicator::new();
    let anonymous = GreeterPrx::unchecked_cast(stranger.string_to_proxy(&proxy.to_string())?);
    match anonymous.greet("anonymous").await {
        Err(Error::DispatchException { status, message })
            if status == ReplyStatus::UNAUTHORIZED =>
        {
            println!("anonymous greet: unauthorized ({message})")
        }
        other => panic!("anonymous greet should be unauthorized: {other:?}"),
    }

    let calls = counts.calls.load(Ordering::Relaxed);
    let failures = counts.failures.load(Ordering::Relaxed);
    println!("client: {calls} calls, {failures} failed");
    assert_eq!((calls, failures), (3, 1));
    let stats = stats.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
    for (operation, (count, failed, time)) in &stats {
        println!("server: {operation:<6} {count} dispatches, {failed} failed, {time:?}");
    }
    assert_eq!(stats.get("greet").map(|s| (s.0, s.1)), Some((2, 1)));
    assert_eq!(stats.get("work").map(|s| (s.0, s.1)), Some((2, 1)));

    stranger.destroy().await;
    client.destroy().await;
    server.destroy().await;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    run().await
}

#[cfg(test)]
mod tests {
    /// CI runs the example to completion (`test = true` in Cargo.toml).
    #[tokio::test]
    async fn runs_to_completion() {
        super::run().await.expect("the example runs");
    }
}
