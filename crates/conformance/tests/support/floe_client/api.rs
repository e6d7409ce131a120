//! The floe client's checks of Ice's wider server and client API, with the
//! names of `peers/client.py` and `peers/client.cpp`: relayed exceptions
//! (`relay.*`, shaped like ZeroC's Ice/slicing/exceptions relay tests),
//! facets and default servants (`facet.*`, Ice/facets) and servant
//! locators (`loc.*`, Ice/servantLocator), value factories, interface by
//! value and marshaling hooks (`vf.*`, Ice/objects), and a class with
//! operations (`cls.*`, Ice/inheritance), and a servant's own built-in
//! operations (`bi.*`), and an adapter deactivated by its own servant
//! (`deact.*`, Ice/adapterDeactivation), and optional classes and proxies
//! set to null or unset (`optn.*`, Ice/optional), and the connection's
//! endpoint (`info.*`, Ice/info).
//! A child of `floe_client`, whose helpers and `Ctx` it uses.

use floe::codegen::{ClassRef, Current, DispatchError};
use floe::runtime::Communicator;
use floe_conformance::client_gen::conf::*;

use super::{eq, proxy, raises, user_error_as, Ctx, Fail, R};

/// The client's Relay servant: raises exceptions only clients know
/// (`ClientOnly.ice`), for a server to relay.
struct RelayI;

impl Relay for RelayI {
    async fn raise_preserved(&self, _: &Current) -> Result<(), DispatchError> {
        Err(ClientPreservedError {
            base: PreservedError {
                p: "pres".into(),
                ice_sliced_data: None,
            },
            extra: "extra".into(),
            obj: Some(ClassRef::new(Base { b: "rb".into() })),
        }
        .into())
    }
    async fn raise_unpreserved(&self, _: &Current) -> Result<(), DispatchError> {
        Err(ClientDerivedError {
            base: DerivedError {
                base: BaseError {
                    reason: "plain".into(),
                },
                code: 3,
            },
            more: "more".into(),
        }
        .into())
    }
}

/// An adapter of the client's own on 127.0.0.1 with the Relay servant.
pub(super) async fn relay_proxy(communicator: &Communicator) -> RelayPrx {
    let adapter = communicator
        .create_object_adapter_with_endpoints("Relay", "tcp -h 127.0.0.1 -p 0")
        .await
        .expect("create the Relay adapter");
    let prx = adapter
        .add(
            floe::Identity::from_name("relay"),
            RelayDispatcher::new(RelayI),
        )
        .expect("add the Relay servant");
    adapter.activate();
    RelayPrx::unchecked_cast(prx)
}

// ------------------------------------------------------------ relayed exceptions

pub(super) async fn relay_preserved(c: &Ctx) -> R {
    let r = c.relaying.relay_preserved(&Some(c.relay.clone())).await;
    if c.enc10 || c.server == "python38" {
        // 1.0 has no preserved slices, Ice 3.8 no preserved exception
        // slices: the server relays what it knows.
        let e: PreservedError = user_error_as(r)?;
        return eq(e.p.as_str(), "pres", "PreservedError");
    }
    let e: ClientPreservedError = user_error_as(r)?;
    let obj = e.obj.as_ref().ok_or_else(|| Fail("obj: null".into()))?;
    let b = obj.read().b.clone();
    eq(
        (e.base.p.as_str(), e.extra.as_str(), b.as_str()),
        ("pres", "extra", "rb"),
        "ClientPreservedError",
    )
}

pub(super) async fn relay_unpreserved(c: &Ctx) -> R {
    let e: DerivedError =
        user_error_as(c.relaying.relay_unpreserved(&Some(c.relay.clone())).await)?;
    eq(
        (e.base.reason.as_str(), e.code),
        ("plain", 3),
        "DerivedError",
    )
}

// ------------------------------------------------------------ facets and default servants

impl Ctx {
    /// `name -f facet` on the server's adapter of facets.
    fn facet(&self, name: &str, facet: &str) -> FacetedPrx {
        FacetedPrx::unchecked_cast(
            proxy(&self.communicator, self.facets_port, self.enc10, name).ice_facet(facet),
        )
    }

