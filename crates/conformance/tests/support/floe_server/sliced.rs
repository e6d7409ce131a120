//! The `sobj` and `cobj` servants: class instances with slices the client
//! does not know, in the sliced and compact formats.
//! A child of `floe_server`, whose helpers it uses.

use super::*;

pub(super) struct SlicedObjectsI;

impl SlicedObjects for SlicedObjectsI {
    async fn get_circle(&self, _: &Current) -> Res<Shared<Shape>> {
        Ok(the_circle())
    }
    async fn get_ring(&self, _: &Current) -> Res<Shared<Shape>> {
        Ok(ring(shape("in")))
    }
    async fn get_square(&self, _: &Current) -> Res<Shared<Shape>> {
        let square = Square {
            base: Shape {
                name: "square".into(),
            },
            side: 4.0,
        };
        Ok(Some(ClassRef::new(square).upcast()))
    }
    async fn get_hidden(&self, _: &Current) -> Res<Option<ValuePtr>> {
        Ok(hidden())
    }
    async fn get_linked(&self, _: &Current) -> Res<SlicedObjectsGetLinkedResult> {
        let other = shape("s2");
        let c = ClassRef::new(circle("c", 1.0, other.clone(), None));
        Ok((Some(c.upcast()), other).into())
    }
    async fn get_shapes(&self, _: &Current) -> Res<Vec<Shared<Shape>>> {
        let c = small_circle();
        Ok(vec![c.clone(), shape("plain"), c, None, ring(None)])
    }
    async fn get_shape_dict(&self, _: &Current) -> Res<BTreeMap<i32, Shared<Shape>>> {
        let c = small_circle();
        Ok(BTreeMap::from([
            (1, c.clone()),
            (2, c),
            (3, shape("plain")),
        ]))
    }
    async fn get_keeper(&self, _: &Current) -> Res<Shared<Keeper>> {
        let keeper = KeeperDerived {
            base: Keeper {
                k: "keeper".into(),
                ..Keeper::default()
            },
            extra: "x".into(),
            obj: Some(ClassRef::new(Base { b: "kb".into() })),
            label: Some("kl".into()),
        };
        Ok(Some(ClassRef::new(keeper).upcast()))
    }
    async fn check_keeper(&self, k: Shared<Keeper>, _: &Current) -> Res<String> {
        let Some(k) = k else {
            return Ok("null".into());
        };
        if let Some(d) = k.downcast::<KeeperDerived>() {
            let d = d.read();
            let b = d
                .obj
                .as_ref()
                .map_or("null".to_owned(), |o| o.read().b.clone());
            let label = d.label.clone().unwrap_or_else(|| "unset".into());
            return Ok(format!(
                "KeeperDerived:{}:{}:{b}:{label}",
                d.base.k, d.extra
            ));
        }
        Ok(format!("Keeper:{}", k.read().k))
    }
    async fn check_shape(&self, s: Shared<Shape>, _: &Current) -> Res<String> {
        Ok(match s {
            Some(s) => format!("{}:{}", s.ice_id(), s.read().name),
            None => "null".into(),
        })
    }
    async fn get_derived(&self, _: &Current) -> Res<Shared<Base>> {
        Ok(derived())
    }
    async fn get_more_optionals(&self, _: &Current) -> Res<Shared<WithOptionals>> {
        let w = WithMoreOptionals {
            base: WithOptionals {
                req: 1,
                i: Some(2),
                ..WithOptionals::default()
            },
            extra: Some("x".into()),
            more: Some(3),
        };
        Ok(Some(ClassRef::new(w).upcast()))
    }
}

pub(super) struct CompactObjectsI;

impl CompactObjects for CompactObjectsI {
    async fn get_circle(&self, _: &Current) -> Res<Shared<Shape>> {
        Ok(the_circle())
    }
    async fn get_hidden(&self, _: &Current) -> Res<Option<ValuePtr>> {
        Ok(hidden())
    }
    async fn get_circle_sliced(&self, _: &Current) -> Res<Shared<Shape>> {
        Ok(the_circle())
    }
    async fn get_derived(&self, _: &Current) -> Res<Shared<Base>> {
        Ok(derived())
    }
}
