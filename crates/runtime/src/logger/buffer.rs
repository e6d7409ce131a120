//! The recent log messages of the process, kept for the `Logger` admin
//! facet (`Ice::LoggerAdmin::getLog`), and the remote loggers attached to
//! it: `Ice.Admin.Logger.KeepLogs` (default 100) errors and warnings and
//! `Ice.Admin.Logger.KeepTraces` (default 100) traces.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};

use crate::properties::Properties;

/// `Ice::LogMessageType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LogMessageType {
    /// `PrintMessage`.
    Print = 0,
    /// `TraceMessage`.
    Trace = 1,
    /// `WarningMessage`.
    Warning = 2,
    /// `ErrorMessage`.
    Error = 3,
}

impl LogMessageType {
    /// The enumerator of `value`, if there is one.
    pub(crate) fn from_value(value: usize) -> Option<LogMessageType> {
        match value {
            0 => Some(LogMessageType::Print),
            1 => Some(LogMessageType::Trace),
            2 => Some(LogMessageType::Warning),
            3 => Some(LogMessageType::Error),
            _ => None,
        }
    }
}

/// `Ice::LogMessage`.
#[derive(Clone, Debug)]
pub(crate) struct LogMessage {
    pub(crate) kind: LogMessageType,
    /// Microseconds since the Unix epoch.
    pub(crate) timestamp: i64,
    /// The trace category (empty for other kinds).
    pub(crate) category: String,
    pub(crate) message: String,
}

/// Which messages a `getLog` or a remote logger wants: the types (all if
/// empty) and, for traces, the categories (all if empty).
#[derive(Clone, Debug, Default)]
pub(crate) struct LogFilter {
    pub(crate) types: Vec<LogMessageType>,
    pub(crate) categories: Vec<String>,
}

impl LogFilter {
    pub(crate) fn accepts(&self, m: &LogMessage) -> bool {
        (self.types.is_empty() || self.types.contains(&m.kind))
            && (m.kind != LogMessageType::Trace
                || self.categories.is_empty()
                || self.categories.contains(&m.category))
    }
}

/// A remote logger attached to the log: where its messages go.
pub(crate) struct RemoteSink {
    /// The remote logger's identity and facet, to detach it.
    pub(crate) key: String,
    pub(crate) filter: LogFilter,
    pub(crate) sender: tokio::sync::mpsc::Sender<LogMessage>,
}

/// The process's recent messages and remote loggers.
pub(crate) struct LogBuffer {
    /// `Ice.ProgramName` (the prefix remote loggers and `getLog` report).
    pub(crate) prefix: String,
    keep_logs: usize,
    keep_traces: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    messages: VecDeque<LogMessage>,
    traces: usize,
    remotes: Vec<RemoteSink>,
}

static PROCESS_LOG: OnceLock<Arc<LogBuffer>> = OnceLock::new();

/// The buffer of the process's Ice logger, if one was made
/// ([`crate::logger::IceLogLayer`]).
pub(crate) fn process_log() -> Option<Arc<LogBuffer>> {
    PROCESS_LOG.get().cloned()
}

