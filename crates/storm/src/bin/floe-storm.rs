//! `floe-storm`: the IceStorm-compatible broker as a program.
//!
//! ```text
//! floe-storm [--Ice.Config=FILE] [--IceStorm.Name=value ...] [--data-dir DIR]
//!            [--metrics ADDR]
//! ```
//!
//! `--metrics 127.0.0.1:9464` (or `floe.Storm.Metrics.Endpoint`) serves the
//! topic and subscriber counters to Prometheus on `GET /metrics`
//! (`floe_storm::metrics`; feature `prometheus`, on by default).
//!
//! `floe-storm admin [--IceStormAdmin.Name=value ...] [-e COMMANDS]...` is an
//! `icestormadmin` work-alike (commands from `-e`, else from stdin).
//!
//! `--floe.Threads=N` picks the runtime: 1 (the default) runs the broker on
//! tokio's current-thread runtime, `N > 1` on `N` worker threads, 0 on one
//! worker per core.
//!
//! Prints `floe-storm ready TopicManager=<proxy> Publish=<endpoints>`
//! (then ` Metrics=<address>` with `--metrics`) on stdout once both adapters accept connections; stops gracefully on
//! SIGINT or SIGTERM, or on `Ice::Process::shutdown` when an IceGrid node
//! activated it (its adapters register with the node's registry when
//! `IceStorm.TopicManager.AdapterId` and `IceStorm.Publish.AdapterId` are
//! set, as a descriptor's `<adapter>` elements do).

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use clap::Parser;
use floe::runtime::{Communicator, Properties};
use floe_storm::StormConfig;

/// floe-runtime's property for oneway requests that wait in a
/// connection's write queue to leave as one BatchRequest, in KB.
const ONEWAY_BATCH_SIZE: &str = "floe.OnewayBatchSize";

/// The broker's default for [`ONEWAY_BATCH_SIZE`]: events that wait for
/// a oneway subscriber's connection leave up to 1 MB at a time (Ice's
/// default `Ice.MessageSizeMax` and `Ice.BatchAutoFlushSize`; never over
/// the broker's own `Ice.MessageSizeMax`), one message for the subscriber
/// to read and dispatch instead of one per event (an Ice for C++
/// subscriber of 10 KB events spent a third to a half of the CPU per MB;
/// `docs/performance-notes.md`).
const ONEWAY_BATCH_KB: &str = "1024";

/// Command-line options besides Ice properties (`--Name=value`).
#[derive(Parser, Debug)]
#[command(
    name = "floe-storm",
    version,
    about = "IceStorm-compatible publish/subscribe broker"
)]
struct Cli {
    /// Database directory (overrides IceStorm.LMDB.Path; default ./floe-storm-data).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Serve the topic and subscriber counters to Prometheus on
    /// `http://ADDR/metrics` (overrides floe.Storm.Metrics.Endpoint), e.g.
    /// 127.0.0.1:9464.
    #[arg(long, value_name = "ADDR")]
    metrics: Option<std::net::SocketAddr>,
    /// A subcommand (none: run the broker).
    #[command(subcommand)]
    command: Option<Sub>,
}

/// Subcommands.
#[derive(clap::Subcommand, Debug)]
enum Sub {
    /// Administer IceStorm topic managers as `icestormadmin` does.
    Admin {
        /// Commands to run (`;`-separated); without any, read from stdin.
        #[arg(short = 'e')]
        commands: Vec<String>,
    },
}

/// `floe-storm admin`: exit code 0, or 1 when a command failed.
fn admin(properties: Properties, commands: Vec<String>) -> std::process::ExitCode {
    let rt = match current_thread_runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let ok = rt.block_on(async move {
        let comm = Communicator::with_properties(properties);
        let (managers, current) = match floe_storm::admin::discover(&comm).await {
            Ok(m) => m,
            Err(e) => {
                eprintln!("error: {e}");
                return false;
            }
        };
        let mut session = floe_storm::admin::Admin::new(
            comm.clone(),
            managers,
            current,
            std::io::stdout(),
            std::io::stderr(),
        );
        if commands.is_empty() {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut std::io::stdin(), &mut text);
            session.run(&floe_storm::admin::split_commands(&text)).await;
        } else {
            for c in &commands {
                if !session.run(&floe_storm::admin::split_commands(c)).await {
                    break;
                }
            }
        }
        let failed = session.failed();
        comm.destroy().await;
        !failed
    });
    if ok {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}

/// The most worker threads `floe.Threads` may ask for.
const MAX_THREADS: usize = 1024;

