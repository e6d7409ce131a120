//! Class instances: sharing, graphs, cycles, the sliced format (`obj.*`).
//! A child of `floe_client`, whose helpers and `Ctx` it uses.

use super::*;

pub(super) async fn obj_base(c: &Ctx) -> R {
    let (r, p2) = c.obj.op_base(&base("b")).await?.into();
    let r = r.ok_or_else(|| Fail("null".into()))?;
    ensure!(
        r.ice_id() == "::Conf::Base" && r.read().b == "b",
        "returned {r:?}"
    );
    ensure!(
        p2.is_some_and(|p2| ClassRef::ptr_eq(&r, &p2)),
        "the returned and out instances are not one"
    );
    Ok(())
}

pub(super) async fn obj_derived(c: &Ctx) -> R {
    let (r, p2) = c.obj.op_base(&derived("d", 4)).await?.into();
    same_derived(&r, "d", 4, "returned")?;
    ensure!(
        matches!((&r, &p2), (Some(r), Some(p2)) if ClassRef::ptr_eq(r, p2)),
        "the returned and out instances are not one"
    );
    Ok(())
}

pub(super) async fn obj_null(c: &Ctx) -> R {
    let (r, p2) = c.obj.op_base(&None).await?.into();
    ensure!(r.is_none() && p2.is_none(), "opBase(null)");
    Ok(())
}

pub(super) async fn obj_compact_id(c: &Ctx) -> R {
    let compact = |b: &str, v: i64| {
        ClassRef::new(Compact {
            base: Base { b: b.into() },
            c: v,
        })
    };
    let r = c
        .obj
        .op_compact(&Some(compact("c", -9)))
        .await?
        .ok_or_else(|| Fail("null".into()))?;
    ensure!(
        r.ice_id() == "::Conf::Compact" && (r.read().base.b.as_str(), r.read().c) == ("c", -9),
        "opCompact {r:?}"
    );
    let (r, _) = c
        .obj
        .op_base(&Some(compact("as base", 1 << 40).upcast()))
        .await?
        .into();
    let r = r.and_then(|r| r.downcast::<Compact>());
    ensure!(
        r.as_ref().is_some_and(|r| r.read().c == 1 << 40),
        "opBase(Compact) {r:?}"
    );
    Ok(())
}

pub(super) async fn obj_shared(c: &Ctx) -> R {
    let x = base("x");
    let r = c
        .obj
        .op_pair(&Some(ClassRef::new(Pair {
            first: x.clone(),
            second: x,
        })))
        .await?
        .ok_or_else(|| Fail("null".into()))?;
    let r = r.read();
    ensure!(
        matches!((&r.first, &r.second), (Some(a), Some(b)) if ClassRef::ptr_eq(a, b) && a.read().b == "x"),
        "first and second are not one instance"
    );
    Ok(())
}

pub(super) async fn obj_distinct(c: &Ctx) -> R {
    let r = c
        .obj
        .op_pair(&Some(ClassRef::new(Pair {
            first: base("a"),
            second: derived("b", 4),
        })))
        .await?
        .ok_or_else(|| Fail("null".into()))?;
    let r = r.read();
    ensure!(
        !matches!((&r.first, &r.second), (Some(a), Some(b)) if ClassRef::ptr_eq(a, b)),
        "distinct instances came back as one"
    );
    eq(
        r.first.as_ref().map(|f| f.read().b.clone()),
        Some("a".into()),
        "first",
    )?;
    same_derived(&r.second, "b", 4, "second")
}

pub(super) async fn obj_seq(c: &Ctx) -> R {
    let d = derived("d", 4);
    let r = c.obj.op_base_seq(&[base("a"), d.clone(), None, d]).await?;
    eq(r.len(), 4, "length")?;
    ensure!(
        r[0].as_ref()
            .is_some_and(|x| x.ice_id() == "::Conf::Base" && x.read().b == "a"),
        "[0] {:?}",
        r[0]
    );
    same_derived(&r[1], "d", 4, "[1]")?;
    ensure!(r[2].is_none(), "[2] is not null");
    ensure!(
        matches!((&r[1], &r[3]), (Some(a), Some(b)) if ClassRef::ptr_eq(a, b)),
        "[1] and [3] are not one instance"
    );
    Ok(())
}

pub(super) async fn obj_dict(c: &Ctx) -> R {
    let d = derived("d", 4);
    let p = BTreeMap::from([
        ("a".to_owned(), base("a")),
        ("b".into(), d.clone()),
        ("c".into(), d),
        ("n".into(), None),
    ]);
    let r = c.obj.op_base_dict(&p).await?;
    eq(
        r.keys().cloned().collect::<Vec<_>>(),
        vec!["a".into(), "b".into(), "c".into(), "n".into()],
        "keys",
    )?;
    eq(
        r["a"].as_ref().map(|a| a.read().b.clone()),
        Some("a".into()),
        "a",
    )?;
    same_derived(&r["b"], "d", 4, "b")?;
    ensure!(
        matches!((&r["b"], &r["c"]), (Some(a), Some(b)) if ClassRef::ptr_eq(a, b)),
        "b and c are not one instance"
    );
    ensure!(r["n"].is_none(), "n is not null");
    Ok(())
}

pub(super) async fn obj_struct_member(c: &Ctx) -> R {
    let r = c
        .obj
        .op_carrier(&Carrier {
            label: "l".into(),
            obj: derived("d", 4),
        })
        .await?;
    eq(r.label.as_str(), "l", "label")?;
    same_derived(&r.obj, "d", 4, "obj")?;
    let r = c
        .obj
        .op_carrier(&Carrier {
            label: "n".into(),
            obj: None,
        })
        .await?;
    ensure!(r.obj.is_none(), "null obj");
    Ok(())
}