    /// `name` on the main adapter, served through its servant locators.
    fn located(&self, name: &str) -> LocatedPrx {
        LocatedPrx::unchecked_cast(self.proxy(name))
    }
}

pub(super) async fn facet_default(c: &Ctx) -> R {
    eq(c.facet("fct", "").which().await?, "fct:fct:".into(), "fct")
}

pub(super) async fn facet_named(c: &Ctx) -> R {
    eq(
        c.facet("fct", "b").which().await?,
        "fct-b:fct:b".into(),
        "fct -f b",
    )
}

pub(super) async fn facet_fallback(c: &Ctx) -> R {
    // fct has no facet x: the default servant of category "" answers.
    eq(
        c.facet("fct", "x").which().await?,
        "any:fct:x".into(),
        "fct -f x",
    )
}

pub(super) async fn facet_category_default(c: &Ctx) -> R {
    eq(
        c.facet("dflt/n", "").which().await?,
        "dflt:n:".into(),
        "dflt/n",
    )?;
    eq(
        c.facet("dflt/n", "x").which().await?,
        "dflt:n:x".into(),
        "dflt/n -f x",
    )
}

pub(super) async fn facet_any_default(c: &Ctx) -> R {
    let p = c.facet("locate", "x");
    p.ice_ping().await?;
    eq(p.which().await?, "any:locate:x".into(), "locate -f x")
}

// ------------------------------------------------------------ servant locators

const NOT_EXIST: &str = "::Ice::ObjectNotExistException";

pub(super) async fn loc_category(c: &Ctx) -> R {
    eq(
        c.located("loc/a").who_am_i().await?,
        "loc/a".into(),
        "loc/a",
    )
}

pub(super) async fn loc_default_category(c: &Ctx) -> R {
    eq(
        c.located("any-x").who_am_i().await?,
        "/any-x".into(),
        "any-x",
    )
}

pub(super) async fn loc_missing(c: &Ctx) -> R {
    raises(c.located("loc/missing").ice_ping().await, NOT_EXIST)?;
    raises(c.located("nobody").who_am_i().await, NOT_EXIST)?;
    Ok(())
}

pub(super) async fn loc_cookie(c: &Ctx) -> R {
    c.located("loc/a").who_am_i().await?;
    let last = c.located("loc/stats").last_finished().await?;
    eq(last, "cookie:loc/a".into(), "lastFinished")
}

