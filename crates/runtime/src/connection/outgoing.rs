//! The request side of a [`Connection`]: twoway and oneway invocations
//! (written by the caller's task, see `writer.rs`), batched requests and
//! their flush (§2.6).

use super::*;

impl Connection {
    /// Sends the batch requests queued on this connection (§2.6).
    ///
    /// # Errors
    ///
    /// If the connection is closed.
    pub fn flush_batch_requests(&self) -> Result<()> {
        let frame = {
            let mut q = self.inner.batch.lock().unwrap_or_else(|p| p.into_inner());
            let compress = std::mem::take(&mut q.compress);
            q.builder.take_frame().map(|f| (f, compress))
        };
        match frame {
            Some((f, compress)) => self.inner.send_frame(f, compress, None),
            None => Ok(()),
        }
    }

    /// Queues a batched request; auto-flushes the requests queued before it
    /// when the batch reaches `Ice.BatchAutoFlushSize` (§2.6).
    pub(crate) fn queue_batch_request(
        &self,
        head: &RequestHead<'_>,
        params: &[u8],
        compress: bool,
    ) -> Result<()> {
        if !self.is_active() {
            return Err(self.end_error().unwrap_or(Error::ConnectionManuallyClosed));
        }
        let limit = self.inner.config.batch_auto_flush_size;
        let to_send = {
            let mut q = self.inner.batch.lock().unwrap_or_else(|p| p.into_inner());
            limits::check_batch_push(&q.builder, head, params.len())?;
            let at = q.builder.push(head, params);
            let previous_compress = q.compress;
            q.compress |= compress;
            if limit > 0 && q.builder.frame_size() >= limit {
                q.builder.take_frame_before(at).map(|f| {
                    q.compress = compress;
                    (f, previous_compress)
                })
            } else {
                None
            }
        };
        match to_send {
            Some((f, c)) => self.inner.send_frame(f, c, None),
            None => Ok(()),
        }
    }

    /// Sends a request and, for twoway, waits for the reply. Errors come
    /// with whether the request may have reached the peer (for §7.2).
    pub(crate) async fn invoke(
        &self,
        head: &RequestHead<'_>,
        params: Params<'_>,
        twoway: bool,
        compress: bool,
        timeout: Option<Duration>,
        span: &tracing::Span,
    ) -> std::result::Result<ReplyBody, (Error, bool)> {
        let inner = &*self.inner;
        if !self.is_active() {
            let e = self.end_error().unwrap_or(Error::ConnectionManuallyClosed);
            return Err((e, false));
        }
        let id = if twoway {
            inner
                .writer
                .lock()
                .register_request()
                .map_err(|e| (e, false))?
        } else {
            0
        };
        // Abandons the request if this future is dropped before the reply.
        let reply = twoway.then(|| ReplyFuture {
            inner,
            id,
            done: false,
        });
        // A small oneway request that follows another oneway on this
        // connection within the coalescing window (a burst) is queued for the
        // connection task instead of written here: back-to-back oneways
        // coalesce into few vectored writes (as Ice queues them while the
        // connection is busy) and leave as soon as this task yields. A
        // oneway after a pause is written before the call returns, as Ice
        // does on an idle connection. Twoway requests are written directly
        // (their caller waits for the reply anyway), and so are large
        // oneways, where a syscall per message costs little; except while
        // callers pipeline small twoway requests (the last read brought
        // several replies, whose callers are about to send their next
        // requests): those are queued too and leave together.
        let deferred = if twoway {
            params.len() <= inner.config.policy.copy_limit
                && inner.pipelining.load(Ordering::Relaxed)
        } else {
            self.oneway_deferred(&params)
        };
        self.send_request(head, id, params, compress, deferred)
            .map_err(|e| (e, false))?;
        crate::spans::record_sent(span, id, inner.info.id);
        if twoway && inner.config.policy.busy_poll.is_some() {
            inner.writer.wake_task();
        }
        let Some(reply) = reply else {
            // Oneway: return once earlier messages are (nearly) written.
            let high_water = inner.config.policy.send_high_water;
            if inner.writer.queued_bytes() > high_water {
                inner
                    .writer
                    .wait_queued_below(high_water, inner.config.write_timeout)
                    .await
                    .map_err(|e| (e, true))?;
            }
            return Ok(ReplyBody::Ok(floe_wire::Encapsulation::empty(
                floe_wire::ENCODING_1_1,
            )));
        };
        let res = match timeout {
            Some(t) => match tokio::time::timeout(t, reply).await {
                Ok(r) => r,
                Err(_) => return Err((Error::InvocationTimeout, true)),
            },
            None => reply.await,
        };
        res.map_err(|e| (e, true))
    }

