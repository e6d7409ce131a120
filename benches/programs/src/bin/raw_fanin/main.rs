//! Raw TCP fan-in baseline for `cargo xtask compare --fanin`: the most a
//! relay process can forward on this machine, to put the brokers' MB/s in
//! scale.
//!
//! - `raw_fanin relay PORT` listens on `127.0.0.1:PORT`. A connection's
//!   first byte says what it is: `S` a subscriber (it replaces the previous
//!   one), `P` a publisher (one blocking thread reads its frames and writes
//!   them, unchanged, to the subscriber under a mutex). A relay parses
//!   nothing but the frame header and copies every byte twice (socket to
//!   buffer, buffer to socket), as a broker must without zero-copy tricks;
//!   there is no queue, no subscriber bookkeeping, no encoding.
//! - `raw_fanin client PORT IMPL WORKLOAD` runs one fan-in workload
//!   (`fanin_{bytes,floats,data}_{size}`: only the size matters here)
//!   through the relay: 4 publisher threads with a connection each and one
//!   subscriber thread counting frames, and prints the JSON line
//!   `fanin_client` prints. Frames are the size of the Ice requests a
//!   publisher sends for the same payload (96 bytes of request head), the
//!   message counts (`BENCH_SCALE`, `FANIN_EVENTS`), warm-up and timing are
//!   `fanin_client`'s (timing from the first timed publish to the last
//!   frame received).
//! - `raw_fanin ice-relay PORT` is the same relay speaking just enough
//!   IceStorm for `fanin_client` (the client both brokers are measured
//!   with), so that the floor is measured with the brokers' own client: on a
//!   2-core machine the client's CPU is part of every column's figure. It
//!   sends Ice's ValidateConnection to every connection it accepts and
//!   answers the client's twoway setup calls itself (`create`, `retrieve`,
//!   `subscribeAndGetPublisher`, `getPublisher`, `destroy`, `ice_ping`):
//!   the publisher proxy it hands out has the subscriber's own identity, so
//!   that oneway requests are forwarded **byte for byte**, with no
//!   rewriting, to the one subscriber connection it opened. See
//!   [`ice_relay::Control`].

mod ice_relay;

use std::io::{IoSlice, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};

use floe_bench::raw::*;

/// Bytes of an Ice oneway request for a fan-in publish, without the payload
/// (header, request id, publisher identity, facet, operation, mode,
/// context, encapsulation header and sequence size).
const REQUEST_HEAD: usize = 96;
/// Publishers per run (as `fanin_client`).
const PUBLISHERS: usize = 4;
/// Warm-up frames per publisher (as `fanin_client`).
const WARM_UP: usize = 5;
/// A run ends when nothing arrived for this long.
const DRAIN: Duration = Duration::from_secs(3);

/// Messages per publisher for a payload size, before `BENCH_SCALE` (the
/// counts of `floe_bench::fanin`).
fn messages_per_publisher(size: usize) -> usize {
    match size {
        s if s <= 10_000 => 10_000,
        s if s <= 100_000 => 1_500,
        _ => 150,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["relay", port] => relay(port),
        ["ice-relay", port] => ice_relay::relay(port, false),
        ["ice-relay-queued", port] => ice_relay::relay(port, true),
        ["client", port, label, workload] => client(port, label, workload),
        _ => Err(
            "usage: raw_fanin relay PORT | raw_fanin ice-relay[-queued] PORT | raw_fanin client PORT IMPL WORKLOAD"
                .into(),
        ),
    };
    if let Err(e) = result {
        eprintln!("raw_fanin: {e}");
        std::process::exit(1);
    }
}

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn connect(port: u16) -> std::io::Result<TcpStream> {
    let s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_nodelay(true)?;
    Ok(s)
}

/// The relay: runs until killed.
fn relay(port: &str) -> Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port.parse::<u16>()?))?;
    let subscriber = Arc::new(Subscriber::direct());
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        let _ = stream.set_nodelay(true);
        let mut role = [0u8];
        match stream.read(&mut role) {
            Ok(1) if role[0] == b'S' => {
                subscriber.set(stream);
            }
            Ok(1) if role[0] == b'P' => {
                let subscriber = subscriber.clone();
                std::thread::spawn(move || forward(stream, &subscriber, None));
            }
            // A readiness probe, or junk: closed.
            _ => {}
        }
    }
    Ok(())
}

/// Answers a frame that is not forwarded, on the publisher's connection;
/// false closes it (see [`forward`]).
pub(crate) type ControlFn<'a> = &'a mut dyn FnMut(&[u8], &mut TcpStream) -> bool;