pub(super) async fn obj_value(c: &Ctx) -> R {
    let d: Option<ValuePtr> = derived("d", 4).map(Into::into);
    same_derived_value(&c.obj.op_value(&d).await?, "d", 4, "opValue(Derived)")?;
    ensure!(c.obj.op_value(&None).await?.is_none(), "opValue(null)");
    let node = ValuePtr::new(Node {
        value: 1,
        next: None,
    });
    let r = c.obj.op_value(&Some(node)).await?;
    let r = r.and_then(|r| r.downcast::<Node>());
    ensure!(
        r.as_ref().is_some_and(|n| n.read().value == 1),
        "opValue(Node) {r:?}"
    );
    Ok(())
}

pub(super) async fn obj_all_types(c: &Ctx) -> R {
    let a = AllTypes {
        b: true,
        y: 7,
        s: -7,
        i: 70000,
        l: -(1 << 40),
        f: 0.5,
        d: 1e100,
        str: "all".into(),
        c: Color::Green,
        lv: Level::High,
        p: Point { x: 9, y: 8 },
        r: record("r"),
        seq: vec![4, 5],
        dict: BTreeMap::from([("k".into(), "v".into())]),
        obj: derived("d", 4),
        prx: Some(c.ops.clone()),
    };
    let r = c
        .obj
        .op_all_types(&Some(ClassRef::new(a.clone())))
        .await?
        .ok_or_else(|| Fail("null".into()))?;
    let r = r.read();
    let members = |x: &AllTypes| {
        (
            (x.b, x.y, x.s, x.i, x.l, x.f, x.d),
            (
                x.str.clone(),
                x.c,
                x.lv,
                x.p.clone(),
                x.r.clone(),
                x.seq.clone(),
                x.dict.clone(),
            ),
        )
    };
    eq(members(&r), members(&a), "members")?;
    same_derived(&r.obj, "d", 4, "obj")?;
    eq(
        r.prx.as_ref().map(|p| ident(p.proxy())),
        Some("ops".into()),
        "prx",
    )
}

pub(super) async fn obj_chain(c: &Ctx) -> R {
    eq(
        values(&c.obj.make_chain(10).await?),
        (1..=10).collect(),
        "makeChain(10)",
    )?;
    let chain = chain_of(3);
    eq(
        values(&c.obj.op_node(&chain).await?),
        vec![1, 2, 3],
        "opNode",
    )?;
    eq(c.obj.count_nodes(&chain).await?, 3, "countNodes")
}

pub(super) async fn obj_deep_chain(c: &Ctx) -> R {
    // Deeper than Ice.ClassGraphDepthMax (100), in either encoding.
    raises(c.obj.make_chain(150).await, "::Ice::MarshalException")?;
    eq(
        nodes(&c.obj.make_chain(90).await?).len(),
        90,
        "makeChain(90)",
    )
}

pub(super) async fn obj_deep_chain_send(c: &Ctx) -> R {
    raises(
        c.obj.count_nodes(&chain_of(150)).await,
        "::Ice::UnknownLocalException",
    )?;
    eq(
        c.obj.count_nodes(&chain_of(90)).await?,
        90,
        "countNodes(chain of 90)",
    )
}

pub(super) async fn obj_cycle_send(c: &Ctx) -> R {
    let a = cycle();
    let result = c.obj.count_nodes(&a).await;
    break_links(&a);
    if c.refuses(&c.server, false) {
        let e = raises(result, "::Ice::UnknownLocalException")?;
        let text = unknown_text(&e);
        ensure!(
            text.to_lowercase().contains("cycle") || text.contains("Marshal"),
            "reason: {text}"
        );
        Ok(())
    } else {
        eq(result?, 2, "countNodes(cycle)")
    }
}

pub(super) async fn obj_cycle_return(c: &Ctx) -> R {
    let result = c.obj.make_cycle(3).await;
    if c.refuses("floe", false) {
        raises(result, "::Ice::MarshalException")?;
        return Ok(());
    }
    let n = result?;
    let ok = values(&n) == [1, 2, 3]
        && n.as_ref().is_some_and(|first| {
            let third = nodes(&n)[2].clone();
            let back = third.read().next.clone();
            back.is_some_and(|b| ClassRef::ptr_eq(&b, first))
        });
    break_links(&n);
    ensure!(ok, "not a cycle of 1, 2, 3");
    Ok(())
}

pub(super) async fn obj_cycle_echo(c: &Ctx) -> R {
    let n = ClassRef::new(Node {
        value: 5,
        next: None,
    });
    n.write().next = Some(n.clone());
    let n = Some(n);
    let result = c.obj.op_node(&n).await;
    break_links(&n);
    if c.refuses(&c.server, true) {
        raises(result, "::Ice::UnknownLocalException")?;
    } else if c.refuses("floe", true) {
        raises(result, "::Ice::MarshalException")?;
    } else {
        let r = result?;
        let ok = r.as_ref().is_some_and(|r| {
            let next = r.read().next.clone();
            r.read().value == 5 && next.is_some_and(|x| ClassRef::ptr_eq(&x, r))
        });
        break_links(&r);
        ensure!(ok, "self-loop");
    }
    Ok(())
}

pub(super) async fn obj_sliced_format(c: &Ctx) -> R {
    same_derived(
        &c.obj.op_base_sliced(&derived("d", 4)).await?,
        "d",
        4,
        "opBaseSliced(Derived)",
    )?;
    eq(
        c.obj
            .op_base_sliced(&base("b"))
            .await?
            .map(|b| b.read().b.clone()),
        Some("b".into()),
        "opBaseSliced(Base)",
    )
}
