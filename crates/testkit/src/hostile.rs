//! Hostile and malformed frames sent over raw TCP (or any byte stream, e.g.
//! TLS: [`run_all_with`]) to a server of the interop suite (identity
//! "test"), with the reaction a real Ice 3.7 server shows (docs/protocol.md §7.3):
//! drop the connection without a reply, or answer status 5. Used against
//! the Ice servers (to check the cases) and against floe.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// What the server must do with a hostile input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reaction {
    /// Close the connection, sending no reply (no bytes at all after validation).
    Close,
    /// Answer request id 1 with this reply status, and keep the connection usable.
    Status(u8),
}

/// One hostile input.
pub struct HostileCase {
    /// Label.
    pub name: &'static str,
    /// Bytes sent right after the server's ValidateConnection.
    pub bytes: Vec<u8>,
    /// The expected reaction.
    pub reaction: Reaction,
}

/// A 14-byte protocol 1.0 header.
pub fn header(message_type: u8, compression: u8, size: i32) -> Vec<u8> {
    let mut h = b"IceP\x01\x00\x01\x00".to_vec();
    h.push(message_type);
    h.push(compression);
    h.extend_from_slice(&size.to_le_bytes());
    h
}

fn string(s: &str) -> Vec<u8> {
    assert!(s.len() < 255, "test strings are short");
    let mut v = vec![s.len() as u8];
    v.extend_from_slice(s.as_bytes());
    v
}

/// The body of a request after its id: identity `name`, no facet, `op`, `mode`,
/// empty context, then `encaps` (a whole encapsulation, header included).
pub fn request_fields(name: &str, op: &str, mode: u8, encaps: &[u8]) -> Vec<u8> {
    let mut b = string(name);
    b.push(0); // category ""
    b.push(0); // no facet
    b.extend(string(op));
    b.push(mode);
    b.push(0); // empty context
    b.extend_from_slice(encaps);
    b
}

/// A whole Request frame with `request_id`.
pub fn request(request_id: i32, name: &str, op: &str, mode: u8, encaps: &[u8]) -> Vec<u8> {
    let body = request_fields(name, op, mode, encaps);
    let mut f = header(0, 0, (14 + 4 + body.len()) as i32);
    f.extend_from_slice(&request_id.to_le_bytes());
    f.extend(body);
    f
}

/// An encapsulation 1.1 around `data`.
pub fn encaps(data: &[u8]) -> Vec<u8> {
    let mut e = ((data.len() + 6) as i32).to_le_bytes().to_vec();
    e.extend_from_slice(&[1, 1]);
    e.extend_from_slice(data);
    e
}

/// `ice_ping` on "test" as request `id` (mode Nonmutating).
pub fn ping(id: i32) -> Vec<u8> {
    request(id, "test", "ice_ping", 1, &encaps(&[]))
}

