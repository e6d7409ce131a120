//! The `Ice.Admin` object and its `Process` facet: what an IceGrid node
//! uses to stop (and write to) the servers it activates.
//!
//! A node starts a server with `Ice.Admin.Endpoints` and
//! `Ice.Admin.ServerId` in its configuration and waits until the server
//! gives the registry its `Ice::Process` proxy
//! (`LocatorRegistry::setServerProcessProxy`); `icegridadmin server stop`
//! then calls `Process::shutdown`. [`Communicator::create_admin`] does
//! that, and object adapter registration calls it first, so a floe
//! server activated by a node needs nothing more.
//!
//! The admin object is served on the object adapter `Ice.Admin`, as
//! `<Ice.Admin.InstanceName or a random UUID>/admin`, with the facets
//! `Ice.Admin.Facets` lists (all when unset):
//! - `Process` (`Ice::Process`, [`process`]): what `icegridadmin server
//!   stop` and `server stdout`/`stderr` use;
//! - `Properties` (`Ice::PropertiesAdmin`, [`properties`]):
//!   `icegridadmin server properties`/`property`, and the node's
//!   `application update --no-restart`;
//! - `Logger` (`Ice::LoggerAdmin`, [`logger`]), when the process logs
//!   through [`crate::logger`]: `icegridadmin server show [--follow] ID
//!   log`;
//! - `Metrics` (`IceMX::MetricsAdmin`, [`metrics`]), when an
//!   `IceMX.Metrics.<view>.*` property configures a metrics view (see
//!   [`crate::metrics`]): `icegridadmin` and IceGrid GUI's metrics.

/// A user exception the admin facets raise that has no members: its type
/// and its one-slice encoding.
macro_rules! memberless_exception {
    ($(#[$doc:meta])* $name:ident, $type_id:literal) => {
        $(#[$doc])*
        #[derive(Debug, Default)]
        struct $name;

        impl floe_wire::exception::UserExceptionType for $name {
            const TYPE_ID: &'static str = $type_id;
        }

        impl floe_wire::exception::UserException for $name {
            fn ice_id(&self) -> &'static str {
                $type_id
            }

            fn ice_ids(&self) -> &'static [&'static str] {
                &[$type_id]
            }

            fn write_slices(&self, enc: &mut floe_wire::Encoder) {
                enc.start_slice($type_id, None, true);
                enc.end_slice();
            }

            fn read_slices(&mut self, dec: &mut floe_wire::Decoder) -> floe_wire::Result<()> {
                dec.start_slice()?;
                dec.end_slice()
            }
        }
    };
}

mod logger;
mod metrics;
mod process;
mod properties;

use std::sync::Arc;

use floe_wire::protocol::OperationMode;
use floe_wire::Identity;

use crate::error::{Error, Result};
use crate::object_model::communicator::Communicator;
use crate::object_model::current::Current;
use crate::object_model::proxy::Proxy;
use crate::object_model::servant::{Dispatch, DispatchError, Servant};
use floe_wire::Encapsulation;

impl Communicator {
    /// Creates the `Ice.Admin` object adapter and the admin object with
    /// its facets, once, when admin is enabled
    /// (`Ice.Admin.Endpoints` set and `Ice.Admin.Enabled` not 0, or
    /// `Ice.Admin.Enabled` above 0); with `Ice.Admin.ServerId` and a
    /// default locator, registers the `Process` proxy with the locator
    /// registry. Returns the admin proxy, or `None` when admin is off.
    ///
    /// The facets are those `Ice.Admin.Facets` lists (all when unset):
    /// `Process` (`Ice::Process`: `shutdown`, `writeMessage`),
    /// `Properties` (`Ice::PropertiesAdmin`: `getProperty`,
    /// `getPropertiesForPrefix`, `setProperties`) and, when the process
    /// logs through [`crate::logger`], `Logger` (`Ice::LoggerAdmin`:
    /// `getLog`, `attachRemoteLogger`, `detachRemoteLogger`) and, when
    /// `IceMX.Metrics.*` configures a view, `Metrics`
    /// (`IceMX::MetricsAdmin`: `getMetricsViewNames`, `enableMetricsView`,
    /// `disableMetricsView`, `getMetricsView`, `getMapMetricsFailures`,
    /// `getMetricsFailures`).
    ///
    /// # Errors
    ///
    /// Binding `Ice.Admin.Endpoints`; [`Error::NotRegistered`] when the
    /// registry does not know the server id; failures to reach it.
    pub async fn create_admin(&self) -> Result<Option<Proxy>> {
        self.inner
            .admin
            .get_or_try_init(|| self.make_admin())
            .await
            .cloned()
    }

