//! A TCP relay on 127.0.0.1 that sits between a client and a server, forwards
//! bytes unchanged and records the header of every Ice frame in each direction,
//! so tests can check what went over the wire (compression status, message
//! types, request counts) without trusting either peer. Plain std threads.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// Which way a frame went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Client to server.
    ToServer,
    /// Server to client.
    ToClient,
}

/// The header fields of one frame seen on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameInfo {
    /// Which way it went.
    pub direction: Direction,
    /// Message type (0 request, 1 batch, 2 reply, 3 validate, 4 close).
    pub message_type: u8,
    /// Compression status byte (0, 1, 2).
    pub compression: u8,
    /// Frame size from the header (the compressed size for status 2).
    pub size: u32,
}

/// A running relay. Dropping it stops accepting; open relayed connections end
/// when either side closes.
pub struct Wiretap {
    /// The port clients connect to.
    pub port: u16,
    frames: Arc<Mutex<Vec<FrameInfo>>>,
    stop: Arc<AtomicBool>,
}

impl Wiretap {
    /// Starts relaying a new port on 127.0.0.1 to 127.0.0.1:`target_port`.
    pub fn start(target_port: u16) -> Wiretap {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind wiretap on 127.0.0.1:0");
        let port = listener.local_addr().expect("wiretap local_addr").port();
        listener
            .set_nonblocking(true)
            .expect("nonblocking wiretap listener");
        let frames = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (f, s) = (Arc::clone(&frames), Arc::clone(&stop));
        thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let _ = client.set_nonblocking(false);
                        let Ok(server) = TcpStream::connect(("127.0.0.1", target_port)) else {
                            continue;
                        };
                        relay(client, server, Arc::clone(&f));
                    }
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Wiretap { port, frames, stop }
    }

    /// `tcp -h 127.0.0.1 -p <port>` of the relay.
    pub fn endpoint(&self) -> String {
        format!("tcp -h 127.0.0.1 -p {}", self.port)
    }

    /// Every frame seen so far, in order per direction.
    pub fn frames(&self) -> Vec<FrameInfo> {
        self.frames
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Frames seen in `direction` with compression status `compression`.
    pub fn count(&self, direction: Direction, compression: u8) -> usize {
        self.frames()
            .iter()
            .filter(|f| f.direction == direction && f.compression == compression)
            .count()
    }

    /// Forgets the frames seen so far.
    pub fn clear(&self) {
        self.frames
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

impl Drop for Wiretap {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn relay(client: TcpStream, server: TcpStream, frames: Arc<Mutex<Vec<FrameInfo>>>) {
    let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    let f2 = Arc::clone(&frames);
    thread::spawn(move || pump(client, server, Direction::ToServer, frames));
    thread::spawn(move || pump(s2, c2, Direction::ToClient, f2));
}

/// Copies `from` to `to`, parsing frame headers on the way. Stops parsing (but
/// keeps copying) if the stream stops looking like Ice frames.
fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    direction: Direction,
    frames: Arc<Mutex<Vec<FrameInfo>>>,
) {
    let mut pending: Vec<u8> = Vec::new(); // bytes of the current frame header
    let mut skip: usize = 0; // body bytes of the current frame still to pass
    let mut parsing = true;
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
        let mut data = &buf[..n];
        while parsing && !data.is_empty() {
            if skip > 0 {
                let k = skip.min(data.len());
                skip -= k;
                data = &data[k..];
                continue;
            }
            let k = (14 - pending.len()).min(data.len());
            pending.extend_from_slice(&data[..k]);
            data = &data[k..];
            if pending.len() == 14 {
                if &pending[..4] != b"IceP" {
                    parsing = false;
                    break;
                }
                let size = u32::from_le_bytes([pending[10], pending[11], pending[12], pending[13]]);
                frames
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(FrameInfo {
                        direction,
                        message_type: pending[8],
                        compression: pending[9],
                        size,
                    });
                skip = (size as usize).saturating_sub(14);
                pending.clear();
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}
