//! A byte stream sent to a floe server over TCP, as a hostile client
//! would: the server (an `ObjectAdapter` with the generated `Fuzz::Echo`
//! dispatcher as `echo`, the default `Ice.MessageSizeMax`) reads it
//! through its connection task, dispatches what it can and answers, then
//! sees the end of the stream and closes.
//!
//! A panic anywhere in the server, in a connection task or in a dispatch,
//! aborts the process (libFuzzer's panic hook), so it is found even though
//! tokio would catch it.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::OnceLock;
use std::time::Duration;

use floe::codegen::{ClassRef, Current, DispatchError};
use floe::runtime::{Communicator, Properties};
use floe::Identity;

use crate::fuzz_gen::fuzz;

/// How long a stream may take to be answered and closed; past it the
/// input is abandoned (the server may be busy with the other inputs).
const PATIENCE: Duration = Duration::from_secs(5);

struct Echo;

type Shape = Option<ClassRef<fuzz::Shape>>;

impl fuzz::Echo for Echo {
    async fn echo_shape(&self, s: Shape, _: &Current) -> Result<Shape, DispatchError> {
        Ok(s)
    }
    async fn echo_bag(
        &self,
        b: Option<ClassRef<fuzz::Bag>>,
        _: &Current,
    ) -> Result<Option<ClassRef<fuzz::Bag>>, DispatchError> {
        Ok(b)
    }
    async fn echo_node(
        &self,
        n: Option<ClassRef<fuzz::Node>>,
        _: &Current,
    ) -> Result<Option<ClassRef<fuzz::Node>>, DispatchError> {
        Ok(n)
    }
    async fn echo_shapes(
        &self,
        s: Vec<Shape>,
        _: Shape,
        _: &Current,
    ) -> Result<Vec<Shape>, DispatchError> {
        Ok(s)
    }
    async fn fail(&self, kind: i32, _: &Current) -> Result<(), DispatchError> {
        Err(fuzz::BaseError {
            reason: kind.to_string(),
        }
        .into())
    }
    async fn echo_dict(
        &self,
        d: std::collections::BTreeMap<String, Shape>,
        _: &Current,
    ) -> Result<std::collections::BTreeMap<String, Shape>, DispatchError> {
        Ok(d)
    }
    async fn put_points(
        &self,
        _: Vec<fuzz::Point>,
        _: bytes::Bytes,
        _: &Current,
    ) -> Result<(), DispatchError> {
        Ok(())
    }
    async fn echo_bytes(
        &self,
        b: bytes::Bytes,
        _: &Current,
    ) -> Result<bytes::Bytes, DispatchError> {
        Ok(b)
    }
}

/// The server's port; the server runs on its own runtime for the life of
/// the process.
fn server_port() -> u16 {
    static PORT: OnceLock<u16> = OnceLock::new();
    *PORT.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a tokio runtime");
            runtime.block_on(async move {
                let props = Properties::new();
                props.set("Ice.Warn.Connections", "0");
                let communicator = Communicator::with_properties(props);
                let adapter = communicator
                    .create_object_adapter_with_endpoints("Fuzz", "tcp -h 127.0.0.1 -p 0")
                    .await
                    .expect("an object adapter on 127.0.0.1");
                adapter
                    .add(Identity::from_name("echo"), fuzz::EchoDispatcher::new(Echo))
                    .expect("add the servant");
                adapter.activate();
                let _ = tx.send(adapter.endpoints()[0].port);
                std::future::pending::<()>().await;
            });
        });
        rx.recv().expect("the server's port")
    })
}

/// Sends `data` after the server's ValidateConnection, ends the stream and
/// reads the answers until the server closes.
pub fn run(data: &[u8]) {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", server_port())) else {
        return;
    };
    let _ = stream.set_read_timeout(Some(PATIENCE));
    let _ = stream.set_write_timeout(Some(PATIENCE));
    // Closed with a reset, not a FIN: no TIME_WAIT piles up over millions
    // of connections.
    let _ = socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO));
    let mut validate = [0u8; 14];
    if stream.read_exact(&mut validate).is_err() {
        return;
    }
    // The server may answer while we write: read on another thread.
    let Ok(mut reader) = stream.try_clone() else {
        return;
    };
    let answers = std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = reader.read_to_end(&mut sink);
    });
    let _ = stream.write_all(data);
    let _ = stream.shutdown(Shutdown::Write);
    let _ = answers.join();
}
