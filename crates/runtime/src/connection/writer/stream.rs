//! The [`Writer`]'s stream path (TLS): the queue written through the
//! stream's `poll_write_vectored` and `poll_flush` (see the module
//! documentation of `writer/mod.rs`).

use super::*;

impl Writer {
    /// [`Writer::send_parts`] over a stream transport: queued (a oneway
    /// request may join a batch, as on TCP), then, when
    /// the connection was idle, written and flushed at once as far as the
    /// stream takes it; the rest is left to the connection task.
    pub(super) fn send_stream(
        &self,
        io: &StreamIo,
        mut guard: MutexGuard<'_, ConnectionState>,
        parts: &mut [Bytes],
        tail: &[u8],
        batch: usize,
    ) -> Result<(), Error> {
        let st = &mut guard.out;
        let idle = !st.pending();
        self.queue_message(st, parts, tail, batch);
        if !idle {
            // The connection task is already writing the queue.
            return Ok(());
        }
        // A no-op waker: if the stream is not ready, the connection task
        // (notified below) polls again with its own.
        let mut cx = Context::from_waker(Waker::noop());
        if let Poll::Ready(Err(e)) = self.poll_stream(io, st, &mut cx) {
            return Err(e);
        }
        if !st.pending() {
            return Ok(());
        }
        drop(guard);
        self.task.raise();
        Ok(())
    }

    /// Writes the queue into the stream and flushes it, until the stream
    /// is not ready (`Pending`) or everything is flushed (`Ready`, also
    /// after progress: the caller checks what is left).
    pub(super) fn poll_stream(
        &self,
        io: &StreamIo,
        st: &mut WriteState,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Error>> {
        let mut progress = false;
        let fail = |st: &mut WriteState, e: &std::io::Error| {
            let err = Error::from_io(e);
            st.error = Some(err.clone());
            Poll::Ready(Err(err))
        };
        while !st.queue.is_empty() {
            match io.poll_write_queue(cx, &st.queue) {
                Poll::Ready(Ok(0)) => {
                    return fail(st, &std::io::ErrorKind::WriteZero.into());
                }
                Poll::Ready(Ok(n)) => {
                    st.consume(n);
                    st.unflushed = true;
                    progress = true;
                }
                Poll::Ready(Err(e)) => return fail(st, &e),
                Poll::Pending if progress => {
                    self.written.notify_waiters();
                    return Poll::Ready(Ok(()));
                }
                Poll::Pending => return Poll::Pending,
            }
        }
        if progress {
            self.written.notify_waiters();
        }
        if st.unflushed {
            match io.poll_flush(cx) {
                Poll::Ready(Ok(())) => st.unflushed = false,
                Poll::Ready(Err(e)) => return fail(st, &e),
                Poll::Pending if progress => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }

    /// One [`Writer::poll_stream`] of the connection task (or a drain),
    /// with the caller's waker.
    pub(super) async fn write_stream(&self, io: &StreamIo) -> Result<(), Error> {
        std::future::poll_fn(|cx| {
            let mut guard = self.lock();
            let st = &mut guard.out;
            if let Some(e) = &st.error {
                return Poll::Ready(Err(e.clone()));
            }
            self.poll_stream(io, st, cx)
        })
        .await
    }
}
