//! Reading a connection's socket: non-blocking reads sized to the frames
//! they find, and optional busy polling (`floe.BusyPoll`).
//!
//! Reads normally go through tokio's readiness (`try_io`), and a read that
//! leaves room unfilled clears it at once, so a message costs one `recv`
//! and no `EAGAIN`. A busy poll bypasses readiness: the connection task
//! calls `recv` itself, yielding to the runtime between attempts, for a
//! bounded time after the connection wrote. A peer that answers within that
//! time is read without the task (and its CPU) going to sleep, which on a
//! virtual machine saves a wake-up of tens of microseconds per message.

use std::io;
use std::mem::MaybeUninit;
use std::time::Instant;

use bytes::BytesMut;
use floe_wire::protocol::{CompressionStatus, Header, MessageType, HEADER_SIZE};
use tokio::net::TcpStream;

/// Reads ask the kernel for at least this much room.
pub(super) const READ_CHUNK: usize = 16 * 1024;
/// The most room a read asks for (see [`ReadSize`]).
const MAX_READ_CHUNK: usize = 64 * 1024;
/// Frames up to this size count as small (see [`ReadSize`]).
const SMALL_FRAME: usize = 16 * 1024;
/// Room kept past the end of a partly read frame: the read that completes
/// the frame then leaves room unfilled, which tells [`read`] the socket is
/// drained (no `EAGAIN` read before waiting for the next message).
const READ_SLACK: usize = 1024;
/// A busy poll yields to the runtime at least this often.
const YIELD_EVERY: std::time::Duration = std::time::Duration::from_micros(5);
/// With no `Ice.MessageSizeMax`, the room made for the rest of a partial
/// frame is at most the bytes already buffered, and at least this much.
const UNLIMITED_STEP: usize = 1 << 20;
/// A partial oneway request lacking at least this much makes the socket
/// report readable only once that much more has arrived (see
/// [`ReadSize::low_water`]).
const LOW_WATER_MIN: usize = 256 * 1024;
/// The most a socket waits for before reporting readable.
const LOW_WATER_MAX: usize = 1024 * 1024;
/// The low-water mark while a caller polls for its reply
/// ([`ReadSize::quiet`]): replies up to this size arrive without waking the
/// I/O driver. Small enough that Linux does not grow the receive buffer
/// for it (it would for a mark above half the buffer).
const QUIET_LOW_WATER: usize = 8 * 1024;
/// The size of the probe read into a connection without a read buffer;
/// an empty read buffer with less room than this is let go.
const MIN_ROOM: usize = 1024;

/// How much room a connection's reads ask for.
///
/// A read asks for [`READ_CHUNK`] bytes. When a read fills all its room
/// and what it brought was small frames (a peer streaming oneways or
/// events faster than they are read), the next reads ask for four times as
/// much, up to [`MAX_READ_CHUNK`]: one `recv` then takes dozens of frames
/// instead of one or two. A read that finds the socket drained halves the
/// room again, and a large frame puts it back to `READ_CHUNK` at once: a
/// large frame is read into a buffer of its own size (see [`read`]), and a
/// big read room would only read a part of the next large frame that has
/// to be copied into that frame's buffer.
#[derive(Debug)]
pub(super) struct ReadSize {
    chunk: usize,
    /// Bytes the partial frame at the end of the buffer still lacks.
    need: usize,
    /// The partial frame is a oneway or batch request: nobody waits for it.
    oneway: bool,
    /// The last read filled all the room it had.
    filled: bool,
    /// Whole frames handled since the last read, and the largest.
    frames: usize,
    largest: usize,
    /// The socket's receive low-water mark (`SO_RCVLOWAT`) as last set; 1
    /// is the system's default.
    low_water: usize,
}

impl ReadSize {
    pub(super) fn new() -> ReadSize {
        ReadSize {
            chunk: READ_CHUNK,
            need: 0,
            oneway: false,
            filled: false,
            frames: 0,
            largest: 0,
            low_water: 1,
        }
    }

    /// The room the next read asks for when the buffer has too little.
    pub(super) fn chunk(&self) -> usize {
        self.chunk
    }

