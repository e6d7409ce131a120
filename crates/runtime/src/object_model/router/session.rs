//! [`Glacier2Session`]: a session with a Glacier2 router, the counterpart
//! of Ice's `Glacier2::SessionHelper` for clients outside a firewall.
//!
//! ```no_run
//! # async fn f() -> floe_runtime::Result<()> {
//! use floe_runtime::{Communicator, Glacier2Session};
//! let communicator = Communicator::new();
//! let router = communicator.string_to_proxy("Glacier2/router:tcp -h gw -p 4063")?;
//! let session = Glacier2Session::create(&communicator, &router, "user", "password").await?;
//! let hello = session.routed(&communicator.string_to_proxy("hello@HelloAdapter")?);
//! hello.ice_ping().await?;
//! session.destroy().await?;
//! # Ok(()) }
//! ```
//!
//! A router listening on `ssl` can authorize the client by its TLS
//! connection instead:
//! [`Glacier2Session::create_from_secure_connection`].
//!
//! Callbacks come back over the same connection, to the object adapter
//! of [`Glacier2Session::create_callback_adapter`].
//!
//! A Glacier2 session lives as long as the client's connection to the
//! router: every routed proxy uses that one connection, which the session
//! keeps alive with heartbeats (every half of the router's
//! `getACMTimeout`), or with `refreshSession` calls when the router only
//! has a session timeout (`getSessionTimeout`).

use std::time::Duration;

use floe_wire::protocol::OperationMode;
use tokio::task::JoinHandle;

use floe_wire::ProxyData;

use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::object_model::communicator::Communicator;
use crate::object_model::object_adapter::ObjectAdapter;
use crate::object_model::proxy::Proxy;

/// A session with a Glacier2 router.
#[derive(Debug)]
pub struct Glacier2Session {
    router: Proxy,
    session: Option<Proxy>,
    category: String,
    keepalive: Option<JoinHandle<()>>,
}

impl Glacier2Session {
    /// Creates a session with `Glacier2::Router::createSession(user,
    /// password)` on `router` (e.g. `Glacier2/router:tcp -h gw -p 4063`),
    /// asks for the client's callback category, and starts keeping the
    /// session alive.
    ///
    /// # Errors
    ///
    /// Failures to reach the router; the router's refusal as
    /// [`Error::UnknownUserException`] with the type id
    /// (`::Glacier2::PermissionDeniedException`,
    /// `::Glacier2::CannotCreateSessionException`).
    pub async fn create(
        communicator: &Communicator,
        router: &Proxy,
        user: &str,
        password: &str,
    ) -> Result<Glacier2Session> {
        let router = communicator.inner.routers.info(router).router.clone();
        let params = router.encode_params(|e| {
            e.write_string(user);
            e.write_string(password);
        });
        Self::establish(router, "createSession", params).await
    }

    /// Creates a session with
    /// `Glacier2::Router::createSessionFromSecureConnection` on `router`,
    /// whose endpoints must be `ssl` (e.g. `Glacier2/router:ssl -h gw -p
    /// 4064`): the router authorizes the client by its TLS connection
    /// (`Glacier2.SSLPermissionsVerifier`, which sees the certificate the
    /// communicator presents with `IceSSL.CertFile`) instead of a user
    /// and password. Then as [`Glacier2Session::create`].
    ///
    /// # Errors
    ///
    /// Failures to reach the router (TLS handshake errors included); the
    /// router's refusal as [`Error::UnknownUserException`] with the type
    /// id (`::Glacier2::PermissionDeniedException`, also when the
    /// connection is not `ssl` or the router has no SSL permissions
    /// verifier; `::Glacier2::CannotCreateSessionException`).
    pub async fn create_from_secure_connection(
        communicator: &Communicator,
        router: &Proxy,
    ) -> Result<Glacier2Session> {
        let router = communicator.inner.routers.info(router).router.clone();
        let params = router.empty_params();
        Self::establish(router, "createSessionFromSecureConnection", params).await
    }

    /// Calls `operation` (a session creation) on `router`, then asks for
    /// the callback category and starts keeping the session alive.
    async fn establish(
        router: Proxy,
        operation: &str,
        params: bytes::Bytes,
    ) -> Result<Glacier2Session> {
        let reply = router
            .invoke(operation, OperationMode::Normal, params)
            .await?
            .into_ok()?;
        let session = router.reply_decoder(reply)?.read::<Option<Proxy>>()?;
        let category = {
            let reply = router
                .invoke(
                    "getCategoryForClient",
                    OperationMode::Nonmutating,
                    router.empty_params(),
                )
                .await?
                .into_ok()?;
            floe_wire::Decoder::from_encapsulation(reply)?.read_string()?
        };
        let keepalive = keep_alive(&router).await?;
        Ok(Glacier2Session {
            router,
            session,
            category,
            keepalive,
        })
    }

