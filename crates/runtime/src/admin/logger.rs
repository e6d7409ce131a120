//! The `Logger` facet (`Ice::LoggerAdmin`), served when the process logs
//! through [`crate::logger`] (its recent messages are kept):
//!
//! - `getLog(messageTypes, traceCategories, messageMax, out prefix)`: the
//!   last `messageMax` kept messages of those types (all if empty) and,
//!   for traces, categories (all if empty); all of them when `messageMax`
//!   is negative; `prefix` is `Ice.ProgramName`;
//! - `attachRemoteLogger(prx, messageTypes, traceCategories, messageMax)`:
//!   calls `prx.init(prefix, <the same selection as getLog>)`, then
//!   `prx.log(message)` for each new message the filter accepts, until
//!   `detachRemoteLogger(prx)` or a call fails;
//!   `RemoteLoggerAlreadyAttachedException` if `prx` is attached already.
//!
//! As Ice does, the calls to remote loggers go through a communicator of
//! their own, a copy of this one with the `Ice.Trace.*` and `Ice.Warn.*`
//! settings removed, so that they are not traced into the log they
//! forward.

use std::sync::Arc;

use floe_wire::protocol::OperationMode;
use floe_wire::{Decoder, Encoder};

use crate::error::Error;
use crate::logger::buffer::{LogBuffer, LogFilter, LogMessage, LogMessageType, RemoteSink};
use crate::object_model::communicator::Communicator;
use crate::object_model::current::Current;
use crate::object_model::proxy::Proxy;
use crate::object_model::servant::{DispatchError, Servant};
use crate::properties::Properties;
use crate::UserError;

use super::OpResult;

/// How many messages may wait for one remote logger (more are dropped).
const REMOTE_QUEUE: usize = 1024;

/// The facet's servant.
pub(super) fn facet(communicator: &Communicator, log: Arc<LogBuffer>) -> Arc<dyn Servant> {
    let communicator = communicator.clone();
    super::facet("::Ice::LoggerAdmin", move |current, params| {
        match current.operation.as_str() {
            "getLog" => {
                let mut dec = current.params_decoder(params)?;
                let filter = read_filter(&mut dec)?;
                let max = dec.read_i32()?;
                let messages = log.recent(&filter, max);
                Ok(current.encode_reply(|e| {
                    e.write_string(&log.prefix);
                    write_messages(e, &messages);
                }))
            }
            "attachRemoteLogger" => attach(current, params, &communicator, &log),
            "detachRemoteLogger" => {
                let prx = current.params_decoder(params)?.read::<Option<Proxy>>()?;
                let detached = prx.is_some_and(|p| log.detach(&key(&p)));
                Ok(current.encode_reply(|e| e.write_bool(detached)))
            }
            _ => Err(DispatchError::operation_not_exist()),
        }
    })
}

/// `attachRemoteLogger`.
fn attach(
    current: &Current,
    params: floe_wire::Encapsulation,
    communicator: &Communicator,
    log: &Arc<LogBuffer>,
) -> OpResult {
    let mut dec = current.params_decoder(params)?;
    let prx = dec.read::<Option<Proxy>>()?;
    let filter = read_filter(&mut dec)?;
    let max = dec.read_i32()?;
    let Some(prx) = prx else {
        return Ok(current.empty_reply());
    };
    let (sender, receiver) = tokio::sync::mpsc::channel(REMOTE_QUEUE);
    let key = key(&prx);
    let sink = RemoteSink {
        key: key.clone(),
        filter,
        sender,
    };
    let Some(initial) = log.attach(sink, max) else {
        return Err(DispatchError::UserException(UserError::new(
            RemoteLoggerAlreadyAttached,
        )));
    };
    let forwarder = Forwarder {
        communicator: send_log_communicator(communicator.properties()),
        target: prx.to_string(),
        log: log.clone(),
        key,
    };
    tokio::spawn(forwarder.run(initial, receiver));
    Ok(current.empty_reply())
}

/// A remote logger's identity and facet: what tells two apart.
fn key(prx: &Proxy) -> String {
    format!("{:?}#{}", prx.identity(), prx.facet())
}

/// A copy of `props` without the settings that would trace the calls to
/// remote loggers.
fn send_log_communicator(props: &Properties) -> Communicator {
    let copy = Properties::new();
    for (k, v) in props.with_prefix("") {
        let skip = [
            "Ice.Trace.",
            "Ice.Warn.",
            "Ice.Admin.",
            "Ice.Std",
            "Ice.LogFile",
        ]
        .iter()
        .any(|p| k.starts_with(p));
        if !skip {
            copy.set(&k, &v);
        }
    }
    Communicator::with_properties(copy)
}

/// Sends one remote logger its messages.
struct Forwarder {
    communicator: Communicator,
    /// The remote logger's proxy, as a string of the original
    /// communicator, to be parsed by this one's.
    target: String,
    log: Arc<LogBuffer>,
    key: String,
}

impl Forwarder {
    async fn run(
        self,
        initial: Vec<LogMessage>,
        mut receiver: tokio::sync::mpsc::Receiver<LogMessage>,
    ) {
        let result = async {
            let prx = self.communicator.string_to_proxy(&self.target)?;
            let params = prx.encode_params(|e| {
                e.write_string(&self.log.prefix);
                write_messages(e, &initial);
            });
            prx.invoke("init", OperationMode::Normal, params)
                .await?
                .into_ok()?;
            while let Some(m) = receiver.recv().await {
                let params = prx.encode_params(|e| write_message(e, &m));
                prx.invoke("log", OperationMode::Normal, params)
                    .await?
                    .into_ok()?;
            }
            Ok::<(), Error>(())
        }
        .await;
        if let Err(e) = result {
            self.log.detach(&self.key);
            tracing::warn!("detached remote logger {}: {e}", self.target);
        }
        self.communicator.destroy().await;
    }
}

/// `LogMessageTypeSeq messageTypes, StringSeq traceCategories`.
fn read_filter(dec: &mut Decoder) -> floe_wire::Result<LogFilter> {
    let mut filter = LogFilter::default();
    for _ in 0..dec.read_size()? {
        let v = dec.read_enum(3)?;
        let kind = usize::try_from(v)
            .ok()
            .and_then(LogMessageType::from_value)
            .ok_or_else(|| {
                floe_wire::Error::marshal(format!(
                    "invalid enumerator {v} for ::Ice::LogMessageType"
                ))
            })?;
        filter.types.push(kind);
    }
    for _ in 0..dec.read_size()? {
        filter.categories.push(dec.read_string()?);
    }
    Ok(filter)
}

/// `LogMessageSeq`.
fn write_messages(e: &mut Encoder, messages: &[LogMessage]) {
    e.write_size(messages.len());
    for m in messages {
        write_message(e, m);
    }
}

/// `LogMessage`.
fn write_message(e: &mut Encoder, m: &LogMessage) {
    e.write_enum(m.kind as i32, 3);
    e.write_i64(m.timestamp);
    e.write_string(&m.category);
    e.write_string(&m.message);
}

memberless_exception!(
    /// `Ice::RemoteLoggerAlreadyAttachedException` (no members).
    RemoteLoggerAlreadyAttached,
    "::Ice::RemoteLoggerAlreadyAttachedException"
);
