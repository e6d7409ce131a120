//! Dispatch bookkeeping of a connection: the set of asynchronous
//! dispatches its task runs beside the socket, the hand-over of one request
//! to its [`Dispatcher`] (the adapter, whose rules are in
//! `object_model/object_adapter/dispatch.rs`) and the reply it sends.

use super::*;
use crate::outcome::panic_error;

/// A finished asynchronous dispatch, with what its reply needs.
pub(super) struct Finished {
    /// The request id (0: a oneway, nothing is sent).
    pub(super) rid: i32,
    /// Whether the reply may be compressed.
    pub(super) compress: bool,
    /// What the servant answered.
    pub(super) result: DispatchResult,
    /// The request's frame (a refcount, no copy), to fill the empty fields
    /// of a status 2-4 answer.
    pub(super) frame: Option<Bytes>,
}

/// A dispatch that was not done on its first poll, with what its reply
/// needs and the parameter bytes its request holds until it finishes.
///
/// A struct rather than an `async` wrapper: `FuturesUnordered` stores it in
/// its task node, so a pending dispatch costs no allocation beyond its own
/// future and that node.
struct Running {
    fut: DispatchFuture,
    rid: i32,
    compress: bool,
    frame: Option<Bytes>,
    bytes: usize,
}

impl Future for Running {
    type Output = (Finished, usize);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Every field is `Unpin` (the dispatch future is boxed).
        let this = self.get_mut();
        let polled =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| this.fut.as_mut().poll(cx)));
        let result = match polled {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(result)) => result,
            // A panic counts as done, with status 7.
            Err(p) => Err(panic_error(p)),
        };
        let finished = Finished {
            rid: this.rid,
            compress: this.compress,
            result,
            frame: this.frame.take(),
        };
        Poll::Ready((finished, this.bytes))
    }
}

/// The asynchronous dispatches a connection task runs beside its socket,
/// and the task's waker.
///
/// A dispatch future is polled once where it is made, with the task's
/// waker: one that is done at once (most servants, even `async` ones) is
/// answered there, with no allocation for the set and no extra pass of the
/// task's loop. One that is not joins the set, which polls it again and
/// from then on wakes the task through its own waker.
pub(super) struct DispatchSet {
    /// Each running dispatch, with the parameter bytes it holds.
    running: FuturesUnordered<Running>,
    waker: Waker,
    /// The parameter bytes of the requests in `running`.
    bytes: usize,
}

impl DispatchSet {
    /// An empty set for the task whose waker is `waker`.
    pub(super) fn new(waker: Waker) -> DispatchSet {
        DispatchSet {
            running: FuturesUnordered::new(),
            waker,
            bytes: 0,
        }
    }

    /// Dispatches still running.
    pub(super) fn len(&self) -> usize {
        self.running.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    /// The parameter bytes held by the dispatches still running (their
    /// requests' encapsulations, slices of the frames they came in).
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The next dispatch to finish (pending forever while none runs).
    pub(super) async fn next(&mut self) -> Option<Finished> {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }

    /// Polls for the next dispatch to finish (`None`: none runs).
    pub(super) fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Finished>> {
        let next = std::task::ready!(self.running.poll_next_unpin(cx));
        Poll::Ready(next.map(|(finished, bytes)| {
            self.bytes -= bytes;
            finished
        }))
    }

    /// Polls a new dispatch once, with the task's waker.
    fn poll_first(&self, fut: &mut DispatchFuture) -> std::thread::Result<Poll<DispatchResult>> {
        let mut cx = Context::from_waker(&self.waker);
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fut.as_mut().poll(&mut cx)))
    }

    /// Adds a dispatch that was not done on its first poll, whose request
    /// carried `bytes` of parameters.
    pub(super) fn push(
        &mut self,
        rid: i32,
        compress: bool,
        fut: DispatchFuture,
        frame: Option<Bytes>,
        bytes: usize,
    ) {
        self.bytes += bytes;
        self.running.push(Running {
            fut,
            rid,
            compress,
            frame,
            bytes,
        });
    }
}

impl ConnectionInner {
    /// Dispatches one request to its servant; synchronous results are
    /// answered at once, futures join `dispatches`. `frame`, the request's
    /// frame (none for a batched request), is kept to fill the empty
    /// fields of a status 2-4 answer.
    pub(super) fn dispatch(
        self: &Arc<Self>,
        request: Request,
        compress: bool,
        dispatches: &mut DispatchSet,
        frame: Option<Bytes>,
    ) {
        let rid = request.request_id;
        let span = crate::spans::dispatch(
            &self.span,
            &request.operation,
            &request.identity,
            &request.facet,
            rid,
            self.info.id,
        );
        let _entered = span.enter();
        let Some(dispatcher) = self.dispatcher() else {
            let failed = RequestFailed {
                identity: request.identity,
                facet: request.facet,
                operation: request.operation,
            };
            self.send_reply(rid, compress, Err(DispatchError::ObjectNotExist(failed)));
            return;
        };
        let connection = Connection {
            inner: self.clone(),
        };
        let bytes = request.params.data.len();
        let observer = match &self.config.metrics {
            Some(admin) => self.observe_dispatch(admin, dispatcher.name(), &request),
            None => None,
        };
        let dispatch = dispatcher.dispatch(request, connection);
        let frame = if rid != 0 { frame } else { None };
        let run = (rid, compress, bytes);
        self.run_dispatch(dispatch, run, observer, dispatches, frame, &span);
    }

