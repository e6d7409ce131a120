//! Object adapter registration with a locator registry (IceGrid's, with
//! `IceGrid.Registry.DynamicRegistration=1` or through an IceGrid node).
//!
//! An adapter with `<Adapter>.AdapterId` (and optionally
//! `<Adapter>.ReplicaGroupId`) and a locator (`<Adapter>.Locator`, else
//! `Ice.Default.Locator`) sends a direct proxy with its published
//! endpoints (with the real port when it listens on port 0) to
//! `LocatorRegistry::setAdapterDirectProxy`, or
//! `setReplicatedAdapterDirectProxy` in a replica group, when it is first
//! activated; [`ObjectAdapter::deactivate`] sends the null proxy, which
//! removes it, so a server stopped with SIGTERM (see
//! [`Communicator::shutdown_on_signals`](crate::Communicator::shutdown_on_signals))
//! disappears from the registry.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use floe_wire::protocol::OperationMode;
use floe_wire::{Identity, ProxyData};

use crate::error::{Error, Result};
use crate::object_model::communicator::Communicator;
use crate::object_model::locator::LocatorInfo;
use crate::object_model::object_adapter::ObjectAdapter;
use crate::object_model::proxy::Proxy;

/// How long deactivation waits for the registry to take the adapter
/// off: a registry that is gone must not keep a server from stopping.
const UNREGISTER_TIMEOUT: Duration = Duration::from_secs(5);

/// The locator settings of one object adapter.
pub(crate) struct AdapterRegistration {
    /// `<Adapter>.AdapterId` (empty: not registered).
    adapter_id: String,
    /// `<Adapter>.ReplicaGroupId`.
    replica_group_id: String,
    /// `<Adapter>.Locator`, else the default locator.
    locator: Option<Arc<LocatorInfo>>,
    /// Set by the first activation.
    started: AtomicBool,
    /// Whether the registry holds our endpoints (deactivation removes them).
    registered: AtomicBool,
}

impl AdapterRegistration {
    /// Reads the settings of adapter `name`.
    ///
    /// # Errors
    ///
    /// An unparsable `<name>.Locator`.
    pub(crate) fn from_properties(communicator: &Communicator, name: &str) -> Result<Self> {
        let props = communicator.properties();
        let get = |key: &str| {
            props
                .get(&format!("{name}.{key}"))
                .map(|v| v.trim().to_string())
                .unwrap_or_default()
        };
        Ok(AdapterRegistration {
            adapter_id: get("AdapterId"),
            replica_group_id: get("ReplicaGroupId"),
            locator: communicator
                .inner
                .locators
                .for_adapter(communicator, name)?,
            started: AtomicBool::new(false),
            registered: AtomicBool::new(false),
        })
    }

    /// Whether activation registers the adapter.
    fn needed(&self) -> bool {
        !self.adapter_id.is_empty() && self.locator.is_some()
    }
}

impl ObjectAdapter {
    /// Registers the adapter with its locator registry (when it has an
    /// `<Adapter>.AdapterId` and a locator), then activates it, as Ice's
    /// `activate()` does. Prefer it to [`ObjectAdapter::activate`] for a
    /// registered adapter: clients can resolve it as soon as it returns,
    /// and registration errors are reported.
    ///
    /// # Errors
    ///
    /// [`Error::NotRegistered`] when the registry does not know the
    /// adapter or the replica group (IceGrid without dynamic
    /// registration), [`Error::AdapterIdInUse`] when another server is
    /// active with this adapter id, failures to reach the locator. The
    /// adapter then stays holding.
    pub async fn activate_and_register(&self) -> Result<()> {
        let reg = &self.inner.registration;
        if !reg.started.swap(true, Ordering::AcqRel) && reg.needed() {
            if let Err(e) = self.register_with_locator().await {
                reg.started.store(false, Ordering::Release);
                return Err(e);
            }
        }
        self.activate();
        Ok(())
    }

    /// Called by [`ObjectAdapter::activate`]: registers the adapter in the
    /// background on its first activation (errors are logged).
    pub(crate) fn spawn_registration(&self) {
        let reg = &self.inner.registration;
        if reg.started.swap(true, Ordering::AcqRel) || !reg.needed() {
            return;
        }
        let adapter = self.clone();
        tokio::spawn(async move {
            if let Err(e) = adapter.register_with_locator().await {
                tracing::error!(adapter = %adapter.name(), "registration with the locator failed: {e}");
            }
        });
    }

