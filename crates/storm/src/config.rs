//! [`StormConfig`]: the broker's settings, read from Ice properties.
//!
//! Properties come from `--Ice.Config=file` (or `ICE_CONFIG`) and
//! `--Name=value` arguments, later ones winning, exactly as for an Ice
//! program (§6.2). [`parse_properties`] is a stand-in until floe-runtime's
//! `Properties` is used; [`StormConfig::from_properties`] takes a plain map
//! so either source plugs in.
//!
//! | property | default | meaning |
//! |---|---|---|
//! | `IceStorm.InstanceName` | `IceStorm` | identity category of the broker's objects |
//! | `IceStorm.TopicManager.Endpoints` | `tcp -h 127.0.0.1 -p 10000` | TopicManager/Topic/Finder adapter |
//! | `IceStorm.Publish.Endpoints` | `tcp -h 127.0.0.1 -p 10001` | publisher and link objects |
//! | `IceStorm.Flush.Timeout` | 1000 ms (min 100) | batch subscriber flush period |
//! | `IceStorm.Send.Timeout` | 60000 ms | timeout of requests to subscribers, and how long a subscriber over its budget may make no progress before it is removed; negative: none |
//! | `IceStorm.Discard.Interval` | 60 s | how long a failed subscriber stays offline |
//! | `IceStorm.Send.QueueSizeMax` | -1 (no limit) | events a subscriber's queue holds at most (IceStorm's meaning; values below 1 mean no limit) |
//! | `IceStorm.Send.QueueSizeMaxPolicy` | `RemoveSubscriber` | at `QueueSizeMax`: remove the subscriber, or `DropEvents` (drop the oldest queued event, counted and logged) |
//! | `floe.Storm.Send.QueueBytesMax` | 64 MiB | floe's own: a subscriber's byte budget; past it the topic's publishers wait (back-pressure, nothing dropped) |
//! | `floe.Storm.DrainTimeout` | 10000 ms | floe's own: how long a graceful shutdown waits for the subscribers to receive what is queued for them (what twoway publishers were told was accepted) before discarding it; 0: not at all |
//! | `floe.Storm.Metrics.Endpoint` (or `--metrics`) | none | floe's own: `host:port` (e.g. `127.0.0.1:9464`) where `GET /metrics` serves the topic and subscriber counters to Prometheus (feature `prometheus`) |
//! | `floe.OnewayBatchSize` | 1024 (KB) | floe-runtime's: events waiting for a oneway subscriber's connection leave as one BatchRequest of up to this size (never over the broker's `Ice.MessageSizeMax`), dispatched in order by the subscriber; 0: one Request message per event, as IceStorm sends them. A subscriber whose `Ice.MessageSizeMax` is below 1 MB needs a value at or below its limit. The `floe-storm` program sets this default; an embedding program sets it on its communicator |
//! | `IceStorm.Trace.TopicManager` / `.Topic` / `.Subscriber` | 0 | trace levels |
//! | `Ice.MessageSizeMax` | 1024 KB | largest accepted frame |
//! | `IceStorm.LMDB.Path` (or `--data-dir`) | `./floe-storm-data` | database directory |
//!
//! A replicated broker's settings (`IceStorm.NodeId`, `IceStorm.Nodes.<id>`,
//! ...) are in [`ReplicaConfig`].

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::config_error::ConfigError;
use crate::replica::config::ReplicaConfig;
use crate::subscriber::{DeliveryConfig, OverflowPolicy};

/// floe's property for a subscriber's byte budget.
pub const QUEUE_BYTES_MAX: &str = "floe.Storm.Send.QueueBytesMax";

/// floe's property for how long a graceful shutdown drains subscribers.
pub const DRAIN_TIMEOUT: &str = "floe.Storm.DrainTimeout";

/// floe's property for the Prometheus scrape endpoint (`host:port`).
pub const METRICS_ENDPOINT: &str = "floe.Storm.Metrics.Endpoint";

/// The name [`QUEUE_BYTES_MAX`] had before it was floe's own; still read.
const OLD_QUEUE_BYTES_MAX: &str = "IceStorm.Send.QueueBytesMax";

