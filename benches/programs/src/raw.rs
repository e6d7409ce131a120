//! The raw-socket baseline's framing, shared by `raw_bench_server` and
//! `raw_bench_client`: the floor any RPC runtime is compared against.
//!
//! Messages have the sizes real Ice messages have for the same workloads, so
//! the kernel does the same work: a 14-byte header whose bytes 10..14 hold
//! the frame size (little-endian, as in Ice), byte 8 the message type and
//! byte 9 an operation code (where Ice has the compression status). Bytes
//! 14..18 are the request id; 0 means oneway (no reply). Nothing else in a
//! frame is looked at: that is exactly the work a runtime adds.
//!
//! | workload | request | reply |
//! |---|---|---|
//! | `o()` | 32 bytes | 25 bytes |
//! | `sendByteSeq(500,000 bytes)` | 47 + 500,000 bytes | 25 bytes |
//! | `recvByteSeq(500,000)` | 46 bytes | 30 + 500,000 bytes |

use std::io::{self, Read, Write};
use std::net::TcpStream;

/// Header size (as Ice's).
pub const HEADER_SIZE: usize = 14;
/// Size of an `o()` request on identity `a` (header included).
pub const LATENCY_REQUEST: usize = 32;
/// Size of an empty reply (header, request id, status, empty encapsulation).
pub const EMPTY_REPLY: usize = 25;
/// Size of a `sendByteSeq` request without the sequence's bytes.
pub const SEND_HEAD: usize = 47;
/// Size of a `recvByteSeq(size)` request.
pub const RECV_REQUEST: usize = 46;
/// Size of a `recvByteSeq` reply without the sequence's bytes.
pub const RECV_REPLY_HEAD: usize = 30;
/// Payload size of the byte-sequence workloads (the Ice studies' 500 KB).
pub const BYTESEQ_SIZE: usize = 500_000;

/// Operation codes (header byte 9).
pub const OP_LATENCY: u8 = b'o';
/// `sendByteSeq`.
pub const OP_SEND: u8 = b's';
/// `recvByteSeq`; the size asked for is in the last 4 bytes of the request.
pub const OP_RECV: u8 = b'r';
/// `shutdown`: the server exits.
pub const OP_SHUTDOWN: u8 = b'x';

/// Frames above this size are refused.
pub const MAX_FRAME: usize = 64 << 20;

/// The size field of the frame header starting at `at`, if the whole
/// header is in `buf`.
pub fn frame_size(buf: &[u8], at: usize) -> Option<usize> {
    let h = buf.get(at + 10..at + HEADER_SIZE)?;
    Some(u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize)
}

/// Whether `size` is a frame size the baseline accepts (room for a request
/// id, at most [`MAX_FRAME`]).
pub fn valid_frame_size(size: usize) -> bool {
    (HEADER_SIZE + 4..=MAX_FRAME).contains(&size)
}

/// A zero-filled frame of `size` bytes with the header filled in.
pub fn frame(size: usize, message_type: u8, op: u8, request_id: i32) -> Vec<u8> {
    let mut f = vec![0u8; size];
    f[..4].copy_from_slice(b"IceP");
    f[4..8].copy_from_slice(&[1, 0, 1, 0]);
    f[8] = message_type;
    f[9] = op;
    // Invariant: benchmark frames are far below 4 GiB.
    f[10..14].copy_from_slice(&(size as u32).to_le_bytes());
    f[14..18].copy_from_slice(&request_id.to_le_bytes());
    f
}

/// Reads frames from a stream through one reused buffer, asking the kernel
/// for as much as fits each time (as an RPC runtime does), so a large
/// frame usually arrives in one `read` and small back-to-back frames share
/// one.
pub struct FrameReader {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl FrameReader {
    /// A reader with room for `capacity` bytes (grown for larger frames).
    pub fn new(capacity: usize) -> Self {
        FrameReader {
            buf: vec![0; capacity.max(HEADER_SIZE)],
            start: 0,
            end: 0,
        }
    }

