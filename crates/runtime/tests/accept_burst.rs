//! A burst of connects: every one is accepted and validated promptly, and a
//! fresh client's `ice_ping` during the burst is not stuck behind it.
//!
//! The server runs on a tokio runtime of its own (as in its own process),
//! the clients on another. `FLOE_BURST=N` changes the burst size (default
//! 1,500) for measuring by hand.

use std::time::{Duration, Instant};

use floe_runtime::{servant_fn, Communicator, Dispatch, Identity, Properties};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

const VALIDATE: [u8; 14] = [
    0x49, 0x63, 0x65, 0x50, 0x01, 0x00, 0x01, 0x00, 0x03, 0x00, 0x0e, 0x00, 0x00, 0x00,
];

/// How long every connect of the burst may take to be validated.
const VALIDATED_WITHIN: Duration = Duration::from_secs(10);

/// The burst size: `FLOE_BURST` or 1,500, fewer if the descriptor limit
/// cannot hold both ends of every connection.
fn burst_size() -> usize {
    let want = std::env::var("FLOE_BURST")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_500);
    let fds = raise_fd_limit(2 * want as u64 + 256);
    let fit = (fds.saturating_sub(256) / 2) as usize;
    if fit < want {
        eprintln!("descriptor limit {fds}: a burst of {fit} instead of {want}");
    }
    want.min(fit)
}

/// Raises the soft descriptor limit towards `want` (at most the hard
/// limit); returns the limit in force.
#[cfg(target_os = "linux")]
fn raise_fd_limit(want: u64) -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid `rlimit` for the calls to read and write.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < want {
            let raised = libc::rlimit {
                rlim_cur: want.min(lim.rlim_max),
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = raised.rlim_cur;
            }
        }
    }
    lim.rlim_cur
}

#[cfg(not(target_os = "linux"))]
fn raise_fd_limit(want: u64) -> u64 {
    want
}

/// Starts a server on a runtime of its own; returns the runtime, its
/// communicator and the port.
fn server(props: Properties) -> (tokio::runtime::Runtime, Communicator, u16) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (communicator, port) = rt.block_on(async {
        let c = Communicator::with_properties(props);
        let a = c
            .create_object_adapter_with_endpoints("Burst", "tcp -h 127.0.0.1 -p 0")
            .await
            .unwrap();
        a.add(
            Identity::from_name("hello"),
            servant_fn(|cur, _| Dispatch::ready(Ok(cur.empty_reply()))),
        )
        .unwrap();
        a.activate();
        let port = a.endpoints()[0].port;
        (c, port)
    });
    (rt, communicator, port)
}

/// Connects and reads the ValidateConnection; the stream stays open (the
/// caller keeps it) so that the connections of the burst all exist at once.
async fn connect_validated(port: u16) -> std::io::Result<(Duration, TcpStream)> {
    let start = Instant::now();
    let mut s = TcpStream::connect(("127.0.0.1", port)).await?;
    let mut v = [0u8; 14];
    s.read_exact(&mut v).await?;
    assert_eq!(v, VALIDATE);
    Ok((start.elapsed(), s))
}

#[test]
fn a_burst_of_connects_is_validated_and_a_ping_during_it_is_quick() {
    let (server_rt, server_comm, port) = server(Properties::new());
    let n = burst_size();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (validated, slowest, pings) = rt.block_on(async move {
        let start = Instant::now();
        let mut burst = tokio::task::JoinSet::new();
        for _ in 0..n {
            burst.spawn(tokio::time::timeout(
                VALIDATED_WITHIN,
                connect_validated(port),
            ));
        }
        // Fresh clients (each its own connection) ping while the burst is
        // being accepted.
        let mut pings = Vec::new();
        for _ in 0..5 {
            let client = Communicator::new();
            let p = client
                .string_to_proxy(&format!("hello:tcp -h 127.0.0.1 -p {port}"))
                .unwrap();
            let t = Instant::now();
            tokio::time::timeout(Duration::from_secs(10), p.ice_ping())
                .await
                .expect("ice_ping during the burst timed out")
                .expect("ice_ping during the burst failed");
            pings.push(t.elapsed());
            client.destroy().await;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let mut streams = Vec::with_capacity(n);
        let mut slowest = Duration::ZERO;
        while let Some(r) = burst.join_next().await {
            if let Ok(Ok(Ok((took, s)))) = r {
                slowest = slowest.max(took);
                streams.push(s);
            }
        }
        let validated = streams.len();
        eprintln!(
            "burst of {n}: {validated} validated in {:?}, slowest {slowest:?}; pings {pings:?}",
            start.elapsed()
        );
        drop(streams);
        (validated, slowest, pings)
    });
    drop(rt);
    server_rt.block_on(server_comm.destroy());
    drop(server_rt);
    assert_eq!(
        validated, n,
        "connects not validated within {VALIDATED_WITHIN:?}"
    );
    // A connect that overflowed the listen queue waits for a SYN
    // retransmission (1 s on Linux): every ping must be well below that.
    for p in &pings {
        assert!(*p < Duration::from_millis(750), "ice_ping took {p:?}");
    }
    assert!(slowest < VALIDATED_WITHIN);
}
