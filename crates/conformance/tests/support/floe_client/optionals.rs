//! Optional parameters, members and exception members (`opt.*`).
//! A child of `floe_client`, whose helpers and `Ctx` it uses.

use super::*;

macro_rules! opt_check {
    ($name:ident, $op:ident, $value:expr, $v:ident => $arg:expr) => {
        pub(super) async fn $name(c: &Ctx) -> R {
            let value = $value;
            let $v = &value;
            let got = c.opt.$op(Some($arg)).await?.into();
            if c.enc10 {
                // Encoding 1.0 has no optional values: nothing is sent.
                eq(got, (None, None), concat!(stringify!($op), " in 1.0"))?;
            } else {
                eq(
                    got,
                    (Some(value.clone()), Some(value.clone())),
                    stringify!($op),
                )?;
            }
            eq(
                c.opt.$op(None).await?.into(),
                (None, None),
                concat!(stringify!($op), "(unset)"),
            )
        }
    };
}

opt_check!(opt_byte, op_opt_byte, 200u8, v => *v);
opt_check!(opt_bool, op_opt_bool, true, v => *v);
opt_check!(opt_short, op_opt_short, -300i16, v => *v);
opt_check!(opt_int, op_opt_int, 1i32 << 20, v => *v);
opt_check!(opt_long, op_opt_long, -(1i64 << 50), v => *v);
opt_check!(opt_float, op_opt_float, 0.25f32, v => *v);
opt_check!(opt_double, op_opt_double, -1e200f64, v => *v);
opt_check!(
    opt_string,
    op_opt_string,
    "h\u{e9}llo".to_owned(),
    v => v.as_str()
);
opt_check!(opt_enum, op_opt_color, Color::Blue, v => *v);
opt_check!(
    opt_fixed_struct,
    op_opt_point,
    Point { x: 5, y: -6 },
    v => v
);
opt_check!(opt_var_struct, op_opt_record, record("r"), v => v);
opt_check!(opt_int_seq, op_opt_int_seq, vec![1, 2, 3], v => v
    .as_slice());
opt_check!(
    opt_string_seq,
    op_opt_string_seq,
    vec!["a".to_owned(), String::new(), "b".into()],
    v => v.as_slice()
);
opt_check!(
    opt_fixed_struct_seq,
    op_opt_point_seq,
    vec![Point { x: 1, y: 2 }, Point { x: 3, y: 4 }],
    v => v.as_slice()
);
opt_check!(
    opt_var_struct_seq,
    op_opt_record_seq,
    vec![record("a"), record("b")],
    v => v.as_slice()
);
opt_check!(
    opt_dict,
    op_opt_short_int_dict,
    BTreeMap::from([(1i16, 2), (-3, 4)]),
    v => v
);
opt_check!(
    opt_struct_dict,
    op_opt_string_record_dict,
    BTreeMap::from([("a".to_owned(), record("a"))]),
    v => v
);

pub(super) async fn opt_class(c: &Ctx) -> R {
    let (r, p3) = c.opt.op_opt_base(&base("ob")).await?.into();
    if c.enc10 {
        ensure!(
            r.is_none() && p3.is_none(),
            "opOptBase in 1.0: something came back"
        );
    } else {
        for (what, got) in [("returned", r), ("out", p3)] {
            let got = got.ok_or_else(|| Fail(format!("{what}: unset or null")))?;
            ensure!(
                got.ice_id() == "::Conf::Base" && got.read().b == "ob",
                "{what}: {got:?}"
            );
        }
    }
    let (r, p3) = c.opt.op_opt_base(&None).await?.into();
    ensure!(r.is_none() && p3.is_none(), "unset: something came back");
    Ok(())
}

pub(super) async fn opt_proxy(c: &Ctx) -> R {
    let (r, p3) = c.opt.op_opt_proxy(&Some(c.ops.clone())).await?.into();
    if c.enc10 {
        ensure!(
            r.is_none() && p3.is_none(),
            "opOptProxy in 1.0: something came back"
        );
    } else {
        for (what, got) in [("returned", r), ("out", p3)] {
            let got = got.ok_or_else(|| Fail(format!("{what}: unset or null")))?;
            eq(ident(got.proxy()), "ops".into(), what)?;
        }
    }
    let (r, p3) = c.opt.op_opt_proxy(&None).await?.into();
    ensure!(r.is_none() && p3.is_none(), "unset: something came back");
    Ok(())
}

