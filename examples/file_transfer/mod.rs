//! The file_transfer example's parts, shared by `examples/file_transfer.rs`
//! and the demo tour (`examples/demo.rs`): the code generated from
//! `FileTransfer.ice`, the server's servant ([`store`]) and the client's
//! download loops ([`download`]).

#![allow(dead_code)] // each program uses its own part of it

pub mod download;
pub mod store;

use std::io::Write;
use std::path::Path;

floe::slice!("examples/file_transfer/FileTransfer.ice");

pub use file_transfer::{FileError, FileInfo, FileStore, FileStoreDispatcher, FileStorePrx};

/// The largest chunk a client may ask for; each reply must also fit the
/// receiver's `Ice.MessageSizeMax`.
pub const MAX_CHUNK: usize = 8 << 20;

/// `Ice.MessageSizeMax` (KB) for both sides: a [`MAX_CHUNK`] reply and
/// its headers fit.
pub const MESSAGE_SIZE_MAX_KB: &str = "16384";

/// Writes `size` bytes of sample data to `path`: text lines of readings,
/// compressible as most log and data files are (bzip2 shrinks them about
/// fivefold), so that `--compress` has something to do.
///
/// # Errors
///
/// The file cannot be written.
pub fn write_sample_file(path: &Path, size: u64) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut written = 0u64;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut line = 0u64;
    while written < size {
        // xorshift: a cheap, repeatable source of readings.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let text = format!(
            "{line:010} probe-{:02} {:+.4} V ok\n",
            state % 16,
            (state >> 20) as f64 / (1u64 << 44) as f64 - 0.5
        );
        let take = text.len().min((size - written) as usize);
        out.write_all(&text.as_bytes()[..take])?;
        written += take as u64;
        line += 1;
    }
    out.flush()
}
