//! File transfer: a file server and a client that moves a large file in
//! chunks (`file_transfer/FileTransfer.ice`: `FileStore::stat` and
//! `FileStore::read(name, offset, count)`).
//!
//! - The client downloads the file twice: with a synchronous chunk loop
//!   (one `read` at a time), then with N chunks in flight (AMI: the next
//!   requests are on the wire while a reply is written out, so the network
//!   never idles). It prints the MB/s of each.
//! - Chunks are `Bytes` on both sides: the server reads a chunk into one
//!   buffer and the reply is sent from it; the client gets zero-copy slices
//!   of the received frames and writes them as they are.
//! - `--compress` adds both modes again with `ice_compress(true)` (bzip2,
//!   Ice's `Ice.Compression` format: the replies are compressed too).
//! - An `indicatif` progress bar follows each download, and the file's
//!   CRC-32 is checked against the server's.
//!
//! ```sh
//! cargo run --release --example file_transfer                       # 256 MB, server and client in one process
//! cargo run --release --example file_transfer -- --size-mb 64 --in-flight 16 --compress
//! cargo run --release --example file_transfer -- --delay-ms 2   # as if the server were far away
//! cargo run --release --example file_transfer -- server --dir /some/dir    # serves its files
//! cargo run --release --example file_transfer -- client big.iso --in-flight 8 \
//!     --FileStore.Proxy="files:tcp -h 127.0.0.1 -p 10000"
//! ```

#[path = "file_transfer/mod.rs"]
mod transfer;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};
use floe::runtime::{Communicator, Properties};
use floe::Identity;
use indicatif::{ProgressBar, ProgressStyle};
use transfer::download::{download, BoxError, Downloaded};
use transfer::store::FileStoreI;
use transfer::{FileStoreDispatcher, FileStorePrx, MESSAGE_SIZE_MAX_KB};

/// Command-line options besides Ice properties (`--Name=value`).
#[derive(Parser, Debug)]
#[command(about = "A file server and client moving a large file in chunks")]
struct Cli {
    /// Without a command: a sample file served and downloaded in one process.
    #[command(subcommand)]
    role: Option<Role>,
    /// Size of the sample file, in MB (10⁶ bytes).
    #[arg(long, default_value_t = 256)]
    size_mb: u64,
    #[command(flatten)]
    options: Options,
}

/// How the client downloads.
#[derive(clap::Args, Debug, Clone, Copy)]
struct Options {
    /// Bytes per `read` call, in KB (1024 bytes).
    #[arg(long, default_value_t = 256, global = true)]
    chunk_kb: usize,
    /// Requests in flight in the AMI mode.
    #[arg(long, default_value_t = 8, global = true)]
    in_flight: usize,
    /// Also download with compressed requests and replies.
    #[arg(long, global = true)]
    compress: bool,
    /// The server answers each read this many milliseconds late, like a
    /// distant one (loopback has almost no round trip to hide).
    #[arg(long, default_value_t = 0, global = true)]
    delay_ms: u64,
}