pub(super) async fn opt_mixed(c: &Ctx) -> R {
    let got = c.opt.op_mixed(Some("s"), 5, Some(7)).await?.into();
    if c.enc10 {
        eq(got, (5, None, 6, None), "opMixed in 1.0")?;
    } else {
        eq(got, (5, Some("s".into()), 6, Some(7)), "opMixed")?;
    }
    eq(
        c.opt.op_mixed(None, -1, None).await?.into(),
        (-1, None, 0, None),
        "opMixed(unset)",
    )
}

pub(super) async fn opt_class_members_set(c: &Ctx) -> R {
    // An Ice 3.8 server (whose WithOptionals has no obj: Ice 3.8 has no
    // optional classes) fails the dispatch of one whose obj is set
    // ("cannot skip optional class"): obj is sent to the others only.
    let send_obj = c.server != "python38";
    let w = WithOptionals {
        req: 1,
        i: Some(2),
        s: Some("s".into()),
        p: Some(Point { x: 1, y: 2 }),
        seq: Some(vec![1, 2]),
        c: Some(Color::Blue),
        r: Some(record("r")),
        obj: if send_obj { base("o") } else { None },
    };
    let got = c
        .opt
        .op_with_optionals(&Some(ClassRef::new(w)))
        .await?
        .ok_or_else(|| Fail("null".into()))?;
    ensure!(
        got.ice_id() == "::Conf::WithOptionals",
        "type {}",
        got.ice_id()
    );
    let g = got.read();
    let members = (
        g.req,
        g.i,
        g.s.clone(),
        g.p.clone(),
        g.seq.clone(),
        g.c,
        g.r.clone(),
    );
    if c.enc10 {
        // Encoding 1.0 drops optional class members.
        eq(
            members,
            (1, None, None, None, None, None, None),
            "members in 1.0",
        )?;
        ensure!(g.obj.is_none(), "obj in 1.0: {:?}", g.obj);
    } else {
        eq(
            members,
            (
                1,
                Some(2),
                Some("s".into()),
                Some(Point { x: 1, y: 2 }),
                Some(vec![1, 2]),
                Some(Color::Blue),
                Some(record("r")),
            ),
            "members",
        )?;
        let obj = g.obj.clone();
        if send_obj {
            ensure!(
                obj.as_ref()
                    .is_some_and(|o| o.ice_id() == "::Conf::Base" && o.read().b == "o"),
                "obj {obj:?}"
            );
        } else {
            ensure!(obj.is_none(), "obj {obj:?}");
        }
    }
    Ok(())
}

pub(super) async fn opt_class_members_unset(c: &Ctx) -> R {
    let w = WithOptionals {
        req: 3,
        ..WithOptionals::default()
    };
    let got = c
        .opt
        .op_with_optionals(&Some(ClassRef::new(w)))
        .await?
        .ok_or_else(|| Fail("null".into()))?;
    let g = got.read();
    eq(
        (
            g.req,
            g.i,
            g.s.clone(),
            g.p.clone(),
            g.seq.clone(),
            g.c,
            g.r.clone(),
            g.obj.is_none(),
        ),
        (3, None, None, None, None, None, None, true),
        "members",
    )
}

pub(super) async fn opt_exception(c: &Ctx) -> R {
    let e: OptError = user_error_as(c.opt.op_opt_error(1, Some(2), Some("s")).await)?;
    let want = if c.enc10 {
        (1, None, None)
    } else {
        (1, Some(2), Some("s".to_owned()))
    };
    eq((e.req, e.i, e.s), want, "OptError")?;
    let e: OptError = user_error_as(c.opt.op_opt_error(4, None, None).await)?;
    eq((e.req, e.i, e.s), (4, None, None), "OptError(unset)")
}