/// The tokio runtime the broker runs on, from `floe.Threads`:
///
/// - `1` (the default): tokio's current-thread runtime. Every connection
///   is served by one thread, and the other cores are left to the
///   publishers and subscribers. On the 2-core machine of
///   `docs/performance.md` this delivered 8–15% more MB/s than two workers
///   with 1 MB events and the same within noise with 10 KB and 100 KB ones.
/// - `N > 1`: the multi-thread runtime with `N` workers, for a broker
///   that has cores of its own and many busy subscribers.
/// - `0`: the multi-thread runtime with one worker per core.
///
/// Store writes run on tokio's blocking pool whatever the choice.
fn broker_runtime(properties: &Properties) -> std::io::Result<tokio::runtime::Runtime> {
    let value = properties.get_or("floe.Threads", "1");
    let threads = value
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|n| *n <= MAX_THREADS)
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("floe.Threads={value:?} is not a thread count from 0 to {MAX_THREADS}"),
            )
        })?;
    if threads == 1 {
        return current_thread_runtime();
    }
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if threads > 1 {
        builder.worker_threads(threads);
    }
    builder.enable_all().build()
}

/// Tokio's current-thread runtime with I/O and timers.
fn current_thread_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(mut int), Ok(mut term)) => {
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn main() -> std::process::ExitCode {
    let is_admin = std::env::args().any(|a| a == "admin");
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new(if is_admin {
                    "error"
                } else {
                    // openraft reports every failed call to a replica that
                    // is down; the replica logs leadership changes itself.
                    "info,openraft=off"
                })
            }),
        )
        .with_writer(std::io::stderr)
        .init();
    let mut args: Vec<String> = std::env::args().collect();
    let properties = match Properties::from_args(&mut args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("floe-storm: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let cli = Cli::parse_from(args);
    if let Some(Sub::Admin { commands }) = cli.command {
        return admin(properties, commands);
    }
    let map: HashMap<String, String> = properties.with_prefix("").into_iter().collect();
    let mut config = match StormConfig::from_properties(&map) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("floe-storm: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    if let Some(d) = cli.data_dir {
        config.data_dir = d;
    }
    if let Some(m) = cli.metrics {
        config.metrics_endpoint = Some(m);
    }
    let rt = match broker_runtime(&properties) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("floe-storm: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    if properties.get(ONEWAY_BATCH_SIZE).is_none() {
        properties.set(ONEWAY_BATCH_SIZE, ONEWAY_BATCH_KB);
    }
    let communicator = Communicator::with_properties(properties);
    // Stops on a signal, or when the communicator is shut down: an IceGrid
    // node stops the servers it activated with `Process::shutdown`.
    let stop = {
        let communicator = communicator.clone();
        async move {
            tokio::select! {
                _ = shutdown_signal() => {}
                _ = communicator.wait_for_shutdown() => {}
            }
        }
    };
    let result = rt.block_on(floe_storm::run(
        config,
        communicator,
        |server| {
            let publish: Vec<String> = server
                .publish_endpoints()
                .iter()
                .map(ToString::to_string)
                .collect();
            let metrics = server
                .metrics_address()
                .map(|a| format!(" Metrics={a}"))
                .unwrap_or_default();
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "floe-storm ready TopicManager={} Publish={}{metrics}",
                server.topic_manager_proxy(),
                publish.join(":")
            );
            let _ = out.flush();
        },
        stop,
    ));
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("floe-storm: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::runtime::RuntimeFlavor;

    fn flavor(threads: Option<&str>) -> std::io::Result<RuntimeFlavor> {
        let properties = Properties::new();
        if let Some(t) = threads {
            properties.set("floe.Threads", t);
        }
        Ok(broker_runtime(&properties)?.handle().runtime_flavor())
    }

    #[test]
    fn one_thread_by_default() {
        assert_eq!(flavor(None).unwrap(), RuntimeFlavor::CurrentThread);
        assert_eq!(flavor(Some(" 1 ")).unwrap(), RuntimeFlavor::CurrentThread);
    }

    #[test]
    fn workers_on_request() {
        assert_eq!(flavor(Some("0")).unwrap(), RuntimeFlavor::MultiThread);
        assert_eq!(flavor(Some("3")).unwrap(), RuntimeFlavor::MultiThread);
    }

    #[test]
    fn bad_thread_counts_are_refused() {
        for bad in ["-1", "x", "2.5", "1025"] {
            let e = flavor(Some(bad)).unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{bad:?}");
            assert!(e.to_string().contains("floe.Threads"), "{e}");
        }
    }
}
