//! The floe server's servants for Ice's wider server API, doing what
//! `peers/server.py` and `peers/server.cpp` do: relayed exceptions
//! (`Relaying`), facets and default servants (`Faceted`, on a second
//! adapter), servant locators (`Located`), and value factories with
//! marshaling hooks (`Values`), and a class with operations
//! (`LoudGreeter`), overridden built-in operations (`Observed`), and an
//! adapter deactivated by its own servant (`Deactivation`), and optional
//! classes and proxies set to null or unset (`OptionalNulls`), and the
//! connection's endpoint (`Info`). A child of `floe_server`.

use std::sync::{Arc, Mutex};

use floe::codegen::{ClassRef, Current, DispatchError, ValuePtr};
use floe::runtime::{ObjectAdapter, Servant, ServantLocator};
use floe::Identity;
use floe_conformance::server_gen::conf::*;

type Res<T> = Result<T, DispatchError>;

// ------------------------------------------------------------ relayed exceptions

pub(super) struct RelayingI;

impl Relaying for RelayingI {
    async fn relay_preserved(&self, r: Option<RelayPrx>, _: &Current) -> Res<()> {
        let r = r.ok_or_else(|| DispatchError::unknown("null Relay proxy"))?;
        // The exception (with the slices this side does not know, kept by
        // `["preserve-slice"]`) goes back to the caller as it came.
        Ok(r.raise_preserved().await?)
    }
    async fn relay_unpreserved(&self, r: Option<RelayPrx>, _: &Current) -> Res<()> {
        let r = r.ok_or_else(|| DispatchError::unknown("null Relay proxy"))?;
        Ok(r.raise_unpreserved().await?)
    }
}

// ------------------------------------------------------------ facets

struct FacetedI(&'static str);

impl Faceted for FacetedI {
    async fn which(&self, current: &Current) -> Res<String> {
        Ok(format!("{}:{}:{}", self.0, current.id.name, current.facet))
    }
}

/// The second adapter: identity "fct" with the default facet and facet
/// "b", default servants for category "dflt" and for every category.
pub(super) fn facets_adapter(adapter: &ObjectAdapter) {
    let fct = Identity::from_name("fct");
    adapter
        .add(fct.clone(), FacetedDispatcher::new(FacetedI("fct")))
        .expect("add fct");
    adapter
        .add_facet(fct, "b", FacetedDispatcher::new(FacetedI("fct-b")))
        .expect("add fct -f b");
    adapter.add_default_servant("dflt", FacetedDispatcher::new(FacetedI("dflt")));
    adapter.add_default_servant("", FacetedDispatcher::new(FacetedI("any")));
}

// ------------------------------------------------------------ servant locators

/// The cookie `finished` received last.
type Last = Arc<Mutex<String>>;

struct LocatedI {
    last: Last,
}

impl Located for LocatedI {
    async fn who_am_i(&self, current: &Current) -> Res<String> {
        Ok(format!("{}/{}", current.id.category, current.id.name))
    }
    async fn op(&self, current: &Current) -> Res<()> {
        if current.id.name == "servant-user" {
            return Err(LocatorError {
                r#where: "servant".into(),
            }
            .into());
        }
        Ok(())
    }
    async fn last_finished(&self, _: &Current) -> Res<String> {
        Ok(self.last.lock().unwrap_or_else(|p| p.into_inner()).clone())
    }
    async fn destroy_adapter(&self, current: &Current) -> Res<String> {
        let got = Arc::new(Mutex::new(Vec::new()));
        let adapter = current
            .adapter
            .communicator()?
            .create_object_adapter_with_endpoints("Gone", "")
            .await?;
        adapter.add_servant_locator(GoneLocator(got.clone()), "gone")?;
        adapter.destroy().await;
        let got = got.lock().unwrap_or_else(|p| p.into_inner());
        Ok(got.join(","))
    }
}

/// Records the categories `deactivate` receives.
struct GoneLocator(Arc<Mutex<Vec<String>>>);

impl ServantLocator for GoneLocator {
    type Cookie = ();

    async fn locate(&self, _: &Current) -> Res<Option<(Arc<dyn Servant>, ())>> {
        Ok(None)
    }
    fn deactivate(&self, category: &str) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(category.to_owned());
    }
}