/// The hostile inputs and the reaction of a real Ice 3.7 server to each.
pub fn cases() -> Vec<HostileCase> {
    let mut out = Vec::new();
    let mut add = |name, bytes, reaction| {
        out.push(HostileCase {
            name,
            bytes,
            reaction,
        })
    };

    let mut bad_magic = ping(1);
    bad_magic[0] = b'X';
    add("bad_magic", bad_magic, Reaction::Close);

    let mut proto = ping(1);
    proto[5] = 1;
    add("protocol_1_1", proto, Reaction::Close);

    let mut enc = ping(1);
    enc[7] = 1;
    add("header_encoding_1_1", enc, Reaction::Close);

    let mut kind = ping(1);
    kind[8] = 9;
    add("unknown_message_type", kind, Reaction::Close);

    add("size_below_header", header(0, 0, 10), Reaction::Close);
    add("size_negative", header(0, 0, -5), Reaction::Close);
    add(
        "size_over_limit",
        header(0, 0, 0x7fff_ffff),
        Reaction::Close,
    );

    let mut batch = header(1, 0, 18);
    batch.extend_from_slice(&(-1i32).to_le_bytes());
    add("batch_negative_count", batch, Reaction::Close);

    let mut bz = header(0, 2, 14 + 4 + 8);
    bz.extend_from_slice(&100i32.to_le_bytes());
    bz.extend_from_slice(b"notbzip2");
    add("corrupt_bzip2", bz, Reaction::Close);

    // Identity name claims 200 bytes, the frame ends after 3.
    let mut trunc = header(0, 0, 14 + 4 + 4);
    trunc.extend_from_slice(&1i32.to_le_bytes());
    trunc.extend_from_slice(&[200, b't', b'e', b's']);
    add("truncated_identity", trunc, Reaction::Close);

    // Facet sequence with two elements.
    let mut facets = string("test");
    facets.push(0);
    facets.extend_from_slice(&[2, 1, b'a', 1, b'b']);
    facets.extend(string("ice_ping"));
    facets.extend_from_slice(&[1, 0]);
    facets.extend(encaps(&[]));
    let mut two_facets = header(0, 0, (14 + 4 + facets.len()) as i32);
    two_facets.extend_from_slice(&1i32.to_le_bytes());
    two_facets.extend(facets);
    add("two_facets", two_facets, Reaction::Close);

    // Params encapsulation claims more bytes than the frame has.
    let mut big_encaps = encaps(&[1, 2, 3]);
    big_encaps[..4].copy_from_slice(&1000i32.to_le_bytes());
    add(
        "encaps_past_frame",
        request(1, "test", "opByteSeq", 0, &big_encaps),
        Reaction::Status(5),
    );

    // opByteSeq whose sequence claims 100 bytes but carries 2.
    add(
        "seq_past_encaps",
        request(1, "test", "opByteSeq", 0, &encaps(&[100, 1, 2])),
        Reaction::Status(5),
    );

    // Params encapsulation version 1.2.
    let mut v12 = encaps(&[0]);
    v12[5] = 2;
    add(
        "encaps_version_1_2",
        request(1, "test", "opByteSeq", 0, &v12),
        Reaction::Status(5),
    );

    // A plain operation sent as Idempotent.
    add(
        "wrong_mode",
        request(1, "test", "opByteSeq", 2, &encaps(&[0])),
        Reaction::Status(5),
    );

    // Enumerator 7 is not a Color (opEnums(Color, Sparse, ColorSeq)).
    add(
        "bad_enumerator",
        request(1, "test", "opEnums", 0, &encaps(&[7, 1, 0])),
        Reaction::Status(5),
    );

    out
}

/// Connects to `port`, reads the server's ValidateConnection and returns the stream.
pub fn connect(port: u16) -> Result<TcpStream, String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    let _ = s.set_nodelay(true);
    validate(&mut s)?;
    Ok(s)
}

/// Reads the server's ValidateConnection from a fresh connection.
pub fn validate<S: Read>(s: &mut S) -> Result<(), String> {
    let mut v = [0u8; 14];
    s.read_exact(&mut v)
        .map_err(|e| format!("read ValidateConnection: {e}"))?;
    if v != header(3, 0, 14)[..] {
        return Err(format!("expected ValidateConnection, got {v:02x?}"));
    }
    Ok(())
}

/// Reads one whole frame (header and body).
pub fn read_frame<S: Read>(s: &mut S) -> std::io::Result<Vec<u8>> {
    let mut h = [0u8; 14];
    s.read_exact(&mut h)?;
    let size = i32::from_le_bytes([h[10], h[11], h[12], h[13]]);
    if !(14..=64 * 1024 * 1024).contains(&size) {
        return Err(std::io::Error::new(
            ErrorKind::InvalidData,
            format!("frame size {size}"),
        ));
    }
    let mut f = h.to_vec();
    f.resize(size as usize, 0);
    s.read_exact(&mut f[14..])?;
    Ok(f)
}

/// Sends one case on a fresh connection and checks the reaction.
pub fn run_case(port: u16, case: &HostileCase) -> Result<(), String> {
    run_case_on(connect(port)?, case)
}