impl LogBuffer {
    /// The process's buffer, made from `props` the first time.
    pub(crate) fn for_process(props: &Properties, prefix: &str) -> Arc<LogBuffer> {
        PROCESS_LOG
            .get_or_init(|| {
                let keep = |key: &str| props.get_int_or(key, 100).max(0) as usize;
                Arc::new(LogBuffer {
                    prefix: prefix.to_string(),
                    keep_logs: keep("Ice.Admin.Logger.KeepLogs"),
                    keep_traces: keep("Ice.Admin.Logger.KeepTraces"),
                    state: Mutex::new(State::default()),
                })
            })
            .clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps `m` (dropping the oldest message of its kind beyond the
    /// limit) and hands it to the remote loggers that want it (dropping
    /// it for one whose queue is full, and detaching those that are gone).
    pub(crate) fn push(&self, m: LogMessage) {
        let mut s = self.lock();
        s.remotes.retain(|r| {
            if !r.filter.accepts(&m) {
                return !r.sender.is_closed();
            }
            !matches!(
                r.sender.try_send(m.clone()),
                Err(tokio::sync::mpsc::error::TrySendError::Closed(_))
            )
        });
        let trace = m.kind == LogMessageType::Trace;
        let keep = if trace {
            self.keep_traces
        } else {
            self.keep_logs
        };
        if keep == 0 {
            return;
        }
        let count = if trace {
            s.traces
        } else {
            s.messages.len() - s.traces
        };
        if count >= keep {
            if let Some(i) = s
                .messages
                .iter()
                .position(|o| (o.kind == LogMessageType::Trace) == trace)
            {
                s.messages.remove(i);
                if trace {
                    s.traces -= 1;
                }
            }
        }
        if trace {
            s.traces += 1;
        }
        s.messages.push_back(m);
    }

    /// The last `max` kept messages `filter` accepts (all of them when
    /// `max` is negative), oldest first.
    pub(crate) fn recent(&self, filter: &LogFilter, max: i32) -> Vec<LogMessage> {
        Self::select(&self.lock(), filter, max)
    }

    fn select(s: &State, filter: &LogFilter, max: i32) -> Vec<LogMessage> {
        let mut out: Vec<LogMessage> = s
            .messages
            .iter()
            .rev()
            .filter(|m| filter.accepts(m))
            .take(usize::try_from(max).unwrap_or(usize::MAX))
            .cloned()
            .collect();
        out.reverse();
        out
    }

    /// Attaches a remote logger, and returns the last `max` kept messages
    /// its filter accepts (see [`LogBuffer::recent`]), to send first:
    /// `None` if one with `sink.key` is attached already.
    pub(crate) fn attach(&self, sink: RemoteSink, max: i32) -> Option<Vec<LogMessage>> {
        let mut s = self.lock();
        s.remotes.retain(|r| !r.sender.is_closed());
        if s.remotes.iter().any(|r| r.key == sink.key) {
            return None;
        }
        let recent = Self::select(&s, &sink.filter, max);
        s.remotes.push(sink);
        Some(recent)
    }

    /// Detaches the remote logger `key`: whether it was attached.
    pub(crate) fn detach(&self, key: &str) -> bool {
        let mut s = self.lock();
        let before = s.remotes.len();
        s.remotes.retain(|r| r.key != key);
        s.remotes.len() != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(logs: usize, traces: usize) -> LogBuffer {
        LogBuffer {
            prefix: "p".into(),
            keep_logs: logs,
            keep_traces: traces,
            state: Mutex::new(State::default()),
        }
    }

    fn msg(kind: LogMessageType, text: &str) -> LogMessage {
        LogMessage {
            kind,
            timestamp: 0,
            category: if kind == LogMessageType::Trace {
                "Network".into()
            } else {
                String::new()
            },
            message: text.into(),
        }
    }

    #[test]
    fn keeps_each_kind_up_to_its_limit() {
        let b = buffer(2, 1);
        b.push(msg(LogMessageType::Warning, "w1"));
        b.push(msg(LogMessageType::Trace, "t1"));
        b.push(msg(LogMessageType::Error, "e1"));
        b.push(msg(LogMessageType::Trace, "t2"));
        b.push(msg(LogMessageType::Warning, "w2"));
        let all: Vec<String> = b
            .recent(&LogFilter::default(), -1)
            .into_iter()
            .map(|m| m.message)
            .collect();
        assert_eq!(all, ["e1", "t2", "w2"]);
        let last: Vec<String> = b
            .recent(&LogFilter::default(), 2)
            .into_iter()
            .map(|m| m.message)
            .collect();
        assert_eq!(last, ["t2", "w2"]);
        assert!(b.recent(&LogFilter::default(), 0).is_empty());
    }

    #[test]
    fn filters_types_and_trace_categories() {
        let b = buffer(10, 10);
        b.push(msg(LogMessageType::Warning, "w"));
        b.push(msg(LogMessageType::Trace, "t"));
        let traces = LogFilter {
            types: vec![LogMessageType::Trace],
            categories: vec![],
        };
        assert_eq!(b.recent(&traces, -1)[0].message, "t");
        let other = LogFilter {
            types: vec![],
            categories: vec!["Protocol".into()],
        };
        let got: Vec<String> = b
            .recent(&other, -1)
            .into_iter()
            .map(|m| m.message)
            .collect();
        assert_eq!(got, ["w"]);
    }
}
