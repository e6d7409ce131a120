//! [`Communicator::shutdown_on_signals`]: SIGINT and SIGTERM shut the
//! communicator down (the counterpart of Ice's `CtrlCHandler`).

use tokio::task::JoinHandle;

use crate::object_model::communicator::Communicator;

impl Communicator {
    /// Spawns a task that calls [`Communicator::shutdown`] on the first
    /// SIGINT (Ctrl-C) or SIGTERM (what `kill`, systemd and an IceGrid
    /// node send to stop a server). Shutdown deactivates the object
    /// adapters, which unregister from their locator, so a server written
    /// as
    ///
    /// ```no_run
    /// # async fn f() -> floe_runtime::Result<()> {
    /// let communicator = floe_runtime::Communicator::new();
    /// // ... create, fill and activate object adapters ...
    /// communicator.shutdown_on_signals()?;
    /// communicator.wait_for_shutdown().await;
    /// communicator.destroy().await;
    /// # Ok(()) }
    /// ```
    ///
    /// stops cleanly and exits 0 when signalled. Must be called inside a
    /// tokio runtime. The task ends with the first signal; later signals
    /// get the default action again only once the process no longer
    /// listens for them (tokio keeps its handler installed), so a second
    /// Ctrl-C does not kill a server that is slow to stop.
    ///
    /// # Errors
    ///
    /// [`crate::Error::Initialization`] if the signal handlers cannot be
    /// installed.
    pub fn shutdown_on_signals(&self) -> crate::Result<JoinHandle<()>> {
        let err = |e: std::io::Error| crate::Error::Initialization(format!("signal handler: {e}"));
        #[cfg(unix)]
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(err)?;
        #[cfg(unix)]
        let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
            .map_err(err)?;
        let communicator = self.clone();
        Ok(tokio::spawn(async move {
            #[cfg(unix)]
            tokio::select! {
                _ = term.recv() => tracing::debug!("SIGTERM: shutting down"),
                _ = int.recv() => tracing::debug!("SIGINT: shutting down"),
            }
            #[cfg(not(unix))]
            {
                let _ = err;
                let _ = tokio::signal::ctrl_c().await;
            }
            communicator.shutdown();
        }))
    }
}
