//! Ice's logger on `tracing`: [`install`] (or [`IceLogLayer`] in a
//! subscriber of your own) writes floe's events as Ice 3.7's default
//! logger writes its messages, with `Ice.ProgramName` as the prefix:
//!
//! ```text
//! -- 11/26/26 16:39:31.633 FloeSrv1: floe_runtime::connection::establish: connection established
//!    remote = Some(127.0.0.1:44286)
//! -! 11/26/26 16:39:32.001 FloeSrv1: warning: unregistration timed out
//! !! 11/26/26 16:39:32.002 FloeSrv1: error: servant panicked: ...
//! ```
//!
//! Events at `ERROR` are Ice errors (`!!`), `WARN` warnings (`-!`), and
//! the others traces (`--`) whose category is the event's `category`
//! field, or else its target. An event's other fields follow on lines of
//! their own, as Ice's multi-line traces do. Which events reach the
//! logger is `Ice.Trace.*`'s business (see [`crate::trace`]: traces that
//! Ice would print are at `INFO`) and the filter's: `RUST_LOG` if set,
//! else `INFO`.
//!
//! | property | meaning |
//! |---|---|
//! | `Ice.ProgramName` | the prefix (default: the program's `argv[0]`); an IceGrid node sets it to the server id |
//! | `Ice.LogFile` | append the messages to this file instead of writing them to stderr |
//! | `Ice.StdOut`, `Ice.StdErr` | the process's stdout and stderr are appended to these files (see below) |
//! | `Ice.Admin.Logger.KeepLogs`, `Ice.Admin.Logger.KeepTraces` | how many errors and warnings, and traces, the `Logger` admin facet keeps (default 100 each) |
//!
//! `Ice.StdOut` and `Ice.StdErr` redirect the process's standard output
//! and error (file descriptors 1 and 2) to the files they name, opened
//! for appending (and created if missing), as an Ice communicator does
//! when it starts: the first [`crate::Communicator`] of the process that
//! has them set does it, once. An IceGrid node sets them for the servers
//! it starts when its descriptor, or the node's `IceGrid.Node.Output`,
//! names the files.
//!
//! ```no_run
//! let mut args: Vec<String> = std::env::args().skip(1).collect();
//! let props = floe_runtime::Properties::from_args(&mut args)?;
//! floe_runtime::logger::install(&props)?;
//! let communicator = floe_runtime::Communicator::with_properties(props);
//! # drop(communicator);
//! # Ok::<(), floe_runtime::Error>(())
//! ```

pub(crate) mod buffer;
pub(crate) mod stdio;
mod time;

use std::fmt::{self, Write as _};
use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

use crate::error::{Error, Result};
use crate::properties::Properties;
use buffer::{LogBuffer, LogMessage, LogMessageType};

/// Installs Ice's logger ([`IceLogLayer`] from `props`, filtered by
/// `RUST_LOG` or else at `INFO`) as the process's `tracing` subscriber.
/// Call it before the communicator is made, after
/// [`Properties::from_args`]: with `Ice.StdErr` set, it redirects stderr
/// first, so the log lands in that file.
///
/// # Errors
///
/// [`Error::Initialization`] when `Ice.LogFile`, `Ice.StdOut` or
/// `Ice.StdErr` cannot be opened, or a subscriber is already installed.
pub fn install(props: &Properties) -> Result<()> {
    stdio::redirect(props)?;
    let layer = IceLogLayer::new(props)?;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::registry()
        .with(layer.with_filter(filter))
        .try_init()
        .map_err(|e| Error::Initialization(format!("cannot install the Ice logger: {e}")))
}

/// A `tracing` layer that writes events as Ice's logger does (see the
/// [module](self)) and keeps the recent ones for the `Logger` admin
/// facet.
pub struct IceLogLayer {
    prefix: String,
    out: Mutex<Output>,
    buffer: Arc<LogBuffer>,
}

enum Output {
    Stderr,
    File(File),
}

impl fmt::Debug for IceLogLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IceLogLayer")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// `Ice.ProgramName`, or the program's `argv[0]`.
pub(crate) fn program_name(props: &Properties) -> String {
    props
        .get("Ice.ProgramName")
        .or_else(|| std::env::args().next())
        .unwrap_or_default()
}

