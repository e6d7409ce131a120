//! The Bench.ice server: `cargo run --release --example bench_server -- PORT
//! [--current-thread]`. Serves `a` (Latency), `t` (Throughput) and `m`
//! (Messages) on `tcp -h 127.0.0.1 -p PORT`, prints `Bench ready` once
//! listening, and exits on `Throughput::shutdown` or SIGINT/SIGTERM.

// The workload is specified as {"hello", 3.14}, not PI.
#![allow(clippy::approx_constant)]

#[path = "bench_common/mod.rs"]
mod bench_common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bench_common::*;
use bytes::Bytes;
use floe::runtime::{
    Communicator, Current, Dispatch, DispatchError, DispatchResult, Identity, Properties, Servant,
};
use floe::wire::{Decoder, Encapsulation};

struct Latency;

impl Servant for Latency {
    fn dispatch(self: Arc<Self>, current: Current, _params: Encapsulation) -> Dispatch {
        Dispatch::ready(match current.operation.as_str() {
            "o" => Ok(current.empty_reply()),
            _ => Err(not_exist(&current)),
        })
    }
    fn ice_id(&self) -> &str {
        "::Bench::Latency"
    }
    fn ice_ids(&self) -> &[&str] {
        &["::Bench::Latency", "::Ice::Object"]
    }
}

fn not_exist(current: &Current) -> DispatchError {
    DispatchError::operation_not_exist(current)
}

/// Throughput keeps the reply encapsulations it already built, keyed by
/// request size, so `recv*` replies are zero-copy clones.
struct Throughput {
    communicator: Communicator,
    replies: Mutex<HashMap<(u8, i32), Bytes>>,
}

impl Throughput {
    fn cached(&self, current: &Current, kind: u8, n: i32) -> Bytes {
        let mut map = self.replies.lock().unwrap_or_else(|p| p.into_inner());
        map.entry((kind, n))
            .or_insert_with(|| {
                let n = n.max(0) as usize;
                current.encode_reply(|enc| match kind {
                    0 => enc.write_byte_seq(&pattern(n)),
                    1 => write_fixed_seq(
                        enc,
                        &(0..n)
                            .map(|i| Fixed {
                                i: i as i32,
                                j: 2 * i as i32,
                                d: i as f64 * 0.5,
                            })
                            .collect::<Vec<_>>(),
                    ),
                    _ => write_string_double_seq(
                        enc,
                        &vec![
                            StringDouble {
                                s: "hello".into(),
                                d: 3.14,
                            };
                            n
                        ],
                    ),
                })
            })
            .clone()
    }

    fn run(&self, current: &Current, params: Encapsulation) -> DispatchResult {
        let mut dec = Decoder::from_encapsulation(params)?;
        match current.operation.as_str() {
            "sendByteSeq" => {
                let seq = dec.read_byte_seq()?;
                std::hint::black_box(seq);
                Ok(current.empty_reply())
            }
            "recvByteSeq" => Ok(self.cached(current, 0, dec.read_i32()?)),
            "sendFixedSeq" => {
                std::hint::black_box(read_fixed_seq(&mut dec)?);
                Ok(current.empty_reply())
            }
            "recvFixedSeq" => Ok(self.cached(current, 1, dec.read_i32()?)),
            "sendStringDoubleSeq" => {
                std::hint::black_box(read_string_double_seq(&mut dec)?);
                Ok(current.empty_reply())
            }
            "recvStringDoubleSeq" => Ok(self.cached(current, 2, dec.read_i32()?)),
            "shutdown" => {
                self.communicator.shutdown();
                Ok(current.empty_reply())
            }
            _ => Err(not_exist(current)),
        }
    }
}

impl Servant for Throughput {
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch {
        Dispatch::ready(self.run(&current, params))
    }
    fn ice_id(&self) -> &str {
        "::Bench::Throughput"
    }
    fn ice_ids(&self) -> &[&str] {
        &["::Bench::Throughput", "::Ice::Object"]
    }
}

struct Messages;

impl Messages {
    fn run(current: &Current, params: Encapsulation) -> DispatchResult {
        let mut dec = Decoder::from_encapsulation(params)?;
        let n = match current.operation.as_str() {
            "publishBytesOneWay" | "publishBytesTwoWay" => dec.read_byte_seq()?.len(),
            "publishFloatsOneWay" | "publishFloatsTwoWay" => read_float_seq(&mut dec)?.len(),
            "publishDataOneWay" | "publishDataTwoWay" => read_data_message(&mut dec)?.signals.len(),
            _ => return Err(not_exist(current)),
        };
        if current.operation.ends_with("TwoWay") {
            Ok(current.encode_reply(|e| e.write_i32(n as i32)))
        } else {
            Ok(current.empty_reply())
        }
    }
}

impl Servant for Messages {
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch {
        Dispatch::ready(Self::run(&current, params))
    }
    fn ice_id(&self) -> &str {
        "::Bench::Messages"
    }
    fn ice_ids(&self) -> &[&str] {
        &["::Bench::Messages", "::Ice::Object"]
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let current_thread = args.iter().any(|a| a == "--current-thread");
    args.retain(|a| a != "--current-thread");
    let props = Properties::from_args(&mut args).unwrap_or_else(|e| {
        eprintln!("bench_server: {e}");
        std::process::exit(2)
    });
    let Some(port) = args.first().and_then(|p| p.parse::<u16>().ok()) else {
        eprintln!("usage: bench_server PORT [--current-thread] [--Ice.Prop=value...]");
        std::process::exit(2)
    };
    if props.get("Ice.MessageSizeMax").is_none() {
        // The CODAC workloads send 10 MB messages.
        props.set("Ice.MessageSizeMax", "102400");
    }
    let rt = build_runtime(current_thread);
    rt.block_on(async move {
        let communicator = Communicator::with_properties(props);
        let adapter = communicator
            .create_object_adapter_with_endpoints("Bench", &format!("tcp -h 127.0.0.1 -p {port}"))
            .await
            .unwrap_or_else(|e| {
                eprintln!("bench_server: {e}");
                std::process::exit(1)
            });
        let t = Arc::new(Throughput {
            communicator: communicator.clone(),
            replies: Mutex::new(HashMap::new()),
        });
        let ok = adapter
            .add(Identity::from_name("a"), Arc::new(Latency))
            .and_then(|_| adapter.add(Identity::from_name("t"), t))
            .and_then(|_| adapter.add(Identity::from_name("m"), Arc::new(Messages)));
        if let Err(e) = ok {
            eprintln!("bench_server: {e}");
            std::process::exit(1)
        }
        adapter.activate();
        println!("Bench ready");
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .unwrap_or_else(|e| {
                eprintln!("bench_server: {e}");
                std::process::exit(1)
            });
        tokio::select! {
            _ = communicator.wait_for_shutdown() => {}
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        communicator.destroy().await;
    });
}