/// What a locator raises for an identity named `<at>-<kind>`.
fn fail(name: &str, at: &str) -> Res<()> {
    match name
        .strip_prefix(at)
        .and_then(|rest| rest.strip_prefix('-'))
    {
        Some("user") => Err(LocatorError { r#where: at.into() }.into()),
        Some("not-exist") => Err(DispatchError::object_not_exist()),
        Some("local") => Err(floe::runtime::Error::Socket(format!("{at} failed")).into()),
        Some("other") => Err(DispatchError::unknown(at)),
        _ => Ok(()),
    }
}

struct LocatorI {
    servant: Arc<dyn Servant>,
    last: Last,
}

impl ServantLocator for LocatorI {
    type Cookie = String;

    async fn locate(&self, current: &Current) -> Res<Option<(Arc<dyn Servant>, String)>> {
        let (category, name) = (&current.id.category, &current.id.name);
        if name == "missing" || (category.is_empty() && !name.starts_with("any-")) {
            return Ok(None);
        }
        fail(name, "locate")?;
        Ok(Some((
            self.servant.clone(),
            format!("cookie:{category}/{name}"),
        )))
    }
    async fn finished(&self, current: &Current, _: Arc<dyn Servant>, cookie: String) -> Res<()> {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = cookie;
        fail(&current.id.name, "finished")
    }
}

/// The locators of categories "loc" and "" (one servant, one record of
/// the last cookie).
pub(super) fn add_locators(adapter: &ObjectAdapter) {
    let last = Last::default();
    let servant: Arc<dyn Servant> = LocatedDispatcher::new(LocatedI { last: last.clone() });
    for category in ["loc", ""] {
        let locator = LocatorI {
            servant: servant.clone(),
            last: last.clone(),
        };
        adapter
            .add_servant_locator(locator, category)
            .expect("add a servant locator");
    }
}

// ------------------------------------------------------------ value factories

pub(super) struct ValuesI;

impl Values for ValuesI {
    async fn get_marker(&self, _: &Current) -> Res<Option<ValuePtr>> {
        Ok(Some(ValuePtr::new(
            floe::wire::class::InterfaceByValue::new("::Conf::Marker"),
        )))
    }
    async fn get_hooked(&self, _: &Current) -> Res<Option<ClassRef<Hooked>>> {
        // Its ice_preMarshal hook (lib.rs) sets preMarshalled on the way out.
        Ok(Some(ClassRef::new(Hooked::default())))
    }
    async fn check_hooked(&self, h: Option<ClassRef<Hooked>>, _: &Current) -> Res<String> {
        Ok(match h {
            Some(h) => {
                let h = h.read();
                format!("{}:{}", h.pre_marshalled, h.post_unmarshalled)
            }
            None => "null".into(),
        })
    }
}

// ------------------------------------------------------------ classes with operations

pub(super) struct LoudGreeterI;

impl GreeterDisp for LoudGreeterI {
    async fn greet(&self, name: String, _: &Current) -> Res<String> {
        Ok(format!("hello, {name}"))
    }
}

impl LoudGreeterDisp for LoudGreeterI {
    async fn shout(&self, s: String, _: &Current) -> Res<String> {
        Ok(format!("{}!", s.to_ascii_uppercase()))
    }
}

// ------------------------------------------------------------ overridden built-in operations

/// Counts `ice_ping`s (and their mode); claims `::Conf::Extra` too.
#[derive(Default)]
pub(super) struct ObservedI {
    /// (pings, mode of the last one or -1).
    seen: Mutex<(u32, i32)>,
}

impl Observed for ObservedI {
    async fn pings(&self, _: &Current) -> Res<String> {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let out = format!("{}:{}", seen.0, seen.1);
        *seen = (0, -1);
        Ok(out)
    }
}

impl floe::runtime::Builtins for ObservedI {
    async fn ice_ping(&self, current: &Current) -> Res<()> {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        *seen = (seen.0 + 1, current.mode as i32);
        Ok(())
    }
    async fn ice_is_a(&self, type_id: String, type_ids: &[&str], _: &Current) -> Res<bool> {
        Ok(type_id == "::Conf::Extra" || type_ids.contains(&type_id.as_str()))
    }
    async fn ice_ids(&self, type_ids: &[&str], _: &Current) -> Res<Vec<String>> {
        let mut ids: Vec<String> = type_ids.iter().map(|t| (*t).to_owned()).collect();
        ids.push("::Conf::Extra".into());
        ids.sort();
        Ok(ids)
    }
}

// ------------------------------------------------------------ adapter deactivation

struct DeactivatingI;

impl Deactivating for DeactivatingI {
    async fn deactivate_self(&self, current: &Current) -> Res<()> {
        // Starts the deactivation and returns: the close waits for this
        // very dispatch.
        current.adapter.deactivate().await;
        Ok(())
    }
}

/// The adapter "Own" of the last `create`.
#[derive(Default)]
pub(super) struct DeactivationI {
    own: Mutex<Option<ObjectAdapter>>,
}

impl Deactivation for DeactivationI {
    async fn create(&self, current: &Current) -> Res<Option<DeactivatingPrx>> {
        let own = current
            .adapter
            .communicator()?
            .create_object_adapter_with_endpoints("Own", "tcp -h 127.0.0.1 -p 0")
            .await?;
        let prx = own.add(
            Identity::from_name("own"),
            DeactivatingDispatcher::new(DeactivatingI),
        )?;
        own.activate();
        *self.own.lock().unwrap_or_else(|p| p.into_inner()) = Some(own);
        Ok(Some(DeactivatingPrx::unchecked_cast(prx)))
    }
    async fn wait_deactivated(&self, _: &Current) -> Res<bool> {
        let own = self.own.lock().unwrap_or_else(|p| p.into_inner()).take();
        let own = own.ok_or_else(|| DispatchError::unknown("no adapter created"))?;
        own.wait_for_deactivate().await;
        own.destroy().await;
        Ok(true)
    }
}

// ------------------------------------------------------------ optional classes and proxies: null vs unset

/// "unset", "null" or "set" (`["rust:optional-null"]` keeps them apart).
fn null_state<T>(v: &Option<Option<T>>) -> &'static str {
    match v {
        None => "unset",
        Some(None) => "null",
        Some(Some(_)) => "set",
    }
}

pub(super) struct OptionalNullsI;

impl OptionalNulls for OptionalNullsI {
    async fn describe(
        &self,
        b: Option<Option<ClassRef<Base>>>,
        p: Option<Option<OperationsPrx>>,
        _: &Current,
    ) -> Res<String> {
        Ok(format!("{}:{}", null_state(&b), null_state(&p)))
    }
    async fn make(&self, state: String, current: &Current) -> Res<OptionalNullsMakeResult> {
        Ok(match state.as_str() {
            "null" => (Some(None), Some(None)).into(),
            "set" => {
                let ops = current.adapter.create_proxy(Identity::from_name("ops"));
                let b = ClassRef::new(Base { b: "s".into() });
                (
                    Some(Some(b)),
                    Some(Some(OperationsPrx::unchecked_cast(ops))),
                )
                    .into()
            }
            _ => (None, None).into(),
        })
    }
}

// ------------------------------------------------------------ connection info

/// `<type>:<host>:<port>:<timeout>:<compress>`, as the Ice peers write it.
fn endpoint_text(e: &floe::runtime::Endpoint) -> String {
    let kind = match e.transport {
        floe::runtime::Transport::Tcp => "tcp".to_owned(),
        other => format!("{other:?}"),
    };
    format!("{kind}:{}:{}:{}:{}", e.host, e.port, e.timeout, e.compress)
}

pub(super) struct InfoI;

impl Info for InfoI {
    async fn endpoint_info(&self, current: &Current) -> Res<String> {
        let endpoint = current.connection.as_ref().and_then(|c| c.endpoint());
        Ok(endpoint.map_or_else(|| "no endpoint".into(), endpoint_text))
    }
}
