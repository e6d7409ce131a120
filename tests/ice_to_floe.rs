//! The floe column of `docs/ice-to-floe.md`, compiled and run: a server and
//! a client of `tests/slice/Tour.ice` in one process, one function per
//! task. `doc_snippets_are_this_code` checks that every Rust snippet of
//! the page is text of this file (or of the build script it cites, of the
//! Ice 3.8 tests for task 16, or of the conformance suite's floe server and
//! client for tasks 17 to 27), so
//! the page cannot drift from code that compiles and passes.

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use floe::codegen::{ClassRef, Current, DispatchError};
use floe::runtime::{Communicator, Context, Error, ObjectAdapter};
use floe::Identity;

floe::slice!("tests/slice/Tour.ice");

use tour::{Busy, HelloPrx, Node};

// Task 1: a server.

/// The servant: the state of the `hello` object and its operations.
#[derive(Default)]
struct HelloI {
    shouted: AtomicI32,
}

impl tour::Hello for HelloI {
    async fn say_hello(&self, name: String, _: &Current) -> Result<String, DispatchError> {
        if name.is_empty() {
            return Err(Busy { retry_ms: 100 }.into());
        }
        Ok(format!("Hello, {name}!"))
    }

    async fn divide(
        &self,
        a: i32,
        b: i32,
        _: &Current,
    ) -> Result<tour::HelloDivideResult, DispatchError> {
        if b == 0 {
            return Err(DispatchError::unknown("division by zero"));
        }
        Ok(tour::HelloDivideResult {
            return_value: a / b,
            remainder: a % b,
        })
    }

    async fn describe(
        &self,
        level: Option<i32>,
        _: &Current,
    ) -> Result<Option<String>, DispatchError> {
        Ok(level.map(|l| format!("level {l}")))
    }

    async fn reverse(
        &self,
        list: Option<ClassRef<Node>>,
        _: &Current,
    ) -> Result<Option<ClassRef<Node>>, DispatchError> {
        let mut reversed = None;
        let mut rest = list;
        while let Some(node) = rest {
            rest = std::mem::replace(&mut node.write().next, reversed);
            reversed = Some(node);
        }
        Ok(reversed)
    }