impl IceLogLayer {
    /// The layer for `props` (`Ice.ProgramName`, `Ice.LogFile`,
    /// `Ice.Admin.Logger.*`). The first one made in a process is the one
    /// whose messages the `Logger` admin facet reports.
    ///
    /// # Errors
    ///
    /// [`Error::Initialization`] when `Ice.LogFile` cannot be opened.
    pub fn new(props: &Properties) -> Result<IceLogLayer> {
        let prefix = program_name(props);
        let out = match props.get("Ice.LogFile").filter(|f| !f.is_empty()) {
            Some(path) => Output::File(stdio::open_append(&path, "Ice.LogFile")?),
            None => Output::Stderr,
        };
        Ok(IceLogLayer {
            buffer: LogBuffer::for_process(props, &prefix),
            prefix,
            out: Mutex::new(out),
        })
    }

    fn write(&self, line: &str) {
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        // A log that cannot be written has nowhere to report it.
        let _ = match &mut *out {
            Output::Stderr => std::io::stderr().lock().write_all(line.as_bytes()),
            Output::File(f) => f.write_all(line.as_bytes()),
        };
    }
}

impl<S: Subscriber> Layer<S> for IceLogLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let kind = match *event.metadata().level() {
            Level::ERROR => LogMessageType::Error,
            Level::WARN => LogMessageType::Warning,
            _ => LogMessageType::Trace,
        };
        let category = match kind {
            LogMessageType::Trace => fields
                .category
                .take()
                .unwrap_or_else(|| event.metadata().target().to_string()),
            _ => String::new(),
        };
        let mut message = fields.message;
        for (name, value) in fields.extra {
            let _ = write!(message, "\n{name} = {value}");
        }
        let m = LogMessage {
            kind,
            timestamp: time::now_micros(),
            category,
            message,
        };
        let mut line = format_message(&self.prefix, &m);
        line.push('\n');
        self.write(&line);
        // What Ice's logger would have had: traces Ice prints are at INFO
        // (`crate::trace`). Debug events stay out, so that the remote
        // loggers' own calls never feed them.
        if *event.metadata().level() <= Level::INFO {
            self.buffer.push(m);
        }
    }
}

/// `m` as Ice's logger prints it (without the final newline).
pub(crate) fn format_message(prefix: &str, m: &LogMessage) -> String {
    let date = time::date_time(m.timestamp);
    let prefix = if prefix.is_empty() {
        String::new()
    } else {
        format!("{prefix}: ")
    };
    // The lines after the first are indented, as Ice's logger does.
    let text = m.message.replace('\n', "\n   ");
    match m.kind {
        LogMessageType::Print => m.message.clone(),
        LogMessageType::Trace => format!("-- {date} {prefix}{}: {text}", m.category),
        LogMessageType::Warning => format!("-! {date} {prefix}warning: {text}"),
        LogMessageType::Error => format!("!! {date} {prefix}error: {text}"),
    }
}

/// An event's message, `category` field and other fields.
#[derive(Default)]
struct Fields {
    message: String,
    category: Option<String>,
    extra: Vec<(&'static str, String)>,
}

impl Fields {
    fn set(&mut self, field: &Field, value: String) {
        match field.name() {
            "message" => self.message = value,
            "category" => self.category = Some(value),
            name => self.extra.push((name, value)),
        }
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field, value.to_string());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.set(field, format!("{value:?}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_ice() {
        let m = |kind, category: &str| LogMessage {
            kind,
            timestamp: 1_700_000_000_123_456,
            category: category.into(),
            message: "text".into(),
        };
        let date = time::date_time(1_700_000_000_123_456);
        assert!(date.ends_with(".123"), "{date}");
        assert_eq!(
            format_message("srv", &m(LogMessageType::Trace, "Network")),
            format!("-- {date} srv: Network: text")
        );
        assert_eq!(
            format_message("srv", &m(LogMessageType::Warning, "")),
            format!("-! {date} srv: warning: text")
        );
        assert_eq!(
            format_message("", &m(LogMessageType::Error, "")),
            format!("!! {date} error: text")
        );
        assert_eq!(format_message("srv", &m(LogMessageType::Print, "")), "text");
        let mut two = m(LogMessageType::Trace, "Network");
        two.message = "accepted\nremote = 1".into();
        assert_eq!(
            format_message("srv", &two),
            format!("-- {date} srv: Network: accepted\n   remote = 1")
        );
    }
}
