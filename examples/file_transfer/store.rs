//! The file server's servant: `FileTransfer::FileStore` over the regular
//! files of one directory.
//!
//! A chunk is read from disk into one buffer that becomes the reply's
//! `Bytes`: the generated dispatcher sends a trailing `sequence<byte>`
//! result straight from it, beside the reply header, without copying it
//! into a frame.

use std::collections::HashMap;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use floe::runtime::{Current, DispatchError};

use super::{FileError, FileInfo, MAX_CHUNK};

/// Serves the files of `dir` by name (no paths: `a/b` and `..` are refused).
pub struct FileStoreI {
    dir: PathBuf,
    /// Files opened so far, with their size and checksum (computed once).
    open: Mutex<HashMap<String, Arc<OpenFile>>>,
    /// Added before each `read` reply: a long-distance link's round trip,
    /// on loopback.
    delay: Duration,
}

struct OpenFile {
    file: std::fs::File,
    info: FileInfo,
}

fn error(reason: impl Into<String>) -> DispatchError {
    FileError {
        reason: reason.into(),
    }
    .into()
}

impl FileStoreI {
    /// A store of the files in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> FileStoreI {
        FileStoreI {
            dir: dir.into(),
            open: Mutex::new(HashMap::new()),
            delay: Duration::ZERO,
        }
    }

    /// Answers each `read` `delay` late, as a distant server would be
    /// (loopback has almost no round trip for a pipeline to hide).
    pub fn with_delay(mut self, delay: Duration) -> FileStoreI {
        self.delay = delay;
        self
    }

    /// The file `name`, opened and checksummed on first use (off the
    /// async threads: a large file takes a moment to read).
    async fn file(&self, name: &str) -> Result<Arc<OpenFile>, DispatchError> {
        // A name from the network: a plain file name, nothing else.
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
            return Err(error(format!("`{name}` is not a file name")));
        }
        if let Some(f) = self.lock().get(name) {
            return Ok(f.clone());
        }
        let path = self.dir.join(name);
        let opened = tokio::task::spawn_blocking(move || -> std::io::Result<OpenFile> {
            let file = std::fs::File::open(&path)?;
            let mut crc = crc32fast::Hasher::new();
            let mut buf = vec![0u8; 1 << 20];
            let mut size = 0u64;
            loop {
                let n = file.read_at(&mut buf, size)?;
                if n == 0 {
                    break;
                }
                crc.update(&buf[..n]);
                size += n as u64;
            }
            let info = FileInfo {
                size: size as i64,
                crc32: i64::from(crc.finalize()),
            };
            Ok(OpenFile { file, info })
        })
        .await
        .map_err(|e| DispatchError::unknown(e.to_string()))?
        .map_err(|e| error(format!("{name}: {e}")))?;
        let opened = Arc::new(opened);
        self.lock().insert(name.to_owned(), opened.clone());
        Ok(opened)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<OpenFile>>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl super::FileStore for FileStoreI {
    async fn stat(&self, name: String, _: &Current) -> Result<FileInfo, DispatchError> {
        Ok(self.file(&name).await?.info.clone())
    }

    async fn read(
        &self,
        name: String,
        offset: i64,
        count: i32,
        _: &Current,
    ) -> Result<Bytes, DispatchError> {
        let f = self.file(&name).await?;
        let size = f.info.size;
        if !(0..=size).contains(&offset) || count < 0 || count as usize > MAX_CHUNK {
            return Err(error(format!(
                "{name}: cannot read {count} bytes at {offset} (size {size}, chunks up to {MAX_CHUNK})"
            )));
        }
        let len = (count as i64).min(size - offset) as usize;
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        tokio::task::spawn_blocking(move || {
            let mut buf = BytesMut::zeroed(len);
            f.file.read_exact_at(&mut buf, offset as u64)?;
            Ok::<_, std::io::Error>(buf.freeze())
        })
        .await
        .map_err(|e| DispatchError::unknown(e.to_string()))?
        .map_err(|e| error(format!("{name}: {e}")))
    }
}
