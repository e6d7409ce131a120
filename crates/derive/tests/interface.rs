//! A Rust-first interface and the same interface from Slice
//! (`slice/Greet.ice` through `floe::slice!`) talk to each other: the
//! Rust-first proxy calls a servant generated from Slice and the
//! Slice-generated proxy calls a Rust-first servant, over TCP.

use floe::codegen::{Current, DispatchError};
use floe::runtime::Communicator;
use floe::Identity;

/// The Slice side.
#[allow(dead_code, clippy::all)]
mod from_slice {
    floe::slice!("tests/slice/Greet.ice");
}

/// The Rust side.
mod rust_first {
    #[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
    #[floe(module = "GreetTest")]
    pub struct Point {
        pub x: i32,
        pub y: i32,
    }

    // `Default` is the first enumerator; proxies take it by value.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, floe::Enum)]
    #[floe(module = "GreetTest")]
    pub enum Color {
        Red,
        Green,
        Blue,
    }

    #[derive(Clone, Debug, Default, PartialEq, floe::Exception)]
    #[floe(module = "GreetTest")]
    pub struct Oops {
        pub reason: String,
    }

    /// Says hello.
    #[floe::interface(module = "GreetTest")]
    pub trait Greeter {
        #[floe(idempotent)]
        async fn greet(
            &self,
            name: String,
            #[floe(tag = 1)] times: Option<i32>,
        ) -> Result<String, Oops>;
        async fn sum(&self, points: Vec<Point>) -> i32;
        async fn nothing(&self);
        #[floe(tag = 2)]
        async fn maybe(&self, give: bool) -> Option<String>;
        #[floe(name = "getHttp")]
        async fn get_http(&self) -> String;
        /// `other`, else `also`: an optional proxy is one `Option`.
        async fn me(
            &self,
            other: Option<GreeterPrx>,
            #[floe(tag = 5)] also: Option<GreeterPrx>,
        ) -> Option<GreeterPrx>;
        async fn paint(
            &self,
            c: Color,
            p: Point,
            #[floe(tag = 3)] extra: Option<Color>,
            #[floe(tag = 4)] at: Option<Point>,
        ) -> Color;
        /// A trailing number sequence: written from the caller's slice.
        async fn total(&self, scale: i32, xs: Vec<f64>) -> f64;
    }
}

type Reply<T> = Result<T, DispatchError>;

/// A servant of the Rust-first trait.
struct RustServant;

impl rust_first::Greeter for RustServant {
    async fn greet(&self, name: String, times: Option<i32>, _: &Current) -> Reply<String> {
        if name.is_empty() {
            return Err(rust_first::Oops {
                reason: "no name".into(),
            }
            .into());
        }
        Ok(format!("hello {name} x{}", times.unwrap_or(1)))
    }
    async fn sum(&self, points: Vec<rust_first::Point>, _: &Current) -> Reply<i32> {
        Ok(points.iter().map(|p| p.x + p.y).sum())
    }
    async fn nothing(&self, _: &Current) -> Reply<()> {
        Ok(())
    }
    async fn maybe(&self, give: bool, _: &Current) -> Reply<Option<String>> {
        Ok(give.then(|| "here".to_owned()))
    }
    async fn get_http(&self, _: &Current) -> Reply<String> {
        Ok("rust".into())
    }
    async fn me(
        &self,
        other: Option<rust_first::GreeterPrx>,
        also: Option<rust_first::GreeterPrx>,
        _: &Current,
    ) -> Reply<Option<rust_first::GreeterPrx>> {
        Ok(other.or(also))
    }
    async fn paint(
        &self,
        c: rust_first::Color,
        p: rust_first::Point,
        extra: Option<rust_first::Color>,
        at: Option<rust_first::Point>,
        _: &Current,
    ) -> Reply<rust_first::Color> {
        assert_eq!(p, rust_first::Point { x: 1, y: 2 });
        assert_eq!(at, Some(p));
        assert_eq!(extra, Some(rust_first::Color::Red));
        Ok(if c == rust_first::Color::Blue {
            rust_first::Color::Green
        } else {
            Default::default()
        })
    }
    async fn total(&self, scale: i32, xs: Vec<f64>, _: &Current) -> Reply<f64> {
        Ok(xs.iter().sum::<f64>() * f64::from(scale))
    }
}

/// A servant of the Slice-generated trait.
struct SliceServant;

impl from_slice::greet_test::Greeter for SliceServant {
    async fn greet(&self, name: String, times: Option<i32>, _: &Current) -> Reply<String> {
        if name.is_empty() {
            return Err(from_slice::greet_test::Oops {
                reason: "no name".into(),
            }
            .into());
        }
        Ok(format!("hello {name} x{}", times.unwrap_or(1)))
    }
    async fn sum(&self, points: Vec<from_slice::greet_test::Point>, _: &Current) -> Reply<i32> {
        Ok(points.iter().map(|p| p.x + p.y).sum())
    }
    async fn nothing(&self, _: &Current) -> Reply<()> {
        Ok(())
    }
    async fn maybe(&self, give: bool, _: &Current) -> Reply<Option<String>> {
        Ok(give.then(|| "here".to_owned()))
    }
    async fn get_http(&self, _: &Current) -> Reply<String> {
        Ok("slice".into())
    }
    async fn me(
        &self,
        other: Option<from_slice::greet_test::GreeterPrx>,
        also: Option<from_slice::greet_test::GreeterPrx>,
        _: &Current,
    ) -> Reply<Option<from_slice::greet_test::GreeterPrx>> {
        Ok(other.or(also))
    }
    async fn paint(
        &self,
        c: from_slice::greet_test::Color,
        p: from_slice::greet_test::Point,
        extra: Option<from_slice::greet_test::Color>,
        at: Option<from_slice::greet_test::Point>,
        _: &Current,
    ) -> Reply<from_slice::greet_test::Color> {
        assert_eq!(p, from_slice::greet_test::Point { x: 1, y: 2 });
        assert_eq!(at, Some(p));
        assert_eq!(extra, Some(from_slice::greet_test::Color::Red));
        Ok(if c == from_slice::greet_test::Color::Blue {
            from_slice::greet_test::Color::Green
        } else {
            Default::default()
        })
    }
    async fn total(&self, scale: i32, xs: Vec<f64>, _: &Current) -> Reply<f64> {
        Ok(xs.iter().sum::<f64>() * f64::from(scale))
    }
}