    /// Takes the adapter's endpoints off the registry, if they are there
    /// (called by [`ObjectAdapter::deactivate`]; errors are logged).
    pub(crate) async fn unregister_from_locator(&self) {
        let reg = &self.inner.registration;
        if !reg.registered.swap(false, Ordering::AcqRel) {
            return;
        }
        match tokio::time::timeout(UNREGISTER_TIMEOUT, self.set_direct_proxy(None)).await {
            Ok(Ok(())) => tracing::debug!(adapter = %self.name(), "unregistered"),
            Ok(Err(e)) => tracing::warn!(adapter = %self.name(), "unregistration failed: {e}"),
            Err(_) => tracing::warn!(adapter = %self.name(), "unregistration timed out"),
        }
    }

    async fn register_with_locator(&self) -> Result<()> {
        // A server activated by an IceGrid node gives it its Process
        // proxy first (see `admin.rs`).
        self.communicator()?.create_admin().await?;
        let direct = self.create_direct_proxy(Identity::from_name("dummy"));
        self.set_direct_proxy(Some(direct.to_data())).await?;
        self.inner
            .registration
            .registered
            .store(true, Ordering::Release);
        tracing::debug!(adapter = %self.name(), "registered with the locator");
        Ok(())
    }

    /// `setAdapterDirectProxy` / `setReplicatedAdapterDirectProxy`.
    async fn set_direct_proxy(&self, proxy: Option<ProxyData>) -> Result<()> {
        let reg = &self.inner.registration;
        let Some(info) = &reg.locator else {
            return Ok(());
        };
        let registry = info.registry().await?;
        let (operation, params) = if reg.replica_group_id.is_empty() {
            let params = registry.encode_params(|e| {
                e.write_string(&reg.adapter_id);
                e.write(&proxy);
            });
            ("setAdapterDirectProxy", params)
        } else {
            let params = registry.encode_params(|e| {
                e.write_string(&reg.adapter_id);
                e.write_string(&reg.replica_group_id);
                e.write(&proxy);
            });
            ("setReplicatedAdapterDirectProxy", params)
        };
        let reply = registry
            .invoke(operation, OperationMode::Idempotent, params)
            .await?;
        match reply.into_ok() {
            Ok(_) => Ok(()),
            Err(Error::UnknownUserException(t)) => Err(match t.as_str() {
                "::Ice::AdapterNotFoundException" => Error::NotRegistered {
                    kind: "object adapter".into(),
                    id: reg.adapter_id.clone(),
                },
                "::Ice::InvalidReplicaGroupIdException" => Error::NotRegistered {
                    kind: "replica group".into(),
                    id: reg.replica_group_id.clone(),
                },
                "::Ice::AdapterAlreadyActiveException" => {
                    Error::AdapterIdInUse(reg.adapter_id.clone())
                }
                _ => Error::UnknownUserException(t),
            }),
            Err(e) => Err(e),
        }
    }

    /// `<Adapter>.AdapterId`, empty when unset.
    pub fn adapter_id(&self) -> &str {
        &self.inner.registration.adapter_id
    }

    /// `<Adapter>.ReplicaGroupId`, empty when unset.
    pub fn replica_group_id(&self) -> &str {
        &self.inner.registration.replica_group_id
    }

    /// The locator the adapter registers with, if any.
    pub fn locator(&self) -> Option<Proxy> {
        self.inner
            .registration
            .locator
            .as_ref()
            .map(|l| l.locator.clone())
    }

    /// A proxy for `identity` with the adapter's published endpoints.
    pub fn create_direct_proxy(&self, identity: Identity) -> Proxy {
        Proxy::new_internal(
            self.inner.communicator.clone(),
            identity,
            self.published_endpoints().to_vec(),
        )
    }

    /// A proxy for `identity` that names the adapter's replica group, or
    /// else its adapter id, and no endpoints: clients resolve it through
    /// their locator. Without an adapter id, the direct proxy.
    pub fn create_indirect_proxy(&self, identity: Identity) -> Proxy {
        let reg = &self.inner.registration;
        let id = if reg.replica_group_id.is_empty() {
            &reg.adapter_id
        } else {
            &reg.replica_group_id
        };
        let direct = self.create_direct_proxy(identity);
        if id.is_empty() {
            return direct;
        }
        let indirect = direct.ice_adapter_id(id);
        match &reg.locator {
            Some(l) => indirect.with(|p| p.locator = Some(l.clone())),
            None => indirect,
        }
    }
}