    /// The session proxy the router's session manager returned (`None`
    /// with the router's default sessions).
    pub fn session(&self) -> Option<&Proxy> {
        self.session.as_ref()
    }

    /// The router.
    pub fn router(&self) -> &Proxy {
        &self.router
    }

    /// The identity category of callback objects the router forwards to
    /// this client (`getCategoryForClient`).
    pub fn category_for_client(&self) -> &str {
        &self.category
    }

    /// `proxy` routed through this session's router.
    pub fn routed(&self, proxy: &Proxy) -> Proxy {
        proxy.ice_router(Some(&self.router))
    }

    /// An object adapter `name` for callbacks through the router: it does
    /// not listen; requests for it come over this session's connection to
    /// the router, and its proxies carry the router's server endpoints
    /// (`getServerProxy`; sets `<name>.PublishedEndpoints`). Give its
    /// servants identities in [`Glacier2Session::category_for_client`]:
    /// the router forwards only those to this client.
    ///
    /// # Errors
    ///
    /// [`Error::NoEndpoint`] when the router has no server endpoints
    /// (`Glacier2.Server.Endpoints`); failures to reach it.
    pub async fn create_callback_adapter(&self, name: &str) -> Result<ObjectAdapter> {
        let communicator = self.router.communicator()?;
        let reply = self
            .router
            .invoke(
                "getServerProxy",
                OperationMode::Nonmutating,
                self.router.empty_params(),
            )
            .await?
            .into_ok()?;
        let server = floe_wire::Decoder::from_encapsulation(reply)?.read::<Option<ProxyData>>()?;
        let published: Vec<String> = server
            .iter()
            .flat_map(|p| p.endpoints.iter().filter_map(Endpoint::from_data))
            .map(|e| e.to_string())
            .collect();
        if published.is_empty() {
            return Err(Error::NoEndpoint(format!(
                "router {} has no server endpoints",
                self.router
            )));
        }
        communicator
            .properties()
            .set(&format!("{name}.PublishedEndpoints"), &published.join(":"));
        let adapter = communicator
            .create_object_adapter_with_endpoints(name, "")
            .await?;
        let connection = self.router.ice_get_connection().await?;
        connection.set_adapter(Some(adapter.clone()));
        adapter.activate();
        Ok(adapter)
    }

    /// Destroys the session (`destroySession`); the router then closes the
    /// connection.
    ///
    /// # Errors
    ///
    /// Failures to reach the router, other than the router closing the
    /// connection as it answers.
    pub async fn destroy(mut self) -> Result<()> {
        if let Some(k) = self.keepalive.take() {
            k.abort();
        }
        let r = self
            .router
            .invoke(
                "destroySession",
                OperationMode::Normal,
                self.router.empty_params(),
            )
            .await;
        match r {
            Ok(reply) => reply.into_ok().map(drop),
            Err(Error::ConnectionLost(_) | Error::CloseConnection) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

impl Drop for Glacier2Session {
    fn drop(&mut self) {
        if let Some(k) = self.keepalive.take() {
            k.abort();
        }
    }
}

/// Starts the task that keeps the session alive, if the router needs one.
async fn keep_alive(router: &Proxy) -> Result<Option<JoinHandle<()>>> {
    let ask = |op: &'static str| async move {
        let reply = router
            .invoke(op, OperationMode::Nonmutating, router.empty_params())
            .await?
            .into_ok()?;
        Ok::<_, Error>(floe_wire::Decoder::from_encapsulation(reply)?)
    };
    let acm = ask("getACMTimeout").await?.read_i32()?;
    if acm > 0 {
        let connection = router.ice_get_connection().await?;
        let period = Duration::from_secs(u64::from(acm.unsigned_abs())) / 2;
        return Ok(Some(tokio::spawn(async move {
            while connection.is_active() {
                tokio::time::sleep(period.max(Duration::from_millis(500))).await;
                if connection.heartbeat().is_err() {
                    break;
                }
            }
        })));
    }
    let timeout = ask("getSessionTimeout").await?.read_i64()?;
    if timeout > 0 {
        let router = router.clone();
        let period = Duration::from_secs(timeout.unsigned_abs()) / 2;
        return Ok(Some(tokio::spawn(async move {
            loop {
                tokio::time::sleep(period.max(Duration::from_millis(500))).await;
                let r = router
                    .invoke(
                        "refreshSession",
                        OperationMode::Normal,
                        router.empty_params(),
                    )
                    .await;
                if let Err(e) = r.and_then(|r| r.into_ok()) {
                    tracing::warn!("Glacier2 refreshSession failed: {e}");
                    break;
                }
            }
        })));
    }
    Ok(None)
}
