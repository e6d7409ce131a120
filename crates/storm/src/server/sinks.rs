//! [`RuntimeSinks`]: delivering events to subscribers and linked topics
//! through floe-runtime proxies, and the conversions between the broker's
//! endpoint and proxy data and the runtime's.

use std::sync::Arc;
use std::time::Duration;

use floe::runtime::{Communicator, Endpoint, Error as RtError, Proxy, Response};

use crate::event::Event;
use crate::link::event_data;
use crate::qos::Qos;
use crate::sink::{DeliveryError, DeliveryFuture, ResolveFuture, SinkFactory, SubscriberSink};
use crate::slice::ice_storm::{TopicInternalPrx, TopicLinkPrx};
use crate::types::{EndpointData, ProxyData, ProxyExt};

/// floe-wire's endpoint data for a runtime endpoint.
pub fn endpoint_data(e: &Endpoint) -> EndpointData {
    e.to_data()
}

/// The runtime endpoint for a tcp, ssl, ws, wss or udp endpoint; `None`
/// for an opaque one (a transport the runtime does not speak).
pub fn runtime_endpoint(e: &EndpointData) -> Option<Endpoint> {
    Endpoint::from_data(e)
}

/// A runtime proxy for `raw`, with `timeout` (if any) as the TCP endpoint
/// timeout and the invocation timeout.
pub fn runtime_proxy(comm: &Communicator, raw: &ProxyData, timeout: Option<Duration>) -> Proxy {
    let endpoints = raw
        .endpoints
        .iter()
        .filter_map(runtime_endpoint)
        .map(|mut e| {
            if let (true, Some(t)) = (e.transport.is_stream(), timeout) {
                e.timeout = i32::try_from(t.as_millis()).unwrap_or(i32::MAX);
            }
            e
        })
        .collect();
    let p = comm
        .create_proxy(raw.identity.clone(), endpoints)
        .ice_facet(&raw.facet)
        .ice_mode(raw.mode)
        .ice_encoding_version(raw.encoding);
    match timeout {
        Some(t) if raw.is_twoway() => p.ice_invocation_timeout(Some(t)),
        _ => p,
    }
}

fn delivery_error(e: RtError) -> DeliveryError {
    match e {
        RtError::ObjectNotExist(_) => DeliveryError::ObjectNotExist,
        other => DeliveryError::Failed(other.to_string()),
    }
}

/// Sinks that deliver with floe-runtime proxies.
pub struct RuntimeSinks {
    communicator: Communicator,
    send_timeout: Option<Duration>,
}

impl RuntimeSinks {
    /// Sinks using `communicator`, with `IceStorm.Send.Timeout` (`None`:
    /// no timeout).
    pub fn new(communicator: Communicator, send_timeout: Option<Duration>) -> Self {
        RuntimeSinks {
            communicator,
            send_timeout,
        }
    }
}

struct ProxySink {
    proxy: Proxy,
}

impl SubscriberSink for ProxySink {
    fn deliver(&self, events: Vec<Arc<Event>>) -> DeliveryFuture {
        let proxy = self.proxy.clone();
        Box::pin(async move {
            for ev in &events {
                // A oneway subscriber's connection that takes it now gets
                // the request without an invocation future (within the
                // write-queue limit a oneway invocation waits for); when it is
                // behind, down or failing, the invocation waits, retries
                // or reports as usual.
                let sent = proxy.try_send_oneway_now(
                    &ev.operation,
                    ev.mode,
                    &ev.params,
                    Some(&ev.context),
                    floe::runtime::SEND_HIGH_WATER,
                );
                if let Some(Ok(())) = sent {
                    continue;
                }
                // The publisher's encapsulation, shared: no copy per
                // subscriber nor per event.
                let r = proxy
                    .invoke_encapsulation(&ev.operation, ev.mode, &ev.params, Some(&ev.context))
                    .await;
                match r {
                    // A user exception is the subscriber's business.
                    Ok(Response::Ok(_) | Response::UserException(_)) => {}
                    Err(e) => return Err(delivery_error(e)),
                }
            }
            if proxy.mode().is_batch() {
                proxy
                    .ice_flush_batch_requests()
                    .await
                    .map_err(delivery_error)?;
            }
            Ok(())
        })
    }

    fn try_deliver_now(&self, ev: &Event, max_queued: usize) -> Option<Result<(), DeliveryError>> {
        self.proxy
            .try_send_oneway_now(
                &ev.operation,
                ev.mode,
                &ev.params,
                Some(&ev.context),
                max_queued,
            )
            .map(|r| r.map_err(delivery_error))
    }

    fn backlog(&self) -> usize {
        self.proxy
            .ice_get_cached_connection()
            .map_or(0, |c| c.queued_bytes())
    }
}

struct LinkSink {
    link: TopicLinkPrx,
}

impl SubscriberSink for LinkSink {
    fn deliver(&self, events: Vec<Arc<Event>>) -> DeliveryFuture {
        let link = self.link.clone();
        let data: Vec<_> = events.iter().map(|e| event_data(e)).collect();
        Box::pin(async move { link.forward(&data).await.map_err(delivery_error) })
    }
}

impl SinkFactory for RuntimeSinks {
    fn subscriber_sink(&self, subscriber: &ProxyData, _qos: &Qos) -> Arc<dyn SubscriberSink> {
        Arc::new(ProxySink {
            proxy: runtime_proxy(&self.communicator, subscriber, self.send_timeout),
        })
    }

    fn link_sink(&self, link: &ProxyData) -> Arc<dyn SubscriberSink> {
        let mut twoway = link.clone();
        twoway.mode = crate::types::MODE_TWOWAY;
        Arc::new(LinkSink {
            link: TopicLinkPrx::unchecked_cast(runtime_proxy(
                &self.communicator,
                &twoway,
                self.send_timeout,
            )),
        })
    }

    fn resolve_link(&self, topic: &ProxyData) -> ResolveFuture {
        let mut twoway = topic.clone();
        twoway.mode = crate::types::MODE_TWOWAY;
        let topic = TopicInternalPrx::unchecked_cast(runtime_proxy(
            &self.communicator,
            &twoway,
            self.send_timeout,
        ));
        Box::pin(async move { topic.get_link_proxy().await.map_err(|e| e.to_string()) })
    }
}