    /// Stamps a oneway request's send time (burst detection, one clock
    /// read) and says whether the request, with `params`, is part of a
    /// burst and is queued for the connection task (see
    /// [`Connection::invoke`]).
    fn oneway_deferred(&self, params: &Params<'_>) -> bool {
        let policy = &self.inner.config.policy;
        let burst = self.inner.writer.stamp_oneway(policy.coalesce_window);
        burst && params.len() <= policy.copy_limit
    }

    /// Sends a oneway request now, without waiting: written at once, or,
    /// within a burst of small oneways, queued for the connection task to
    /// write together with the rest of the burst. `None` (nothing sent)
    /// when more than `max_queued` bytes already wait to be written: the
    /// peer does not keep up, and the caller must wait or keep the message
    /// in a queue of its own, which it can bound.
    pub(crate) fn try_send_oneway_request(
        &self,
        head: &RequestHead<'_>,
        params: Params<'_>,
        compress: bool,
        max_queued: usize,
    ) -> Option<Result<()>> {
        if self.inner.writer.queued_bytes() > max_queued {
            return None;
        }
        let deferred = self.oneway_deferred(&params);
        Some(self.send_request(head, 0, params, compress, deferred))
    }

    /// Writes (or queues) one Request frame with request id `id`; never
    /// waits. Large parameters go beside the frame head in a vectored
    /// write, shared, not copied.
    /// With `deferred`, the frame is queued for the connection task to
    /// write ([`Writer::send_deferred`]).
    fn send_request(
        &self,
        head: &RequestHead<'_>,
        id: i32,
        params: Params<'_>,
        compress: bool,
        deferred: bool,
    ) -> Result<()> {
        if !self.is_active() {
            return Err(self.end_error().unwrap_or(Error::ConnectionManuallyClosed));
        }
        if id != 0 && deferred {
            // Queued twoway requests count for burst detection too (a
            // oneway was stamped by `oneway_deferred`); a twoway request
            // written at once reads no clock.
            self.inner.writer.stamp_burst();
        }
        let (encoding, prefix, data, shared) = params.parts();
        let copied = data.len() <= self.inner.config.policy.params_copy_limit || compress;
        // Exactly the frame's size: a full buffer becomes `Bytes` without
        // a second allocation (one with room to spare needs a shared
        // header).
        let mut buf = BytesMut::with_capacity(
            head.encoded_len()
                + if encoding.is_some() { 6 } else { 0 }
                + prefix.len()
                + if copied { data.len() } else { 0 },
        );
        // An Ice frame's size is an i32: larger parameters are refused
        // (MemoryLimitException), and everything below fits one.
        head.try_encode_head(&mut buf, id, params.len(), CompressionStatus::NotSupported)?;
        if let Some(encoding) = encoding {
            // Size as an i32: the body came in a frame bounded by
            // Ice.MessageSizeMax, or was built here.
            buf.extend_from_slice(&(params.len() as i32).to_le_bytes());
            buf.extend_from_slice(&[encoding.major, encoding.minor]);
            buf.extend_from_slice(prefix);
        }
        if copied {
            buf.extend_from_slice(data);
            return self.inner.send_frame_as(buf, compress, None, deferred);
        }
        match shared {
            Some(b) => self
                .inner
                .send_frame_as(buf, compress, Some(b.clone()), deferred),
            None if deferred => {
                let mut parts = [buf.freeze(), Bytes::copy_from_slice(data)];
                self.inner.writer.send_deferred(&mut parts)
            }
            None => self.inner.writer.send_borrowed(&mut [buf.freeze()], data),
        }
    }
}

/// The reply to a twoway request: ready once the connection task stored
/// it in the request's slot (or the connection ended). Dropped before
/// that, it abandons the request; a late reply is then ignored.
struct ReplyFuture<'a> {
    inner: &'a ConnectionInner,
    id: i32,
    done: bool,
}

impl Future for ReplyFuture<'_> {
    type Output = Result<ReplyBody>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let polled = self.inner.writer.lock().requests.poll_reply(self.id, cx);
        if polled.is_ready() {
            self.done = true;
        }
        polled
    }
}

impl Drop for ReplyFuture<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.inner.writer.lock().requests.abandon(self.id);
        }
    }
}
