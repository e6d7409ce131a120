//! An [`ObjectAdapter`]'s life: activation and holding, the connections
//! it accepted, and deactivation (Ice's `activate`, `hold`, `deactivate`,
//! `waitForDeactivate`, `destroy`).

use std::sync::atomic::Ordering;

use super::*;

impl ObjectAdapter {
    /// Starts accepting connections (and datagrams), or resumes after
    /// [`ObjectAdapter::hold`]. Must be called inside a tokio runtime.
    ///
    /// The first activation of an adapter with an `<Adapter>.AdapterId`
    /// and a locator also registers it, in the background; use
    /// [`ObjectAdapter::activate_and_register`] to wait for that.
    pub fn activate(&self) {
        self.spawn_registration();
        if self
            .inner
            .state
            .compare_exchange(HOLDING, ACTIVE, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        self.inner.held.send_replace(false);
        let listeners = std::mem::take(&mut *lock(&self.inner.listeners));
        let udp = std::mem::take(&mut *lock(&self.inner.udp));
        let mut tasks = lock(&self.inner.tasks);
        for listener in listeners {
            let adapter = self.clone();
            tasks.push(tokio::spawn(accept::accept_loop(listener, adapter)));
        }
        for socket in udp {
            let adapter = self.clone();
            tasks.push(tokio::spawn(datagram::receive_loop(socket, adapter)));
        }
    }

    /// Holds the adapter, as Ice's `hold()`: no new connection is accepted
    /// (clients wait in the listen backlog) and requests that arrive on
    /// existing connections are not dispatched until [`ObjectAdapter::activate`];
    /// dispatches already running finish. Held requests count towards each
    /// connection's dispatch limit, so a connection stops reading when it is
    /// full. Does nothing unless the adapter is active.
    pub fn hold(&self) {
        if self
            .inner
            .state
            .compare_exchange(ACTIVE, HOLDING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.inner.held.send_replace(true);
        }
    }

    /// Whether the adapter is holding (created and not yet activated, or
    /// held with [`ObjectAdapter::hold`]).
    pub fn is_holding(&self) -> bool {
        self.inner.state.load(Ordering::Acquire) == HOLDING
    }

    /// Waits until the adapter is held.
    pub(crate) async fn wait_until_held(&self) {
        let mut rx = self.inner.held.subscribe();
        let _ = rx.wait_for(|held| *held).await;
    }

    /// Waits until the adapter is not holding (active or deactivating).
    pub(crate) async fn wait_until_released(&self) {
        let mut rx = self.inner.held.subscribe();
        // The sender lives as long as `self`, so this cannot fail.
        let _ = rx.wait_for(|held| !*held).await;
    }

    /// Whether the adapter is active (not holding, not deactivated).
    pub fn is_active(&self) -> bool {
        self.inner.state.load(Ordering::Acquire) == ACTIVE
    }

    /// Keeps an accepted connection until it ends ([`ObjectAdapter::untrack`])
    /// or the adapter is deactivated.
    pub(crate) fn track(&self, conn: Connection) {
        let mut conns = lock(&self.inner.connections);
        if conns.map.len() >= conns.prune_at {
            // Connections remove themselves when they end; this only
            // catches one whose adapter was replaced (`set_adapter`), at a
            // cost amortised over the accepts.
            conns.map.retain(|_, c| c.is_active());
            conns.prune_at = (2 * conns.map.len()).max(64);
        }
        // A connection that already ended (and untracked itself before
        // this lock was taken) is not kept.
        if conn.is_active() {
            conns.map.insert(conn.key(), conn);
        }
    }

    /// How many accepted connections are open (`<Adapter>.MaxConnections`).
    pub(crate) fn connection_count(&self) -> usize {
        lock(&self.inner.connections).map.len()
    }

    /// Forgets the connection with [`Connection::key`] `key`, which ended:
    /// its socket is closed once its task lets it go, not at the next accept.
    pub(crate) fn untrack(&self, key: usize) {
        lock(&self.inner.connections).map.remove(&key);
    }

    /// Starts the deactivation and returns, as Ice's `deactivate`: the
    /// adapter leaves the locator registry, stops accepting, and tells
    /// every connection to close gracefully (running dispatches finish and
    /// reply first, §1.4); [`ObjectAdapter::wait_for_deactivate`] waits
    /// until they are closed. So a servant may deactivate its own adapter
    /// (its dispatch is one of those the close waits for). Calling it
    /// again does nothing.
    pub async fn deactivate(&self) {
        let prev = self.inner.state.swap(DEACTIVATING, Ordering::AcqRel);
        if prev == DEACTIVATING || prev == DEACTIVATED {
            self.inner.state.store(prev, Ordering::Release);
            return;
        }
        // Off the registry first, as Ice does: clients stop coming.
        self.unregister_from_locator().await;
        // Held dispatches run now so that the graceful close can drain them.
        self.inner.held.send_replace(false);
        for t in lock(&self.inner.tasks).drain(..) {
            t.abort();
        }
        lock(&self.inner.listeners).clear();
        let conns: Vec<Connection> = lock(&self.inner.connections)
            .map
            .drain()
            .map(|(_, c)| c)
            .collect();
        for c in &conns {
            c.inner.begin_close(false);
        }
        let inner = self.inner.clone();
        let finish = async move {
            for c in &conns {
                c.closed().await;
            }
            inner.state.store(DEACTIVATED, Ordering::Release);
            inner.deactivated.send_replace(true);
            tracing::debug!(adapter = %inner.name, "adapter deactivated");
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => drop(handle.spawn(finish)),
            // Not on a tokio runtime: finish here.
            Err(_) => finish.await,
        }
    }

    /// Deactivates the adapter and waits for the end of its deactivation,
    /// then calls each servant locator's
    /// [`deactivate`](ServantLocator::deactivate) with its category and
    /// forgets every servant, default servant and locator (which drops
    /// them), as Ice's `ObjectAdapter::destroy`. [`Communicator::destroy`]
    /// destroys every adapter of the communicator.
    pub async fn destroy(&self) {
        self.deactivate().await;
        self.wait_for_deactivate().await;
        let map = std::mem::take(
            &mut *self
                .inner
                .servants
                .write()
                .unwrap_or_else(|p| p.into_inner()),
        );
        for (category, locator) in &map.locators {
            locator.deactivate(category);
        }
        drop(map);
        if let Some(communicator) = self.inner.communicator.upgrade() {
            communicator
                .adapters
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .retain(|a| !Arc::ptr_eq(&a.inner, &self.inner));
        }
    }

    /// Waits until [`ObjectAdapter::deactivate`] has finished.
    pub async fn wait_for_deactivate(&self) {
        let mut rx = self.inner.deactivated.subscribe();
        let _ = rx.wait_for(|d| *d).await;
    }

    /// Whether the adapter was deactivated.
    pub fn is_deactivated(&self) -> bool {
        self.inner.state.load(Ordering::Acquire) == DEACTIVATED
    }
}