    /// The next whole frame.
    ///
    /// # Errors
    ///
    /// I/O errors, `UnexpectedEof` when the peer closes, or `InvalidData`
    /// for a size field that leaves no room for a request id, or above 64 MiB.
    pub fn next(&mut self, stream: &mut impl Read) -> io::Result<&[u8]> {
        loop {
            let avail = self.end - self.start;
            let need = match frame_size(&self.buf[..self.end], self.start) {
                Some(size) if !valid_frame_size(size) => {
                    return Err(io::Error::new(io::ErrorKind::InvalidData, "frame size"));
                }
                Some(size) => size,
                None => HEADER_SIZE,
            };
            if avail >= need && avail >= HEADER_SIZE {
                let frame = self.start..self.start + need;
                self.start += need;
                if self.start == self.end {
                    self.start = 0;
                    self.end = 0;
                }
                return Ok(&self.buf[frame]);
            }
            if self.start + need > self.buf.len() {
                self.buf.copy_within(self.start..self.end, 0);
                self.start = 0;
                self.end = avail;
                if need > self.buf.len() {
                    self.buf.resize(need, 0);
                }
            }
            let n = stream.read(&mut self.buf[self.end..])?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.end += n;
        }
    }
}

/// How a baseline process waits for its socket (a command-line flag, the
/// same on both sides).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Blocking reads and writes: the thread sleeps inside `read`.
    Blocking,
    /// `--spin`: a non-blocking socket retried in a busy loop on
    /// `WouldBlock`, the floor for floe's busy polling (`floe.BusyPoll`),
    /// where a peer that answers quickly is read without the thread going
    /// to sleep.
    Spin,
    /// `--tokio`: a non-blocking socket waited for through a tokio
    /// current-thread runtime's reactor (readiness, `epoll_wait`), the
    /// floor for any runtime built on tokio. A read that leaves room
    /// unfilled clears readiness at once (as floe's reads do), so a message
    /// costs one `recv` and no `EAGAIN`.
    Tokio,
}

impl Mode {
    /// The mode named among `args` (`--spin`, `--tokio`; removed from
    /// them), blocking when none is.
    pub fn take(args: &mut Vec<String>) -> Mode {
        let mode = if args.iter().any(|a| a == "--tokio") {
            Mode::Tokio
        } else if args.iter().any(|a| a == "--spin") {
            Mode::Spin
        } else {
            Mode::Blocking
        };
        args.retain(|a| a != "--spin" && a != "--tokio");
        mode
    }
}

/// A connected socket (`TCP_NODELAY` on) used in one [`Mode`].
pub struct Stream {
    inner: TcpStream,
    mode: Mode,
    /// [`Mode::Tokio`]: the runtime and a registration of the same socket.
    reactor: Option<(tokio::runtime::Runtime, tokio::net::TcpStream)>,
}

impl Stream {
    pub fn new(inner: TcpStream, mode: Mode) -> io::Result<Stream> {
        inner.set_nodelay(true)?;
        inner.set_nonblocking(mode != Mode::Blocking)?;
        let reactor = if mode == Mode::Tokio {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            // A duplicate descriptor of the same socket: readiness is the
            // socket's, reads and writes go through `inner`.
            let registered = {
                let _guard = rt.enter();
                tokio::net::TcpStream::from_std(inner.try_clone()?)?
            };
            Some((rt, registered))
        } else {
            None
        };
        Ok(Stream {
            inner,
            mode,
            reactor,
        })
    }

    /// Runs `op` until it does not report `WouldBlock` (only a spinning or
    /// tokio stream reports it), spinning or waiting for `interest`.
    /// `op` returns `Ok(Err(n))` for a read of `n` bytes that found the
    /// socket drained: with tokio, readiness is then cleared right away.
    fn retry(
        &mut self,
        interest: tokio::io::Interest,
        mut op: impl FnMut(&mut TcpStream) -> io::Result<Result<usize, usize>>,
    ) -> io::Result<usize> {
        let inner = &mut self.inner;
        loop {
            let r = match &self.reactor {
                Some((_, registered)) => {
                    let mut drained = None;
                    let r = registered.try_io(interest, || match op(inner)? {
                        Ok(n) => Ok(n),
                        Err(n) => {
                            drained = Some(n);
                            Err(io::ErrorKind::WouldBlock.into())
                        }
                    });
                    match drained {
                        Some(n) => Ok(n),
                        None => r,
                    }
                }
                None => op(inner).map(|r| r.unwrap_or_else(|n| n)),
            };
            match r {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => match &self.reactor {
                    Some((rt, registered)) => {
                        rt.block_on(registered.ready(interest))?;
                    }
                    None if self.mode == Mode::Spin => std::hint::spin_loop(),
                    None => return Err(e),
                },
                r => return r,
            }
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let room = buf.len();
        self.retry(tokio::io::Interest::READABLE, |s| {
            let n = s.read(buf)?;
            Ok(if n > 0 && n < room { Err(n) } else { Ok(n) })
        })
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.retry(tokio::io::Interest::WRITABLE, |s| s.write(buf).map(Ok))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
