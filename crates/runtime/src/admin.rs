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
//! `<Ice.Admin.InstanceName or a random UUID>/admin`; only the `Process`
//! facet is served (`Properties`, `Logger` and `Metrics` are not).

use floe_wire::protocol::OperationMode;
use floe_wire::Identity;

use crate::communicator::Communicator;
use crate::error::{Error, Result};
use crate::proxy::Proxy;
use crate::servant::{servant_fn, Dispatch, DispatchError};

/// The state of a communicator's admin object.
#[derive(Default)]
pub(crate) struct AdminState {
    /// The admin proxy, once created (`None` inside: admin disabled).
    created: tokio::sync::OnceCell<Option<Proxy>>,
}

const PROCESS_TYPE_ID: &str = "::Ice::Process";

impl Communicator {
    /// Creates the `Ice.Admin` object adapter and the admin object with
    /// its `Process` facet, once, when admin is enabled
    /// (`Ice.Admin.Endpoints` set and `Ice.Admin.Enabled` not 0, or
    /// `Ice.Admin.Enabled` above 0); with `Ice.Admin.ServerId` and a
    /// default locator, registers the `Process` proxy with the locator
    /// registry. Returns the admin proxy, or `None` when admin is off.
    ///
    /// `Process::shutdown` calls [`Communicator::shutdown`];
    /// `Process::writeMessage(message, fd)` writes to stdout (fd 1) or
    /// stderr (fd 2).
    ///
    /// # Errors
    ///
    /// Binding `Ice.Admin.Endpoints`; [`Error::NotRegistered`] when the
    /// registry does not know the server id; failures to reach it.
    pub async fn create_admin(&self) -> Result<Option<Proxy>> {
        let state = &self.inner.admin;
        state
            .created
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
            .unwrap_or_else(crate::locator::selection::random_uuid);
        let identity = Identity::new("admin", category);
        let communicator = self.clone();
        let process = servant_fn(move |current, params| {
            let result = match current.operation.as_str() {
                "shutdown" => {
                    communicator.shutdown();
                    Ok(current.empty_reply())
                }
                "writeMessage" => write_message(&current, params),
                "ice_ping" => Ok(current.empty_reply()),
                "ice_isA" => current
                    .params_decoder(params)
                    .and_then(|mut d| d.read_string())
                    .map(|t| current.encode_reply(|e| e.write_bool(is_process_type(&t))))
                    .map_err(DispatchError::from),
                "ice_id" => Ok(current.encode_reply(|e| e.write_string(PROCESS_TYPE_ID))),
                "ice_ids" => Ok(current.encode_reply(|e| {
                    e.write_size(2);
                    e.write_string("::Ice::Object");
                    e.write_string(PROCESS_TYPE_ID);
                })),
                _ => Err(DispatchError::operation_not_exist()),
            };
            Dispatch::ready(result)
        });
        adapter.add_facet(identity.clone(), "Process", process)?;
        adapter.activate();
        let admin = adapter.create_direct_proxy(identity);
        if let Some(server_id) = props.get("Ice.Admin.ServerId").filter(|s| !s.is_empty()) {
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

fn is_process_type(type_id: &str) -> bool {
    type_id == PROCESS_TYPE_ID || type_id == "::Ice::Object"
}

/// `Process::writeMessage(string message, int fd)`.
fn write_message(
    current: &crate::Current,
    params: floe_wire::Encapsulation,
) -> std::result::Result<bytes::Bytes, DispatchError> {
    use std::io::Write;
    let mut dec = current.params_decoder(params)?;
    let message = dec.read_string()?;
    let fd = dec.read_i32()?;
    let _ = match fd {
        2 => writeln!(std::io::stderr(), "{message}"),
        _ => writeln!(std::io::stdout(), "{message}").and_then(|_| std::io::stdout().flush()),
    };
    Ok(current.empty_reply())
}
