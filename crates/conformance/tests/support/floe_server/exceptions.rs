//! The `exc` and `sexc` servants: user exceptions, and exceptions with
//! slices the client does not know; the shapes and bases they carry.
//! A child of `floe_server`, whose helpers it uses.

use super::*;

pub(super) fn circle(name: &str, radius: f64, inner: Shared<Shape>, label: Option<&str>) -> Circle {
    Circle {
        base: Shape { name: name.into() },
        radius,
        inner,
        label: label.map(str::to_owned),
    }
}

/// `Circle("c", 1.0)`, as its base.
pub(super) fn small_circle() -> Shared<Shape> {
    Some(ClassRef::new(circle("c", 1.0, None, None)).upcast())
}

/// `Circle("circle", 2.5, label "l")`, as its base.
pub(super) fn the_circle() -> Shared<Shape> {
    Some(ClassRef::new(circle("circle", 2.5, None, Some("l"))).upcast())
}

pub(super) fn ring(inner: Shared<Shape>) -> Shared<Shape> {
    Some(
        ClassRef::new(Ring {
            base: circle("ring", 3.0, inner, None),
            width: 0.5,
        })
        .upcast(),
    )
}

pub(super) fn shape(name: &str) -> Shared<Shape> {
    Some(ClassRef::new(Shape { name: name.into() }))
}

pub(super) fn derived() -> Shared<Base> {
    Some(
        ClassRef::new(Derived {
            base: Base { b: "d".into() },
            d: 5,
            p: Point { x: 1, y: 2 },
        })
        .upcast(),
    )
}

pub(super) fn hidden() -> Option<ValuePtr> {
    Some(ValuePtr::new(Hidden { h: "hidden".into() }))
}

pub(super) fn user(e: impl Into<DispatchError>) -> UserRes {
    Err(e.into())
}

pub(super) fn server_derived() -> ServerDerivedError {
    ServerDerivedError {
        base: DerivedError {
            base: BaseError {
                reason: "server".into(),
            },
            code: 7,
        },
        detail: "detail".into(),
    }
}

pub(super) struct ExceptionsI;

impl Exceptions for ExceptionsI {
    async fn throw_base(&self, reason: String, _: &Current) -> UserRes {
        user(BaseError { reason })
    }
    async fn throw_derived(&self, reason: String, code: i32, _: &Current) -> UserRes {
        user(DerivedError {
            base: BaseError { reason },
            code,
        })
    }
    async fn throw_derived_as_derived(&self, reason: String, code: i32, _: &Current) -> UserRes {
        user(DerivedError {
            base: BaseError { reason },
            code,
        })
    }
    async fn throw_class_error(&self, obj: Shared<Base>, _: &Current) -> UserRes {
        user(ClassError {
            base: BaseError {
                reason: "class".into(),
            },
            obj,
        })
    }
    async fn throw_other(&self, n: i32, _: &Current) -> UserRes {
        user(OtherError { n })
    }
    async fn throw_undeclared(&self, _n: i32, _: &Current) -> Res<()> {
        // A servant of an operation without a throws clause cannot raise a
        // user exception with floe's generated code: this is the reply an
        // Ice client makes of one (Ice servers send the exception and
        // clients turn it into UnknownUserException).
        Err(DispatchError::UnknownUserException(
            OtherError::default().ice_id().to_owned(),
        ))
    }
    async fn throw_non_ice(&self, _: &Current) -> Res<()> {
        Err(DispatchError::unknown("not an Ice exception"))
    }
    async fn throw_not_exist(&self, _: &Current) -> Res<()> {
        Err(DispatchError::object_not_exist())
    }
    async fn throw_nothing(&self, _: &Current) -> UserRes {
        Ok(())
    }
    async fn throw_server_derived(&self, _: &Current) -> UserRes {
        user(server_derived())
    }
    async fn throw_shape_error(&self, _: &Current) -> UserRes {
        user(ShapeError {
            shape: small_circle(),
        })
    }
}

pub(super) struct SlicedExceptionsI;

impl SlicedExceptions for SlicedExceptionsI {
    async fn throw_server_derived(&self, _: &Current) -> UserRes {
        user(server_derived())
    }
    async fn throw_server_base(&self, _: &Current) -> UserRes {
        user(ServerBaseError {
            base: BaseError {
                reason: "server".into(),
            },
            level: 8,
        })
    }
    async fn throw_server_class(&self, _: &Current) -> UserRes {
        user(ServerClassError {
            base: BaseError {
                reason: "classes".into(),
            },
            shape: small_circle(),
            obj: Some(ClassRef::new(Base { b: "b".into() })),
        })
    }
    async fn throw_shape_error(&self, _: &Current) -> UserRes {
        user(ShapeError {
            shape: small_circle(),
        })
    }
    async fn throw_isolated(&self, _: &Current) -> UserRes {
        user(IsolatedError { n: 3 })
    }
    async fn throw_known(&self, _: &Current) -> UserRes {
        user(DerivedError {
            base: BaseError {
                reason: "known".into(),
            },
            code: 9,
        })
    }
}
