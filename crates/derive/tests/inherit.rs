//! Interface inheritance, Rust first: `trait Derived: Base + Other` (bases
//! in another module) against the same interfaces from Slice
//! (`slice/Inherit.ice`): proxies of one call servants of the other,
//! base operations included, and `ice_ids` lists every type id.

use floe::codegen::{Current, DispatchError};
use floe::runtime::Communicator;
use floe::Identity;

#[allow(dead_code, clippy::all)]
mod from_slice {
    floe::slice!("tests/slice/Inherit.ice");
}

mod base {
    #[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
    #[floe(module = "InheritTest")]
    pub struct Point {
        pub x: i32,
        pub y: i32,
    }

    #[floe::interface(module = "InheritTest")]
    pub trait Root {
        #[floe(idempotent)]
        async fn name(&self) -> String;
    }

    #[floe::interface(module = "InheritTest")]
    pub trait Base: Root {
        async fn total(&self, points: Vec<Point>) -> i32;
    }
}

mod derived {
    use super::base;

    #[floe::interface(module = "InheritTest")]
    pub trait Other {
        async fn poke(&self, #[floe(tag = 1)] times: Option<i32>);
    }

    #[floe::interface(module = "InheritTest")]
    pub trait Derived: base::Base + Other + Send + Sync {
        async fn both(&self, s: String) -> String;
    }

    #[allow(unused_imports)]
    pub use base::Point;
}

type Reply<T> = Result<T, DispatchError>;

struct RustServant;

impl base::Root for RustServant {
    async fn name(&self, _: &Current) -> Reply<String> {
        Ok("rust".into())
    }
}
impl base::Base for RustServant {
    async fn total(&self, points: Vec<base::Point>, _: &Current) -> Reply<i32> {
        Ok(points.iter().map(|p| p.x + p.y).sum())
    }
}
impl derived::Other for RustServant {
    async fn poke(&self, times: Option<i32>, _: &Current) -> Reply<()> {
        assert_eq!(times, Some(3));
        Ok(())
    }
}
impl derived::Derived for RustServant {
    async fn both(&self, s: String, _: &Current) -> Reply<String> {
        Ok(format!("{s}{s}"))
    }
}

struct SliceServant;

use from_slice::inherit_test as st;

impl st::Root for SliceServant {
    async fn name(&self, _: &Current) -> Reply<String> {
        Ok("slice".into())
    }
}
impl st::Base for SliceServant {
    async fn total(&self, points: Vec<st::Point>, _: &Current) -> Reply<i32> {
        Ok(points.iter().map(|p| p.x * p.y).sum())
    }
}
impl st::Other for SliceServant {
    async fn poke(&self, times: Option<i32>, _: &Current) -> Reply<()> {
        assert_eq!(times, Some(3));
        Ok(())
    }
}
impl st::Derived for SliceServant {
    async fn both(&self, s: String, _: &Current) -> Reply<String> {
        Ok(format!("{s}-{s}"))
    }
}

const IDS: [&str; 6] = [
    "::Ice::Object",
    "::InheritTest::Base",
    "::InheritTest::Derived",
    "::InheritTest::Other",
    "::InheritTest::Root",
    "",
];

#[tokio::test]
async fn derived_interfaces_interoperate_with_slice() {
    let communicator = Communicator::new();
    let adapter = communicator
        .create_object_adapter_with_endpoints("Inherit", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let to_rust = adapter
        .add(
            Identity::from_name("rust"),
            derived::DerivedDispatcher::new(RustServant),
        )
        .unwrap();
    let to_slice = adapter
        .add(
            Identity::from_name("slice"),
            st::DerivedDispatcher::new(SliceServant),
        )
        .unwrap();
    adapter.activate();

    // Rust-first proxy → Slice servant, base operations included.
    let p = derived::DerivedPrx::checked_cast(to_slice.clone())
        .await
        .unwrap()
        .expect("a Derived");
    assert_eq!(p.name().await.unwrap(), "slice");
    let pts = vec![base::Point { x: 2, y: 3 }, base::Point { x: 4, y: 5 }];
    assert_eq!(p.total(&pts).await.unwrap(), 26);
    p.poke(Some(3)).await.unwrap();
    assert_eq!(p.both("a").await.unwrap(), "a-a");
    let up: base::RootPrx = p.clone().into();
    assert_eq!(up.name().await.unwrap(), "slice");
    let up: base::BasePrx = p.into();
    assert_eq!(up.total(&pts).await.unwrap(), 26);

    // Slice proxy → Rust-first servant.
    let q = st::DerivedPrx::checked_cast(to_rust.clone())
        .await
        .unwrap()
        .expect("a Derived");
    assert_eq!(q.name().await.unwrap(), "rust");
    let pts = vec![st::Point { x: 2, y: 3 }];
    assert_eq!(q.total(&pts).await.unwrap(), 5);
    q.poke(Some(3)).await.unwrap();
    assert_eq!(q.both("b").await.unwrap(), "bb");
    let mut ids = to_rust.ice_ids().await.unwrap();
    ids.push(String::new());
    assert_eq!(ids, IDS);
    assert!(base::RootPrx::checked_cast(to_rust).await.unwrap().is_some());
    communicator.destroy().await;
}

#[test]
fn exported_interfaces_match_the_slice_file() {
    let text = derived::DerivedSlice::ice_slice();
    let exported = floe_idl::compile_source("Exported.ice".as_ref(), &text, &Default::default())
        .unwrap_or_else(|f| panic!("{}\n{text}", f.rendered()))
        .model;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slice/Inherit.ice");
    let original = floe_idl::compile(&path, &Default::default()).unwrap().model;
    let mut n = 0;
    for def in &exported.definitions {
        let other = original.lookup(&def.scoped).expect("in Inherit.ice");
        assert_eq!(
            floe_idl::export::definition_to_slice(&exported, def.id, 0),
            floe_idl::export::definition_to_slice(&original, other.id, 0),
            "{text}"
        );
        n += 1;
    }
    assert_eq!(n, 6, "{text}");
}
