//! Locators: how indirect proxies find their servers, and how object
//! adapters tell the world where they are (IceGrid's registry is the
//! locator of an Ice deployment).
//!
//! - A proxy without endpoints is **indirect**: `hello@HelloAdapter` names
//!   an object adapter (or a replica group), resolved with the locator's
//!   `findAdapterById`; a bare `hello` is a **well-known** object, resolved
//!   with `findObjectById` (and then its adapter, when the locator answers
//!   with an indirect proxy). See `resolve.rs`.
//! - The answers are kept in a cache (`cache.rs`) shared by the proxies of one
//!   locator, for `Ice.Default.LocatorCacheTimeout` seconds (`-1`, the
//!   default, is forever; `0` asks every time), and forgotten when their
//!   endpoints cannot be reached.
//! - An object adapter with an `<Adapter>.AdapterId` registers its
//!   endpoints with the locator's registry when activated, and removes
//!   them when deactivated (`object_adapter/registration.rs`).
//!
//! The locator is `Ice.Default.Locator` (e.g.
//! `IceGrid/Locator:tcp -h registry -p 4061`), or per proxy
//! [`crate::Proxy::ice_locator`], or per adapter `<Adapter>.Locator`.
//! The `Ice::Locator` and `Ice::LocatorRegistry` operations are encoded
//! here by hand: there are five, and generated code would need the Slice
//! compiler in the runtime's build.

pub(crate) mod cache;
mod proxy_settings;
pub(crate) mod resolve;
pub mod selection;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use floe_wire::protocol::OperationMode;
use floe_wire::{Identity, ProxyData};

use crate::error::{Error, Result};
use crate::object_model::communicator::Communicator;
use crate::object_model::proxy::Proxy;
use crate::properties::Properties;

pub use selection::EndpointSelection;

/// One locator and what it answered: shared by every proxy (and object
/// adapter) that uses that locator.
pub(crate) struct LocatorInfo {
    /// The `Ice::Locator` proxy (itself without a locator).
    pub(crate) locator: Proxy,
    /// Its answers.
    pub(crate) cache: cache::LocatorCache,
    /// The `Ice::LocatorRegistry`, once asked for.
    registry: tokio::sync::Mutex<Option<Proxy>>,
}

/// The locator settings of a communicator: the default locator and the
/// `Ice.Default.*` values new proxies start with, and one [`LocatorInfo`]
/// per locator.
pub(crate) struct LocatorManager {
    /// `Ice.Default.Locator`, set once the communicator exists.
    default: OnceLock<Option<Arc<LocatorInfo>>>,
    /// `Ice.Default.LocatorCacheTimeout` (seconds; -1 = forever).
    pub(crate) cache_timeout: i32,
    /// `Ice.Default.EndpointSelection`.
    pub(crate) selection: EndpointSelection,
    /// By the locator proxy's string.
    infos: Mutex<HashMap<String, Arc<LocatorInfo>>>,
}

impl LocatorManager {
    /// Reads the `Ice.Default.*` settings (the default locator itself is
    /// parsed by [`LocatorManager::init_default`]).
    pub(crate) fn from_properties(props: &Properties) -> Self {
        let selection = match props.get("Ice.Default.EndpointSelection") {
            None => EndpointSelection::Random,
            Some(v) => EndpointSelection::parse(&v).unwrap_or_else(|| {
                tracing::warn!("Ice.Default.EndpointSelection={v}: unknown value, using Random");
                EndpointSelection::Random
            }),
        };
        LocatorManager {
            default: OnceLock::new(),
            cache_timeout: props
                .get_int_or("Ice.Default.LocatorCacheTimeout", -1)
                .clamp(-1, i64::from(i32::MAX)) as i32,
            selection,
            infos: Mutex::new(HashMap::new()),
        }
    }

    /// Parses `Ice.Default.Locator` into the default locator of
    /// `communicator` (called once, right after the communicator is made:
    /// the locator proxy needs it).
    pub(crate) fn init_default(&self, communicator: &Communicator) {
        let info = proxy_property(communicator, "Ice.Default.Locator").map(|p| self.info(&p));
        let _ = self.default.set(info);
    }

    /// The default locator, if any.
    pub(crate) fn default_locator(&self) -> Option<Arc<LocatorInfo>> {
        self.default.get().cloned().flatten()
    }

