//! The Bench.ice servants (`a` Latency, `t` Throughput, `m` Messages)
//! that `bench_server`, `soak` and the `grid_server` example serve, and
//! [`add_bench_servants`], which adds all three to an object adapter.

use std::sync::Mutex;

use bytes::Bytes;
use floe::runtime::{Communicator, Current, DispatchError, Identity, ObjectAdapter};

use super::*;

/// The result type of servant operations.
type Dispatched<T> = Result<T, DispatchError>;

struct LatencyI;

impl Latency for LatencyI {
    async fn o(&self, _: &Current) -> Dispatched<()> {
        Ok(())
    }
}

/// The last sequence built for each `recv*` operation, keyed by its
/// requested length; replies are copies of it (as in the C++ server).
struct ThroughputI {
    communicator: Communicator,
    bytes: Mutex<(i32, Bytes)>,
    fixed: Mutex<(i32, Vec<Fixed>)>,
    strdbl: Mutex<(i32, Vec<StringDouble>)>,
}

/// The cached value in `slot` if it was built for `n`, else `make(n)`,
/// cached.
fn cached<T: Clone>(slot: &Mutex<(i32, T)>, n: i32, make: impl FnOnce(usize) -> T) -> T {
    let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
    if slot.0 != n {
        *slot = (n, make(n.max(0) as usize));
    }
    slot.1.clone()
}

impl Throughput for ThroughputI {
    async fn send_byte_seq(&self, seq: Bytes, _: &Current) -> Dispatched<()> {
        std::hint::black_box(seq);
        Ok(())
    }
    async fn recv_byte_seq(&self, size: i32, _: &Current) -> Dispatched<Bytes> {
        Ok(cached(&self.bytes, size, pattern))
    }
    async fn send_fixed_seq(&self, seq: Vec<Fixed>, _: &Current) -> Dispatched<()> {
        std::hint::black_box(seq);
        Ok(())
    }
    async fn recv_fixed_seq(&self, count: i32, _: &Current) -> Dispatched<Vec<Fixed>> {
        Ok(cached(&self.fixed, count, make_fixed_seq))
    }
    async fn send_string_double_seq(&self, seq: Vec<StringDouble>, _: &Current) -> Dispatched<()> {
        std::hint::black_box(seq);
        Ok(())
    }
    async fn recv_string_double_seq(
        &self,
        count: i32,
        _: &Current,
    ) -> Dispatched<Vec<StringDouble>> {
        Ok(cached(&self.strdbl, count, make_string_double_seq))
    }
    async fn shutdown(&self, _: &Current) -> Dispatched<()> {
        self.communicator.shutdown();
        Ok(())
    }
}

struct MessagesI;

impl Messages for MessagesI {
    async fn publish_bytes_one_way(&self, message: Bytes, _: &Current) -> Dispatched<()> {
        std::hint::black_box(message);
        Ok(())
    }
    async fn publish_bytes_two_way(&self, message: Bytes, _: &Current) -> Dispatched<i32> {
        Ok(message.len() as i32)
    }
    async fn publish_floats_one_way(&self, message: Vec<f32>, _: &Current) -> Dispatched<()> {
        std::hint::black_box(message);
        Ok(())
    }
    async fn publish_floats_two_way(&self, message: Vec<f32>, _: &Current) -> Dispatched<i32> {
        Ok(message.len() as i32)
    }
    async fn publish_data_one_way(&self, message: DataMessage, _: &Current) -> Dispatched<()> {
        std::hint::black_box(message);
        Ok(())
    }
    async fn publish_data_two_way(&self, message: DataMessage, _: &Current) -> Dispatched<i32> {
        Ok(message.signals.len() as i32)
    }
}

/// Adds `a`, `t` and `m` to `adapter`; `Throughput::shutdown` shuts
/// `communicator` down.
///
/// # Errors
///
/// An identity already in use.
pub fn add_bench_servants(
    adapter: &ObjectAdapter,
    communicator: &Communicator,
) -> floe::runtime::Result<()> {
    let t = ThroughputDispatcher::new(ThroughputI {
        communicator: communicator.clone(),
        bytes: Mutex::new((-1, Bytes::new())),
        fixed: Mutex::new((-1, Vec::new())),
        strdbl: Mutex::new((-1, Vec::new())),
    });
    adapter.add(Identity::from_name("a"), LatencyDispatcher::new(LatencyI))?;
    adapter.add(Identity::from_name("t"), t)?;
    adapter.add(Identity::from_name("m"), MessagesDispatcher::new(MessagesI))?;
    Ok(())
}
