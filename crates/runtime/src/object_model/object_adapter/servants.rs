//! An [`ObjectAdapter`]'s servants: the active servant map by identity and
//! facet, default servants by category and servant locators (Ice's `add`,
//! `addFacet`, `remove*`, `addDefaultServant`, `findServant`,
//! `addServantLocator`, `addWithUUID`), and the map they live in.

use std::collections::HashMap;
use std::sync::Arc;

use super::*;

/// The hasher of the maps every request looks up: foldhash, keyed with a
/// random seed per process (as std's `RandomState`), at a fraction of
/// SipHash's cost per identity.
type Fast = foldhash::fast::RandomState;

#[derive(Default)]
pub(super) struct ServantMap {
    /// identity → facet → servant ("" is the default facet).
    active: HashMap<Identity, Facets, Fast>,
    /// category → default servant ("" matches every category).
    defaults: HashMap<String, Arc<dyn Servant>, Fast>,
    /// category → servant locator ("" matches every category).
    pub(super) locators: HashMap<String, Arc<dyn DynServantLocator>>,
}

/// The servants of one identity, by facet. The default facet (`""`), which
/// nearly every request names, is kept apart so that finding it costs no
/// second hash per request.
#[derive(Default)]
pub(super) struct Facets {
    /// The `""` facet.
    default: Option<Arc<dyn Servant>>,
    /// Every other facet.
    named: HashMap<String, Arc<dyn Servant>>,
}

impl Facets {
    fn get(&self, facet: &str) -> Option<&Arc<dyn Servant>> {
        if facet.is_empty() {
            self.default.as_ref()
        } else {
            self.named.get(facet)
        }
    }

    fn contains(&self, facet: &str) -> bool {
        self.get(facet).is_some()
    }

    fn insert(&mut self, facet: &str, servant: Arc<dyn Servant>) {
        if facet.is_empty() {
            self.default = Some(servant);
        } else {
            self.named.insert(facet.to_string(), servant);
        }
    }

    fn remove(&mut self, facet: &str) -> Option<Arc<dyn Servant>> {
        if facet.is_empty() {
            self.default.take()
        } else {
            self.named.remove(facet)
        }
    }

    fn is_empty(&self) -> bool {
        self.default.is_none() && self.named.is_empty()
    }
}

impl ObjectAdapter {
    /// Registers `servant` for `identity` (default facet) and returns a proxy
    /// for it.
    ///
    /// # Errors
    ///
    /// [`Error::AlreadyRegistered`] if the identity already has a servant.
    pub fn add(&self, identity: Identity, servant: Arc<dyn Servant>) -> Result<Proxy> {
        self.add_facet(identity, "", servant)
    }

    /// Registers `servant` for `identity` and `facet`.
    ///
    /// # Errors
    ///
    /// [`Error::AlreadyRegistered`] if that facet already has a servant.
    pub fn add_facet(
        &self,
        identity: Identity,
        facet: &str,
        servant: Arc<dyn Servant>,
    ) -> Result<Proxy> {
        {
            let mut map = self
                .inner
                .servants
                .write()
                .unwrap_or_else(|p| p.into_inner());
            let facets = map.active.entry(identity.clone()).or_default();
            if facets.contains(facet) {
                return Err(Error::AlreadyRegistered(format!(
                    "servant for {}{}",
                    identity.name,
                    if facet.is_empty() {
                        String::new()
                    } else {
                        format!(" -f {facet}")
                    }
                )));
            }
            facets.insert(facet, servant);
        }
        Ok(self.create_proxy(identity).ice_facet(facet))
    }

    /// Removes the servant of `identity` and `facet`; returns it.
    pub fn remove_facet(&self, identity: &Identity, facet: &str) -> Option<Arc<dyn Servant>> {
        let mut map = self
            .inner
            .servants
            .write()
            .unwrap_or_else(|p| p.into_inner());
        let facets = map.active.get_mut(identity)?;
        let s = facets.remove(facet);
        if facets.is_empty() {
            map.active.remove(identity);
        }
        s
    }

    /// Removes the default-facet servant of `identity`.
    pub fn remove(&self, identity: &Identity) -> Option<Arc<dyn Servant>> {
        self.remove_facet(identity, "")
    }

    /// Registers a default servant for every identity of `category` that has
    /// no servant of its own (`""` = any category).
    pub fn add_default_servant(&self, category: &str, servant: Arc<dyn Servant>) {
        let mut map = self
            .inner
            .servants
            .write()
            .unwrap_or_else(|p| p.into_inner());
        map.defaults.insert(category.to_string(), servant);
    }