/// Sends one case on the validated connection `s` and checks the reaction.
pub fn run_case_on<S: Read + Write>(mut s: S, case: &HostileCase) -> Result<(), String> {
    s.write_all(&case.bytes).map_err(|e| format!("send: {e}"))?;
    match case.reaction {
        Reaction::Close => expect_closed(&mut s),
        Reaction::Status(want) => {
            let reply = read_reply(&mut s)?;
            if reply.1 != want {
                return Err(format!("reply status {}, want {want}", reply.1));
            }
            // The connection must still work.
            s.write_all(&ping(2))
                .map_err(|e| format!("send ping after status {want}: {e}"))?;
            let (id, status) = read_reply(&mut s)?;
            if (id, status) != (2, 0) {
                return Err(format!("ping after status {want}: id {id} status {status}"));
            }
            Ok(())
        }
    }
}

/// Reads frames until a Reply, skipping ValidateConnection heartbeats; returns
/// (request id, status).
pub fn read_reply<S: Read>(s: &mut S) -> Result<(i32, u8), String> {
    loop {
        let f = read_frame(s).map_err(|e| format!("waiting for a reply: {e}"))?;
        match f[8] {
            2 if f.len() >= 19 => {
                return Ok((i32::from_le_bytes([f[14], f[15], f[16], f[17]]), f[18]))
            }
            3 => continue,
            t => return Err(format!("expected a Reply, got message type {t}")),
        }
    }
}

/// Requires the peer to close without sending a reply (heartbeats and
/// CloseConnection are tolerated) within 5 s.
pub fn expect_closed<S: Read>(s: &mut S) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if Instant::now() > deadline {
            return Err("connection still open after 5 s".into());
        }
        match read_frame(s) {
            Ok(f) if f[8] == 3 || f[8] == 4 => continue,
            Ok(f) => {
                return Err(format!(
                    "expected the connection to close, got message type {}",
                    f[8]
                ))
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::TimedOut => {
                return Err("connection still open after 5 s".into())
            }
            Err(_) => return Ok(()), // EOF or reset
        }
    }
}

/// Runs every case once; returns `name: problem` for each that misbehaved.
pub fn run_all(port: u16) -> Vec<String> {
    run_all_with(|| connect(port))
}

/// [`run_all`] over connections made (and validated) by `connect`.
pub fn run_all_with<S: Read + Write>(connect: impl Fn() -> Result<S, String>) -> Vec<String> {
    cases()
        .iter()
        .filter_map(|c| {
            connect()
                .and_then(|s| run_case_on(s, c))
                .err()
                .map(|e| format!("{}: {e}", c.name))
        })
        .collect()
}

/// Sends `sleepMs(ms)` on a raw connection and returns the times (seconds after
/// sending) at which heartbeats (ValidateConnection) arrived before the reply.
pub fn heartbeats_during_call(port: u16, ms: i32) -> Result<Vec<f64>, String> {
    let mut s = connect(port)?;
    let start = Instant::now();
    s.write_all(&request(
        1,
        "test",
        "sleepMs",
        0,
        &encaps(&ms.to_le_bytes()),
    ))
    .map_err(|e| format!("send: {e}"))?;
    let mut beats = Vec::new();
    loop {
        let f = read_frame(&mut s).map_err(|e| format!("waiting for the reply: {e}"))?;
        match f[8] {
            3 => beats.push(start.elapsed().as_secs_f64()),
            2 => return Ok(beats),
            t => return Err(format!("unexpected message type {t}")),
        }
    }
}

/// Checks heartbeat timing as an Ice peer with ACM Timeout=1 s and Close=
/// OnInvocation needs it: the first heartbeat and every gap well under 1 s.
pub fn check_heartbeat_timing(beats: &[f64]) -> Result<(), String> {
    let mut last = 0.0;
    for &t in beats {
        if t - last > 0.8 {
            return Err(format!(
                "heartbeat gap of {:.2}s (beats at {beats:.2?})",
                t - last
            ));
        }
        last = t;
    }
    if beats.is_empty() || 2.5 - last > 0.8 {
        return Err(format!(
            "no heartbeat in the last {:.2}s of the call (beats at {beats:.2?})",
            2.5 - last
        ));
    }
    Ok(())
}