#[tokio::test]
async fn rust_first_proxy_calls_slice_servant_and_back() {
    let communicator = Communicator::new();
    let adapter = communicator
        .create_object_adapter_with_endpoints("Greet", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let to_slice = adapter
        .add(
            Identity::from_name("slice"),
            from_slice::greet_test::GreeterDispatcher::new(SliceServant),
        )
        .unwrap();
    let to_rust = adapter
        .add(
            Identity::from_name("rust"),
            rust_first::GreeterDispatcher::new(RustServant),
        )
        .unwrap();
    adapter.activate();

    // Rust-first proxy → Slice servant.
    let p = rust_first::GreeterPrx::checked_cast(to_slice)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(p.greet("ann", Some(2)).await.unwrap(), "hello ann x2");
    let err = p.greet("", None).await.unwrap_err();
    assert_eq!(err.ice_name(), "::GreetTest::Oops");
    let pts = vec![
        rust_first::Point { x: 1, y: 2 },
        rust_first::Point { x: 3, y: 4 },
    ];
    assert_eq!(p.sum(&pts).await.unwrap(), 10);
    p.nothing().await.unwrap();
    assert_eq!(p.maybe(true).await.unwrap().as_deref(), Some("here"));
    assert_eq!(p.maybe(false).await.unwrap(), None);
    assert_eq!(p.get_http().await.unwrap(), "slice");
    // Proxy-typed values are live typed proxies on both sides.
    assert_eq!(p.me(&None, &None).await.unwrap(), None);
    let also = p.me(&None, &Some(p.clone())).await.unwrap();
    assert_eq!(also.as_ref(), Some(&p));
    let back = p.me(&Some(p.clone()), &None).await.unwrap().unwrap();
    assert_eq!(back, p);
    assert_eq!(back.get_http().await.unwrap(), "slice");
    // Enums by value, structs by reference, as from Slice.
    let pt = rust_first::Point { x: 1, y: 2 };
    use rust_first::Color;
    assert_eq!(
        p.paint(Color::Blue, &pt, Some(Color::Red), Some(&pt))
            .await
            .unwrap(),
        Color::Green
    );
    assert_eq!(
        p.paint(Color::Red, &pt, Some(Color::Red), Some(&pt))
            .await
            .unwrap(),
        Color::Red
    );
    // A number sequence, small (copied into the frame) and large (written
    // from the caller's slice).
    for n in [3usize, 100_000] {
        let xs: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
        let want = xs.iter().sum::<f64>() * 2.0;
        assert_eq!(p.total(2, &xs).await.unwrap(), want);
    }

    // Slice-generated proxy → Rust-first servant.
    let q = from_slice::greet_test::GreeterPrx::checked_cast(to_rust)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(q.greet("bob", None).await.unwrap(), "hello bob x1");
    let err = q.greet("", Some(1)).await.unwrap_err();
    assert_eq!(err.ice_name(), "::GreetTest::Oops");
    let pts = vec![from_slice::greet_test::Point { x: 5, y: 6 }];
    assert_eq!(q.sum(&pts).await.unwrap(), 11);
    q.nothing().await.unwrap();
    assert_eq!(q.maybe(true).await.unwrap().as_deref(), Some("here"));
    assert_eq!(q.get_http().await.unwrap(), "rust");
    let pt = from_slice::greet_test::Point { x: 1, y: 2 };
    use from_slice::greet_test::Color as SColor;
    assert_eq!(
        q.paint(SColor::Blue, &pt, Some(SColor::Red), Some(&pt))
            .await
            .unwrap(),
        SColor::Green
    );
    for n in [3usize, 100_000] {
        let xs: Vec<f64> = (0..n).map(|i| i as f64 * 0.25).collect();
        let want = xs.iter().sum::<f64>() * 3.0;
        assert_eq!(q.total(3, &xs).await.unwrap(), want);
    }
    assert_eq!(q.ice_id().await.unwrap(), "::GreetTest::Greeter");
    communicator.destroy().await;
}

#[test]
fn exported_interface_compiles_to_the_same_definitions() {
    let text = rust_first::GreeterSlice::ice_slice();
    let exported = floe_idl::compile_source("Exported.ice".as_ref(), &text, &Default::default())
        .unwrap_or_else(|f| panic!("{}\n{text}", f.rendered()))
        .model;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slice/Greet.ice");
    let original = floe_idl::compile(&path, &Default::default()).unwrap().model;
    for def in &exported.definitions {
        let other = original.lookup(&def.scoped).expect("in Greet.ice");
        assert_eq!(
            floe_idl::export::definition_to_slice(&exported, def.id, 0),
            floe_idl::export::definition_to_slice(&original, other.id, 0)
        );
    }
    assert_eq!(rust_first::GreeterSlice::TYPE_ID, "::GreetTest::Greeter");
}