    async fn shout(&self, _text: String, _: &Current) -> Result<(), DispatchError> {
        self.shouted.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    async fn shouted(&self, _: &Current) -> Result<i32, DispatchError> {
        Ok(self.shouted.load(Ordering::Relaxed))
    }

    async fn who_am_i(&self, current: &Current) -> Result<String, DispatchError> {
        Ok(current.ctx.get("user").cloned().unwrap_or_default())
    }

    async fn slow(&self, ms: i32, _: &Current) -> Result<String, DispatchError> {
        tokio::time::sleep(Duration::from_millis(ms as u64)).await;
        Ok(format!("answered after {ms} ms"))
    }

    async fn shutdown(&self, current: &Current) -> Result<(), DispatchError> {
        current.adapter.communicator()?.shutdown();
        Ok(())
    }
}

async fn start_server(communicator: &Communicator) -> Result<ObjectAdapter, Error> {
    let adapter = communicator
        .create_object_adapter_with_endpoints("Hello", "tcp -h 127.0.0.1 -p 0")
        .await?;
    adapter.add(
        Identity::from_name("hello"),
        tour::HelloDispatcher::new(HelloI::default()),
    )?;
    adapter.activate();
    Ok(adapter)
}

// Task 2: a client.

async fn connect(communicator: &Communicator, text: &str) -> Result<HelloPrx, Error> {
    // text: "hello:tcp -h 127.0.0.1 -p 10000"
    let base = communicator.string_to_proxy(text)?;
    let hello = HelloPrx::checked_cast(base)
        .await?
        .ok_or_else(|| Error::Initialization(format!("{text} is not a ::Tour::Hello")))?;
    println!("{}", hello.say_hello("floe").await?);
    Ok(hello)
}

// Task 3 is `say_hello` above. Task 4: catching a user exception.

async fn greet_or_wait(hello: &HelloPrx, name: &str) -> Result<String, Error> {
    match hello.say_hello(name).await {
        Ok(greeting) => Ok(greeting),
        // `Busy`, or an exception derived from it such as `TooBusy`.
        Err(e) => match e.user_exception::<Busy>() {
            Some(busy) => Ok(format!("busy: retry in {} ms", busy.retry_ms)),
            None => Err(e),
        },
    }
}

// Task 5: out-parameters. Task 6: optionals.

async fn outs_and_optionals(hello: &HelloPrx) -> Result<(), Error> {
    let division = hello.divide(17, 5).await?;
    assert_eq!((division.return_value, division.remainder), (3, 2));
    // Or as a tuple: the return value, then the out-parameters in order.
    let (quotient, remainder) = hello.divide(17, 5).await?.into();
    assert_eq!((quotient, remainder), (3, 2));

    let described: Option<String> = hello.describe(Some(2)).await?;
    assert_eq!(described.as_deref(), Some("level 2"));
    assert_eq!(hello.describe(None).await?, None);
    Ok(())
}

// Task 7: classes and graphs.

async fn class_graph(hello: &HelloPrx) -> Result<Vec<String>, Error> {
    let mut list: Option<ClassRef<Node>> = None;
    for name in ["c", "b", "a"] {
        let next = list.take();
        list = Some(ClassRef::new(Node {
            name: name.into(),
            next,
        }));
    }
    let reversed = hello.reverse(&list).await?;
    let mut names = Vec::new();
    let mut node = reversed;
    while let Some(n) = node {
        names.push(n.read().name.clone());
        node = n.read().next.clone();
    }
    Ok(names) // ["c", "b", "a"]
}

// Task 8: typed proxy variants.

async fn variants(hello: &HelloPrx) -> Result<(), Error> {
    let oneway: HelloPrx = hello.ice_oneway();
    oneway.shout("fire and forget").await?;

    let impatient = hello.ice_invocation_timeout(Some(Duration::from_millis(50)));
    match impatient.slow(500).await {
        Err(Error::InvocationTimeout) => {}
        other => panic!("expected InvocationTimeout, got {other:?}"),
    }

    let compressed = hello.ice_compress(true);
    compressed.shout(&"x".repeat(10_000)).await?;
    Ok(())
}

// Task 9: request contexts.

async fn contexts(hello: &HelloPrx) -> Result<(), Error> {
    // Per proxy: sent with every call made through it.
    let alice = hello.ice_context(Context::from([("user".into(), "alice".into())]));
    assert_eq!(alice.who_am_i().await?, "alice");

    // Per call: replaces the proxy's context for this call.
    let ctx = Context::from([("user".into(), "bob".into())]);
    assert_eq!(alice.who_am_i_with_context(&ctx).await?, "bob");
    Ok(())
}

// Task 10: AMI (several calls in flight). Task 11 (AMD) is `slow` above.

async fn in_flight(hello: &HelloPrx) -> Result<(), Error> {
    // Both requests are sent before either reply arrives.
    let (a, b) = tokio::join!(hello.slow(100), hello.slow(100));
    println!("{} / {}", a?, b?);

    // Or in the background, like a callback.
    let h = hello.clone();
    let task = tokio::spawn(async move { h.divide(7, 2).await });
    let (q, r) = task.await.expect("the task ran")?.into();
    assert_eq!((q, r), (3, 1));
    Ok(())
}

// Task 12: oneway and batch.

async fn oneway_and_batch(hello: &HelloPrx) -> Result<(), Error> {
    hello.ice_oneway().shout("one").await?; // returns once written

    let batch = hello.ice_batch_oneway();
    for i in 0..100 {
        batch.shout(&format!("batched {i}")).await?; // queued, not sent
    }
    batch.ice_flush_batch_requests().await?; // one message with 100 requests
    Ok(())
}

// Task 13: properties.

async fn from_properties() -> Result<(Communicator, ObjectAdapter), Error> {
    // As in `server --Ice.Config=server.cfg --Hello.Endpoints="tcp -p 10000"`.
    let mut args: Vec<String> = vec![
        "server".into(),
        "--Hello.Endpoints=tcp -h 127.0.0.1 -p 0".into(),
        "--Ice.Trace.Network=0".into(),
    ];
    let communicator = Communicator::from_args(&mut args)?;
    assert_eq!(args, ["server"]); // Ice properties were taken out
    let adapter = communicator.create_object_adapter("Hello").await?; // Hello.Endpoints
    Ok((communicator, adapter))
}

// Task 15: shutdown.

async fn serve_until_shutdown(communicator: Communicator) {
    let on_signal = communicator.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_signal.shutdown();
        }
    });
    communicator.wait_for_shutdown().await; // ctrl-c, or a servant's shutdown()
    communicator.destroy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_task_of_the_page_runs() {
    let server = Communicator::new();
    let adapter = start_server(&server).await.unwrap();
    let text = format!("hello:{}", adapter.endpoints()[0]);
    let served = tokio::spawn(serve_until_shutdown(server));

    let client = Communicator::new();
    let hello = connect(&client, &text).await.unwrap();
    assert_eq!(greet_or_wait(&hello, "ann").await.unwrap(), "Hello, ann!");
    assert_eq!(
        greet_or_wait(&hello, "").await.unwrap(),
        "busy: retry in 100 ms"
    );
    outs_and_optionals(&hello).await.unwrap();
    assert_eq!(class_graph(&hello).await.unwrap(), ["c", "b", "a"]);
    variants(&hello).await.unwrap();
    contexts(&hello).await.unwrap();
    in_flight(&hello).await.unwrap();
    oneway_and_batch(&hello).await.unwrap();
    // The oneways and the batch went out on the connection before this
    // twoway, and a connection dispatches in order of arrival.
    assert_eq!(hello.shouted().await.unwrap(), 103);

    let (props, props_adapter) = from_properties().await.unwrap();
    assert_eq!(props_adapter.endpoints().len(), 1);
    props.destroy().await;

    hello.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), served)
        .await
        .expect("the server shut down")
        .unwrap();
    client.destroy().await;
}