    /// Records that the partial frame left in the buffer (`partial`, all the
    /// buffer holds) lacks `need` bytes.
    ///
    /// With a limit (`max`, `Ice.MessageSizeMax`), the frame's size was
    /// checked against it and the next read makes room for all of it.
    /// Without one (`max == 0`) the size is only the peer's claim, and up
    /// to 2 GiB: the room then grows with what arrives (at most doubling the
    /// buffer per read, [`UNLIMITED_STEP`] at least), so memory follows the
    /// bytes received, not the bytes announced.
    pub(super) fn need(&mut self, partial: &[u8], need: usize, max: usize) {
        self.oneway = is_oneway_request(partial);
        let buffered = partial.len();
        self.need = if max == 0 {
            need.min(buffered.max(UNLIMITED_STEP))
        } else {
            need
        };
    }

    /// The room a read wants beyond `len` buffered bytes: the rest of the
    /// partial frame and [`READ_SLACK`], and at least a chunk in all.
    /// Asking for no more than a chunk lets `BytesMut::reserve` take back
    /// the buffer's own allocation (when the frames split from it were
    /// dropped) instead of allocating a new one.
    fn room_for(&self, len: usize) -> usize {
        self.need
            .saturating_add(READ_SLACK)
            .max(self.chunk.saturating_sub(len))
    }

    /// Whether an empty read buffer with `capacity` bytes of room should
    /// be let go: when only the slack of a large frame is left, or the
    /// room of a burst of small frames that is over. While a burst lasts
    /// the buffer is kept, so that its allocation is taken back by the
    /// next read (see [`ReadSize::room_for`]) instead of being freed when
    /// the last frame is dropped and allocated again.
    pub(super) fn release(&self, capacity: usize) -> bool {
        self.chunk == READ_CHUNK && !(MIN_ROOM..=2 * READ_CHUNK).contains(&capacity)
    }

    /// Sets the socket's receive low-water mark for the frame being read:
    /// while a partial **oneway or batch request** lacks [`LOW_WATER_MIN`]
    /// bytes or more, the socket reports readable only when that much has
    /// arrived (at most [`LOW_WATER_MAX`]), so a large oneway wakes the
    /// connection task once instead of at every 64 KiB segment the kernel
    /// receives (each wake-up is a context switch, tens of microseconds on
    /// a virtual machine). Twoway requests and replies are read as they
    /// arrive: someone waits for them, and copying a frame while its end is
    /// still being sent is faster than copying it all after (500 KB
    /// requests and replies took 10–20% longer with the mark). Back to 1
    /// byte as soon as the frame is whole, before anything waits for a
    /// small frame. Linux only; a no-op elsewhere, or if the system
    /// refuses.
    pub(super) fn low_water(&mut self, stream: &TcpStream) {
        let want = if self.oneway && self.need >= LOW_WATER_MIN {
            self.need.min(LOW_WATER_MAX)
        } else {
            1
        };
        if want != self.low_water && set_receive_low_water(stream, want).is_ok() {
            self.low_water = want;
        }
    }

    /// While a caller polls the socket for its reply (`caller_spin.rs`),
    /// `on`: the low-water mark goes up to [`QUIET_LOW_WATER`], so that
    /// the reply's arrival does not wake the I/O driver (the caller reads
    /// it itself); `off`: back to the mark the reads want. Lowering the
    /// mark signals the data already there at once, so nothing is missed.
    pub(super) fn quiet(&self, stream: &TcpStream, on: bool) {
        let want = if on {
            QUIET_LOW_WATER.max(self.low_water)
        } else {
            self.low_water
        };
        let _ = set_receive_low_water(stream, want);
    }

    /// Records a read of a stream transport (`filled`: it filled the room).
    pub(super) fn stream_read(&mut self, (_, filled): (usize, bool)) {
        self.read(filled);
    }

    /// Records a whole frame of `len` bytes taken from the buffer.
    pub(super) fn frame(&mut self, len: usize) {
        self.frames += 1;
        self.largest = self.largest.max(len);
    }

    /// Adapts the room after the frames of a read were handled.
    pub(super) fn adapt(&mut self) {
        if self.largest > SMALL_FRAME {
            self.chunk = READ_CHUNK;
        } else if self.filled && self.frames > 0 {
            self.chunk = (self.chunk * 4).min(MAX_READ_CHUNK);
        } else if !self.filled {
            self.chunk = (self.chunk / 2).max(READ_CHUNK);
        }
    }

    fn read(&mut self, filled: bool) {
        self.filled = filled;
        self.need = 0;
        self.oneway = false;
        self.frames = 0;
        self.largest = 0;
    }
}