/// Copies one publisher's frames to the subscriber until the publisher
/// closes; frames arriving while there is no subscriber are dropped.
/// With `control` (the Ice relay), only oneway and batch requests are
/// copied; every other frame goes to `control` (in order), which answers it
/// on the publisher's connection or returns false to close it.
///
/// Each read asks for as much as the buffer holds (64 KiB, or the rest of
/// a larger frame), and all the whole frames it completed go out in one
/// `write`, so small frames are relayed in batches as a broker coalesces
/// them, and a large frame is read into place and written once.
pub(crate) fn forward(
    mut publisher: TcpStream,
    subscriber: &Subscriber,
    mut control: Option<ControlFn<'_>>,
) {
    // Received and not yet relayed.
    let mut buf = BytesMut::with_capacity(64 << 10);
    loop {
        // Room for this read: the rest of a frame above 64 KiB, else the buffer.
        let room = match frame_size(&buf, 0) {
            Some(size) if size > 64 << 10 => {
                if !valid_frame_size(size) {
                    return;
                }
                buf.reserve(size - buf.len());
                size - buf.len()
            }
            _ => {
                if buf.capacity() == buf.len() {
                    buf.reserve(64 << 10);
                }
                buf.capacity() - buf.len()
            }
        };
        match recv(&publisher, &mut buf, room) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        // Whole frames: `start..done` are copied in one write.
        let (mut start, mut done) = (0, 0);
        while let Some(size) = frame_size(&buf, done) {
            // The Ice relay also gets header-only frames (heartbeats,
            // CloseConnection); the raw relay only requests.
            let valid = match control {
                Some(_) => (HEADER_SIZE..=MAX_FRAME).contains(&size),
                None => valid_frame_size(size),
            };
            if !valid {
                return;
            }
            if buf.len() - done < size {
                break;
            }
            let frame = done..done + size;
            done += size;
            if let Some(control) = control.as_mut() {
                if !ice_relay::is_forwarded(&buf[frame.clone()]) {
                    // What precedes the frame goes first; the frame is
                    // then at the front of `buf`.
                    subscriber.send(&mut buf, start..frame.start);
                    if !control(&buf[..size], &mut publisher) {
                        return;
                    }
                    buf.advance(size);
                    (start, done) = (0, 0);
                }
            }
        }
        subscriber.send(&mut buf, start..done);
    }
}

/// Receives at most `room` bytes (within `buf`'s spare capacity) at the
/// end of `buf`, into memory not written before: a frame buffer is filled
/// once, by the kernel, as a broker's is (not zeroed first).
fn recv(stream: &TcpStream, buf: &mut BytesMut, room: usize) -> std::io::Result<usize> {
    let spare = buf.spare_capacity_mut();
    let room = room.min(spare.len());
    let n = socket2::SockRef::from(stream).recv(&mut spare[..room])?;
    // SAFETY: `recv` initialised the first `n` spare bytes.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(n)
}

/// Where a relay sends the frames it copies.
pub(crate) enum Subscriber {
    /// Written from the publisher's thread, under a mutex: a publisher
    /// waits (in `write`) while the subscriber is behind, so nothing queues.
    Direct(Mutex<Option<TcpStream>>),
    /// Queued for a writer thread of the subscriber's own, without bound:
    /// publishers never wait for the subscriber (as a broker must not let
    /// them), and what the subscriber has not taken yet is held in memory.
    Queued(Mutex<Option<mpsc::Sender<Bytes>>>),
}

impl Subscriber {
    /// Frames are written by the publishers' threads.
    pub(crate) fn direct() -> Self {
        Subscriber::Direct(Mutex::new(None))
    }

    /// Frames are queued for a writer thread.
    pub(crate) fn queued() -> Self {
        Subscriber::Queued(Mutex::new(None))
    }

    /// Makes `stream` the subscriber (replacing the previous one).
    pub(crate) fn set(&self, stream: TcpStream) {
        match self {
            Subscriber::Direct(s) => *lock(s) = Some(stream),
            Subscriber::Queued(q) => {
                let (tx, rx) = mpsc::channel();
                // Ends when the subscriber fails or is replaced.
                std::thread::spawn(move || write_queued(stream, &rx));
                *lock(q) = Some(tx);
            }
        }
    }

    /// Sends the whole frames `buf[frames]` to the subscriber, if there is
    /// one (a subscriber that fails is dropped), and removes `..frames.end`
    /// from `buf`. Queued frames are split off `buf`, not copied.
    fn send(&self, buf: &mut BytesMut, frames: std::ops::Range<usize>) {
        if frames.is_empty() {
            buf.advance(frames.end);
            return;
        }
        match self {
            Subscriber::Direct(s) => {
                let mut sub = lock(s);
                if let Some(s) = sub.as_mut() {
                    if s.write_all(&buf[frames.clone()]).is_err() {
                        *sub = None;
                    }
                }
                buf.advance(frames.end);
            }
            Subscriber::Queued(q) => {
                buf.advance(frames.start);
                let chunk = buf.split_to(frames.len()).freeze();
                let mut tx = lock(q);
                if tx.as_ref().is_some_and(|tx| tx.send(chunk).is_err()) {
                    *tx = None;
                }
            }
        }
    }
}

