//! Operations: built-in types, sequences, dictionaries, contexts, oneways (`ops.*`).
//! A child of `floe_client`, whose helpers and `Ctx` it uses.

use super::*;

pub(super) async fn ops_void(c: &Ctx) -> R {
    Ok(c.ops.op_void().await?)
}

pub(super) async fn ops_builtins(c: &Ctx) -> R {
    c.ops.ice_ping().await?;
    ensure!(
        c.ops.ice_is_a("::Conf::Operations").await?,
        "ice_isA(::Conf::Operations)"
    );
    ensure!(
        !c.ops.ice_is_a("::Conf::Optionals").await?,
        "ice_isA(::Conf::Optionals)"
    );
    let mut ids = c.ops.ice_ids().await?;
    ids.sort();
    eq(
        ids,
        vec!["::Conf::Operations".into(), "::Ice::Object".into()],
        "ice_ids",
    )?;
    eq(c.ops.ice_id().await?, "::Conf::Operations".into(), "ice_id")
}

pub(super) async fn ops_checked_cast(c: &Ctx) -> R {
    let base = c.ops.proxy().clone();
    ensure!(
        OperationsPrx::checked_cast(base.clone()).await?.is_some(),
        "checkedCast to Operations"
    );
    ensure!(
        OptionalsPrx::checked_cast(base).await?.is_none(),
        "checkedCast to Optionals"
    );
    Ok(())
}

pub(super) async fn ops_byte(c: &Ctx) -> R {
    eq(
        c.ops.op_byte(0xff, 0x0f).await?.into(),
        (0xff, 0x0f),
        "opByte(255, 15)",
    )?;
    eq(
        c.ops.op_byte(0, 0x80).await?.into(),
        (0, 0x80),
        "opByte(0, 128)",
    )
}

pub(super) async fn ops_bool(c: &Ctx) -> R {
    eq(
        c.ops.op_bool(true, false).await?.into(),
        (true, false),
        "opBool(true, false)",
    )?;
    eq(
        c.ops.op_bool(false, true).await?.into(),
        (false, true),
        "opBool(false, true)",
    )
}

pub(super) async fn ops_short_int_long(c: &Ctx) -> R {
    eq(
        c.ops
            .op_short_int_long(i16::MIN, i32::MAX, i64::MIN)
            .await?
            .into(),
        (i64::MIN, i16::MIN, i32::MAX, i64::MIN),
        "minima/maxima",
    )?;
    eq(
        c.ops
            .op_short_int_long(i16::MAX, i32::MIN, i64::MAX)
            .await?
            .into(),
        (i64::MAX, i16::MAX, i32::MIN, i64::MAX),
        "maxima/minima",
    )
}

pub(super) async fn ops_float_double(c: &Ctx) -> R {
    eq(
        c.ops.op_float_double(3.5, -1e300).await?.into(),
        (-1e300, 3.5, -1e300),
        "opFloatDouble(3.5, -1e300)",
    )?;
    eq(
        c.ops.op_float_double(f32::MAX, 5e-324).await?.into(),
        (5e-324, f32::MAX, 5e-324),
        "extremes",
    )
}

pub(super) async fn ops_float_special(c: &Ctx) -> R {
    let (r, p3, p4) = c.ops.op_float_double(f32::INFINITY, f64::NAN).await?.into();
    ensure!(
        r.is_nan() && p4.is_nan() && p3 == f32::INFINITY,
        "inf/nan: {:?}",
        (r, p3, p4)
    );
    let (r, p3, p4) = c.ops.op_float_double(-0.0, f64::NEG_INFINITY).await?.into();
    ensure!(
        r == f64::NEG_INFINITY && p3 == 0.0 && p3.is_sign_negative(),
        "-0/-inf: {:?}",
        (r, p3, p4)
    );
    Ok(())
}

pub(super) async fn ops_string(c: &Ctx) -> R {
    let (a, b) = ("h\u{e9}llo ", "w\u{f6}rld \u{20ac}\u{1F600}");
    eq(
        c.ops.op_string(a, b).await?.into(),
        (format!("{a}{b}"), format!("{b}{a}")),
        "unicode",
    )?;
    eq(
        c.ops.op_string("", "").await?.into(),
        (String::new(), String::new()),
        "empty",
    )?;
    eq(
        c.ops.op_string("a\0b", "c").await?.into(),
        ("a\0bc".into(), "ca\0b".into()),
        "embedded NUL",
    )
}

pub(super) async fn ops_string_long(c: &Ctx) -> R {
    let s = "x".repeat(100_000);
    let (r, p3) = c.ops.op_string(&s, "y").await?.into();
    ensure!(
        r == format!("{s}y") && p3 == format!("y{s}"),
        "100000 characters"
    );
    Ok(())
}

pub(super) async fn ops_enum(c: &Ctx) -> R {
    eq(
        c.ops.op_enum(Color::Blue, Level::High).await?.into(),
        (Color::Blue, Level::High),
        "Blue, High",
    )?;
    eq(
        c.ops.op_enum(Color::Red, Level::Low).await?.into(),
        (Color::Red, Level::Low),
        "Red, Low",
    )
}

