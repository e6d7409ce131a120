//! `floe-storm`: the IceStorm-compatible broker as a program.
//!
//! ```text
//! floe-storm [--Ice.Config=FILE] [--IceStorm.Name=value ...] [--data-dir DIR]
//! ```
//!
//! Prints `floe-storm ready TopicManager=<proxy> Publish=<endpoints>` on
//! stdout once both adapters accept connections; stops gracefully on
//! SIGINT or SIGTERM.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use clap::Parser;
use floe::runtime::{Communicator, Properties};
use floe_storm::StormConfig;

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
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
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
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("floe-storm: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let result = rt.block_on(floe_storm::run(
        config,
        Communicator::with_properties(properties),
        |server| {
            let publish: Vec<String> = server
                .publish_endpoints()
                .iter()
                .map(ToString::to_string)
                .collect();
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "floe-storm ready TopicManager={} Publish={}",
                server.topic_manager_proxy(),
                publish.join(":")
            );
            let _ = out.flush();
        },
        shutdown_signal(),
    ));
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("floe-storm: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
