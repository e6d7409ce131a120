//! Measures how much memory a floe server spends on a request made of many
//! small class instances: peak RSS over the frame's size.
//!
//! The driver starts this program again as a server (`serve`: a generated
//! `Graph::Sink` servant, `Ice.MessageSizeMax` raised to 64 MB), sends one
//! request and reads the server's peak RSS (`VmHWM`), once per shape of
//! request and per setting of the class-graph memory budget (off:
//! `Floe.ClassGraphMemoryFactor=0`, and the default), each against a fresh
//! server:
//!
//! - `optionals`: `put(n)` followed by N trailing optional parameters the
//!   operation does not declare, each a class instance in the sliced
//!   format (the dispatcher skips them, but must decode them, as sliced
//!   data of an unknown type: a later one may refer to them);
//! - `sequence`: `count(items)` with a sequence of N instances (compact
//!   format, a known type with an `int` member);
//! - `empties`: `countEmpty(items)`, the same with instances of a class
//!   without members, the densest graph there is.
//!
//! ```text
//! cargo run --release -p floe-codegen-tests --example class_graph_rss -- [N]
//! ```
//!
//! N defaults to 2,000,000. Application code: errors are unwrapped.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

use floe::codegen::ClassRef;
use floe::runtime::{Communicator, Properties};
use floe::wire::protocol::OperationMode;
use floe::wire::{ClassFormat, Encoder, OptionalFormat, ENCODING_1_1};
use floe::Identity;
use floe_codegen_tests::class_graph_gen::graph;
use floe_codegen_tests::graph_sink::GraphSink;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("serve") {
        serve(args.get(2).map_or("", String::as_str));
        return;
    }
    let n: usize = args.get(1).map_or(2_000_000, |s| s.parse().unwrap());
    println!("{n} class instances per request");
    for factor in ["0", ""] {
        for shape in ["optionals", "sequence", "empties"] {
            measure(shape, n, factor);
        }
    }
}

/// The server: prints its port, serves until stdin closes. `factor` is
/// `Floe.ClassGraphMemoryFactor` (empty: the default).
#[tokio::main]
async fn serve(factor: &str) {
    let props = Properties::new();
    props.set("Ice.MessageSizeMax", "65536");
    if !factor.is_empty() {
        props.set("Floe.ClassGraphMemoryFactor", factor);
    }
    let communicator = Communicator::with_properties(props);
    let adapter = communicator
        .create_object_adapter_with_endpoints("Graph", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    adapter
        .add(
            Identity::from_name("sink"),
            graph::SinkDispatcher::new(GraphSink),
        )
        .unwrap();
    adapter.activate();
    println!("{}", adapter.endpoints()[0].port);
    tokio::task::spawn_blocking(|| std::io::stdin().read_to_end(&mut Vec::new()))
        .await
        .unwrap()
        .unwrap();
    communicator.destroy().await;
}

/// The parameters of one request of `shape` with `n` instances.
fn params(shape: &str, n: usize) -> (&'static str, bytes::Bytes) {
    let mut enc = Encoder::new();
    if shape == "optionals" {
        enc.set_class_format(ClassFormat::Sliced);
    }
    let mark = enc.start_encapsulation(ENCODING_1_1);
    let op = if shape == "optionals" {
        enc.write_i32(n as i32);
        for tag in 1..=n as u32 {
            enc.write_optional_tag(tag, OptionalFormat::Class);
            enc.write(&Some(ClassRef::new(graph::Item { v: tag as i32 })));
        }
        "put"
    } else if shape == "sequence" {
        let items: Vec<_> = (0..n as i32)
            .map(|v| Some(ClassRef::new(graph::Item { v })))
            .collect();
        enc.write_seq(&items);
        "count"
    } else {
        let items: Vec<_> = (0..n)
            .map(|_| Some(ClassRef::new(graph::Empty {})))
            .collect();
        enc.write_seq(&items);
        "countEmpty"
    };
    enc.end_encapsulation(mark);
    (op, enc.finish())
}

/// Sends one request of `shape` to a fresh server and prints its memory.
#[tokio::main(flavor = "current_thread")]
async fn measure(shape: &str, n: usize, factor: &str) {
    let (op, params) = params(shape, n);
    let mut server = Command::new(std::env::current_exe().unwrap())
        .arg("serve")
        .arg(factor)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line.trim().parse().unwrap();
    let props = Properties::new();
    props.set("Ice.MessageSizeMax", "65536");
    let communicator = Communicator::with_properties(props);
    let proxy = communicator
        .string_to_proxy(&format!("sink:tcp -h 127.0.0.1 -p {port}"))
        .unwrap();
    proxy.ice_ping().await.unwrap();
    let idle = status(server.id(), "VmRSS");
    let started = std::time::Instant::now();
    let outcome = proxy
        .invoke(op, OperationMode::Normal, params.clone())
        .await
        .map(|_| "ok".to_owned())
        .unwrap_or_else(|e| e.to_string());
    let elapsed = started.elapsed();
    let peak = status(server.id(), "VmHWM");
    let frame = params.len() + 40;
    println!(
        "budget {:<7}  {shape:<9}  frame {:>6.1} MB ({:.1} B/instance)  server peak RSS {:>7.1} MB  \
         (idle {:.1} MB)  peak/frame {:>5.1}  (peak-idle)/frame {:>5.1}  {:.2?}  {}",
        if factor.is_empty() { "default" } else { "off" },
        frame as f64 / 1e6,
        params.len() as f64 / n as f64,
        peak as f64 / 1e6,
        idle as f64 / 1e6,
        peak as f64 / frame as f64,
        (peak - idle) as f64 / frame as f64,
        elapsed,
        outcome.chars().take(300).collect::<String>().replace('\n', " ")
    );
    communicator.destroy().await;
    drop(server.stdin.take());
    server.wait().unwrap();
}

/// A `/proc/<pid>/status` field in bytes.
fn status(pid: u32, field: &str) -> i64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse::<i64>().ok())
        .unwrap()
        * 1024
}
