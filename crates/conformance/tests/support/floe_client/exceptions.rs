//! User and local exceptions (`exc.*`), and exceptions the client
//! knows only in part (`sexc.*`).
//! A child of `floe_client`, whose helpers and `Ctx` it uses.

use super::*;

pub(super) async fn exc_base(c: &Ctx) -> R {
    let e: BaseError = user_error_as(c.exc.throw_base("r").await)?;
    eq(e.reason.as_str(), "r", "reason")
}

pub(super) async fn exc_derived(c: &Ctx) -> R {
    let e = user_error(c.exc.throw_derived("d", 3).await)?;
    eq(e.ice_id(), "::Conf::DerivedError", "ice_id")?;
    let d = e
        .downcast_ref::<DerivedError>()
        .ok_or_else(|| Fail("not a DerivedError".into()))?;
    eq((d.base.reason.as_str(), d.code), ("d", 3), "DerivedError")?;
    ensure!(
        e.downcast_ref::<BaseError>().is_some(),
        "not caught as BaseError"
    );
    Ok(())
}

pub(super) async fn exc_derived_declared(c: &Ctx) -> R {
    let e: DerivedError = user_error_as(c.exc.throw_derived_as_derived("dd", -3).await)?;
    eq((e.base.reason.as_str(), e.code), ("dd", -3), "DerivedError")
}

pub(super) async fn exc_class_member(c: &Ctx) -> R {
    let e: ClassError = user_error_as(c.exc.throw_class_error(&derived("d", 4)).await)?;
    eq(e.base.reason.as_str(), "class", "reason")?;
    same_derived(&e.obj, "d", 4, "obj")?;
    let e: ClassError = user_error_as(c.exc.throw_class_error(&None).await)?;
    ensure!(e.obj.is_none(), "null obj");
    Ok(())
}

pub(super) async fn exc_other(c: &Ctx) -> R {
    let e = raises(c.exc.throw_other(4).await, "::Ice::UnknownUserException")?;
    ensure!(unknown_text(&e).contains("OtherError"), "unknown: {e}");
    Ok(())
}

pub(super) async fn exc_undeclared(c: &Ctx) -> R {
    let e = raises(
        c.exc.throw_undeclared(4).await,
        "::Ice::UnknownUserException",
    )?;
    ensure!(unknown_text(&e).contains("OtherError"), "unknown: {e}");
    Ok(())
}

pub(super) async fn exc_non_ice(c: &Ctx) -> R {
    raises(c.exc.throw_non_ice().await, "::Ice::UnknownException")?;
    Ok(())
}

pub(super) async fn exc_not_exist(c: &Ctx) -> R {
    raises(
        c.exc.throw_not_exist().await,
        "::Ice::ObjectNotExistException",
    )?;
    Ok(())
}

pub(super) async fn exc_nothing(c: &Ctx) -> R {
    match c.exc.throw_nothing().await {
        Ok(()) => Ok(()),
        Err(e) => Err(Fail(format!("raised {}", e.ice_name()))),
    }
}

pub(super) async fn exc_object_not_exist(c: &Ctx) -> R {
    let missing = OperationsPrx::unchecked_cast(c.proxy("missing"));
    raises(missing.op_void().await, "::Ice::ObjectNotExistException")?;
    Ok(())
}

pub(super) async fn exc_facet_not_exist(c: &Ctx) -> R {
    let facet = OperationsPrx::unchecked_cast(c.ops.ice_facet("nofacet"));
    raises(facet.op_void().await, "::Ice::FacetNotExistException")?;
    Ok(())
}

pub(super) async fn exc_operation_not_exist(c: &Ctx) -> R {
    let unimplemented = UnimplementedPrx::unchecked_cast(c.exc.proxy().clone());
    raises(
        unimplemented.missing().await,
        "::Ice::OperationNotExistException",
    )?;
    Ok(())
}

pub(super) async fn exc_server_derived_compact(c: &Ctx) -> R {
    let r = c.exc.throw_server_derived().await;
    if c.sliced_exceptions() {
        // The client slices to what it knows.
        let e: DerivedError = user_error_as(r)?;
        eq(
            (e.base.reason.as_str(), e.code),
            ("server", 7),
            "DerivedError",
        )
    } else {
        raises(r, "::Ice::UnknownUserException").map(drop)
    }
}

pub(super) async fn exc_shape_error_compact(c: &Ctx) -> R {
    let r = c.exc.throw_shape_error().await;
    if c.sliced_exceptions() {
        let e: ShapeError = user_error_as(r)?;
        plain_shape(&e.shape, "c", "shape")
    } else {
        raises(r, "::Ice::NoValueFactoryException").map(drop)
    }
}

// ------------------------------------------------------------ sliced exceptions

pub(super) async fn sexc_server_derived(c: &Ctx) -> R {
    let e: DerivedError = user_error_as(c.sexc.throw_server_derived().await)?;
    eq(
        (e.base.reason.as_str(), e.code),
        ("server", 7),
        "DerivedError",
    )
}

pub(super) async fn sexc_server_base(c: &Ctx) -> R {
    let e: BaseError = user_error_as(c.sexc.throw_server_base().await)?;
    eq(e.reason.as_str(), "server", "reason")
}

pub(super) async fn sexc_server_class(c: &Ctx) -> R {
    let e: BaseError = user_error_as(c.sexc.throw_server_class().await)?;
    eq(e.reason.as_str(), "classes", "reason")
}

pub(super) async fn sexc_shape_error(c: &Ctx) -> R {
    let e: ShapeError = user_error_as(c.sexc.throw_shape_error().await)?;
    plain_shape(&e.shape, "c", "shape")
}

pub(super) async fn sexc_isolated(c: &Ctx) -> R {
    // Nothing in the exception is known. In 1.1 the last slice says so and
    // the client raises UnknownUserException, except from an Ice 3.7 C++11
    // server, which never flags the last slice of a user exception; 1.0 has
    // no such flag: the client reads past the end.
    let r = c.sexc.throw_isolated().await;
    if c.enc10 || c.server == "cpp" {
        raises(r, "::Ice::UnmarshalOutOfBoundsException").map(drop)
    } else {
        raises(r, "::Ice::UnknownUserException").map(drop)
    }
}

pub(super) async fn sexc_known(c: &Ctx) -> R {
    let e: DerivedError = user_error_as(c.sexc.throw_known().await)?;
    eq(
        (e.base.reason.as_str(), e.code),
        ("known", 9),
        "DerivedError",
    )
}
