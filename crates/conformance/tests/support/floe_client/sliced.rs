//! Class instances the client knows only in part, sliced and compact
//! (`sobj.*`, `cobj.*`).
//! A child of `floe_client`, whose helpers and `Ctx` it uses.

use super::*;

pub(super) async fn sobj_circle(c: &Ctx) -> R {
    plain_shape(&c.sobj.get_circle().await?, "circle", "getCircle")
}

pub(super) async fn sobj_ring(c: &Ctx) -> R {
    plain_shape(&c.sobj.get_ring().await?, "ring", "getRing")
}

pub(super) async fn sobj_compact_id(c: &Ctx) -> R {
    plain_shape(&c.sobj.get_square().await?, "square", "getSquare")
}

pub(super) async fn sobj_unknown(c: &Ctx) -> R {
    let r = c.sobj.get_hidden().await;
    if c.enc10 {
        return raises(r, "::Ice::NoValueFactoryException").map(drop);
    }
    let v = r?.ok_or_else(|| Fail("null".into()))?;
    let guard = v.read();
    let value: &dyn std::any::Any = &**guard;
    ensure!(
        value.downcast_ref::<UnknownSlicedValue>().is_some(),
        "a {} is not an UnknownSlicedValue",
        guard.ice_id()
    );
    eq(guard.ice_id(), "::Conf::Hidden", "ice_id")
}

pub(super) async fn sobj_linked(c: &Ctx) -> R {
    let (r, other) = c.sobj.get_linked().await?.into();
    plain_shape(&r, "c", "returned")?;
    plain_shape(&other, "s2", "other")
}

pub(super) async fn sobj_seq(c: &Ctx) -> R {
    let s = c.sobj.get_shapes().await?;
    eq(s.len(), 5, "length")?;
    plain_shape(&s[0], "c", "[0]")?;
    plain_shape(&s[1], "plain", "[1]")?;
    ensure!(
        matches!((&s[0], &s[2]), (Some(a), Some(b)) if ClassRef::ptr_eq(a, b)),
        "[0] and [2] are not one instance"
    );
    ensure!(s[3].is_none(), "[3] is not null");
    plain_shape(&s[4], "ring", "[4]")
}

pub(super) async fn sobj_dict(c: &Ctx) -> R {
    let d = c.sobj.get_shape_dict().await?;
    eq(d.keys().copied().collect::<Vec<_>>(), vec![1, 2, 3], "keys")?;
    plain_shape(&d[&1], "c", "1")?;
    ensure!(
        matches!((&d[&1], &d[&2]), (Some(a), Some(b)) if ClassRef::ptr_eq(a, b)),
        "1 and 2 are not one instance"
    );
    plain_shape(&d[&3], "plain", "3")
}

pub(super) async fn sobj_preserved(c: &Ctx) -> R {
    let k = c.sobj.get_keeper().await?;
    ensure!(
        k.as_ref()
            .is_some_and(|k| k.ice_id() == "::Conf::Keeper" && k.read().k == "keeper"),
        "getKeeper {k:?}"
    );
    let want = if c.enc10 {
        "Keeper:keeper"
    } else {
        "KeeperDerived:keeper:x:kb:kl"
    };
    eq(c.sobj.check_keeper(&k).await?, want.into(), "checkKeeper")
}

pub(super) async fn sobj_not_preserved(c: &Ctx) -> R {
    let s = c.sobj.get_circle().await?;
    eq(
        c.sobj.check_shape(&s).await?,
        "::Conf::Shape:circle".into(),
        "checkShape(getCircle())",
    )
}

pub(super) async fn sobj_known_derived(c: &Ctx) -> R {
    same_derived(&c.sobj.get_derived().await?, "d", 5, "getDerived")
}

pub(super) async fn sobj_unknown_optionals(c: &Ctx) -> R {
    let w = c
        .sobj
        .get_more_optionals()
        .await?
        .ok_or_else(|| Fail("null".into()))?;
    ensure!(
        w.ice_id() == "::Conf::WithOptionals",
        "a {} is not a plain WithOptionals",
        w.ice_id()
    );
    let w = w.read();
    let i = if c.enc10 { None } else { Some(2) };
    eq((w.req, w.i, w.s.clone()), (1, i, None), "members")
}

pub(super) async fn cobj_circle(c: &Ctx) -> R {
    let r = c.cobj.get_circle().await;
    if c.enc10 {
        plain_shape(&r?, "circle", "getCircle in 1.0")
    } else {
        raises(r, "::Ice::NoValueFactoryException").map(drop)
    }
}

pub(super) async fn cobj_unknown(c: &Ctx) -> R {
    raises(c.cobj.get_hidden().await, "::Ice::NoValueFactoryException").map(drop)
}

pub(super) async fn cobj_circle_sliced(c: &Ctx) -> R {
    plain_shape(
        &c.cobj.get_circle_sliced().await?,
        "circle",
        "getCircleSliced",
    )
}

pub(super) async fn cobj_known_derived(c: &Ctx) -> R {
    same_derived(&c.cobj.get_derived().await?, "d", 5, "getDerived")
}
