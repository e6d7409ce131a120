//! The [`Writer`]'s TCP path: the direct non-blocking `sendmsg` of a
//! sender that finds the connection idle, the vectored writes of the
//! queue's head by the connection task and by helping senders, and the
//! flags and limits of those writes (see the module documentation of
//! `writer/mod.rs`).

use super::*;

/// At most this many buffers go into one vectored write (on the stack).
///
/// A forwarded oneway is two buffers (the frame head and the shared
/// parameters), so this is up to 64 queued 10 KB events, 640 KB, per
/// `sendmsg`. Fewer, larger writes wake the reader fewer times: in
/// floe-storm's 10 KB fan-in, 128 instead of 64 delivered 10–13% more
/// MB/s with 10% less broker CPU, while 8 or 16 cost 30% of the MB/s and
/// 256 to 1024 gained no more (see `docs/performance-notes.md`).
pub(super) const MAX_IOV: usize = 128;

/// Queues of at most this many buffers are written from a small array.
const FEW_IOV: usize = 8;

/// Flags of every `sendmsg` on the connection: a peer that reset the
/// connection gives `EPIPE`, not `SIGPIPE`, whatever the host program does
/// with signals.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) const SEND_FLAGS: libc::c_int = libc::MSG_NOSIGNAL;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(super) const SEND_FLAGS: std::ffi::c_int = 0;

impl Writer {
    /// The direct path: writes `parts` then `tail` now, as far as the
    /// socket takes them, and queues the rest (the caller then notifies
    /// the connection task). Whether everything was written.
    pub(super) fn send_direct(
        &self,
        st: &mut WriteState,
        parts: &mut [Bytes],
        mut tail: &[u8],
    ) -> Result<bool, Error> {
        // Direct path: write now, as far as the socket takes it.
        let mut first = 0;
        while first < parts.len() || !tail.is_empty() {
            let n = {
                // Up to three parts, and the tail once every part is in.
                let mut slices = [IoSlice::new(&[]); 4];
                let owned = (parts.len() - first).min(3);
                for (slot, b) in slices.iter_mut().zip(&parts[first..first + owned]) {
                    *slot = IoSlice::new(b);
                }
                let mut used = owned;
                if first + owned == parts.len() && !tail.is_empty() {
                    slices[owned] = IoSlice::new(tail);
                    used += 1;
                }
                match self.try_send(&slices[..used]) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => {
                        let err = Error::from_io(&e);
                        st.error = Some(err.clone());
                        return Err(err);
                    }
                }
            };
            let rest = advance(parts, &mut first, n);
            tail = &tail[rest.min(tail.len())..];
        }
        if first >= parts.len() && tail.is_empty() {
            return Ok(true);
        }
        st.push(&mut parts[first..]);
        if !tail.is_empty() {
            st.push(&mut [scratch::copied(tail)]);
        }
        Ok(false)
    }

    /// Queues `parts` and a copy of `tail` behind what waits and helps
    /// write it; whether anything is still queued. With `batch`, the
    /// message (a oneway request) may join a batch of up to that many
    /// bytes ([`Writer::queue_message`]).
    pub(super) fn queue_and_help(
        &self,
        st: &mut WriteState,
        parts: &mut [Bytes],
        tail: &[u8],
        batch: usize,
    ) -> Result<bool, Error> {
        self.queue_message(st, parts, tail, batch);
        self.help(st)?;
        Ok(!st.queue.is_empty())
    }

    /// A sender's share of the writing: once `help_bytes` were queued
    /// since the last attempt, one non-blocking vectored write of the
    /// queue's head, straight to the socket.
    ///
    /// The connection task alone drains the queue when tokio reports the
    /// socket writable, and a runtime whose workers are busy with other
    /// connections (a broker reading four publishers streaming to one
    /// subscriber) polls neither that task nor the I/O driver for long
    /// stretches: the subscriber's socket then sat empty while the queue
    /// grew by gigabytes. Senders that keep queueing keep the socket
    /// filled instead. The write bypasses tokio's readiness, which is the
    /// stale part: a full socket costs one `EAGAIN` per `help_bytes`
    /// queued.
    pub(super) fn help(&self, st: &mut WriteState) -> Result<(), Error> {
        let Sink::Tcp(stream) = &self.sink else {
            // A stream is written by the connection task alone.
            return Ok(());
        };
        if st.unhelped < self.help_bytes {
            return Ok(());
        }
        st.unhelped = 0;
        let sock = socket2::SockRef::from(&**stream);
        self.write_head(st, |iov| sock.send_vectored_with_flags(iov, SEND_FLAGS))
    }

    /// One non-blocking vectored write of the queue's head.
    pub(super) fn write_queued(&self) -> Result<(), Error> {
        let mut guard = self.lock();
        let st = &mut guard.out;
        if let Some(e) = &st.error {
            return Err(e.clone());
        }
        self.write_head(st, |iov| self.try_send(iov))
    }

    /// One non-blocking vectored write through tokio's readiness (as
    /// `try_write_vectored`; `WouldBlock` clears it), as a `sendmsg` with
    /// [`SEND_FLAGS`]: a peer that reset the connection gives `EPIPE`, never
    /// `SIGPIPE`, even in a host program that does not ignore the signal
    /// (mio's `writev` cannot pass the flag).
    pub(super) fn try_send(&self, iov: &[IoSlice<'_>]) -> std::io::Result<usize> {
        let Sink::Tcp(stream) = &self.sink else {
            return Err(std::io::ErrorKind::WouldBlock.into());
        };
        stream.try_io(tokio::io::Interest::WRITABLE, || {
            socket2::SockRef::from(&**stream).send_vectored_with_flags(iov, SEND_FLAGS)
        })
    }

    /// Writes the queue's head with `write` and drops what it took.
    pub(super) fn write_head(
        &self,
        st: &mut WriteState,
        write: impl FnOnce(&[IoSlice<'_>]) -> std::io::Result<usize>,
    ) -> Result<(), Error> {
        // A few buffers (a reply or two) go through a small array, not
        // `MAX_IOV` slots to initialise per write.
        let res = if st.queue.len() <= FEW_IOV {
            write_from::<FEW_IOV>(st, write)
        } else {
            write_from::<MAX_IOV>(st, write)
        };
        match res {
            Ok(n) => {
                st.consume(n);
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(()),
            Err(e) => {
                let err = Error::from_io(&e);
                st.error = Some(err.clone());
                Err(err)
            }
        }
    }
}

/// One vectored `write` of up to `N` buffers of the queue's head, from an
/// array on the stack (no allocation per write).
fn write_from<const N: usize>(
    st: &WriteState,
    write: impl FnOnce(&[IoSlice<'_>]) -> std::io::Result<usize>,
) -> std::io::Result<usize> {
    let mut iov = [IoSlice::new(&[]); N];
    let n = st.head(&mut iov);
    write(&iov[..n])
}

/// Advances the parts cursor by `n` written bytes; returns the bytes
/// written past the last part (into a borrowed tail).
pub(super) fn advance(parts: &mut [Bytes], first: &mut usize, mut n: usize) -> usize {
    while n > 0 && *first < parts.len() {
        let len = parts[*first].len();
        if n >= len {
            n -= len;
            *first += 1;
        } else {
            parts[*first].advance(n);
            n = 0;
        }
    }
    while *first < parts.len() && parts[*first].is_empty() {
        *first += 1;
    }
    n
}
