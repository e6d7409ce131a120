//! An in-process `Bench.ice` server for the criterion benches that do I/O
//! (`latency.rs`, `throughput.rs`): one communicator serves `a` and `t` on
//! 127.0.0.1 (a free port), a second one calls it over real loopback TCP,
//! so nothing is collocated.

#![allow(dead_code)]

use std::sync::Arc;

use bytes::Bytes;
use floe::runtime::{
    servant_fn, Communicator, Current, Dispatch, DispatchResult, Properties, Proxy,
};
use floe::wire::{Decoder, Encapsulation};
use floe::Identity;
use tokio::runtime::Runtime;

pub use floe_bench::{
    pattern, read_fixed_seq, read_string_double_seq, write_fixed_seq, write_string_double_seq,
    Fixed, StringDouble,
};

/// The server and a client, on one tokio runtime.
pub struct Bench {
    /// The runtime both sides run on; `block_on` it to call.
    pub rt: Runtime,
    /// Proxy to `a` (Latency).
    pub a: Proxy,
    /// Proxy to `t` (Throughput).
    pub t: Proxy,
    server: Communicator,
    client: Communicator,
}

impl Drop for Bench {
    fn drop(&mut self) {
        let (server, client) = (self.server.clone(), self.client.clone());
        self.rt.block_on(async move {
            client.destroy().await;
            server.destroy().await;
        });
    }
}

/// 50,000 `Fixed` as the bench client sends them.
pub fn fixed_seq() -> Vec<Fixed> {
    (0..50_000)
        .map(|i| Fixed {
            i,
            j: 2 * i,
            d: i as f64 * 0.5,
        })
        .collect()
}

/// 50,000 `StringDouble` as the bench client sends them.
#[allow(clippy::approx_constant)] // 3.14 is the value every bench client sends.
pub fn string_double_seq() -> Vec<StringDouble> {
    vec![
        StringDouble {
            s: "hello".into(),
            d: 3.14,
        };
        50_000
    ]
}

fn throughput(current: Current, params: Encapsulation, replies: &Replies) -> DispatchResult {
    let mut dec = Decoder::from_encapsulation(params)?;
    match current.operation.as_str() {
        "sendByteSeq" => {
            std::hint::black_box(dec.read_byte_seq()?);
        }
        "sendFixedSeq" => {
            std::hint::black_box(read_fixed_seq(&mut dec)?);
        }
        "sendStringDoubleSeq" => {
            std::hint::black_box(read_string_double_seq(&mut dec)?);
        }
        // The reply is encoded per call, as a typed servant would.
        "recvByteSeq" => return Ok(replies.bytes.clone().into()),
        "recvFixedSeq" => {
            return Ok(current
                .encode_reply(|e| write_fixed_seq(e, &replies.fixed))
                .into());
        }
        "recvStringDoubleSeq" => {
            return Ok(current
                .encode_reply(|e| write_string_double_seq(e, &replies.strdbl))
                .into());
        }
        _ => return Err(floe::runtime::DispatchError::operation_not_exist()),
    }
    Ok(current.empty_reply().into())
}

/// What the `recv*` operations answer (sizes fixed by the benches).
struct Replies {
    bytes: Bytes,
    fixed: Vec<Fixed>,
    strdbl: Vec<StringDouble>,
}

impl Bench {
    /// Starts the server and connects the client; `current_thread` picks
    /// tokio's current-thread runtime instead of the multi-thread one.
    pub fn start(current_thread: bool) -> Bench {
        Bench::start_with(current_thread, Properties::new())
    }

    /// [`Bench::start`] with `props` for both communicators (e.g.
    /// `floe.BusyPoll`).
    pub fn start_with(current_thread: bool, props: Properties) -> Bench {
        let rt = floe_bench::build_runtime(current_thread);
        let (server, client, a, t) = rt.block_on(async {
            let server = Communicator::with_properties(props.clone());
            // Invariant: a loopback port-0 endpoint always parses and binds
            // on a machine that runs benchmarks.
            let adapter = server
                .create_object_adapter_with_endpoints("Bench", "tcp -h 127.0.0.1 -p 0")
                .await
                .expect("bench adapter");
            let bytes =
                floe::runtime::encode_encapsulation(floe::wire::ENCODING_1_1, 500_016, |e| {
                    e.write_byte_seq(&pattern(500_000))
                });
            let replies = Arc::new(Replies {
                bytes,
                fixed: fixed_seq(),
                strdbl: string_double_seq(),
            });
            let latency = servant_fn(|current, _| Dispatch::ready(Ok(current.empty_reply())));
            let tput = servant_fn(move |current, params| {
                Dispatch::ready(throughput(current, params, &replies))
            });
            // Invariant: fresh identities on a fresh adapter.
            adapter
                .add(Identity::from_name("a"), latency)
                .expect("servant a");
            adapter
                .add(Identity::from_name("t"), tput)
                .expect("servant t");
            adapter.activate();
            let endpoints = adapter.endpoints().to_vec();
            let client = Communicator::with_properties(props);
            let a = client.create_proxy(Identity::from_name("a"), endpoints.clone());
            let t = client.create_proxy(Identity::from_name("t"), endpoints);
            // Connect before measuring.
            a.ice_ping().await.expect("bench server answers");
            (server, client, a, t)
        });
        Bench {
            rt,
            a,
            t,
            server,
            client,
        }
    }
}