/// The writer thread of a queued subscriber: writes what is queued, as
/// many chunks as are waiting (up to 64) in one vectored write.
fn write_queued(mut stream: TcpStream, rx: &mpsc::Receiver<Bytes>) {
    let mut chunks = Vec::with_capacity(64);
    while let Ok(first) = rx.recv() {
        chunks.push(first);
        while chunks.len() < 64 {
            match rx.try_recv() {
                Ok(c) => chunks.push(c),
                Err(_) => break,
            }
        }
        let mut slices: Vec<IoSlice<'_>> = chunks.iter().map(|c| IoSlice::new(c)).collect();
        let mut slices = &mut slices[..];
        while !slices.is_empty() {
            match stream.write_vectored(slices) {
                Ok(0) | Err(_) => return,
                Ok(n) => IoSlice::advance_slices(&mut slices, n),
            }
        }
        chunks.clear();
    }
}

/// Locks `m`, whatever a panicking holder left (the relays' state stays
/// usable: a stream or a sender).
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The subscriber's counters.
struct Received {
    frames: AtomicU64,
    /// When the last frame arrived, in ns since `epoch`.
    last: AtomicU64,
    epoch: Instant,
}

/// Waits until `received` counts `want` frames or nothing arrived for `DRAIN`.
fn wait_for(received: &Received, want: u64) -> u64 {
    let mut last = received.frames.load(Ordering::Relaxed);
    let mut since = Instant::now();
    loop {
        let now = received.frames.load(Ordering::Relaxed);
        if now >= want {
            return now;
        }
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= DRAIN {
            return now;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// One fan-in run through the relay on `port`.
fn client(port: &str, label: &str, workload: &str) -> Result<()> {
    let port: u16 = port.parse()?;
    let size: usize = workload
        .strip_prefix("fanin_")
        .and_then(|w| w.rsplit_once('_'))
        .and_then(|(_, s)| s.parse().ok())
        .ok_or_else(|| format!("unknown workload `{workload}`"))?;
    let scale: f64 = std::env::var("BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    // `FANIN_EVENTS` (per publisher, not scaled) as `fanin_client`.
    let per_publisher = match std::env::var("FANIN_EVENTS") {
        Ok(n) => n
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("FANIN_EVENTS must be a count ≥ 1, not `{n}`"))?,
        Err(_) => ((messages_per_publisher(size) as f64 * scale).round() as usize).max(1),
    };

    let received = Arc::new(Received {
        frames: AtomicU64::new(0),
        last: AtomicU64::new(0),
        epoch: Instant::now(),
    });
    let mut sub = connect(port)?;
    sub.write_all(b"S")?;
    let counter = received.clone();
    let sub_thread = std::thread::spawn(move || {
        let mut reader = FrameReader::new(64 << 10);
        while let Ok(frame) = reader.next(&mut sub) {
            std::hint::black_box(frame);
            counter.frames.fetch_add(1, Ordering::Relaxed);
            let ns = counter.epoch.elapsed().as_nanos() as u64;
            counter.last.fetch_max(ns, Ordering::Relaxed);
        }
    });
    let mut pubs = Vec::new();
    for _ in 0..PUBLISHERS {
        let mut p = connect(port)?;
        p.write_all(b"P")?;
        pubs.push(p);
    }
    let message = Arc::new(frame(REQUEST_HEAD + size, 0, OP_SEND, 0));

    for p in &mut pubs {
        for _ in 0..WARM_UP {
            p.write_all(&message)?;
        }
    }
    let warm = (PUBLISHERS * WARM_UP) as u64;
    let got = wait_for(&received, warm);
    if got < warm {
        return Err(format!("warm-up: {got} of {warm} frames arrived").into());
    }
    received.frames.store(0, Ordering::Relaxed);
    let start_ns = received.epoch.elapsed().as_nanos() as u64;
    received.last.store(start_ns, Ordering::Relaxed);
    let threads: Vec<_> = pubs
        .into_iter()
        .map(|mut p| {
            let message = message.clone();
            std::thread::spawn(move || -> std::io::Result<()> {
                for _ in 0..per_publisher {
                    p.write_all(&message)?;
                }
                Ok(())
            })
        })
        .collect();
    for t in threads {
        t.join().map_err(|_| "publisher thread panicked")??;
    }
    let sent = (PUBLISHERS * per_publisher) as u64;
    let got = wait_for(&received, sent);
    let last_ns = received.last.load(Ordering::Relaxed);
    let seconds = Duration::from_nanos(last_ns.saturating_sub(start_ns)).as_secs_f64();
    let mb_s = if seconds > 0.0 {
        (got * size as u64) as f64 / 1e6 / seconds
    } else {
        0.0
    };
    let us = if got > 0 {
        seconds * 1e6 / got as f64
    } else {
        0.0
    };
    println!(
        "{{\"impl\":\"{label}\",\"workload\":\"{workload}\",\"calls\":{got},\"seconds\":{seconds:.6},\"us_per_call\":{us:.3},\"mbit_s\":{:.3},\"mb_s\":{mb_s:.3},\"sent\":{sent},\"received\":{got},\"lost\":{}}}",
        mb_s * 8.0,
        sent.saturating_sub(got)
    );
    // The relay sees the subscriber close on its next write; the thread
    // ends when the relay drops the connection (or at exit).
    drop(sub_thread);
    Ok(())
}