    async fn make_admin(&self) -> Result<Option<Proxy>> {
        let props = self.properties();
        let endpoints = props.get("Ice.Admin.Endpoints").filter(|e| !e.is_empty());
        let enabled = match props.get("Ice.Admin.Enabled") {
            Some(v) => v.trim().parse::<i64>().unwrap_or(0) > 0,
            None => endpoints.is_some(),
        };
        let Some(endpoints) = endpoints.filter(|_| enabled) else {
            return Ok(None);
        };
        let adapter = self
            .create_object_adapter_with_endpoints("Ice.Admin", &endpoints)
            .await?;
        let category = props
            .get("Ice.Admin.InstanceName")
            .filter(|c| !c.is_empty())
            .unwrap_or_else(crate::object_model::locator::selection::random_uuid);
        let identity = Identity::new("admin", category);
        let facets = props.get_list("Ice.Admin.Facets");
        let wanted = |f: &str| facets.is_empty() || facets.iter().any(|x| x == f);
        if wanted("Process") {
            adapter.add_facet(identity.clone(), "Process", process::facet(self))?;
        }
        if wanted("Properties") {
            adapter.add_facet(identity.clone(), "Properties", properties::facet(self))?;
        }
        if let Some(log) = crate::logger::buffer::process_log().filter(|_| wanted("Logger")) {
            adapter.add_facet(identity.clone(), "Logger", logger::facet(self, log))?;
        }
        if let Some(m) = self.inner.metrics.clone().filter(|_| wanted("Metrics")) {
            adapter.add_facet(identity.clone(), "Metrics", metrics::facet(m))?;
        }
        adapter.activate();
        let admin = adapter.create_direct_proxy(identity);
        let server_id = props.get("Ice.Admin.ServerId").filter(|s| !s.is_empty());
        if let Some(server_id) = server_id.filter(|_| wanted("Process")) {
            self.set_server_process_proxy(&server_id, &admin.ice_facet("Process"))
                .await?;
        }
        Ok(Some(admin))
    }

    /// `LocatorRegistry::setServerProcessProxy` on the default locator's
    /// registry.
    async fn set_server_process_proxy(&self, server_id: &str, process: &Proxy) -> Result<()> {
        let Some(info) = self.inner.locators.default_locator() else {
            return Ok(());
        };
        let registry = info.registry().await?;
        let params = registry.encode_params(|e| {
            e.write_string(server_id);
            e.write(&Some(process.to_data()));
        });
        let reply = registry
            .invoke("setServerProcessProxy", OperationMode::Idempotent, params)
            .await?;
        match reply.into_ok() {
            Ok(_) => Ok(()),
            Err(Error::UnknownUserException(t)) if t == "::Ice::ServerNotFoundException" => {
                Err(Error::NotRegistered {
                    kind: "server".into(),
                    id: server_id.to_string(),
                })
            }
            Err(e) => Err(e),
        }
    }
}

/// The result of one operation of a facet.
type OpResult = std::result::Result<bytes::Bytes, DispatchError>;

/// An admin facet servant of type `type_id` (the adapter answers the
/// `Ice::Object` operations from it), with `ops` for the others (which
/// answers [`DispatchError::operation_not_exist`] for unknown ones).
fn facet<F>(type_id: &'static str, ops: F) -> Arc<dyn Servant>
where
    F: Fn(&Current, Encapsulation) -> OpResult + Send + Sync + 'static,
{
    // Sorted, as `ice_ids` answers them.
    let mut type_ids = [OBJECT, type_id];
    type_ids.sort_unstable();
    Arc::new(AdminFacet {
        type_id,
        type_ids,
        ops,
    })
}

const OBJECT: &str = "::Ice::Object";

struct AdminFacet<F> {
    type_id: &'static str,
    type_ids: [&'static str; 2],
    ops: F,
}

impl<F> Servant for AdminFacet<F>
where
    F: Fn(&Current, Encapsulation) -> OpResult + Send + Sync + 'static,
{
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch {
        Dispatch::ready((self.ops)(&current, params))
    }

    fn ice_id(&self) -> &str {
        self.type_id
    }

    fn ice_ids(&self) -> &[&str] {
        &self.type_ids
    }
}