    /// The shared state of the locator `locator`.
    pub(crate) fn info(&self, locator: &Proxy) -> Arc<LocatorInfo> {
        // The locator is reached directly, never through a locator.
        let locator = if locator.inner.locator.is_some() {
            locator.with(|p| p.locator = None)
        } else {
            locator.clone()
        };
        let key = locator.to_string();
        self.infos
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(key)
            .or_insert_with(|| {
                Arc::new(LocatorInfo {
                    locator,
                    cache: cache::LocatorCache::default(),
                    registry: tokio::sync::Mutex::new(None),
                })
            })
            .clone()
    }

    /// The locator of object adapter `name`: `<name>.Locator` if set, else
    /// the default.
    pub(crate) fn for_adapter(
        &self,
        communicator: &Communicator,
        name: &str,
    ) -> Result<Option<Arc<LocatorInfo>>> {
        match communicator.properties().get(&format!("{name}.Locator")) {
            Some(s) if !s.trim().is_empty() => {
                Ok(Some(self.info(&communicator.string_to_proxy(&s)?)))
            }
            _ => Ok(self.default_locator()),
        }
    }
}

/// The proxy in property `key` (`Ice.Default.Locator`,
/// `Ice.Default.Router`), if set; an unparsable one is logged and ignored.
pub(crate) fn proxy_property(communicator: &Communicator, key: &str) -> Option<Proxy> {
    let text = communicator
        .properties()
        .get(key)
        .filter(|s| !s.trim().is_empty())?;
    communicator
        .string_to_proxy(&text)
        .map_err(|e| tracing::error!("{key}={text}: {e}"))
        .ok()
}

/// The type id of the user exception in an answer, if it is one.
fn user_exception(e: &Error) -> Option<&str> {
    match e {
        Error::UnknownUserException(t) => Some(t.as_str()),
        _ => None,
    }
}

impl LocatorInfo {
    /// `Locator::findAdapterById`: the proxy the locator knows for
    /// `adapter_id`, `None` if it knows none.
    ///
    /// # Errors
    ///
    /// Failures to reach the locator; other user exceptions.
    pub(crate) async fn find_adapter_by_id(&self, adapter_id: &str) -> Result<Option<ProxyData>> {
        let params = self.locator.encode_params(|e| e.write_string(adapter_id));
        self.find("findAdapterById", params, "::Ice::AdapterNotFoundException")
            .await
    }

    /// `Locator::findObjectById`: the proxy the locator knows for the
    /// well-known object `identity`, `None` if it knows none.
    ///
    /// # Errors
    ///
    /// As [`LocatorInfo::find_adapter_by_id`].
    pub(crate) async fn find_object_by_id(&self, identity: &Identity) -> Result<Option<ProxyData>> {
        let params = self.locator.encode_params(|e| e.write(identity));
        self.find("findObjectById", params, "::Ice::ObjectNotFoundException")
            .await
    }

    async fn find(
        &self,
        operation: &str,
        params: bytes::Bytes,
        not_found: &str,
    ) -> Result<Option<ProxyData>> {
        // `["nonmutating"] idempotent` in Locator.ice: sent as Nonmutating.
        // Boxed: resolving a proxy invokes the locator, whose invocation
        // may resolve a proxy.
        let reply = Box::pin(
            self.locator
                .invoke(operation, OperationMode::Nonmutating, params),
        )
        .await?;
        match reply.into_ok() {
            Ok(encaps) => {
                let mut dec = floe_wire::Decoder::from_encapsulation(encaps)?;
                Ok(dec.read::<Option<ProxyData>>()?)
            }
            Err(e) if user_exception(&e) == Some(not_found) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The locator registry (`Locator::getRegistry`), asked once.
    ///
    /// # Errors
    ///
    /// Failures to reach the locator; [`Error::NotRegistered`] if it has
    /// no registry.
    pub(crate) async fn registry(&self) -> Result<Proxy> {
        let mut slot = self.registry.lock().await;
        if let Some(r) = &*slot {
            return Ok(r.clone());
        }
        let reply = self
            .locator
            .invoke(
                "getRegistry",
                OperationMode::Nonmutating,
                self.locator.empty_params(),
            )
            .await?
            .into_ok()?;
        let mut dec = self.locator.reply_decoder(reply)?;
        let registry = dec
            .read::<Option<Proxy>>()?
            .ok_or_else(|| Error::NotRegistered {
                kind: "locator registry".into(),
                id: self.locator.to_string(),
            })?;
        *slot = Some(registry.clone());
        Ok(registry)
    }
}
