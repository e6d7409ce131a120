//! Interface inheritance, Rust first: `trait Derived: Base + Other` (bases
//! in another module) against the same interfaces from Slice
//! (`slice/Inherit.ice`): proxies of one call servants of the other,
//! base operations included, and `ice_ids` lists every type id.

use floe::codegen::{Current, DispatchError, UserException};
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

    #[derive(Clone, Debug, Default, PartialEq, floe::Exception)]
    #[floe(module = "InheritTest")]
    pub struct BaseErr {
        pub reason: String,
    }

    #[derive(Clone, Debug, Default, PartialEq, floe::Exception)]
    #[floe(module = "InheritTest")]
    pub struct MidErr {
        #[floe(base)]
        pub base: BaseErr,
        pub code: i32,
        #[floe(tag = 1)]
        pub note: Option<String>,
    }

    #[floe::interface(module = "InheritTest")]
    pub trait Derived: base::Base + Other + Send + Sync {
        async fn both(&self, s: String) -> String;
        // Out-parameters: the return value first.
        async fn split(&self, s: String) -> Result<(i32, String), BaseErr>;
        async fn pair(&self, a: i32) -> ((), i32, String);
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
    async fn split(&self, s: String, _: &Current) -> Reply<(i32, String)> {
        if s.is_empty() {
            return Err(derived::MidErr {
                base: derived::BaseErr {
                    reason: "empty".into(),
                },
                code: 7,
                note: Some("n".into()),
            }
            .into());
        }
        Ok((s.len() as i32, s.to_uppercase()))
    }
    async fn pair(&self, a: i32, _: &Current) -> Reply<(i32, String)> {
        Ok((a * 2, a.to_string()))
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
    async fn split(&self, s: String, _: &Current) -> Reply<st::DerivedSplitResult> {
        if s.is_empty() {
            return Err(st::MidErr {
                base: st::BaseErr {
                    reason: "empty".into(),
                },
                code: 7,
                note: Some("n".into()),
            }
            .into());
        }
        Ok((s.len() as i32, s.to_uppercase()).into())
    }
    async fn pair(&self, a: i32, _: &Current) -> Reply<st::DerivedPairResult> {
        Ok((a * 2, a.to_string()).into())
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
    assert_eq!(p.split("ab").await.unwrap(), (2, "AB".to_owned()));
    // The Rust-first client knows only the declared `BaseErr`, and Ice
    // marshals exceptions in the compact format (no slice sizes): an
    // unknown derived exception cannot be sliced, as with Ice itself.
    match p.split("").await {
        Err(floe::runtime::Error::UnknownUserException(id)) => {
            assert_eq!(id, "::InheritTest::MidErr")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(p.pair(4).await.unwrap(), (8, "4".to_owned()));
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
    // Slice-generated: the outputs are named.
    let split = q.split("xyz").await.unwrap();
    assert_eq!((split.return_value, split.out1), (3, "XYZ".to_owned()));
    // The Slice client knows `MidErr`: the whole derived exception.
    let err = q.split("").await.unwrap_err();
    let mid = err.user_exception::<st::MidErr>().expect("a MidErr");
    assert_eq!(
        (mid.base.reason.as_str(), mid.code, mid.note.as_deref()),
        ("empty", 7, Some("n"))
    );
    assert!(err.user_exception::<st::BaseErr>().is_some());
    assert_eq!(
        <(i32, String)>::from(q.pair(5).await.unwrap()),
        (10, "5".to_owned())
    );
    let mut ids = to_rust.ice_ids().await.unwrap();
    ids.push(String::new());
    assert_eq!(ids, IDS);
    assert!(base::RootPrx::checked_cast(to_rust)
        .await
        .unwrap()
        .is_some());
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
    assert_eq!(n, 7, "{text}");
}

#[test]
fn derived_exception_ids_and_bytes_match_slice() {
    use floe::wire::ENCODING_1_1;
    use floe::Encoder;
    let r = derived::MidErr {
        base: derived::BaseErr { reason: "r".into() },
        code: 3,
        note: None,
    };
    let s = st::MidErr {
        base: st::BaseErr { reason: "r".into() },
        code: 3,
        note: None,
    };
    assert_eq!(r.ice_ids(), s.ice_ids());
    let bytes = |ex: &dyn UserException| {
        let mut enc = Encoder::new();
        let mark = enc.start_encapsulation(ENCODING_1_1);
        enc.write_user_exception(ex);
        enc.end_encapsulation(mark);
        enc.finish().to_vec()
    };
    assert_eq!(bytes(&r), bytes(&s));
    assert_eq!(
        floe::slice_of::<derived::MidErr>()
            .lines()
            .filter(|l| l.contains("exception"))
            .collect::<Vec<_>>(),
        [
            "    exception BaseErr",
            "    exception MidErr extends ::InheritTest::BaseErr"
        ]
    );
}

/// Private traits, a chain of three in one module, and a base operation
/// naming a private type: all compile.
#[allow(dead_code)]
mod private_chain {
    #[derive(Clone, Copy, Debug, PartialEq, Eq, floe::Enum)]
    #[floe(module = "Private")]
    pub enum Mode {
        Fast,
        Slow,
    }

    #[floe::interface(module = "Private")]
    trait First {
        async fn mode(&self, m: Mode) -> Mode;
    }

    #[floe::interface(module = "Private")]
    trait Second: First {
        async fn second(&self);
    }

    #[floe::interface(module = "Private")]
    trait Third: Second {
        async fn third(&self) -> (Mode, Mode);
    }

    pub fn exported() -> String {
        ThirdSlice::ice_slice()
    }

    fn upcast(p: ThirdPrx) -> FirstPrx {
        p.into()
    }

    async fn calls(p: &ThirdPrx) -> floe::runtime::Result<Mode> {
        p.second().await?;
        let (a, _) = p.third().await?;
        p.mode(a).await
    }
}

#[test]
fn chains_export_every_base() {
    let text = private_chain::exported();
    assert!(
        text.contains("interface Second extends ::Private::First"),
        "{text}"
    );
    assert!(
        text.contains("interface Third extends ::Private::Second"),
        "{text}"
    );
    assert!(
        text.contains("::Private::Mode third(out ::Private::Mode out1);"),
        "{text}"
    );
}
