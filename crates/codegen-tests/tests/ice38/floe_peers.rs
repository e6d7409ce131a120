//! The floe server of the Ice 3.8 tests: `Ice38::Peer` and Bench.ice's
//! interfaces on generated dispatchers, with the data contract of
//! `bench.py`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use floe::codegen::{Current, DispatchError};
use floe::runtime::{Communicator, Connection, Properties, ReplyStatus};
use floe::Identity;
use floe_codegen_tests::{bench, interop38};

use crate::bench_checks::{byte_data, fixed_data, float_data, same_fixed, same_sd, sd_data};

/// A floe communicator serving `peer`, `latency`, `throughput` and
/// `messages` on 127.0.0.1.
pub struct FloeServer {
    pub communicator: Communicator,
    pub port: u16,
    /// The connection of the last `whoami` call, as the server sees it.
    pub last_caller: Arc<Mutex<Option<Connection>>>,
}

impl FloeServer {
    /// With default properties.
    pub async fn start() -> FloeServer {
        Self::with_properties(Properties::new()).await
    }

    pub async fn with_properties(props: Properties) -> FloeServer {
        let communicator = Communicator::with_properties(props);
        let adapter = communicator
            .create_object_adapter_with_endpoints("Ice38", "tcp -h 127.0.0.1 -p 0")
            .await
            .expect("adapter");
        let id = Identity::from_name;
        let last_caller = Arc::new(Mutex::new(None));
        let peer = PeerServant {
            last_caller: Arc::clone(&last_caller),
        };
        adapter
            .add(id("peer"), interop38::PeerDispatcher::new(peer))
            .and_then(|_| adapter.add(id("latency"), bench::LatencyDispatcher::new(Latency)))
            .and_then(|_| {
                adapter.add(
                    id("throughput"),
                    bench::ThroughputDispatcher::new(Throughput),
                )
            })
            .and_then(|_| adapter.add(id("messages"), bench::MessagesDispatcher::new(Messages)))
            .expect("add servants");
        adapter.activate();
        let port = adapter.endpoints()[0].port;
        FloeServer {
            communicator,
            port,
            last_caller,
        }
    }
}

struct PeerServant {
    last_caller: Arc<Mutex<Option<Connection>>>,
}

impl interop38::Peer for PeerServant {
    async fn fail(&self, status: i32, message: String, _: &Current) -> Result<(), DispatchError> {
        let status = u8::try_from(status).map_err(DispatchError::unknown)?;
        Err(DispatchError::with_status(
            ReplyStatus::from_u8(status),
            message,
        ))
    }

    async fn slow(&self, ms: i32, _: &Current) -> Result<i32, DispatchError> {
        tokio::time::sleep(Duration::from_millis(ms.max(0) as u64)).await;
        Ok(ms)
    }

    async fn whoami(&self, current: &Current) -> Result<String, DispatchError> {
        let connection = current
            .connection
            .clone()
            .ok_or_else(|| DispatchError::unknown("no connection"))?;
        let remote = connection.info().remote;
        *self.last_caller.lock().unwrap_or_else(|p| p.into_inner()) = Some(connection);
        remote
            .map(|a| a.to_string())
            .ok_or_else(|| DispatchError::unknown("no remote address"))
    }
}

struct Latency;

impl bench::Latency for Latency {
    async fn o(&self, _: &Current) -> Result<(), DispatchError> {
        Ok(())
    }
}

fn check(ok: bool, what: &str) -> Result<(), DispatchError> {
    if ok {
        Ok(())
    } else {
        Err(DispatchError::unknown(format!("bad {what}")))
    }
}

struct Throughput;

impl bench::Throughput for Throughput {
    async fn send_byte_seq(&self, seq: Bytes, _: &Current) -> Result<(), DispatchError> {
        check(seq == byte_data(seq.len()), "byte sequence")
    }
    async fn recv_byte_seq(&self, size: i32, _: &Current) -> Result<Bytes, DispatchError> {
        Ok(byte_data(size.max(0) as usize))
    }
    async fn send_fixed_seq(&self, seq: bench::FixedSeq, _: &Current) -> Result<(), DispatchError> {
        check(same_fixed(&seq, &fixed_data(seq.len())), "Fixed sequence")
    }
    async fn recv_fixed_seq(&self, n: i32, _: &Current) -> Result<bench::FixedSeq, DispatchError> {
        Ok(fixed_data(n.max(0) as usize))
    }
    async fn send_string_double_seq(
        &self,
        seq: bench::StringDoubleSeq,
        _: &Current,
    ) -> Result<(), DispatchError> {
        check(same_sd(&seq, &sd_data(seq.len())), "StringDouble sequence")
    }
    async fn recv_string_double_seq(
        &self,
        n: i32,
        _: &Current,
    ) -> Result<bench::StringDoubleSeq, DispatchError> {
        Ok(sd_data(n.max(0) as usize))
    }
    async fn shutdown(&self, _: &Current) -> Result<(), DispatchError> {
        Ok(())
    }
}

struct Messages;

impl bench::Messages for Messages {
    async fn publish_bytes_one_way(&self, _: Bytes, _: &Current) -> Result<(), DispatchError> {
        Ok(())
    }
    async fn publish_bytes_two_way(&self, m: Bytes, _: &Current) -> Result<i32, DispatchError> {
        check(m == byte_data(m.len()), "bytes message")?;
        Ok(m.len() as i32)
    }
    async fn publish_floats_one_way(
        &self,
        _: bench::FloatSeq,
        _: &Current,
    ) -> Result<(), DispatchError> {
        Ok(())
    }
    async fn publish_floats_two_way(
        &self,
        m: bench::FloatSeq,
        _: &Current,
    ) -> Result<i32, DispatchError> {
        check(m[..] == float_data(m.len())[..], "floats message")?;
        Ok(m.len() as i32)
    }
    async fn publish_data_one_way(
        &self,
        _: bench::DataMessage,
        _: &Current,
    ) -> Result<(), DispatchError> {
        Ok(())
    }
    async fn publish_data_two_way(
        &self,
        m: bench::DataMessage,
        _: &Current,
    ) -> Result<i32, DispatchError> {
        let samples = float_data(m.sample_count.max(0) as usize);
        check(m.times[..] == samples[..], "times")?;
        check(m.signals.len() == m.signal_count as usize, "signal count")?;
        for s in &m.signals {
            check(s.samples[..] == samples[..], "samples")?;
        }
        Ok(m.signal_count * m.sample_count)
    }
}