/// The broker settings.
#[derive(Clone, Debug)]
pub struct StormConfig {
    /// `IceStorm.InstanceName`.
    pub instance_name: String,
    /// `IceStorm.TopicManager.Endpoints`.
    pub topic_manager_endpoints: String,
    /// `IceStorm.TopicManager.PublishedEndpoints`, if set.
    pub topic_manager_published_endpoints: Option<String>,
    /// `IceStorm.Publish.Endpoints`.
    pub publish_endpoints: String,
    /// `IceStorm.Publish.PublishedEndpoints`, if set.
    pub publish_published_endpoints: Option<String>,
    /// `IceStorm.Flush.Timeout` (at least 100 ms).
    pub flush_timeout: Duration,
    /// `IceStorm.Send.Timeout` (`None` when negative: no timeout).
    pub send_timeout: Option<Duration>,
    /// `IceStorm.Discard.Interval`.
    pub discard_interval: Duration,
    /// `IceStorm.Send.QueueSizeMax` (events per subscriber; `None`: no
    /// limit, the default).
    pub queue_size_max: Option<usize>,
    /// `IceStorm.Send.QueueSizeMaxPolicy`.
    pub queue_size_max_policy: OverflowPolicy,
    /// `floe.Storm.Send.QueueBytesMax`: a subscriber's byte budget.
    pub queue_bytes_max: usize,
    /// `floe.Storm.DrainTimeout`: how long a graceful shutdown waits for
    /// the subscribers' queues to empty.
    pub drain_timeout: Duration,
    /// `floe.Storm.Metrics.Endpoint`: where `GET /metrics` is served
    /// (`None`: nowhere).
    pub metrics_endpoint: Option<SocketAddr>,
    /// `IceStorm.Trace.TopicManager`.
    pub trace_topic_manager: i32,
    /// `IceStorm.Trace.Topic`.
    pub trace_topic: i32,
    /// `IceStorm.Trace.Subscriber`.
    pub trace_subscriber: i32,
    /// `Ice.MessageSizeMax`, in bytes (0 = no limit).
    pub message_size_max: usize,
    /// Database directory.
    pub data_dir: PathBuf,
    /// A replicated broker's settings (`IceStorm.NodeId`, ...); `None`
    /// for a standalone broker.
    pub replica: Option<ReplicaConfig>,
    /// Every property, for the runtime (adapters, ACM, …).
    pub properties: HashMap<String, String>,
}

impl Default for StormConfig {
    fn default() -> Self {
        // The empty map only yields defaults, which are all valid.
        Self::from_properties(&HashMap::new()).expect("defaults are valid")
    }
}

fn int(props: &HashMap<String, String>, key: &str, default: i64) -> Result<i64, ConfigError> {
    match props.get(key) {
        None => Ok(default),
        Some(v) if v.trim().is_empty() => Ok(default),
        Some(v) => v.trim().parse().map_err(|_| ConfigError::BadValue {
            key: key.to_owned(),
            value: v.clone(),
        }),
    }
}

impl StormConfig {
    /// Reads the settings from a property map.
    ///
    /// # Errors
    ///
    /// [`ConfigError::BadValue`] for non-numeric numeric properties.
    pub fn from_properties(props: &HashMap<String, String>) -> Result<StormConfig, ConfigError> {
        let s = |k: &str, d: &str| {
            props
                .get(k)
                .filter(|v| !v.trim().is_empty())
                .map_or_else(|| d.to_owned(), |v| v.trim().to_owned())
        };
        let opt = |k: &str| props.get(k).filter(|v| !v.trim().is_empty()).cloned();
        let ms = |k: &str, d: i64| -> Result<Duration, ConfigError> {
            Ok(Duration::from_millis(int(props, k, d)?.max(0) as u64))
        };
        let size_kb = int(props, "Ice.MessageSizeMax", 1024)?;
        let send_timeout = int(props, "IceStorm.Send.Timeout", 60_000)?;
        let queue_size_max = int(props, "IceStorm.Send.QueueSizeMax", -1)?;
        let policy = props
            .get("IceStorm.Send.QueueSizeMaxPolicy")
            .map(|v| v.trim())
            .filter(|v| !v.is_empty());
        let queue_size_max_policy = match policy.map(OverflowPolicy::parse) {
            None => OverflowPolicy::RemoveSubscriber,
            Some(Some(p)) => p,
            Some(None) => {
                // IceStorm warns and keeps its default.
                tracing::warn!(
                    value = policy.unwrap_or_default(),
                    "invalid value for IceStorm.Send.QueueSizeMaxPolicy \
                     (RemoveSubscriber or DropEvents); using RemoveSubscriber"
                );
                OverflowPolicy::RemoveSubscriber
            }
        };
        let bytes_key =
            if !props.contains_key(QUEUE_BYTES_MAX) && props.contains_key(OLD_QUEUE_BYTES_MAX) {
                tracing::warn!("{OLD_QUEUE_BYTES_MAX} is deprecated: use {QUEUE_BYTES_MAX}");
                OLD_QUEUE_BYTES_MAX
            } else {
                QUEUE_BYTES_MAX
            };
        Ok(StormConfig {
            instance_name: s("IceStorm.InstanceName", "IceStorm"),
            topic_manager_endpoints: s(
                "IceStorm.TopicManager.Endpoints",
                "tcp -h 127.0.0.1 -p 10000",
            ),
            topic_manager_published_endpoints: opt("IceStorm.TopicManager.PublishedEndpoints"),
            publish_endpoints: s("IceStorm.Publish.Endpoints", "tcp -h 127.0.0.1 -p 10001"),
            publish_published_endpoints: opt("IceStorm.Publish.PublishedEndpoints"),
            flush_timeout: ms("IceStorm.Flush.Timeout", 1000)?.max(Duration::from_millis(100)),
            send_timeout: (send_timeout >= 0).then(|| Duration::from_millis(send_timeout as u64)),
            discard_interval: Duration::from_secs(
                int(props, "IceStorm.Discard.Interval", 60)?.max(0) as u64,
            ),
            queue_size_max: (queue_size_max >= 1).then_some(queue_size_max as usize),
            queue_size_max_policy,
            queue_bytes_max: int(props, bytes_key, 64 << 20)?.clamp(1, i64::MAX) as usize,
            drain_timeout: ms(DRAIN_TIMEOUT, 10_000)?,
            metrics_endpoint: opt(METRICS_ENDPOINT)
                .map(|v| {
                    v.trim().parse().map_err(|_| ConfigError::BadValue {
                        key: METRICS_ENDPOINT.to_owned(),
                        value: v.clone(),
                    })
                })
                .transpose()?,
            trace_topic_manager: int(props, "IceStorm.Trace.TopicManager", 0)? as i32,
            trace_topic: int(props, "IceStorm.Trace.Topic", 0)? as i32,
            trace_subscriber: int(props, "IceStorm.Trace.Subscriber", 0)? as i32,
            message_size_max: if size_kb < 1 {
                0
            } else {
                (size_kb as usize).saturating_mul(1024)
            },
            data_dir: PathBuf::from(s("IceStorm.LMDB.Path", "floe-storm-data")),
            replica: ReplicaConfig::from_properties(props)?,
            properties: props.clone(),
        })
    }