/// Reads what the socket holds into `buf`, through tokio's readiness
/// (`direct == false`) or straight from the socket (`direct == true`, busy
/// polling; readiness is left alone, so a later readiness event costs at
/// most one `EAGAIN` read).
///
/// A connection without a read buffer (a new one, or one whose last frame
/// was big) reads into a small stack buffer first and allocates `buf` only
/// when bytes arrived: tokio reports a new socket readable once before
/// anything came, and most connections of a busy server sit idle, so
/// neither should cost a `READ_CHUNK` allocation. When that probe holds a
/// frame header whose size is acceptable (at most `max` bytes,
/// `Ice.MessageSizeMax`; never when there is no limit), `buf` is sized for
/// the whole frame at once, so a large message is read straight into one
/// buffer.
///
/// Otherwise one read fills `buf`'s spare capacity, first grown (when it
/// is short) to the rest of a partial frame or to the room `size` asks
/// for (see [`ReadSize`]). When it does not fill
/// the spare room the socket is drained, and readiness is cleared right
/// away (through `try_io` reporting `WouldBlock` after the data was taken):
/// this saves the extra `read` returning `EAGAIN` that a plain
/// `try_read_buf` loop makes per message. Tokio's readiness ticks make this
/// safe: data arriving after our read sets readiness again. In the middle
/// of a large frame the sender is usually still writing, so readiness is
/// kept and the next pass reads again before the task sleeps.
pub(super) fn read(
    stream: &TcpStream,
    buf: &mut BytesMut,
    size: &mut ReadSize,
    max: usize,
    direct: bool,
) -> io::Result<usize> {
    if buf.capacity() == 0 {
        let mut probe = [0u8; MIN_ROOM];
        let n = recv(stream, direct, || {
            let n = socket2::SockRef::from(stream).recv(as_uninit(&mut probe))?;
            Ok((n, n > 0 && n < MIN_ROOM))
        })?;
        if n > 0 {
            let frame = probe_frame_size(&probe[..n]).filter(|&size| max != 0 && size <= max);
            let room = frame.map_or(0, |frame| frame.saturating_add(READ_SLACK));
            buf.reserve(room.max(size.chunk()));
            buf.extend_from_slice(&probe[..n]);
        }
        size.read(false);
        return Ok(n);
    }
    // An empty buffer reads into what room it has left (a frame's slack)
    // first, like a probe: the frame found there sizes the room. Growing
    // it first (taking back a large frame's whole buffer) made 500 KB
    // requests 10–40% slower here, read in more pieces.
    let want = if buf.is_empty() {
        MIN_ROOM
    } else {
        size.need.saturating_add(READ_SLACK)
    };
    if buf.capacity() - buf.len() < want {
        buf.reserve(size.room_for(buf.len()));
    }
    let mut filled = false;
    let low_water = size.low_water;
    let n = recv(stream, direct, || {
        let spare = buf.spare_capacity_mut();
        let room = spare.len();
        let n = socket2::SockRef::from(stream).recv(spare)?;
        // SAFETY: `recv` initialised the first `n` bytes of the spare
        // capacity.
        unsafe { buf.set_len(buf.len() + n) };
        filled = n == room;
        // In the middle of a large frame the task reads again before
        // sleeping, unless the low-water mark makes the kernel wake it.
        let waits_for_more = mid_frame(buf) && low_water == 1;
        Ok((n, n > 0 && n < room && !waits_for_more))
    })?;
    size.read(filled);
    Ok(n)
}

/// `floe_wire::protocol::check` that keeps the header it parsed (the one
/// frame check of the task and of a caller reading its reply): the header
/// of the whole frame at the start of `buf`, or how many more bytes it
/// needs (`Err`).
pub(super) fn whole_frame(
    buf: &[u8],
    max: usize,
) -> floe_wire::Result<std::result::Result<Header, usize>> {
    if buf.len() < HEADER_SIZE {
        return Ok(Err(HEADER_SIZE - buf.len()));
    }
    let header = Header::parse(buf, max)?;
    Ok(if buf.len() < header.size {
        Err(header.size - buf.len())
    } else {
        Ok(header)
    })
}

/// Makes room in `buf` for the next read of a stream transport, sized as
/// [`read`] sizes a socket's (the rest of a partial frame, or the read
/// room [`ReadSize`] asks for).
pub(super) fn reserve_stream_room(buf: &mut BytesMut, size: &ReadSize) {
    let want = if buf.is_empty() {
        MIN_ROOM
    } else {
        size.need.saturating_add(READ_SLACK)
    };
    if buf.capacity() - buf.len() < want {
        buf.reserve(size.room_for(buf.len()).max(MIN_ROOM));
    }
}

