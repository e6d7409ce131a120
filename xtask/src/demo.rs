//! `cargo xtask demo`: the tour of `examples/demo.rs` (hello, oneway and
//! batch timings, floe-storm as a separate broker process, a file
//! transfer), built with `--release` together with the `floe-storm`
//! binary it starts; else a floe-wire request decoded and answered by a
//! real Ice 3.7 server.
//!
//! The fallback starts `demo/demo_peer.py` with `/usr/bin/python3` (Ice's
//! Python mapping, i.e. Ice's C++ core), builds a `greet("floe", 3)` request
//! frame with [`floe_wire::Encoder`], sends it over loopback TCP, prints what
//! Ice decoded, and decodes Ice's reply with [`floe_wire::Decoder`].

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use floe_wire::{Context, Decoder, Encoder, Identity, ENCODING_1_1};

use crate::{cargo, run_checked, workspace_root, DynError};

/// Protocol 1.0 header fields after the magic: protocol 1.0, encoding 1.0.
const HEADER_VERSIONS: [u8; 4] = [1, 0, 1, 0];
/// Message type of a request.
const REQUEST: u8 = 0;
/// Message type of a reply.
const REPLY: u8 = 2;
/// A CloseConnection frame exactly as Ice sends it.
const CLOSE_CONNECTION: [u8; 14] = [0x49, 0x63, 0x65, 0x50, 1, 0, 1, 0, 4, 1, 14, 0, 0, 0];

/// Runs the demo.
pub fn run() -> Result<(), DynError> {
    if workspace_root().join("examples/demo.rs").is_file() {
        // The tour finds the broker next to itself in target/release.
        run_checked(cargo().args([
            "build",
            "--release",
            "-p",
            "floe-storm",
            "--bin",
            "floe-storm",
        ]))?;
        return run_checked(cargo().args(["run", "--release", "--example", "demo"]));
    }
    println!("xtask: examples/demo.rs not found; running the floe-wire vs real Ice demo");
    fallback()
}

/// Kills and reaps the Ice server when the demo ends, however it ends.
struct PeerGuard(Child);

impl Drop for PeerGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn fallback() -> Result<(), DynError> {
    let script = workspace_root().join("xtask/demo/demo_peer.py");
    let child = Command::new("/usr/bin/python3")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!(
                "cannot start /usr/bin/python3 {}: {e} (run `cargo xtask test` once to install Ice)",
                script.display()
            )
        })?;
    let mut peer = PeerGuard(child);
    let stdout = peer
        .0
        .stdout
        .take()
        .ok_or("no stdout from the Ice server")?;
    let mut lines = BufReader::new(stdout).lines();
    let port: u16 = loop {
        let line = lines.next().ok_or(
            "the Ice server exited before printing its port (is python3-zeroc-ice installed?)",
        )??;
        if let Some(p) = line.strip_prefix("PORT ") {
            break p.trim().parse()?;
        }
        println!("{line}");
    };
    // Echo the server's lines (what Ice decoded) as they come.
    let echo = std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            println!("{line}");
        }
    });

    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let validate = read_frame(&mut stream)?;
    println!("ice:  ValidateConnection {}", hex::encode(&validate));

    let request = encode_request(1, &Identity::from_name("greeter"), "greet", "floe", 3);
    println!(
        "floe: request  greeter.greet(\"floe\", 3) = {}",
        hex::encode(&request)
    );
    stream.write_all(&request)?;

    let reply = read_frame(&mut stream)?;
    println!("ice:  reply    {}", hex::encode(&reply));
    let (request_id, greeting) = decode_reply(reply)?;
    println!("floe: decoded reply id={request_id} status=Ok return={greeting:?}");

    stream.write_all(&CLOSE_CONNECTION)?;
    drop(stream);
    drop(peer.0.stdin.take()); // the server exits when stdin closes
    let _ = peer.0.wait();
    let _ = echo.join();
    Ok(())
}

/// Builds a complete twoway request frame for `op(name: string, times: int)`.
fn encode_request(id: i32, identity: &Identity, op: &str, name: &str, times: i32) -> Bytes {
    let mut enc = Encoder::new();
    enc.write_raw(b"IceP");
    enc.write_raw(&HEADER_VERSIONS);
    enc.write_u8(REQUEST);
    enc.write_u8(0); // not compressed
    enc.write_i32(0); // size, patched below
    enc.write_i32(id);
    enc.write(identity);
    enc.write_size(0); // facet: none
    enc.write_string(op);
    enc.write_u8(0); // mode Normal
    enc.write(&Context::new());
    let mark = enc.start_encapsulation(ENCODING_1_1);
    enc.write_string(name);
    enc.write_i32(times);
    enc.end_encapsulation(mark);
    let size = enc.len() as i32;
    enc.buffer_mut()[10..14].copy_from_slice(&size.to_le_bytes());
    enc.finish()
}

/// Decodes a reply frame with status Ok and a string result.
fn decode_reply(frame: Bytes) -> Result<(i32, String), DynError> {
    let mut dec = Decoder::new(frame);
    let head = dec.read_bytes(14)?;
    if &head[..4] != b"IceP" || head[8] != REPLY {
        return Err(format!("not a reply frame: {}", hex::encode(&head)).into());
    }
    let request_id = dec.read_i32()?;
    let status = dec.read_u8()?;
    if status != 0 {
        return Err(format!("reply status {status}, expected 0 (Ok)").into());
    }
    let mut params = Decoder::from_encapsulation(dec.read_encapsulation()?)?;
    let greeting = params.read_string()?;
    params.finish_encapsulation()?;
    Ok((request_id, greeting))
}

/// Reads one whole frame (header size field tells its length).
fn read_frame(stream: &mut TcpStream) -> Result<Bytes, DynError> {
    let mut head = [0u8; 14];
    stream.read_exact(&mut head)?;
    let size = i32::from_le_bytes([head[10], head[11], head[12], head[13]]);
    if !(14..=1 << 20).contains(&size) {
        return Err(format!("bad frame size {size}").into());
    }
    let mut frame = head.to_vec();
    frame.resize(size as usize, 0);
    stream.read_exact(&mut frame[14..])?;
    Ok(Bytes::from(frame))
}