    /// Attaches a dispatch of `request` to the `Dispatch` maps.
    fn observe_dispatch(
        &self,
        admin: &crate::metrics::MetricsAdmin,
        adapter: &str,
        request: &Request,
    ) -> Option<DispatchObserver> {
        use crate::metrics::observe::{context_size, request_size};
        let attrs = super::observe::DispatchAttrs {
            info: &self.info,
            adapter,
            identity: &request.identity,
            facet: &request.facet,
            operation: &request.operation,
            request_id: request.request_id,
            context: &request.context,
        };
        let params = 6 + request.params.data.len();
        let context = context_size(&request.context);
        let size = request_size(
            &request.identity,
            &request.facet,
            &request.operation,
            context,
            params,
        );
        // A status 2-4 reply repeats identity, facet and operation: the
        // request's body without its mode, context and parameters.
        let failed = size - params - context - 1;
        super::observe::dispatch(admin, &attrs, size).map(|o| DispatchObserver {
            observer: o,
            failed_reply: 1 + failed,
        })
    }

    /// Runs `dispatch` of request `rid` (`compress`: whether its reply may
    /// be compressed; `bytes`: its parameter bytes), ended in the metrics
    /// by `observer` when its result is known.
    fn run_dispatch(
        self: &Arc<Self>,
        dispatch: Dispatch,
        (rid, compress, bytes): (i32, bool, usize),
        observer: Option<DispatchObserver>,
        dispatches: &mut DispatchSet,
        frame: Option<Bytes>,
        span: &tracing::Span,
    ) {
        let mut fut = match dispatch {
            Dispatch::Ready(result) => return self.finish(rid, compress, result, observer, frame),
            Dispatch::Pending(fut) => fut,
        };
        match dispatches.poll_first(&mut fut) {
            Ok(Poll::Ready(result)) => self.finish(rid, compress, result, observer, frame),
            // A panic ends the observation without a result, as it would
            // have in the observed future.
            Err(p) => self.send_reply(rid, compress, Err(panic_error(p))),
            Ok(Poll::Pending) => {
                let fut = match observer {
                    Some(o) => observed(fut, o, rid != 0),
                    None => fut,
                };
                let fut = if span.is_disabled() {
                    fut
                } else {
                    use tracing::Instrument;
                    Box::pin(fut.instrument(span.clone()))
                };
                dispatches.push(rid, compress, fut, frame, bytes);
            }
        }
    }

    /// Answers request `rid` with the `result` of its dispatch, ended in
    /// the metrics by `observer` (before the reply is sent).
    #[inline(always)]
    fn finish(
        &self,
        rid: i32,
        compress: bool,
        result: DispatchResult,
        observer: Option<DispatchObserver>,
        frame: Option<Bytes>,
    ) {
        if let Some(o) = observer {
            o.dispatched(&result, rid != 0);
        }
        let result = result.map_err(|e| fill_failed(e, frame.as_ref()));
        self.send_reply(rid, compress, result);
    }

    /// Writes the reply to request `rid` (nothing for oneway requests,
    /// whose failures are only logged).
    pub(super) fn send_reply(&self, rid: i32, compress: bool, result: DispatchResult) {
        if rid == 0 {
            if let Err(e) = result {
                event_if!(
                    self.config.trace.warn_dispatch,
                    warn,
                    debug,
                    "oneway dispatch failed: {e}"
                );
            }
            return;
        }
        let mut room = [0; outbound::STACK_FRAME];
        let compression = self.compression(compress);
        let frame = outbound::reply(rid, result, compression, &self.config.policy, &mut room);
        if let Err(e) = self.writer.send_frame(frame, false) {
            tracing::debug!("cannot send reply {rid}: {e}");
        }
    }
}

/// An observed dispatch, and the size of its reply should it fail with
/// status 2-4.
struct DispatchObserver {
    observer: crate::metrics::Observer,
    failed_reply: usize,
}

impl DispatchObserver {
    /// Ends the observation with `result` (`twoway`: a reply is sent).
    fn dispatched(&self, result: &DispatchResult, twoway: bool) {
        super::observe::dispatched(&self.observer, result, twoway, self.failed_reply);
    }
}

/// `fut`, a dispatch not done on its first poll, ended in the metrics by
/// `o` when its result is known (`twoway`: a reply is sent).
fn observed(fut: DispatchFuture, o: DispatchObserver, twoway: bool) -> DispatchFuture {
    Box::pin(async move {
        let result = fut.await;
        o.dispatched(&result, twoway);
        result
    })
}

/// Fills the fields of a status 2–4 error the servant left empty from the
/// request in `frame` (decoded again: this is the rare path, kept out of
/// line so that a successful result is not moved through it).
#[cold]
pub(super) fn fill_failed(mut e: DispatchError, frame: Option<&Bytes>) -> DispatchError {
    if let (
        DispatchError::ObjectNotExist(f)
        | DispatchError::FacetNotExist(f)
        | DispatchError::OperationNotExist(f),
        Some(frame),
    ) = (&mut e, frame)
    {
        if f.identity.is_null() && f.facet.is_empty() && f.operation.is_empty() {
            if let Ok((_, Message::Request(r))) = Message::parse(frame.clone()) {
                f.identity = r.identity;
                f.facet = r.facet;
                f.operation = r.operation;
            }
        }
    }
    e
}