/// Runs `f` (one `recv`, returning the byte count and whether the socket
/// is drained), inside `try_io` unless `direct`.
fn recv(
    stream: &TcpStream,
    direct: bool,
    mut f: impl FnMut() -> io::Result<(usize, bool)>,
) -> io::Result<usize> {
    if direct {
        return f().map(|(n, _)| n);
    }
    let mut got: Option<usize> = None;
    let res = stream.try_io(tokio::io::Interest::READABLE, || {
        let (n, drained) = f()?;
        got = Some(n);
        if drained {
            Err(io::ErrorKind::WouldBlock.into())
        } else {
            Ok(n)
        }
    });
    match (res, got) {
        (_, Some(n)) => Ok(n),
        (Err(e), None) => Err(e),
        (Ok(n), None) => Ok(n),
    }
}

/// Busy-polls the socket until `until`: a direct [`read`] per pass, and a
/// `yield_now` between passes so that the runtime runs its other tasks
/// and polls its I/O driver (without blocking) meanwhile. Returns the first
/// read that did not find the socket empty, or `None` when `until` passed
/// or `interrupted` says the connection task has other work.
pub(super) async fn busy_poll(
    stream: &TcpStream,
    buf: &mut BytesMut,
    size: &mut ReadSize,
    max: usize,
    until: Instant,
    interrupted: impl Fn() -> bool,
) -> Option<io::Result<usize>> {
    loop {
        // Poll for a few microseconds before each yield: a yield is a trip
        // through the scheduler (and on the multi-thread runtime may wake
        // an idle worker), while other tasks wait at most that long.
        let now = Instant::now();
        if now >= until {
            return None;
        }
        let slice_end = until.min(now + YIELD_EVERY);
        loop {
            match read(stream, buf, size, max, true) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                r => return Some(r),
            }
            if Instant::now() >= slice_end {
                break;
            }
            std::hint::spin_loop();
        }
        tokio::task::yield_now().await;
        if interrupted() {
            return None;
        }
    }
}

/// Whether `buf` starts with a frame header announcing more than
/// `READ_CHUNK` bytes that have not all arrived.
fn mid_frame(buf: &[u8]) -> bool {
    probe_frame_size(buf).is_some_and(|size| size > READ_CHUNK && buf.len() < size)
}

/// The size field of a protocol 1.0 frame header at the start of `bytes`,
/// if `bytes` holds a whole header with Ice's magic; never trusted beyond
/// sizing a buffer (the caller bounds it, `check` validates the frame).
fn probe_frame_size(bytes: &[u8]) -> Option<usize> {
    if bytes.len() < HEADER_SIZE || bytes[..4] != *b"IceP" {
        return None;
    }
    let size = i32::from_le_bytes([bytes[10], bytes[11], bytes[12], bytes[13]]);
    usize::try_from(size).ok().filter(|&s| s >= HEADER_SIZE)
}

/// Sets `SO_RCVLOWAT` on `stream`.
#[cfg(target_os = "linux")]
fn set_receive_low_water(stream: &TcpStream, bytes: usize) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let value = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    // SAFETY: a valid socket descriptor (borrowed from `stream` for the
    // call), and `value` is a `c_int` that lives across the call, as
    // `SO_RCVLOWAT` expects.
    let r = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVLOWAT,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn set_receive_low_water(_: &TcpStream, _: usize) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Whether `partial`, the start of a frame, is an uncompressed oneway
/// request (request id 0) or a batch request.
fn is_oneway_request(partial: &[u8]) -> bool {
    // Less than a header (usually nothing: the frames before were whole)
    // says nothing, and parsing it would build an error.
    if partial.len() < HEADER_SIZE {
        return false;
    }
    match Header::parse(partial, 0) {
        Ok(h) if h.compression == CompressionStatus::Compressed => false,
        Ok(h) if h.message_type == MessageType::BatchRequest => true,
        Ok(h) if h.message_type == MessageType::Request => {
            partial.get(HEADER_SIZE..HEADER_SIZE + 4) == Some(&[0; 4])
        }
        _ => false,
    }
}

/// `bytes` as the uninitialised buffer `recv` takes.
fn as_uninit(bytes: &mut [u8]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: `MaybeUninit<u8>` has the layout of `u8`, and `recv` only
    // writes initialised bytes, so `bytes` stays initialised.
    unsafe { &mut *(bytes as *mut [u8] as *mut [MaybeUninit<u8>]) }
}

#[cfg(test)]
mod tests;
