//! Client to server: one client sends each workload to a `Messages`
//! servant, oneway (each call returns once written) and twoway (each call
//! waits for the server's reply), over one connection on 127.0.0.1.

use std::sync::Arc;
use std::time::Duration;

use floe::runtime::Communicator;
use floe::Identity;

use super::{
    properties, BoxError, Counter, Kind, MessagesDispatcher, MessagesPrx, Payload, Received, Row,
};

/// Runs every (kind, size) in oneway and twoway, each with about
/// `budget` payload bytes (at least `min` messages), and returns the rows.
///
/// # Errors
///
/// A failed call, or oneway messages that never arrived.
pub async fn run(
    kinds: &[Kind],
    sizes: &[usize],
    budget: f64,
    min: usize,
    mut each: impl FnMut(&Row),
) -> Result<Vec<Row>, BoxError> {
    let server = Communicator::with_properties(properties());
    let client = Communicator::with_properties(properties());
    let result = async {
        let adapter = server
            .create_object_adapter_with_endpoints("Codac", "tcp -h 127.0.0.1 -p 0")
            .await?;
        let received = Arc::new(Received::new(0));
        let proxy = adapter.add(
            Identity::from_name("m"),
            MessagesDispatcher::new(Counter(received.clone())),
        )?;
        adapter.activate();
        let twoway = MessagesPrx::unchecked_cast(client.string_to_proxy(&proxy.to_string())?);
        twoway.ice_ping().await?; // connected before the first timing
        let oneway = twoway.ice_oneway();

        let mut rows = Vec::new();
        for &kind in kinds {
            for &size in sizes {
                let payload = Payload::new(kind, size);
                let n = super::messages(size, budget, min);
                for (mode, p, is_twoway) in [("oneway", &oneway, false), ("twoway", &twoway, true)]
                {
                    payload.send(p, is_twoway).await?; // warm-up
                    twoway.ice_ping().await?;
                    let start = received.reset();
                    for _ in 0..n {
                        payload.send(p, is_twoway).await?;
                    }
                    // Oneways: timed until the server has them all.
                    let got = received.wait_for(n as u64, Duration::from_secs(10)).await;
                    if got < n as u64 {
                        return Err(format!("{} oneways of {n} arrived", got).into());
                    }
                    let row = Row {
                        kind,
                        size,
                        mode,
                        sent: n as u64,
                        received: got,
                        // Twoway: until the last reply; oneway: until the
                        // server received the last message.
                        seconds: if is_twoway {
                            start.elapsed().as_secs_f64()
                        } else {
                            received.since(start)
                        },
                    };
                    each(&row);
                    rows.push(row);
                }
            }
        }
        Ok(rows)
    }
    .await;
    client.destroy().await;
    server.destroy().await;
    result
}