    /// Removes the default servant of `category`.
    pub fn remove_default_servant(&self, category: &str) -> Option<Arc<dyn Servant>> {
        let mut map = self
            .inner
            .servants
            .write()
            .unwrap_or_else(|p| p.into_inner());
        map.defaults.remove(category)
    }

    /// The servant for `identity` and `facet`, as Ice's
    /// `ServantManager::findServant`: the servant registered for both;
    /// else the default servant of the identity's category, else the one
    /// of category `""` (a default servant answers every facet, and also
    /// stands in for an identity that has servants, but none for `facet`).
    /// `Err(false)` when there is none and no servant has the identity
    /// (ObjectNotExist), `Err(true)` when the identity has servants for
    /// other facets only (FacetNotExist).
    pub fn find_servant(
        &self,
        identity: &Identity,
        facet: &str,
    ) -> std::result::Result<Arc<dyn Servant>, bool> {
        let map = self
            .inner
            .servants
            .read()
            .unwrap_or_else(|p| p.into_inner());
        let facets = map.active.get(identity);
        if let Some(s) = facets.and_then(|f| f.get(facet)) {
            return Ok(s.clone());
        }
        let default = map
            .defaults
            .get(identity.category.as_str())
            .or_else(|| map.defaults.get(""));
        match default {
            Some(s) => Ok(s.clone()),
            None => Err(facets.is_some()),
        }
    }

    /// Registers a servant locator for the identities of `category` (`""`:
    /// every category without a locator of its own), asked when no
    /// servant and no default servant answers a request (see
    /// [`ServantLocator`]).
    ///
    /// # Errors
    ///
    /// [`Error::AlreadyRegistered`] if `category` has a locator.
    pub fn add_servant_locator<L: ServantLocator>(&self, locator: L, category: &str) -> Result<()> {
        let mut map = self
            .inner
            .servants
            .write()
            .unwrap_or_else(|p| p.into_inner());
        if map.locators.contains_key(category) {
            return Err(Error::AlreadyRegistered(format!(
                "servant locator for category `{category}`"
            )));
        }
        map.locators.insert(category.to_string(), Arc::new(locator));
        Ok(())
    }

    /// Removes the servant locator of `category` (its `deactivate` is not
    /// called, as in Ice).
    ///
    /// # Errors
    ///
    /// [`Error::NotRegistered`] if `category` has none.
    pub fn remove_servant_locator(&self, category: &str) -> Result<()> {
        let mut map = self
            .inner
            .servants
            .write()
            .unwrap_or_else(|p| p.into_inner());
        match map.locators.remove(category) {
            Some(_) => Ok(()),
            None => Err(Error::NotRegistered {
                kind: "servant locator".into(),
                id: category.to_string(),
            }),
        }
    }

    /// Whether a servant locator is registered for exactly `category`.
    pub fn has_servant_locator(&self, category: &str) -> bool {
        self.inner
            .servants
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .locators
            .contains_key(category)
    }

    /// The locator asked for an identity of `category`: its own, else the
    /// one of `""`.
    pub(super) fn servant_locator(&self, category: &str) -> Option<Arc<dyn DynServantLocator>> {
        let map = self
            .inner
            .servants
            .read()
            .unwrap_or_else(|p| p.into_inner());
        map.locators
            .get(category)
            .or_else(|| map.locators.get(""))
            .cloned()
    }

    /// Whether some servant (of any facet) is registered for `identity`
    /// (Ice's `ServantManager::hasServant`): what makes a request that
    /// finds no servant `FacetNotExistException` rather than
    /// `ObjectNotExistException`.
    pub fn has_servant(&self, identity: &Identity) -> bool {
        self.inner
            .servants
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .active
            .contains_key(identity)
    }

    /// Adds `servant` with a new identity, a UUID with no category (Ice's
    /// `addWithUUID`), and returns its proxy.
    ///
    /// # Errors
    ///
    /// As [`ObjectAdapter::add`] (never in practice: the UUID is new).
    pub fn add_with_uuid(&self, servant: Arc<dyn Servant>) -> Result<Proxy> {
        let identity = Identity::from_name(crate::object_model::locator::selection::random_uuid());
        self.add(identity, servant)
    }

    /// Adds `servant` for `facet` with a new identity, a UUID with no
    /// category (Ice's `addFacetWithUUID`), and returns its proxy.
    ///
    /// # Errors
    ///
    /// As [`ObjectAdapter::add_facet`] (never in practice).
    pub fn add_facet_with_uuid(&self, servant: Arc<dyn Servant>, facet: &str) -> Result<Proxy> {
        let identity = Identity::from_name(crate::object_model::locator::selection::random_uuid());
        self.add_facet(identity, facet, servant)
    }
}