#[derive(Subcommand, Debug)]
enum Role {
    /// Serve the files of a directory as the object `files` on the adapter
    /// `FileStore` (`--FileStore.Endpoints`, default tcp -h 127.0.0.1 -p 10000).
    Server {
        /// The directory whose files are served.
        #[arg(long, default_value = ".")]
        dir: PathBuf,
    },
    /// Download one file from `--FileStore.Proxy` (default
    /// files:tcp -h 127.0.0.1 -p 10000), once per mode.
    Client {
        /// The file's name on the server.
        name: String,
        /// Where to write it (default: its name).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// Communicator properties of both sides: chunks up to `MAX_CHUNK`.
fn properties(args: &mut Vec<String>) -> Result<Properties, BoxError> {
    let props = Properties::from_args(args)?;
    if props.get("Ice.MessageSizeMax").is_none() {
        props.set("Ice.MessageSizeMax", MESSAGE_SIZE_MAX_KB);
    }
    Ok(props)
}

/// Starts a file server for `dir` on `communicator`'s adapter `FileStore`.
async fn serve(
    communicator: &Communicator,
    dir: PathBuf,
    delay: Duration,
) -> Result<FileStorePrx, BoxError> {
    let props = communicator.properties();
    if props.get("FileStore.Endpoints").is_none() {
        props.set("FileStore.Endpoints", "tcp -h 127.0.0.1 -p 10000");
    }
    let adapter = communicator.create_object_adapter("FileStore").await?;
    let proxy = adapter.add(
        Identity::from_name("files"),
        FileStoreDispatcher::new(FileStoreI::new(dir).with_delay(delay)),
    )?;
    adapter.activate();
    Ok(FileStorePrx::unchecked_cast(proxy))
}

/// The download modes: (label, requests in flight, compressed).
fn modes(options: Options) -> Vec<(String, usize, bool)> {
    let n = options.in_flight.max(2);
    let mut modes = vec![
        ("1 chunk in flight".to_owned(), 1, false),
        (format!("{n} chunks in flight"), n, false),
    ];
    if options.compress {
        modes.push(("1 chunk, compressed".to_owned(), 1, true));
        modes.push((format!("{n} chunks, compressed"), n, true));
    }
    modes
}

/// A progress bar for one download (drawn on stderr when it is a
/// terminal; its length is set once the file's size is known).
fn progress_bar(label: &str) -> ProgressBar {
    let style = ProgressStyle::with_template(
        "{msg:22} [{bar:32}] {bytes:>10}/{total_bytes:10} {bytes_per_sec:>12}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    ProgressBar::new(0)
        .with_style(style)
        .with_message(label.to_owned())
}

/// Downloads `name` once per mode into `out`, printing one line each.
async fn download_all(
    store: &FileStorePrx,
    name: &str,
    out: &std::path::Path,
    options: Options,
) -> Result<Vec<(String, Downloaded)>, BoxError> {
    println!("{:<22} {:>10} {:>9}  crc32", "mode", "MB/s", "seconds");
    let mut results = Vec::new();
    for (label, in_flight, compress) in modes(options) {
        let bar = progress_bar(&label);
        let store = store.ice_compress(compress);
        let d = download(&store, name, out, options.chunk_kb * 1024, in_flight, &bar).await;
        bar.finish_and_clear();
        let d = d?;
        println!(
            "{label:<22} {:>10.1} {:>9.3}  {:08x} ok",
            d.mb_per_s(),
            d.seconds,
            d.crc32
        );
        results.push((label, d));
    }
    Ok(results)
}

/// Server and client in one process, on a sample file of `size` bytes in
/// a temporary directory.
async fn run_local(size: u64, options: Options) -> Result<Vec<(String, Downloaded)>, BoxError> {
    let dir = tempfile::tempdir()?;
    let name = "sample.dat";
    transfer::write_sample_file(&dir.path().join(name), size)?;
    println!(
        "{} MB sample file, {} KB chunks, replies delayed {} ms",
        size as f64 / 1e6,
        options.chunk_kb,
        options.delay_ms
    );

    let server = Communicator::with_properties(properties(&mut Vec::new())?);
    server
        .properties()
        .set("FileStore.Endpoints", "tcp -h 127.0.0.1 -p 0");
    let files = serve(
        &server,
        dir.path().to_owned(),
        Duration::from_millis(options.delay_ms),
    )
    .await?;
    let client = Communicator::with_properties(properties(&mut Vec::new())?);
    let store = FileStorePrx::unchecked_cast(client.string_to_proxy(&files.to_string())?);
    let out = dir.path().join("received.dat");
    let results = download_all(&store, name, &out, options).await;
    client.destroy().await;
    server.destroy().await;
    results
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let mut args: Vec<String> = std::env::args().collect();
    let props = properties(&mut args)?;
    let cli = Cli::parse_from(args);
    match cli.role {
        None => {
            run_local(cli.size_mb * 1_000_000, cli.options).await?;
        }
        Some(Role::Server { dir }) => {
            let communicator = Communicator::with_properties(props);
            let files = serve(
                &communicator,
                dir,
                Duration::from_millis(cli.options.delay_ms),
            )
            .await?;
            println!("serving {}", *files);
            let on_signal = communicator.clone();
            tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    on_signal.shutdown();
                }
            });
            communicator.wait_for_shutdown().await;
            communicator.destroy().await;
        }
        Some(Role::Client { name, out }) => {
            let communicator = Communicator::with_properties(props);
            let text = communicator
                .properties()
                .get_or("FileStore.Proxy", "files:tcp -h 127.0.0.1 -p 10000");
            let store = FileStorePrx::checked_cast(communicator.string_to_proxy(&text)?)
                .await?
                .ok_or("not a ::FileTransfer::FileStore")?;
            let out = out.unwrap_or_else(|| PathBuf::from(&name));
            let result = download_all(&store, &name, &out, cli.options).await;
            communicator.destroy().await;
            result?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CI runs the example to completion (`test = true` in Cargo.toml),
    /// with a 3 MB file whose size is not a multiple of the chunk, and
    /// compression.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_to_completion() {
        let options = Options {
            chunk_kb: 64,
            in_flight: 4,
            compress: true,
            delay_ms: 1,
        };
        let results = run_local(3_000_017, options)
            .await
            .expect("the example runs");
        assert_eq!(results.len(), 4);
        assert!(results.iter().all(|(_, d)| d.bytes == 3_000_017));
    }

    /// A name that is not a plain file name, or a range outside the
    /// file, is the server's `FileError`, not a panic or a path escape.
    #[tokio::test]
    async fn hostile_requests_are_file_errors() {
        let dir = tempfile::tempdir().expect("temp dir");
        transfer::write_sample_file(&dir.path().join("a"), 10).expect("written");
        let server = Communicator::new();
        server
            .properties()
            .set("FileStore.Endpoints", "tcp -h 127.0.0.1 -p 0");
        let store = serve(&server, dir.path().to_owned(), Duration::ZERO)
            .await
            .expect("serving");
        for (name, offset, count) in [
            ("../a", 0, 1),
            ("", 0, 1),
            ("a", -1, 1),
            ("a", 11, 1),
            ("a", 0, -5),
            ("a", 0, i32::MAX),
            ("missing", 0, 1),
        ] {
            let e = store.read(name, offset, count).await.unwrap_err();
            assert!(
                e.user_exception::<transfer::FileError>().is_some(),
                "{name} {offset} {count}: {e:?}"
            );
        }
        assert_eq!(store.read("a", 4, 100).await.expect("a read").len(), 6);
        server.destroy().await;
    }
}