pub(super) async fn ops_struct(c: &Ctx) -> R {
    let p = Point { x: 1, y: -2 };
    eq(
        c.ops.op_struct(&p, &record("r")).await?.into(),
        (p.clone(), record("r")),
        "opStruct",
    )
}

fn nested() -> Nested {
    Nested {
        p: Point { x: 3, y: 4 },
        r: Record {
            name: "n".into(),
            weight: -0.5,
            flag: false,
            values: vec![7],
            color: Color::Red,
        },
        d: BTreeMap::from([("a".into(), vec![1, 2]), ("b".into(), vec![])]),
        lv: Level::High,
        ps: vec![Point { x: 1, y: 1 }, Point { x: 2, y: 2 }],
    }
}

pub(super) async fn ops_nested(c: &Ctx) -> R {
    let n = nested();
    eq(
        c.ops.op_nested(&n).await?.into(),
        (n.clone(), n),
        "opNested",
    )
}

pub(super) async fn ops_defaults(c: &Ctx) -> R {
    let d = c.ops.op_defaults().await?;
    eq(
        (d.b, d.y, d.s, d.i, d.l, d.f, d.d, d.str.as_str(), d.c, d.lv),
        (
            true,
            254,
            -3,
            42,
            1234567890123,
            0.5,
            -1.25,
            "h\u{e9}llo",
            Color::Blue,
            Level::Mid,
        ),
        "Defaults()",
    )?;
    eq(ANSWER, 42, "Answer")
}

pub(super) async fn ops_default_record(c: &Ctx) -> R {
    let want = Record {
        name: String::new(),
        weight: 0.0,
        flag: false,
        values: vec![],
        color: Color::Green,
    };
    eq(c.ops.op_default_record().await?, want, "Record()")
}

macro_rules! seq_check {
    ($name:ident, $op:ident, $value:expr, $empty:expr) => {
        pub(super) async fn $name(c: &Ctx) -> R {
            let value = $value;
            let (r, p2) = c.ops.$op(&value).await?.into();
            let want: Vec<_> = value.iter().rev().cloned().collect();
            eq((r, p2), (want, value.clone()), stringify!($op))?;
            if $empty {
                let (r, p2) = c.ops.$op(&[]).await?.into();
                ensure!(r.is_empty() && p2.is_empty(), "{}(empty)", stringify!($op));
            }
            Ok(())
        }
    };
}

seq_check!(ops_bool_seq, op_bool_seq, vec![true, false, false], true);
seq_check!(
    ops_short_seq,
    op_short_seq,
    vec![i16::MIN, 0, i16::MAX],
    true
);
seq_check!(ops_int_seq, op_int_seq, vec![i32::MIN, 1, i32::MAX], true);
seq_check!(
    ops_int_seq_large,
    op_int_seq,
    (-50_000..50_000).collect::<Vec<i32>>(),
    false
);
seq_check!(ops_long_seq, op_long_seq, vec![i64::MIN, 2, i64::MAX], true);
seq_check!(ops_float_seq, op_float_seq, vec![0.5f32, -1.25, 3.0], true);
seq_check!(ops_double_seq, op_double_seq, vec![1e300, -2.5, 0.0], true);
seq_check!(
    ops_string_seq,
    op_string_seq,
    vec!["a".to_owned(), String::new(), "h\u{e9}llo".into()],
    true
);
seq_check!(
    ops_color_seq,
    op_color_seq,
    vec![Color::Red, Color::Blue, Color::Green],
    true
);
seq_check!(
    ops_point_seq,
    op_point_seq,
    (0..1000).map(|i| Point { x: i, y: -i }).collect::<Vec<_>>(),
    true
);
seq_check!(
    ops_record_seq,
    op_record_seq,
    vec![
        record("a"),
        Record {
            values: vec![],
            ..record("b")
        },
        Record {
            color: Color::Red,
            ..record("c")
        }
    ],
    true
);
seq_check!(
    ops_int_seq_seq,
    op_int_seq_seq,
    vec![vec![1, 2], vec![], vec![3]],
    true
);
seq_check!(
    ops_string_seq_seq,
    op_string_seq_seq,
    vec![vec!["a".to_owned(), "b".into()], vec![], vec!["c".into()]],
    true
);

pub(super) async fn ops_byte_seq(c: &Ctx) -> R {
    let value: Vec<u8> = (0..4).flat_map(|_| 0..=255u8).collect();
    let (r, p2) = c.ops.op_byte_seq(value.clone()).await?.into();
    let want: Vec<u8> = value.iter().rev().copied().collect();
    eq((&r[..], &p2[..]), (&want[..], &value[..]), "opByteSeq")?;
    let (r, p2) = c.ops.op_byte_seq(Vec::new()).await?.into();
    ensure!(r.is_empty() && p2.is_empty(), "opByteSeq(empty)");
    Ok(())
}