/// The Rust code blocks of the page, each compared (line by line, leading
/// whitespace ignored) with the files that compile it.
#[test]
fn doc_snippets_are_this_code() {
    let root = env!("CARGO_MANIFEST_DIR");
    let page = std::fs::read_to_string(format!("{root}/docs/ice-to-floe.md")).unwrap();
    let sources: Vec<String> = [
        "tests/ice_to_floe.rs",
        "crates/codegen-tests/build.rs",
        "crates/codegen-tests/tests/ice38/floe_peers.rs",
        "crates/codegen-tests/tests/ice38/main.rs",
        "crates/conformance/build.rs",
        "crates/conformance/src/lib.rs",
        "crates/conformance/tests/support/floe_server/mod.rs",
        "crates/conformance/tests/support/floe_server/ops.rs",
        "crates/conformance/tests/support/floe_server/objects.rs",
        "crates/conformance/tests/support/floe_server/exceptions.rs",
        "crates/conformance/tests/support/floe_server/sliced.rs",
        "crates/conformance/tests/support/floe_server/api.rs",
        "crates/conformance/tests/support/floe_client/api.rs",
    ]
    .iter()
    .map(|f| normalize(&std::fs::read_to_string(format!("{root}/{f}")).unwrap()))
    .collect();
    let mut blocks = 0;
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```rust" {
            continue;
        }
        let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        let block = normalize(&block.join("\n"));
        assert!(
            sources.iter().any(|s| s.contains(&block)),
            "a snippet of docs/ice-to-floe.md is not in tests/ice_to_floe.rs:\n{block}"
        );
        blocks += 1;
    }
    assert!(blocks >= 15, "only {blocks} Rust snippets");
}

fn normalize(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}