pub(super) async fn loc_locate_user(c: &Ctx) -> R {
    let e: LocatorError = user_error_as(c.located("loc/locate-user").op().await)?;
    eq(e.r#where.as_str(), "locate", "where")?;
    raises(
        c.located("loc/locate-user").who_am_i().await,
        "::Ice::UnknownUserException",
    )?;
    Ok(())
}

pub(super) async fn loc_locate_not_exist(c: &Ctx) -> R {
    raises(
        c.located("loc/locate-not-exist").who_am_i().await,
        NOT_EXIST,
    )?;
    Ok(())
}

pub(super) async fn loc_locate_local(c: &Ctx) -> R {
    raises(
        c.located("loc/locate-local").who_am_i().await,
        "::Ice::UnknownLocalException",
    )?;
    Ok(())
}

pub(super) async fn loc_locate_other(c: &Ctx) -> R {
    raises(
        c.located("loc/locate-other").who_am_i().await,
        "::Ice::UnknownException",
    )?;
    Ok(())
}

pub(super) async fn loc_servant_user(c: &Ctx) -> R {
    let e: LocatorError = user_error_as(c.located("loc/servant-user").op().await)?;
    eq(e.r#where.as_str(), "servant", "where")?;
    let last = c.located("loc/stats").last_finished().await?;
    eq(last, "cookie:loc/servant-user".into(), "lastFinished")
}

pub(super) async fn loc_finished_user(c: &Ctx) -> R {
    let e: LocatorError = user_error_as(c.located("loc/finished-user").op().await)?;
    eq(e.r#where.as_str(), "finished", "where")
}

pub(super) async fn loc_finished_not_exist(c: &Ctx) -> R {
    raises(
        c.located("loc/finished-not-exist").who_am_i().await,
        NOT_EXIST,
    )?;
    Ok(())
}

pub(super) async fn loc_finished_local(c: &Ctx) -> R {
    raises(
        c.located("loc/finished-local").who_am_i().await,
        "::Ice::UnknownLocalException",
    )?;
    Ok(())
}

pub(super) async fn loc_finished_other(c: &Ctx) -> R {
    raises(
        c.located("loc/finished-other").who_am_i().await,
        "::Ice::UnknownException",
    )?;
    Ok(())
}

pub(super) async fn loc_deactivate(c: &Ctx) -> R {
    let got = c.located("loc/stats").destroy_adapter().await?;
    eq(got, "gone".into(), "destroyAdapter")
}

// ------------------------------------------------------------ value factories

pub(super) async fn vf_interface_by_value(c: &Ctx) -> R {
    use floe::wire::class::{InterfaceByValue, Value};
    // A communicator of its own, with a factory for ::Conf::Marker.
    let other = Communicator::new();
    other
        .add_value_factory(MarkerPrx::TYPE_ID, |id| {
            Some(Box::new(InterfaceByValue::new(id)) as Box<dyn Value>)
        })
        .map_err(|e| Fail(format!("add_value_factory: {e}")))?;
    let vf = ValuesPrx::unchecked_cast(proxy(&other, c.port, c.enc10, "vf"));
    let got = vf.get_marker().await;
    other.destroy().await;
    let v = got?.ok_or_else(|| Fail("getMarker: null".into()))?;
    let v = v.read();
    let any: &dyn std::any::Any = &**v;
    ensure_is(any.is::<InterfaceByValue>(), "not an InterfaceByValue")?;
    eq(v.ice_id(), "::Conf::Marker", "ice_id")
}

fn ensure_is(cond: bool, what: &str) -> R {
    if cond {
        Ok(())
    } else {
        Err(Fail(what.into()))
    }
}

pub(super) async fn vf_hooks_returned(c: &Ctx) -> R {
    let h = c.vf.get_hooked().await?;
    let h = h.ok_or_else(|| Fail("getHooked: null".into()))?;
    let h = h.read();
    eq(
        (h.pre_marshalled, h.post_unmarshalled),
        (true, true),
        "(preMarshalled, postUnmarshalled)",
    )
}

pub(super) async fn vf_hooks_sent(c: &Ctx) -> R {
    let h = ClassRef::new(Hooked::default());
    let got = c.vf.check_hooked(&Some(h)).await?;
    eq(got.as_str(), "true:true", "checkHooked")
}

// ------------------------------------------------------------ classes with operations

pub(super) async fn cls_ops(c: &Ctx) -> R {
    let p = LoudGreeterPrx::unchecked_cast(c.proxy("cls"));
    eq(p.greet("x").await?, "hello, x".into(), "greet")?;
    eq(p.shout("hey").await?, "HEY!".into(), "shout")
}

pub(super) async fn cls_type_ids(c: &Ctx) -> R {
    let p = LoudGreeterPrx::unchecked_cast(c.proxy("cls"));
    eq(
        p.ice_ids().await?,
        vec![
            "::Conf::Greeter".to_owned(),
            "::Conf::LoudGreeter".to_owned(),
            "::Ice::Object".to_owned(),
        ],
        "ice_ids",
    )?;
    eq(p.ice_id().await?, "::Conf::LoudGreeter".into(), "ice_id")
}

pub(super) async fn cls_checked_cast(c: &Ctx) -> R {
    let g = GreeterPrx::checked_cast(c.proxy("cls"))
        .await?
        .ok_or_else(|| Fail("checkedCast to GreeterPrx".into()))?;
    eq(g.greet("y").await?, "hello, y".into(), "greet")
}

// ------------------------------------------------------------ overridden built-in operations

pub(super) async fn bi_ping(c: &Ctx) -> R {
    let p = ObservedPrx::unchecked_cast(c.proxy("obs"));
    p.pings().await?;
    p.ice_ping().await?;
    p.ice_ping().await?;
    eq(p.pings().await?, "2:1".into(), "pings (Nonmutating)")
}

pub(super) async fn bi_is_a(c: &Ctx) -> R {
    let p = ObservedPrx::unchecked_cast(c.proxy("obs"));
    eq(
        p.ice_is_a("::Conf::Extra").await?,
        true,
        "ice_isA(::Conf::Extra)",
    )?;
    eq(
        p.ice_is_a("::Conf::Observed").await?,
        true,
        "ice_isA(::Conf::Observed)",
    )?;
    eq(
        p.ice_is_a("::Conf::Nope").await?,
        false,
        "ice_isA(::Conf::Nope)",
    )
}

pub(super) async fn bi_ids(c: &Ctx) -> R {
    let p = ObservedPrx::unchecked_cast(c.proxy("obs"));
    let want = ["::Conf::Extra", "::Conf::Observed", "::Ice::Object"];
    eq(
        p.ice_ids().await?,
        want.iter().map(|s| (*s).to_owned()).collect(),
        "ice_ids",
    )?;
    eq(p.ice_id().await?, "::Conf::Observed".into(), "ice_id")
}

// ------------------------------------------------------------ adapter deactivation

pub(super) async fn deact_from_servant(c: &Ctx) -> R {
    let d = DeactivationPrx::unchecked_cast(c.proxy("deact"));
    let own = d
        .create()
        .await?
        .ok_or_else(|| Fail("create: null".into()))?;
    let own = own.ice_encoding_version(d.encoding());
    own.ice_ping().await?;
    own.deactivate_self().await?;
    eq(d.wait_deactivated().await?, true, "waitDeactivated")?;
    match own.ice_ping().await {
        Ok(()) => Err(Fail("ice_ping after the deactivation: no exception".into())),
        Err(_) => Ok(()),
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

pub(super) async fn optn_sent(c: &Ctx) -> R {
    let p = OptionalNullsPrx::unchecked_cast(c.proxy("optn"));
    let base = Some(ClassRef::new(Base { b: "s".into() }));
    let ops = Some(c.ops.clone());
    let cases = [
        ("unset", None, None),
        ("null", Some(&None), Some(&None)),
        ("set", Some(&base), Some(&ops)),
    ];
    for (state, b, o) in cases {
        let want = if c.enc10 {
            "unset:unset".to_owned()
        } else {
            format!("{state}:{state}")
        };
        eq(p.describe(b, o).await?, want, &format!("describe({state})"))?;
    }
    Ok(())
}

pub(super) async fn optn_returned(c: &Ctx) -> R {
    let p = OptionalNullsPrx::unchecked_cast(c.proxy("optn"));
    for state in ["unset", "null", "set"] {
        let r = p.make(state).await?;
        let want = if c.enc10 { "unset" } else { state };
        eq(
            (null_state(&r.b), null_state(&r.p)),
            (want, want),
            &format!("make({state})"),
        )?;
    }
    Ok(())
}

// ------------------------------------------------------------ connection info

pub(super) async fn info_endpoint(c: &Ctx) -> R {
    let p = InfoPrx::unchecked_cast(c.proxy("info"));
    let conn = p.ice_get_connection().await?;
    let e = conn
        .endpoint()
        .ok_or_else(|| Fail("the connection has no endpoint".into()))?;
    eq(
        (e.transport, e.host.as_str(), e.port, e.timeout, e.compress),
        (
            floe::runtime::Transport::Tcp,
            "127.0.0.1",
            c.port,
            10000,
            false,
        ),
        "the client's endpoint",
    )?;
    // The server's endpoint timeout: Ice 3.7's default, or "none" from an
    // Ice 3.8 server, whose endpoints have no timeout.
    let timeout = if c.server == "python38" {
        "none"
    } else {
        "60000"
    };
    let want = format!("tcp:127.0.0.1:{}:{timeout}:false", c.port);
    eq(p.endpoint_info().await?, want, "the server's endpoint")
}
