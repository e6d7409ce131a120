//! The file client: a file downloaded in chunks, either one `read` at a
//! time (a synchronous loop: the link idles while each reply is written
//! out and the next request travels) or with `in_flight` requests
//! outstanding (AMI: each reply is written while the next ones are on the
//! wire).
//!
//! Chunks arrive as `Bytes`, zero-copy slices of the received frames, and
//! go as they are to a writer thread that writes them to the file, updates
//! the CRC-32 and moves the progress bar; the checksum is compared with the
//! server's at the end.

use std::io::Write;
use std::path::Path;
use std::thread::JoinHandle;
use std::time::Instant;

use bytes::Bytes;
use futures_util::stream::{self, StreamExt};
use indicatif::ProgressBar;
use tokio::sync::mpsc;

use super::{FileError, FileStorePrx, MAX_CHUNK};

/// Any failure of a download.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What one download measured.
#[derive(Clone, Copy, Debug)]
pub struct Downloaded {
    /// Bytes received and written.
    pub bytes: u64,
    /// From the first request to the last byte written.
    pub seconds: f64,
    /// CRC-32 of the received file, equal to the server's.
    pub crc32: u32,
}

impl Downloaded {
    /// Megabytes (10⁶ bytes) per second.
    pub fn mb_per_s(&self) -> f64 {
        self.bytes as f64 / 1e6 / self.seconds.max(1e-9)
    }
}

/// Downloads file `name` from `store` into `out`, in chunks of `chunk`
/// bytes with `in_flight` requests outstanding (1: a synchronous loop),
/// and checks its size and CRC-32 against the server's.
///
/// # Errors
///
/// A failed call (the server's `FileError` reason among them), a short
/// chunk, a local I/O error, or a checksum that does not match.
pub async fn download(
    store: &FileStorePrx,
    name: &str,
    out: &Path,
    chunk: usize,
    in_flight: usize,
    progress: &ProgressBar,
) -> Result<Downloaded, BoxError> {
    let chunk = chunk.clamp(1, MAX_CHUNK) as u64;
    let info = store.stat(name).await.map_err(describe)?;
    let size = u64::try_from(info.size).map_err(|_| "negative file size")?;
    progress.set_length(size);
    progress.set_position(0);
    let chunks = (0..size)
        .step_by(chunk as usize)
        .map(move |offset| (offset as i64, (size - offset).min(chunk) as i32));

    // Creating (truncating) the file is not part of the transfer.
    let (tx, writer) = Writer::start(out, progress.clone())?;
    let start = Instant::now();
    let received = if in_flight <= 1 {
        one_at_a_time(store, name, chunks, &tx).await
    } else {
        pipelined(store, name, chunks, in_flight, &tx).await
    };
    drop(tx); // the writer ends once it has written what it was sent
    let (bytes, crc32) = writer.finish()?;
    received?;
    let seconds = start.elapsed().as_secs_f64();

    if bytes != size {
        return Err(format!("received {bytes} bytes of {size}").into());
    }
    if i64::from(crc32) != info.crc32 {
        return Err(format!(
            "checksum mismatch: received {crc32:08x}, the server has {:08x}",
            info.crc32
        )
        .into());
    }
    Ok(Downloaded {
        bytes,
        seconds,
        crc32,
    })
}

/// The synchronous loop: each request waits for the previous reply.
async fn one_at_a_time(
    store: &FileStorePrx,
    name: &str,
    chunks: impl Iterator<Item = (i64, i32)>,
    tx: &mpsc::Sender<Bytes>,
) -> Result<(), BoxError> {
    for (offset, count) in chunks {
        let data = store.read(name, offset, count).await.map_err(describe)?;
        send(tx, data, count).await?;
    }
    Ok(())
}

/// AMI: up to `in_flight` requests outstanding on the one connection;
/// replies are taken in file order as they complete.
async fn pipelined(
    store: &FileStorePrx,
    name: &str,
    chunks: impl Iterator<Item = (i64, i32)>,
    in_flight: usize,
    tx: &mpsc::Sender<Bytes>,
) -> Result<(), BoxError> {
    let mut replies = stream::iter(chunks)
        .map(|(offset, count)| async move { (count, store.read(name, offset, count).await) })
        .buffered(in_flight);
    while let Some((count, reply)) = replies.next().await {
        send(tx, reply.map_err(describe)?, count).await?;
    }
    Ok(())
}

/// Hands a chunk to the writer, after checking that it is whole.
async fn send(tx: &mpsc::Sender<Bytes>, data: Bytes, count: i32) -> Result<(), BoxError> {
    if data.len() != count as usize {
        return Err(format!("short chunk: {} bytes of {count}", data.len()).into());
    }
    // Fails only if the writer stopped, on an I/O error it reports itself.
    tx.send(data).await.map_err(|_| "the writer stopped".into())
}

/// A server's `FileError` as its reason; other errors as they are.
fn describe(e: floe::runtime::Error) -> BoxError {
    match e.user_exception::<FileError>() {
        Some(f) => format!("file server: {}", f.reason).into(),
        None => e.into(),
    }
}

/// The thread that writes chunks to the file, in order.
struct Writer(JoinHandle<std::io::Result<(u64, u32)>>);

impl Writer {
    fn start(out: &Path, progress: ProgressBar) -> std::io::Result<(mpsc::Sender<Bytes>, Writer)> {
        let mut file = std::fs::File::create(out)?;
        let (tx, mut rx) = mpsc::channel::<Bytes>(16);
        let thread = std::thread::spawn(move || {
            let mut crc = crc32fast::Hasher::new();
            let mut written = 0u64;
            while let Some(data) = rx.blocking_recv() {
                file.write_all(&data)?;
                crc.update(&data);
                written += data.len() as u64;
                progress.inc(data.len() as u64);
            }
            file.flush()?;
            Ok((written, crc.finalize()))
        });
        Ok((tx, Writer(thread)))
    }

    /// Waits for the last write; the bytes written and their CRC-32.
    fn finish(self) -> Result<(u64, u32), BoxError> {
        match self.0.join() {
            Ok(result) => Ok(result?),
            Err(_) => Err("the writer thread panicked".into()),
        }
    }
}
