//! [`SocketBuffers`]: Ice's `Ice.TCP.RcvSize` and `Ice.TCP.SndSize`, the
//! kernel buffer sizes of every TCP socket a communicator connects or an
//! object adapter accepts (TLS and WebSocket connections included: they
//! run over the same sockets).
//!
//! As in Ice, a size is in bytes, unset (or 0 or less) leaves the
//! operating system's default (on Linux, buffers that grow with the
//! traffic), and the kernel may adjust what is asked: when it grants less
//! than asked, a warning names both sizes, and the connection goes on with
//! what it got. Linux reports twice the size asked (its bookkeeping share),
//! so only a size capped by `net.core.rmem_max` / `wmem_max` warns there.

use socket2::SockRef;
use tokio::net::TcpStream;

use crate::properties::Properties;

/// The kernel buffer sizes asked for a connection's TCP socket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SocketBuffers {
    /// `Ice.TCP.RcvSize` in bytes (`None`: the OS default).
    pub(crate) receive: Option<usize>,
    /// `Ice.TCP.SndSize` in bytes (`None`: the OS default).
    pub(crate) send: Option<usize>,
}

impl SocketBuffers {
    /// `Ice.TCP.RcvSize` and `Ice.TCP.SndSize` from `props`.
    pub(crate) fn from_properties(props: &Properties) -> Self {
        let size = |key: &str| {
            let v = props.get_int_or(key, 0);
            (v > 0).then(|| usize::try_from(v).unwrap_or(usize::MAX))
        };
        SocketBuffers {
            receive: size("Ice.TCP.RcvSize"),
            send: size("Ice.TCP.SndSize"),
        }
    }

    /// Sets the sizes asked on `stream`'s socket. A size the kernel refuses
    /// or reduces is warned about, never an error: the connection works
    /// with the default buffers too.
    pub(crate) fn apply(&self, stream: &TcpStream) {
        if self.receive.is_none() && self.send.is_none() {
            return;
        }
        let socket = SockRef::from(stream);
        if let Some(asked) = self.receive {
            let set = socket.set_recv_buffer_size(asked);
            warn_if_reduced(
                "receive",
                asked,
                set.and_then(|_| socket.recv_buffer_size()),
            );
        }
        if let Some(asked) = self.send {
            let set = socket.set_send_buffer_size(asked);
            warn_if_reduced("send", asked, set.and_then(|_| socket.send_buffer_size()));
        }
    }
}

/// Ice's warning when the kernel grants a smaller buffer than asked.
fn warn_if_reduced(which: &str, asked: usize, got: std::io::Result<usize>) {
    match got {
        Ok(got) if got >= asked => {}
        Ok(got) => {
            tracing::warn!("TCP {which} buffer size: requested size of {asked} adjusted to {got}")
        }
        Err(e) => tracing::warn!("TCP {which} buffer size of {asked} not set: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(text: &str) -> Properties {
        let p = Properties::new();
        p.parse(text);
        p
    }

    #[test]
    fn unset_zero_and_negative_sizes_leave_the_os_default() {
        assert_eq!(
            SocketBuffers::from_properties(&props("")),
            SocketBuffers::default()
        );
        let p = props("Ice.TCP.RcvSize=0\nIce.TCP.SndSize=-5");
        assert_eq!(SocketBuffers::from_properties(&p), SocketBuffers::default());
        let p = props("Ice.TCP.RcvSize=262144\nIce.TCP.SndSize=65536");
        assert_eq!(
            SocketBuffers::from_properties(&p),
            SocketBuffers {
                receive: Some(262_144),
                send: Some(65_536)
            }
        );
    }

    #[tokio::test]
    async fn the_sizes_reach_the_socket() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (client, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
        let (client, (accepted, _)) = (client.unwrap(), accepted.unwrap());
        let default = SockRef::from(&client).recv_buffer_size().unwrap();
        // Small sizes, under any kernel's cap, and unlike the defaults.
        let buffers = SocketBuffers {
            receive: Some(48 * 1024),
            send: Some(40 * 1024),
        };
        buffers.apply(&accepted);
        let socket = SockRef::from(&accepted);
        // The kernel may double what is asked (Linux does), never less.
        let receive = socket.recv_buffer_size().unwrap();
        let send = socket.send_buffer_size().unwrap();
        assert!((48 * 1024..=96 * 1024).contains(&receive), "{receive}");
        assert!((40 * 1024..=80 * 1024).contains(&send), "{send}");
        // Nothing asked: the socket keeps the OS default.
        SocketBuffers::default().apply(&client);
        assert_eq!(SockRef::from(&client).recv_buffer_size().unwrap(), default);
    }
}