macro_rules! dict_check {
    ($name:ident, $op:ident, $p1:expr, $p2:expr) => {
        pub(super) async fn $name(c: &Ctx) -> R {
            let (p1, p2) = (BTreeMap::from($p1), BTreeMap::from($p2));
            let mut want = p1.clone();
            want.extend(p2.clone());
            eq(
                c.ops.$op(&p1, &p2).await?.into(),
                (want, p1.clone()),
                stringify!($op),
            )?;
            let (r, p3) = c.ops.$op(&BTreeMap::new(), &BTreeMap::new()).await?.into();
            ensure!(r.is_empty() && p3.is_empty(), "{}(empty)", stringify!($op));
            Ok(())
        }
    };
}

dict_check!(
    ops_byte_bool_dict,
    op_byte_bool_dict,
    [(1u8, true), (2, false)],
    [(2u8, true), (255, false)]
);
dict_check!(
    ops_short_int_dict,
    op_short_int_dict,
    [(-1i16, 1), (2, 2)],
    [(2i16, -2), (32767, 3)]
);
dict_check!(
    ops_long_float_dict,
    op_long_float_dict,
    [(1i64 << 40, 0.5f32)],
    [(-(1i64 << 40), -0.25f32)]
);
dict_check!(
    ops_int_double_dict,
    op_int_double_dict,
    [(1, 0.5), (2, 1e300)],
    [(2, -2.0)]
);
dict_check!(
    ops_string_string_dict,
    op_string_string_dict,
    [
        ("a".to_owned(), "x".to_owned()),
        ("b".into(), String::new())
    ],
    [
        ("b".to_owned(), "y".to_owned()),
        ("\u{e9}".into(), "z".into())
    ]
);
dict_check!(
    ops_string_color_dict,
    op_string_color_dict,
    [("r".to_owned(), Color::Red)],
    [("g".to_owned(), Color::Green)]
);
dict_check!(
    ops_color_string_dict,
    op_color_string_dict,
    [(Color::Red, "r".to_owned()), (Color::Blue, "b".into())],
    [(Color::Blue, "B".to_owned())]
);
dict_check!(
    ops_string_int_seq_dict,
    op_string_int_seq_dict,
    [("a".to_owned(), vec![1, 2]), ("e".into(), vec![])],
    [("a".to_owned(), vec![3])]
);
dict_check!(
    ops_point_string_dict,
    op_point_string_dict,
    [(Point { x: 1, y: 2 }, "a".to_owned())],
    [(Point { x: -1, y: 0 }, "b".to_owned())]
);
dict_check!(
    ops_string_record_dict,
    op_string_record_dict,
    [("a".to_owned(), record("a"))],
    [(
        "b".to_owned(),
        Record {
            values: vec![],
            ..record("b")
        }
    )]
);

pub(super) async fn ops_idempotent(c: &Ctx) -> R {
    eq(c.ops.op_idempotent(41).await?, 42, "opIdempotent(41)")
}

pub(super) async fn ops_amd(c: &Ctx) -> R {
    eq(c.ops.op_amd("x").await?, "amd:x".into(), "opAmd")
}

pub(super) async fn ops_context(c: &Ctx) -> R {
    let ctx = |k: &str, v: &str| BTreeMap::from([(k.to_owned(), v.to_owned())]);
    eq(c.ops.op_context().await?, BTreeMap::new(), "no context")?;
    eq(
        c.ops.op_context_with_context(&ctx("c", "d")).await?,
        ctx("c", "d"),
        "per-call context",
    )?;
    eq(
        c.ops.ice_context(ctx("a", "b")).op_context().await?,
        ctx("a", "b"),
        "per-proxy context",
    )
}

pub(super) async fn ops_proxy(c: &Ctx) -> R {
    let (r, p2) = c.ops.op_proxy(&Some(c.ops.clone())).await?.into();
    let r = r.ok_or_else(|| Fail("null returned".into()))?;
    let p2 = p2.ok_or_else(|| Fail("null out".into()))?;
    eq(ident(r.proxy()), "ops".into(), "returned identity")?;
    eq(ident(&p2), "ops".into(), "out identity")?;
    let host = |p: &floe::codegen::Proxy| (p.endpoints()[0].host.clone(), p.endpoints()[0].port);
    eq(host(r.proxy()), host(c.ops.proxy()), "endpoint")?;
    r.ice_ping().await?;
    let (r, p2) = c.ops.op_proxy(&None).await?.into();
    ensure!(r.is_none() && p2.is_none(), "null proxy");
    Ok(())
}

pub(super) async fn ops_oneway(c: &Ctx) -> R {
    let v = if c.enc10 { 10 } else { 11 };
    c.ops.ice_oneway().op_oneway_set(v).await?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while c.ops.op_oneway_get().await? != v && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    eq(c.ops.op_oneway_get().await?, v, "value set oneway")
}
