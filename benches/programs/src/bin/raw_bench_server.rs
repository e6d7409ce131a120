//! Raw TCP baseline server: `raw_bench_server PORT [--spin|--tokio]`. Listens on
//! `127.0.0.1:PORT`, prints `Bench ready`, and answers the frames of
//! [`floe_bench::raw`] with one blocking thread per connection; exits on a shutdown
//! frame. It parses nothing but the header: the floor for an RPC runtime.
//! With `--spin` its sockets are non-blocking and read in a busy loop, with
//! `--tokio` each connection's thread waits through a tokio reactor (see
//! [`floe_bench::raw::Mode`]).

use std::io::Write;
use std::net::{TcpListener, TcpStream};

use floe_bench::raw::*;

fn serve(stream: TcpStream, mode: Mode) -> std::io::Result<()> {
    let mut stream = Stream::new(stream, mode)?;
    let mut reader = FrameReader::new(BYTESEQ_SIZE + SEND_HEAD);
    let mut empty_reply = frame(EMPTY_REPLY, 2, 0, 0);
    // The last recvByteSeq reply built, reused while the size asked is the same.
    let mut recv_reply: Vec<u8> = Vec::new();
    loop {
        let buf = match reader.next(&mut stream) {
            Ok(frame) => frame,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        };
        let size = buf.len();
        let request_id = [buf[14], buf[15], buf[16], buf[17]];
        match buf[9] {
            OP_SHUTDOWN => {
                empty_reply[14..18].copy_from_slice(&request_id);
                stream.write_all(&empty_reply)?;
                std::process::exit(0);
            }
            OP_RECV => {
                let n = u32::from_le_bytes([
                    buf[size - 4],
                    buf[size - 3],
                    buf[size - 2],
                    buf[size - 1],
                ]) as usize;
                let n = n.min(64 << 20);
                if recv_reply.len() != RECV_REPLY_HEAD + n {
                    recv_reply = frame(RECV_REPLY_HEAD + n, 2, 0, 0);
                    for (i, b) in recv_reply[RECV_REPLY_HEAD..].iter_mut().enumerate() {
                        *b = i as u8;
                    }
                }
                recv_reply[14..18].copy_from_slice(&request_id);
                stream.write_all(&recv_reply)?;
            }
            _ => {
                if request_id != [0; 4] {
                    empty_reply[14..18].copy_from_slice(&request_id);
                    stream.write_all(&empty_reply)?;
                }
            }
        }
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mode = Mode::take(&mut args);
    let Some(port) = args.first().and_then(|p| p.parse::<u16>().ok()) else {
        eprintln!("usage: raw_bench_server PORT [--spin|--tokio]");
        std::process::exit(2)
    };
    let listener = match TcpListener::bind(("127.0.0.1", port)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("raw_bench_server: cannot listen on 127.0.0.1:{port}: {e}");
            std::process::exit(1)
        }
    };
    println!("Bench ready");
    let _ = std::io::stdout().flush();
    for stream in listener.incoming() {
        match stream {
            Ok(s) => {
                std::thread::spawn(move || {
                    if let Err(e) = serve(s, mode) {
                        eprintln!("raw_bench_server: connection: {e}");
                    }
                });
            }
            Err(e) => eprintln!("raw_bench_server: accept: {e}"),
        }
    }
}