    /// The delivery settings for subscriber tasks.
    pub fn delivery(&self) -> DeliveryConfig {
        DeliveryConfig {
            discard_interval: self.discard_interval,
            flush_interval: self.flush_timeout,
            queue_size_max: self.queue_size_max,
            queue_size_max_policy: self.queue_size_max_policy,
            queue_bytes_max: self.queue_bytes_max,
            send_timeout: self.send_timeout,
        }
    }
}

/// Parses one line of a property file: `key = value`, `#` comments, `\#`,
/// `\=` and `\\` escapes, blanks trimmed. `None` for blank/comment lines.
pub fn parse_property_line(line: &str) -> Option<(String, String)> {
    let mut key = String::new();
    let mut value = String::new();
    let mut in_value = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        let target = if in_value { &mut value } else { &mut key };
        match c {
            '\\' => match chars.peek() {
                Some(&n @ ('#' | '=' | '\\')) => {
                    target.push(n);
                    chars.next();
                }
                _ => target.push('\\'),
            },
            '#' => break,
            '=' if !in_value => in_value = true,
            c => target.push(c),
        }
    }
    let key = key.trim();
    if key.is_empty() {
        return None;
    }
    Some((key.to_owned(), value.trim().to_owned()))
}

/// Loads a property file into `props`.
///
/// # Errors
///
/// [`ConfigError::File`] if it cannot be read.
pub fn load_file(path: &Path, props: &mut HashMap<String, String>) -> Result<(), ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::File {
        path: path.to_path_buf(),
        source,
    })?;
    for line in text.lines() {
        if let Some((k, v)) = parse_property_line(line) {
            props.insert(k, v);
        }
    }
    Ok(())
}

