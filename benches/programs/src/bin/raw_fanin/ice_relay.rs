//! `raw_fanin ice-relay PORT`: the raw relay with just enough IceStorm for
//! `fanin_client` (see the crate documentation). Publishers' oneway
//! requests are copied byte for byte by [`super::forward`]; the few twoway
//! calls the client makes to set a run up are answered by [`Control`].

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use floe::wire::protocol::{
    CompressionStatus, Message, Reply, ReplyBody, RequestFailed, HEADER_SIZE, VALIDATE_CONNECTION,
};
use floe::wire::{
    Decoder, Encapsulation, Encoder, EndpointData, Identity, ProxyData, TcpEndpoint, ENCODING_1_1,
};

use super::{lock, Result};

/// Whether a whole frame is copied to the subscriber: a oneway request
/// (request id 0) or a batch. Everything else is for [`Control`].
pub fn is_forwarded(frame: &[u8]) -> bool {
    match frame.get(8) {
        Some(0) => frame.get(14..18) == Some(&[0, 0, 0, 0]),
        Some(1) => true,
        _ => false,
    }
}

/// What the relay's connections share.
struct Shared {
    port: u16,
    /// Where forwarded frames go: the subscriber's connection, opened by
    /// `subscribeAndGetPublisher`.
    subscriber: super::Subscriber,
    /// The subscriber's identity: the publisher proxy's identity.
    identity: Mutex<Option<Identity>>,
}

/// The relay: runs until killed. With `queued`, frames are queued for a
/// writer thread instead of written by the publishers' threads.
pub fn relay(port: &str, queued: bool) -> Result<()> {
    let port: u16 = port.parse()?;
    let listener = TcpListener::bind(("127.0.0.1", port))?;
    let shared = Arc::new(Shared {
        port,
        subscriber: if queued {
            super::Subscriber::queued()
        } else {
            super::Subscriber::direct()
        },
        identity: Mutex::new(None),
    });
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        let _ = stream.set_nodelay(true);
        if stream.write_all(&VALIDATE_CONNECTION).is_err() {
            continue;
        }
        let shared = shared.clone();
        std::thread::spawn(move || {
            let mut control = Control { shared: &shared };
            let mut answer = |frame: &[u8], peer: &mut TcpStream| control.answer(frame, peer);
            super::forward(stream, &shared.subscriber, Some(&mut answer));
        });
    }
    Ok(())
}

/// Answers the frames that are not forwarded: the setup calls, pings,
/// heartbeats (ignored) and CloseConnection (the connection ends).
struct Control<'a> {
    shared: &'a Shared,
}

impl Control<'_> {
    /// Handles one frame from `peer`; false to close the connection.
    fn answer(&mut self, frame: &[u8], peer: &mut TcpStream) -> bool {
        let request = match Message::parse(Bytes::copy_from_slice(frame)) {
            Ok((_, Message::Request(r))) => r,
            Ok((_, Message::ValidateConnection)) => return true,
            Ok(_) => return false,
            Err(e) => {
                eprintln!("raw_fanin ice-relay: {e}");
                return false;
            }
        };
        let body = match self.call(&request.operation, request.params) {
            Ok(Some(results)) => ReplyBody::Ok(results),
            Ok(None) => ReplyBody::OperationNotExist(RequestFailed {
                identity: request.identity,
                facet: request.facet,
                operation: request.operation,
            }),
            Err(e) => ReplyBody::UnknownLocalException(e.to_string()),
        };
        let mut out = BytesMut::new();
        Reply {
            request_id: request.request_id,
            body,
        }
        .encode(&mut out, CompressionStatus::NotSupported);
        peer.write_all(&out).is_ok()
    }

    /// Runs `operation`: its results, or `None` for an operation the relay
    /// does not have.
    fn call(&mut self, operation: &str, params: Encapsulation) -> Result<Option<Encapsulation>> {
        let mut results = Encoder::new();
        match operation {
            "ice_ping" | "destroy" => {}
            "create" | "retrieve" => {
                results.write(&Some(self.proxy(Identity::from_name("topic"))));
            }
            "subscribeAndGetPublisher" => {
                let mut dec = Decoder::from_encapsulation(params)?;
                // The QoS dictionary (string to string) is not used.
                for _ in 0..dec.read_size()? {
                    dec.read_string()?;
                    dec.read_string()?;
                }
                let subscriber: Option<ProxyData> = dec.read()?;
                let subscriber = subscriber.ok_or("null subscriber")?;
                let connection = connect(&subscriber)?;
                self.shared.subscriber.set(connection);
                *lock(&self.shared.identity) = Some(subscriber.identity.clone());
                results.write(&Some(self.proxy(subscriber.identity)));
            }
            "getPublisher" => {
                let identity = lock(&self.shared.identity).clone().ok_or("no subscriber")?;
                results.write(&Some(self.proxy(identity)));
            }
            _ => return Ok(None),
        }
        Ok(Some(Encapsulation {
            encoding: ENCODING_1_1,
            data: results.finish(),
        }))
    }

    /// A twoway proxy for `identity` on this relay.
    fn proxy(&self, identity: Identity) -> ProxyData {
        let mut proxy = ProxyData::new(identity);
        proxy.endpoints = vec![EndpointData::Tcp(TcpEndpoint::new(
            "127.0.0.1",
            i32::from(self.shared.port),
        ))];
        proxy
    }
}

/// Opens the connection to a subscriber (its first TCP endpoint) and reads
/// its ValidateConnection.
fn connect(subscriber: &ProxyData) -> Result<TcpStream> {
    let tcp = subscriber
        .endpoints
        .iter()
        .find_map(EndpointData::tcp)
        .ok_or("subscriber has no tcp endpoint")?;
    let port = u16::try_from(tcp.port)?;
    let mut s = TcpStream::connect((tcp.host.as_str(), port))?;
    s.set_nodelay(true)?;
    let mut validate = [0u8; HEADER_SIZE];
    s.read_exact(&mut validate)?;
    if validate[8] != 3 {
        return Err("subscriber did not validate the connection".into());
    }
    watch(&s)?;
    Ok(s)
}

/// Reads what the subscriber sends on its connection (heartbeats, and its
/// CloseConnection when its adapter shuts down) on a thread of its own, and
/// closes the connection when the subscriber sends CloseConnection or
/// closes its end: its graceful close then ends at once instead of waiting
/// out its close timeout (60 s for an Ice C++ adapter) for a relay that
/// never reads.
fn watch(subscriber: &TcpStream) -> Result<()> {
    let mut reader = subscriber.try_clone()?;
    std::thread::spawn(move || {
        let mut header = [0u8; HEADER_SIZE];
        // Message type 4 is CloseConnection; other messages are skipped.
        while reader.read_exact(&mut header).is_ok() && header[8] != 4 {
            let size = u32::from_le_bytes([header[10], header[11], header[12], header[13]]);
            let body = u64::from(size).saturating_sub(HEADER_SIZE as u64);
            let skipped = std::io::copy(&mut (&reader).take(body), &mut std::io::sink());
            if !skipped.is_ok_and(|n| n == body) {
                break;
            }
        }
        let _ = reader.shutdown(Shutdown::Both);
    });
    Ok(())
}
