//! `Ice.StdOut` and `Ice.StdErr`: the process's standard output and
//! error appended to files, once per process, as an Ice communicator does
//! when it starts.

use std::fs::{File, OpenOptions};
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::properties::Properties;

/// Whether the redirection was done (by the first caller with either
/// property set).
static DONE: Mutex<bool> = Mutex::new(false);

/// Opens `path` for appending, creating it if missing.
pub(crate) fn open_append(path: &str, property: &str) -> Result<File> {
    OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| Error::Initialization(format!("{property}={path}: cannot open: {e}")))
}

/// Redirects stdout to `Ice.StdOut` and stderr to `Ice.StdErr` (appending)
/// if they are set and no earlier call did it.
///
/// # Errors
///
/// [`Error::Initialization`] when a file cannot be opened or the
/// platform cannot redirect.
pub(crate) fn redirect(props: &Properties) -> Result<()> {
    let out = props.get("Ice.StdOut").filter(|f| !f.is_empty());
    let err = props.get("Ice.StdErr").filter(|f| !f.is_empty());
    if out.is_none() && err.is_none() {
        return Ok(());
    }
    let mut done = DONE.lock().unwrap_or_else(|p| p.into_inner());
    if *done {
        return Ok(());
    }
    if let Some(path) = out {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        replace(1, &open_append(&path, "Ice.StdOut")?, "Ice.StdOut")?;
    }
    if let Some(path) = err {
        replace(2, &open_append(&path, "Ice.StdErr")?, "Ice.StdErr")?;
    }
    *done = true;
    Ok(())
}

/// Makes file descriptor `fd` a duplicate of `file`'s.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn replace(fd: i32, file: &File, property: &str) -> Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: dup2 on two open descriptors; `file` stays open for the call
    // and the duplicate outlives it.
    if unsafe { libc::dup2(file.as_raw_fd(), fd) } < 0 {
        let e = std::io::Error::last_os_error();
        return Err(Error::Initialization(format!(
            "{property}: cannot redirect: {e}"
        )));
    }
    Ok(())
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn replace(_fd: i32, _file: &File, property: &str) -> Result<()> {
    Err(Error::Initialization(format!(
        "{property}: redirection is not supported on this platform"
    )))
}