/// Builds a property map from arguments: `ICE_CONFIG` and every
/// `--Ice.Config=a,b` file first, then each `--Name=value` (a bare
/// `--Name` sets `1`). Arguments that are not properties are returned.
///
/// # Errors
///
/// [`ConfigError::File`] for unreadable configuration files.
pub fn parse_properties<I, S>(
    args: I,
) -> Result<(HashMap<String, String>, Vec<String>), ConfigError>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let args: Vec<String> = args.into_iter().map(Into::into).collect();
    let mut props = HashMap::new();
    let mut files: Vec<String> = std::env::var("ICE_CONFIG")
        .ok()
        .into_iter()
        .flat_map(|v| v.split(',').map(str::to_owned).collect::<Vec<_>>())
        .collect();
    for a in &args {
        if let Some(v) = a.strip_prefix("--Ice.Config=") {
            files.extend(v.split(',').map(str::to_owned));
        }
    }
    for f in files.iter().map(|f| f.trim()).filter(|f| !f.is_empty()) {
        load_file(Path::new(f), &mut props)?;
    }
    let mut rest = Vec::new();
    for a in args {
        match a.strip_prefix("--") {
            Some(p) if p.starts_with(|c: char| c.is_ascii_uppercase()) => {
                let (k, v) = p.split_once('=').unwrap_or((p, "1"));
                if k != "Ice.Config" {
                    props.insert(k.to_owned(), v.to_owned());
                }
            }
            _ => rest.push(a),
        }
    }
    Ok((props, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults() {
        let c = StormConfig::default();
        assert_eq!(c.instance_name, "IceStorm");
        assert_eq!(c.topic_manager_endpoints, "tcp -h 127.0.0.1 -p 10000");
        assert_eq!(c.publish_endpoints, "tcp -h 127.0.0.1 -p 10001");
        assert_eq!(c.flush_timeout, Duration::from_millis(1000));
        assert_eq!(c.discard_interval, Duration::from_secs(60));
        assert_eq!(c.send_timeout, Some(Duration::from_secs(60)));
        assert_eq!(c.queue_size_max, None, "IceStorm's -1: no limit in events");
        assert_eq!(c.queue_size_max_policy, OverflowPolicy::RemoveSubscriber);
        assert_eq!(c.queue_bytes_max, 64 << 20);
        assert_eq!(c.drain_timeout, Duration::from_secs(10));
        assert_eq!(c.message_size_max, 1024 * 1024);
        assert_eq!(c.data_dir, PathBuf::from("floe-storm-data"));
        assert_eq!(c.metrics_endpoint, None);
    }

    #[test]
    fn metrics_endpoint_is_a_socket_address() {
        let props = |v: &str| HashMap::from([(METRICS_ENDPOINT.to_owned(), v.to_owned())]);
        let c = StormConfig::from_properties(&props(" 127.0.0.1:9464 ")).unwrap();
        assert_eq!(c.metrics_endpoint, Some(([127, 0, 0, 1], 9464).into()));
        let e = StormConfig::from_properties(&props("localhost")).unwrap_err();
        assert!(e.to_string().contains(METRICS_ENDPOINT), "{e}");
    }

    #[test]
    fn file_then_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("config.service");
        std::fs::write(
            &f,
            "# comment\nIceStorm.InstanceName = Demo  \nIceStorm.Flush.Timeout=50\n\
             IceStorm.Discard.Interval=2 # trailing\nX.Y = a\\=b\\#c\n\n",
        )
        .unwrap();
        let (props, rest) = parse_properties([
            "floe-storm".to_string(),
            format!("--Ice.Config={}", f.display()),
            "--IceStorm.Discard.Interval=5".into(),
            "--data-dir=/tmp/x".into(),
        ])
        .unwrap();
        assert_eq!(rest, ["floe-storm", "--data-dir=/tmp/x"]);
        assert_eq!(props["X.Y"], "a=b#c");
        let c = StormConfig::from_properties(&props).unwrap();
        assert_eq!(c.instance_name, "Demo");
        assert_eq!(
            c.flush_timeout,
            Duration::from_millis(100),
            "clamped to 100 ms"
        );
        assert_eq!(c.discard_interval, Duration::from_secs(5));
    }

    #[test]
    fn queue_properties_have_icestorm_meanings() {
        let props = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let c = StormConfig::from_properties(&props(&[
            ("IceStorm.Send.QueueSizeMax", "-1"),
            ("IceStorm.Send.QueueSizeMaxPolicy", "DropEvents"),
            ("IceStorm.Send.Timeout", "-1"),
            ("floe.Storm.Send.QueueBytesMax", "1048576"),
        ]))
        .unwrap();
        assert_eq!(c.queue_size_max, None, "-1 is no limit, not a queue of one");
        assert_eq!(c.queue_size_max_policy, OverflowPolicy::DropEvents);
        assert_eq!(c.send_timeout, None, "negative disables the timeout");
        assert_eq!(c.queue_bytes_max, 1 << 20);
        let c = StormConfig::from_properties(&props(&[
            ("IceStorm.Send.QueueSizeMax", "100"),
            ("IceStorm.Send.QueueSizeMaxPolicy", "Whatever"),
            ("IceStorm.Send.QueueBytesMax", "4096"),
        ]))
        .unwrap();
        assert_eq!(c.queue_size_max, Some(100));
        assert_eq!(c.queue_size_max_policy, OverflowPolicy::RemoveSubscriber);
        assert_eq!(c.queue_bytes_max, 4096, "the old name is still read");
        let d = c.delivery();
        assert_eq!(d.queue_size_max, Some(100));
        assert_eq!(d.queue_bytes_max, 4096);
    }

    #[test]
    fn bad_numbers_are_reported() {
        let mut p = HashMap::new();
        p.insert("IceStorm.Flush.Timeout".to_string(), "soon".to_string());
        assert!(matches!(
            StormConfig::from_properties(&p),
            Err(ConfigError::BadValue { .. })
        ));
    }
}
